#pragma once
// AVX-512 code paths: functions marked FUSEBOX_AVX512 are compiled for AVX-512 whatever the
// build's -march, and run only where the kernel's Isa (isa.h, fixed in prepare) is kAvx512 (the
// AVX2 and portable code next to them runs elsewhere). One place for the target list.
#include <immintrin.h>

#include <cstdint>

#define FUSEBOX_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

namespace fusebox::cpu {

// exp of 16 floats: exp_f32 (math.h) in registers. The same Cephes polynomial on r = x - n ln 2;
// 2^n is applied with vscalefps, which needs no split for n = 128. Below ln(FLT_MIN) the result
// is 0 (no denormals), NaN stays NaN.
FUSEBOX_AVX512 inline __m512 exp512(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.33654475f);
  __m512 xc = _mm512_min_ps(x, _mm512_set1_ps(89.0f));
  xc = _mm512_max_ps(xc, lo);
  const __m512 fn = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(fn, _mm512_set1_ps(0.693359375f), xc);
  r = _mm512_fnmadd_ps(fn, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
  __m512 res = _mm512_scalef_ps(y, fn);
  res = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), res);  // x < lo (not NaN): 0
  return _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

// Gelu, exact form, of 16 floats: gelu_erf_f32 (math.h) in registers, the same rational erf.
FUSEBOX_AVX512 inline __m512 gelu_erf512(__m512 x) {
  const __m512 u = _mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f));
  const __m512 uc = _mm512_min_ps(_mm512_max_ps(u, _mm512_set1_ps(-4.0f)), _mm512_set1_ps(4.0f));
  const __m512 x2 = _mm512_mul_ps(uc, uc);
  __m512 p = _mm512_fmadd_ps(x2, _mm512_set1_ps(-2.72614225801306e-10f),
                             _mm512_set1_ps(2.77068142495902e-08f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-2.10102402082508e-06f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-5.69250639462346e-05f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-7.34990630326855e-04f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-2.95459980854025e-03f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-1.60960333262415e-02f));
  __m512 q = _mm512_fmadd_ps(x2, _mm512_set1_ps(-1.45660718464996e-05f),
                             _mm512_set1_ps(-2.13374055278905e-04f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(-1.68282697438203e-03f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(-7.37332916720468e-03f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(-1.42647390514189e-02f));
  __m512 erf = _mm512_div_ps(_mm512_mul_ps(uc, p), q);
  erf = _mm512_min_ps(_mm512_max_ps(erf, _mm512_set1_ps(-1.0f)), _mm512_set1_ps(1.0f));
  const __m512 half_x = _mm512_mul_ps(x, _mm512_set1_ps(0.5f));
  // NaN in, NaN out (the clamps above would turn it into +-1).
  return _mm512_mask_mov_ps(_mm512_fmadd_ps(half_x, erf, half_x),
                            _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

// sigmoid of 16 floats: 1 / (1 + exp(-x)), as sigmoid_f32 (math.h).
FUSEBOX_AVX512 inline __m512 sigmoid512(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// tanh of 16 floats, as tanh_f32 (math.h): the odd polynomial below |x| = 0.625, the exp form
// 1 - 2 / (e^2|x| + 1) (sign restored) above it.
FUSEBOX_AVX512 inline __m512 tanh512(__m512 x) {
  const __m512 ax = _mm512_abs_ps(x);
  const __m512 z = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(-5.70498872745e-3f);
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(2.06390887954e-2f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-5.37397155531e-2f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.33314422036e-1f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-3.33332819422e-1f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, z), x, x);
  const __m512 e = exp512(_mm512_add_ps(ax, ax));
  __m512 big = _mm512_sub_ps(_mm512_set1_ps(1.0f),
                             _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, _mm512_set1_ps(1.0f))));
  big = _mm512_mask_sub_ps(big, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ),
                           _mm512_setzero_ps(), big);
  const __m512 r = _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.625f), _CMP_LT_OQ), small);
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);  // NaN stays NaN
}

// Gelu, tanh form, of 16 floats, as gelu_tanh_f32 (math.h): x / (1 + exp(-2u)),
// u = sqrt(2/pi) (x + 0.044715 x^3).
FUSEBOX_AVX512 inline __m512 gelu_tanh512(__m512 x) {
  const __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  const __m512 u = _mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f),
                                 _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), x3, x));
  const __m512 e = exp512(_mm512_mul_ps(_mm512_set1_ps(-2.0f), u));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// y[i] = F(x[i]) for n floats with a 16-wide F (in place is fine); the tail is masked.
template <__m512 (*F)(__m512)>
FUSEBOX_AVX512 inline void map_span512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, F(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, F(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

// Tree reductions of 16 lanes (GCC 12's _mm512_reduce_* trip -Wmaybe-uninitialized).
FUSEBOX_AVX512 inline float hmax512(__m512 v) {
  v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_max_ps(v, _mm512_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_max_ps(v, _mm512_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_cvtss_f32(v);
}
FUSEBOX_AVX512 inline float hsum512(__m512 v) {
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_add_ps(v, _mm512_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_cvtss_f32(v);
}

// In-register transpose: on return r[p] holds what was column p of the 16 x 16 block r[0..15].
// Stages: 32-bit unpacks pair rows, 64-bit shuffles make 4-row groups per 128-bit lane, two
// rounds of 128-bit lane shuffles put the four groups of each column side by side.
FUSEBOX_AVX512 inline void transpose16x16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);      // lane L: r_i[4L], r_i+1[4L], .. [4L+1]
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);  // the same for 4L+2, 4L+3
  }
  for (int g = 0; g < 4; ++g) {  // u[4g + d], lane L: rows 4g..4g+3 of column 4L + d
    u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int d = 0; d < 4; ++d) {
    const __m512 a = _mm512_shuffle_f32x4(u[d], u[4 + d], 0x88);  // cols d, 8+d of rows 0-7
    const __m512 b = _mm512_shuffle_f32x4(u[8 + d], u[12 + d], 0x88);
    const __m512 c = _mm512_shuffle_f32x4(u[d], u[4 + d], 0xDD);  // cols 4+d, 12+d
    const __m512 e = _mm512_shuffle_f32x4(u[8 + d], u[12 + d], 0xDD);
    r[d] = _mm512_shuffle_f32x4(a, b, 0x88);
    r[8 + d] = _mm512_shuffle_f32x4(a, b, 0xDD);
    r[4 + d] = _mm512_shuffle_f32x4(c, e, 0x88);
    r[12 + d] = _mm512_shuffle_f32x4(c, e, 0xDD);
  }
}

}  // namespace fusebox::cpu
