#pragma once
// Float math the compiler can vectorize. std::exp/std::erf/std::tanh are library calls that GCC
// only vectorizes under -ffast-math, so a loop calling them runs one element at a time. The
// functions here are branch-free polynomials (selects, not branches), so a plain loop over them
// compiles to AVX2/AVX-512 code with -O3 -march=native. Accuracy: a few ulp, checked against
// double-precision references in tests/ops/math_test.cpp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace fusebox::cpu {

// exp(x) = 2^n * exp(r) with n = round(x / ln 2), |r| <= ln(2)/2 (Cephes expf). ln 2 is split
// in two so r is exact. 2^n is applied as two factors 2^(n/2) 2^(n - n/2) so n = 128 (results
// near FLT_MAX) needs no special case. Results below FLT_MIN flush to 0: denormal arithmetic
// is ~100x slower on x86 and softmax over masked scores would hit it constantly.
inline float exp_f32(float x) {
  constexpr float kHi = 89.0f;          // exp(89) overflows float: inf
  constexpr float kLo = -87.33654475f;  // ln(FLT_MIN)
  // Clamp so NaN becomes kLo: converting a NaN to int below would be undefined behaviour (the
  // NaN is restored at the end).
  float xc = x < kHi ? x : kHi;
  xc = xc > kLo ? xc : kLo;
  float fn = std::nearbyint(xc * 1.44269504088896341f);  // nearbyint vectorizes, floor does not
  float r = xc - fn * 0.693359375f - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int32_t n = static_cast<int32_t>(fn);
  int32_t n1 = n >> 1, n2 = n - n1;
  float res = y * std::bit_cast<float>((n1 + 127) << 23) * std::bit_cast<float>((n2 + 127) << 23);
  res = x < kLo ? 0.0f : res;
  return x != x ? x : res;  // NaN in, NaN out
}

// erf: Eigen's (and XLA's) rational approximation x P(x^2) / Q(x^2) on [-4, 4]; outside, erf is
// +-1 in float. Absolute error below 2e-7, and relative accuracy holds near 0 (unlike 1 - erfc).
// The result is clamped to [-1, 1] so 1 + erf(x) is exactly 0 far out (Gelu of -1e30 is -0).
inline float erf_f32(float x) {
  float xc = std::min(std::max(x, -4.0f), 4.0f);
  float x2 = xc * xc;
  float p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = x2 * p + -2.10102402082508e-06f;
  p = x2 * p + -5.69250639462346e-05f;
  p = x2 * p + -7.34990630326855e-04f;
  p = x2 * p + -2.95459980854025e-03f;
  p = x2 * p + -1.60960333262415e-02f;
  float q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
  q = x2 * q + -1.68282697438203e-03f;
  q = x2 * q + -7.37332916720468e-03f;
  q = x2 * q + -1.42647390514189e-02f;
  return std::min(std::max(xc * p / q, -1.0f), 1.0f);
}

// tanh (Cephes tanhf): an odd polynomial for |x| < 0.625, where 1 - 2/(e^2x + 1) would cancel,
// and the exp form elsewhere. Both are computed and one is selected, which keeps it branch-free.
inline float tanh_f32(float x) {
  float ax = std::abs(x);
  float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z + -5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z + -3.33332819422e-1f;
  float small = p * z * x + x;
  float big = 1.0f - 2.0f / (exp_f32(2.0f * ax) + 1.0f);
  big = x < 0 ? -big : big;
  return ax < 0.625f ? small : big;
}

inline float sigmoid_f32(float x) {
  return 1.0f / (1.0f + exp_f32(-x));
}

// Gelu, exact form: x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)).
inline float gelu_erf_f32(float x) {
  return 0.5f * x * (1.0f + erf_f32(x * 0.70710678118654752f));
}

// Gelu, tanh form: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3). Written as
// x / (1 + exp(-2u)), the same value (0.5 (1 + tanh u) = sigmoid(2u)) without the cancellation
// of 1 + tanh(u) for negative x.
inline float gelu_tanh_f32(float x) {
  float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x / (1.0f + exp_f32(-2.0f * u));
}

// Relu that keeps NaN (max(x, 0) would turn NaN into 0 and hide it).
inline float relu_f32(float x) {
  return x < 0.0f ? 0.0f : x;
}

// y[i] = sqrt(x[i]). std::sqrt sets errno for negative input, which stops GCC from vectorizing
// it without -fno-math-errno, so the AVX path uses the instruction directly (same IEEE result:
// NaN for negative input). In place (x == y) is fine.
inline void sqrt_span(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#if defined(__AVX__)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
#endif
  for (; i < n; ++i) y[i] = std::sqrt(x[i]);
}

// Numerically stable softmax of one contiguous row: subtract the max so exp never overflows.
// Sums use OpenMP SIMD reductions (plain float reductions do not vectorize without
// -ffast-math) and accumulate in double so long rows keep float accuracy. x == y (in place) is
// allowed: no __restrict, and GCC's runtime overlap check lets equal pointers take the vector path.
inline void softmax_row(const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  float m = -std::numeric_limits<float>::infinity();
  // Written as a select: with std::max GCC keeps a serial scalar max chain (10x slower).
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) {
    float e = exp_f32(x[i] - m);
    y[i] = e;
    sum += e;
  }
  float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) y[i] *= inv;
}

}  // namespace fusebox::cpu
