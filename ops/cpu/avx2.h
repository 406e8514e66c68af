#pragma once
// AVX2 + FMA code paths: functions marked FUSEBOX_AVX2 are compiled for AVX2 and FMA whatever the
// build's -march, and run only where the kernel's Isa (isa.h, fixed in prepare) is kAvx2. The
// target list is Highway's AVX2 target's (HWY_TARGET_STR_AVX2), so the math written once over
// Highway (vec_math-inl.h) inlines here, as avx512.h says.
#include <immintrin.h>

#include <cstdint>

#define FUSEBOX_AVX2 \
  __attribute__((target("sse2,ssse3,sse4.1,sse4.2,pclmul,aes,avx,avx2,bmi,bmi2,fma,f16c")))

namespace fusebox::cpu {

// Lanes [0, count) set, for _mm256_maskload_ps / _mm256_maskstore_ps (count in 0..8).
FUSEBOX_AVX2 inline __m256i tail_mask256(int64_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lanes);
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

}  // namespace fusebox::cpu
