#pragma once
// The one AVX-512 intrinsic path left beside the code written once over Highway: packed_gemm.cpp's
// 16 x 16 transpose of B panels for the AVX-512 kernel. It has no AVX2 twin (that level packs
// with transpose.h's 8 x 8 blocks); moving it to those blocks waits for a benchmark that shows
// them as fast on 32-float-wide panels. A FUSEBOX_AVX512 function is compiled for AVX-512
// whatever the build's -march and runs only where the kernel's Isa (isa.h, fixed in prepare) is
// kAvx512. Its target list is Highway's AVX3 target's (hwy/ops/set_macros-inl.h:
// HWY_TARGET_STR_AVX3), whose support isa.cpp asks Highway about.
#include <immintrin.h>

#include <cstdint>

#define FUSEBOX_AVX512                                                                      \
  __attribute__((target("sse2,ssse3,sse4.1,sse4.2,pclmul,aes,avx,avx2,bmi,bmi2,fma,f16c," \
                        "avx512f,avx512vl,avx512dq,avx512bw")))

namespace fusebox::cpu {

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
