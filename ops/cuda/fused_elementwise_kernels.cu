// The FusedElementwise interpreter behind fused_elementwise_kernels.h: one thread per output
// element in a grid-stride loop. Each thread runs the whole program on its element: inputs are
// read through their broadcast offsets (broadcast_index.cuh) when an instruction names them,
// intermediate results live in a 16-entry per-thread register file (prepare() assigned the
// registers by liveness, as the CPU does; fused_eval.cuh keeps it out of local memory), and only the last result is stored. Every thread of a
// warp runs the same instruction at the same time, so the switch over ops does not diverge.
// The math is ew_math.cuh's, the same as the unfused element-wise kernels'.
#include <cuda_runtime.h>

#include "ops/cuda/broadcast_index.cuh"
#include "ops/cuda/fused_elementwise_kernels.h"
#include "ops/cuda/fused_eval.cuh"
#include "ops/cuda/host/launch_geometry.h"

namespace fusebox::cuda {

namespace {

// Kernels whose parameter structs are indexed at run time take them as __grid_constant__ (sm_70+):
// read in place from the parameter bank instead of copied to each thread's local memory.

// The input pointers, by value in the kernel's parameters (512 bytes), so a launch needs no
// device-side table and stays graph-capturable.
struct FusedInputs {
  const float* ptr[kFusedMaxInputs];
};

// No __restrict__: the output may be a full-size input (in place); each thread reads its own
// element of it before writing that element.
template <typename I>
__global__ void fused_kernel(const __grid_constant__ FusedParams p, const __grid_constant__ FusedInputs in, float* y) {
  const I n = static_cast<I>(p.numel);
  const I step = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  const int rank = p.rank;
  // Every register is written before it is read (prepare() checked the program); zeroed once per
  // thread only so the compiler can see that.
  FusedRegisters regs;
  for (I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); i < n;
       i += step) {
    I idx[kFusedMaxDims];
    decompose_index<kFusedMaxDims>(i, rank, p.dims, idx);
    y[i] = fused_eval(p, in.ptr, i, idx, regs);
  }
}

}  // namespace

void launch_fused_elementwise(const FusedParams& p, const void* const* inputs, void* y, cudaStream_t stream,
                              int sm_count) {
  const LaunchGeometry g = elementwise_geometry(p.numel, sm_count < 1 ? 1 : sm_count);
  if (g.empty()) return;
  FusedInputs in{};
  for (int k = 0; k < p.num_inputs && k < kFusedMaxInputs; ++k) in.ptr[k] = static_cast<const float*>(inputs[k]);
  const dim3 grid(static_cast<unsigned>(g.grid.x)), block(static_cast<unsigned>(g.block.x));
  float* out = static_cast<float*>(y);
  if (p.index32) {
    fused_kernel<int32_t><<<grid, block, 0, stream>>>(p, in, out);
  } else {
    fused_kernel<int64_t><<<grid, block, 0, stream>>>(p, in, out);
  }
}

}  // namespace fusebox::cuda
