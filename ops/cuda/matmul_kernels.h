#pragma once
// Launchers for the matmul family's own kernels (matmul_kernels.cu): what cuBLAS(Lt) does not do
// for MatMulAdd and FusedBias{Relu,Gelu,Tanh,Sigmoid} -- writing a broadcast bias, and adding a
// bias and/or applying the activation in one pass over the GEMM's output. C++17, no core headers.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ops/cuda/strided_index.h"

namespace fusebox::cuda {

// The activations of the FusedBias ops, with the CPU's formulas (ops/cpu/math.h).
enum class EpilogueAct : int {
  kNone,
  kRelu,      // x < 0 ? 0 : x (keeps NaN)
  kGeluErf,   // 0.5 x (1 + erf(x / sqrt 2))  (approximate='none')
  kGeluTanh,  // x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3)  (approximate='tanh')
  kTanh,
  kSigmoid,
};

// out[i] = src[offset(i)] for i < n: the bias broadcast to the output before a beta = 1 GEMM.
void launch_broadcast_copy(const float* src, const StridedIndex& src_index, float* out, int64_t n, int sm_count,
                           cudaStream_t stream);

// out[i] = act(out[i] + bias[offset(i)]) for i < n; bias may be null (then just the activation).
void launch_bias_activation(float* out, const float* bias, const StridedIndex& bias_index, int64_t n, EpilogueAct act,
                            int sm_count, cudaStream_t stream);

}  // namespace fusebox::cuda
