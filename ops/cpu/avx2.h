#pragma once
// AVX2 + FMA code paths: functions marked FUSEBOX_AVX2 are compiled for AVX2 and FMA whatever the
// build's -march, and run only where the kernel's Isa (isa.h, fixed in prepare) is kAvx2. The
// math mirrors avx512.h and the scalar definitions in math.h: the same polynomials, the same
// NaN / inf / underflow behaviour, 8 floats at a time.
#include <immintrin.h>

#include <cstdint>

#define FUSEBOX_AVX2 __attribute__((target("avx2,fma")))

namespace fusebox::cpu {

// Lanes [0, count) set, for _mm256_maskload_ps / _mm256_maskstore_ps (count in 0..8).
FUSEBOX_AVX2 inline __m256i tail_mask256(int64_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lanes);
}

// exp of 8 floats: exp_f32 (math.h) in registers. The same Cephes polynomial on r = x - n ln 2;
// 2^n is applied as two factors 2^(n/2) 2^(n - n/2) built in the exponent field (AVX2 has no
// vscalefps), so n = 128 needs no special case. Below ln(FLT_MIN) the result is 0 (no
// denormals), NaN stays NaN.
//
// exp256_unfixed is the same without the last two steps: below ln(FLT_MIN) it gives exp(ln
// FLT_MIN) (about 1.2e-38) instead of 0, and for NaN it gives exp(89) = inf. For callers in
// which neither changes the result (gelu_tanh256: x / (1 + e) is the same for e = 0 and 1.2e-38,
// and NaN for a NaN x either way), two compares and two blends fewer.
FUSEBOX_AVX2 inline __m256 exp256_unfixed(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654475f);
  // min/max return their second operand for NaN: xc is finite, so the conversion is defined.
  __m256 xc = _mm256_min_ps(x, _mm256_set1_ps(89.0f));
  xc = _mm256_max_ps(xc, lo);
  const __m256 fn = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
  const __m256i n = _mm256_cvtps_epi32(fn);  // -126 .. 128
  const __m256i n1 = _mm256_srai_epi32(n, 1);
  const __m256i n2 = _mm256_sub_epi32(n, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(y, f1), f2);
}

FUSEBOX_AVX2 inline __m256 exp256(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654475f);
  const __m256 res = _mm256_blendv_ps(exp256_unfixed(x), _mm256_setzero_ps(),
                                      _mm256_cmp_ps(x, lo, _CMP_LT_OQ));  // x < lo: 0
  return _mm256_blendv_ps(res, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));  // NaN in, NaN out
}

// Gelu, exact form, of 8 floats: gelu_erf_f32 (math.h) in registers, the same rational erf.
FUSEBOX_AVX2 inline __m256 gelu_erf256(__m256 x) {
  const __m256 u = _mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f));
  const __m256 uc = _mm256_min_ps(_mm256_max_ps(u, _mm256_set1_ps(-4.0f)), _mm256_set1_ps(4.0f));
  const __m256 x2 = _mm256_mul_ps(uc, uc);
  __m256 p = _mm256_fmadd_ps(x2, _mm256_set1_ps(-2.72614225801306e-10f),
                             _mm256_set1_ps(2.77068142495902e-08f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.10102402082508e-06f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-5.69250639462346e-05f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-7.34990630326855e-04f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.95459980854025e-03f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-1.60960333262415e-02f));
  __m256 q = _mm256_fmadd_ps(x2, _mm256_set1_ps(-1.45660718464996e-05f),
                             _mm256_set1_ps(-2.13374055278905e-04f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.68282697438203e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-7.37332916720468e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.42647390514189e-02f));
  __m256 erf = _mm256_div_ps(_mm256_mul_ps(uc, p), q);
  erf = _mm256_min_ps(_mm256_max_ps(erf, _mm256_set1_ps(-1.0f)), _mm256_set1_ps(1.0f));
  const __m256 half_x = _mm256_mul_ps(x, _mm256_set1_ps(0.5f));
  // NaN in, NaN out (the clamps above would turn it into +-1).
  return _mm256_blendv_ps(_mm256_fmadd_ps(half_x, erf, half_x), x,
                          _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// sigmoid of 8 floats: 1 / (1 + exp(-x)), as sigmoid_f32 (math.h).
FUSEBOX_AVX2 inline __m256 sigmoid256(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp256(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// tanh of 8 floats, as tanh_f32 (math.h): the odd polynomial below |x| = 0.625, the exp form
// 1 - 2 / (e^2|x| + 1) (sign restored) above it.
FUSEBOX_AVX2 inline __m256 tanh256(__m256 x) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036e-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422e-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  const __m256 e = exp256(_mm256_add_ps(ax, ax));
  __m256 big = _mm256_sub_ps(_mm256_set1_ps(1.0f),
                             _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  big = _mm256_blendv_ps(big, _mm256_sub_ps(zero, big), _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
  const __m256 r =
      _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));  // NaN stays NaN
}

// Gelu, tanh form, of 8 floats, as gelu_tanh_f32 (math.h): x / (1 + exp(-2u)),
// u = sqrt(2/pi) (x + 0.044715 x^3).
FUSEBOX_AVX2 inline __m256 gelu_tanh256(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f),
                                 _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x));
  const __m256 e = exp256_unfixed(_mm256_mul_ps(_mm256_set1_ps(-2.0f), u));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

