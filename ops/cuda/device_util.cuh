#pragma once
// Device helpers the kernel files share (nvcc only): grid-stride loops, block-wide reductions over
// warp shuffles and the StridedIndex walk. Included by the *_kernels.cu files, never by host C++.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "ops/cuda/host/launch_geometry.h"
#include "ops/cuda/strided_index.h"

namespace fusebox::cuda {

// The grid of a grid-stride loop over n items (elementwise_geometry); false, and no grid, when
// n == 0.
inline bool ew_grid(int64_t n, int sm_count, dim3* grid, dim3* block) {
  const LaunchGeometry g = elementwise_geometry(n, sm_count < 1 ? 1 : sm_count);
  if (g.empty()) return false;
  *grid = dim3(static_cast<unsigned>(g.grid.x));
  *block = dim3(static_cast<unsigned>(g.block.x));
  return true;
}

// A grid-stride loop's first item and step, in index type I (int32_t or int64_t):
//   for (I i = first_index<I>(); i < n; i += grid_stride<I>())
template <typename I>
__device__ __forceinline__ I first_index() {
  return static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
}
template <typename I>
__device__ __forceinline__ I grid_stride() {
  return static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
}

// Storage offset of element i (row-major over idx.dims).
__device__ __forceinline__ int64_t strided_offset(const StridedIndex& idx, int64_t i) {
  if (idx.dense) return i;
  int64_t off = 0;
  for (int d = idx.rank - 1; d >= 0; --d) {
    const int64_t n = idx.dims[d];
    off += (i % n) * idx.strides[d];
    i /= n;
  }
  return off;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  // fmaxf drops NaN; a NaN score must reach the output as the CPU's does, so compare by hand.
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = (w > v || w != w) ? w : v;
  }
  return v;
}

// Block-wide sum / max for blocks of whole warps; `warps` is shared memory for one float per warp.
// Every thread gets the result. Ends with a barrier, so `warps` may be reused right after.
__device__ __forceinline__ float block_sum(float v, float* warps) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  v = warp_sum(v);
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  float t = lane < nwarps ? warps[lane] : 0.0f;
  t = warp_sum(t);
  __syncthreads();
  return t;
}
__device__ __forceinline__ float block_max(float v, float* warps) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  v = warp_max(v);
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  float t = lane < nwarps ? warps[lane] : -INFINITY;
  t = warp_max(t);
  __syncthreads();
  return t;
}

// Which row a block of row_geometry (host/launch_geometry.h) works on.
__device__ __forceinline__ int64_t block_row() {
  return static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x;
}

// A LaunchGeometry's dims as CUDA's (launch_geometry.h keeps them within the launch limits).
inline dim3 to_dim3(const Dim3& d) {
  return dim3(static_cast<unsigned>(d.x), static_cast<unsigned>(d.y), static_cast<unsigned>(d.z));
}

}  // namespace fusebox::cuda
