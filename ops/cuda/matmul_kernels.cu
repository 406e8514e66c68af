// The matmul family's element-wise kernels (matmul_kernels.h): grid-stride loops over the GEMM's
// output, one launch each, shaped by elementwise_geometry.
#include <cuda_runtime_api.h>

#include "ops/cuda/device_util.cuh"
#include "ops/cuda/matmul_kernels.h"

namespace fusebox::cuda {
namespace {

// Full-precision library functions (no --use_fast_math): the outputs are compared with the CPU's
// few-ulp polynomials.
__device__ __forceinline__ float activate(float x, EpilogueAct act) {
  switch (act) {
    case EpilogueAct::kNone:
      return x;
    case EpilogueAct::kRelu:
      return x < 0.0f ? 0.0f : x;
    case EpilogueAct::kGeluErf:
      return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case EpilogueAct::kGeluTanh: {
      // The CPU's form: 0.5 (1 + tanh u) = sigmoid(2u), no cancellation for negative x.
      const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      return x / (1.0f + expf(-2.0f * u));
    }
    case EpilogueAct::kTanh:
      return tanhf(x);
    case EpilogueAct::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
  }
  return x;
}

__global__ void broadcast_copy_kernel(const float* src, StridedIndex idx, float* out, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = src[strided_offset(idx, i)];
}

__global__ void bias_activation_kernel(float* out, const float* bias, StridedIndex idx, int64_t n, EpilogueAct act) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const float v = bias ? out[i] + bias[strided_offset(idx, i)] : out[i];
    out[i] = activate(v, act);
  }
}

}  // namespace

void launch_broadcast_copy(const float* src, const StridedIndex& src_index, float* out, int64_t n, int sm_count,
                           cudaStream_t stream) {
  const LaunchGeometry g = elementwise_geometry(n, sm_count);
  if (g.empty()) return;
  broadcast_copy_kernel<<<to_dim3(g.grid), to_dim3(g.block), 0, stream>>>(src, src_index, out, n);
}

void launch_bias_activation(float* out, const float* bias, const StridedIndex& bias_index, int64_t n, EpilogueAct act,
                            int sm_count, cudaStream_t stream) {
  const LaunchGeometry g = elementwise_geometry(n, sm_count);
  if (g.empty()) return;
  bias_activation_kernel<<<to_dim3(g.grid), to_dim3(g.block), 0, stream>>>(out, bias, bias_index, n, act);
}

}  // namespace fusebox::cuda