// Relu of 8 floats that keeps NaN (max_ps would turn it into 0), as relu_f32 (math.h).
FUSEBOX_AVX2 inline __m256 relu256(__m256 x) {
  const __m256 zero = _mm256_setzero_ps();
  return _mm256_blendv_ps(x, zero, _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
}

// Tree reductions of 8 lanes.
FUSEBOX_AVX2 inline float hmax256(__m256 v) {
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}
FUSEBOX_AVX2 inline float hsum256(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// An 8 x 8 block read in place and transposed in registers: on return out[c] holds column c,
// i.e. out[c][i] = src[i * ld + c] for i, c < 8. Each register starts as the same 4 columns of
// two rows four apart (row i in the low 128-bit lane, row i + 4 in the high one: the lane
// crossing is done by the loads), so two rounds of in-lane 4 x 4 transposes finish it: 32-bit
// unpacks pair rows, 64-bit shuffles make the 4-row groups.
FUSEBOX_AVX2 inline void load_transpose8x8(const float* src, int64_t ld, __m256 out[8]) {
  __m256 r[8];
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < 2; ++h)  // r[4h + i]: columns 4h..4h+3 of rows i and i + 4
      r[4 * h + i] = _mm256_insertf128_ps(
          _mm256_castps128_ps256(_mm_loadu_ps(src + i * ld + 4 * h)),
          _mm_loadu_ps(src + (i + 4) * ld + 4 * h), 1);
  for (int h = 0; h < 2; ++h) {
    const __m256* g = r + 4 * h;
    const __m256 t0 = _mm256_unpacklo_ps(g[0], g[1]);  // per lane: r0[0] r1[0] r0[1] r1[1]
    const __m256 t1 = _mm256_unpackhi_ps(g[0], g[1]);  //           r0[2] r1[2] r0[3] r1[3]
    const __m256 t2 = _mm256_unpacklo_ps(g[2], g[3]);
    const __m256 t3 = _mm256_unpackhi_ps(g[2], g[3]);
    out[4 * h + 0] = _mm256_shuffle_ps(t0, t2, 0x44);  // column 4h of rows 0-3 | rows 4-7
    out[4 * h + 1] = _mm256_shuffle_ps(t0, t2, 0xEE);
    out[4 * h + 2] = _mm256_shuffle_ps(t1, t3, 0x44);
    out[4 * h + 3] = _mm256_shuffle_ps(t1, t3, 0xEE);
  }
}

// y[i] = F(x[i]) for n floats with an 8-wide F (in place is fine); the tail is masked.
template <__m256 (*F)(__m256)>
FUSEBOX_AVX2 inline void map_span256(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = tail_mask256(n - i);
    _mm256_maskstore_ps(y + i, m, F(_mm256_maskload_ps(x + i, m)));
  }
}

}  // namespace fusebox::cpu
