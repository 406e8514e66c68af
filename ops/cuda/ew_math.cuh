#pragma once
// Device math shared by the element-wise kernels (elementwise_kernels.cu) and the
// FusedElementwise interpreter (fused_elementwise_kernels.cu), so a fused chain computes exactly
// what its unfused ops compute on this backend. Each mirrors the CPU's definition
// (ops/cpu/ew_ops.h, ops/cpu/math.h) with CUDA's float functions (expf, erff, tanhf, powf,
// sqrtf; nvcc's defaults keep / and sqrtf IEEE-rounded), including the CPU's edge cases:
//  - Relu keeps NaN (x < 0 ? 0 : x);
//  - Exp flushes results below FLT_MIN to 0 (the CPU's exp_f32 does, to avoid denormals);
//  - Gelu(tanh) is x / (1 + exp(-2u)), the CPU's cancellation-free form of 0.5 x (1 + tanh u);
//  - i64 arithmetic wraps (computed in unsigned), and i64 Div defines x / 0 = 0 and
//    INT64_MIN / -1 = INT64_MIN instead of trapping.
// Plain C++ outside nvcc (the host test of the FusedElementwise interpreter uses it, with the C
// library's expf/erff/tanhf).
#include <math.h>

#include <cstdint>

#include "ops/cuda/host_device.h"

namespace fusebox::cuda {

FUSEBOX_HD float ew_exp(float x) {
  constexpr float kLo = -87.33654475f;  // ln(FLT_MIN): below it the CPU returns 0, not a denormal
  return x < kLo ? 0.0f : expf(x);
}
FUSEBOX_HD float ew_relu(float x) { return x < 0.0f ? 0.0f : x; }
FUSEBOX_HD float ew_sigmoid(float x) { return 1.0f / (1.0f + ew_exp(-x)); }
FUSEBOX_HD float ew_tanh(float x) { return tanhf(x); }
FUSEBOX_HD float ew_erf(float x) { return erff(x); }
FUSEBOX_HD float ew_sqrt(float x) { return sqrtf(x); }
FUSEBOX_HD float ew_gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
FUSEBOX_HD float ew_gelu_tanh(float x) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x / (1.0f + ew_exp(-2.0f * u));
}

FUSEBOX_HD float ew_add(float a, float b) { return a + b; }
FUSEBOX_HD float ew_sub(float a, float b) { return a - b; }
FUSEBOX_HD float ew_mul(float a, float b) { return a * b; }
FUSEBOX_HD float ew_div(float a, float b) { return a / b; }
FUSEBOX_HD float ew_pow(float a, float b) { return powf(a, b); }
FUSEBOX_HD float ew_neg(float x) { return -x; }

FUSEBOX_HD int64_t ew_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
FUSEBOX_HD int64_t ew_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
FUSEBOX_HD int64_t ew_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
FUSEBOX_HD int64_t ew_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a));
  return a / b;  // truncates toward zero, as ONNX asks
}
FUSEBOX_HD int64_t ew_neg(int64_t x) {
  return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x));
}

// f32 -> i64 truncates toward zero; out-of-range values saturate and NaN becomes 0 (the CPU's
// f32_to_i64: the plain conversion of those is undefined in C++, and differs on the GPU).
FUSEBOX_HD int64_t ew_f32_to_i64(float x) {
  constexpr float kLimit = 9.223372036854775808e18f;  // 2^63
  if (x != x) return 0;
  if (x >= kLimit) return INT64_MAX;
  if (x < -kLimit) return INT64_MIN;
  return static_cast<int64_t>(x);
}

}  // namespace fusebox::cuda
