// transpose.h's blocks, written once over Highway: compiled once per Highway target
// (foreach_target.h re-includes this file; ops/cpu/CMakeLists.txt says which targets).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/transpose.cpp"
#include "ops/cpu/transpose.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fusebox::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR  // vector targets only

// 256-bit vectors on both levels, as the AVX-512 level ran this copy before it was written once:
// each column of a block is stored to its own destination row either way. (packed_gemm.cpp
// keeps an AVX-512 16 x 16 transpose for the B panels of the AVX-512 kernel.)
using D8 = hn::CappedTag<float, 8>;

// out[c][i] = src[i * ld + c] for i, c < 8. Each vector starts as the same 4 columns of two rows
// four apart (row i in the low 128-bit block, row i + 4 in the high one: the loads do the block
// crossing), so two rounds of in-block 4 x 4 transposes finish it: 32-bit interleaves pair rows,
// 64-bit ones make the 4-row groups.
HWY_INLINE void LoadTranspose8x8(const float* src, int64_t ld, hn::Vec<D8> out[8]) {
  const D8 d;
  const hn::Half<D8> dh;
  const hn::Repartition<double, D8> dd;
  hn::Vec<D8> r[8];
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < 2; ++h)  // r[4h + i]: columns 4h..4h+3 of rows i and i + 4
      r[4 * h + i] = hn::Combine(d, hn::LoadU(dh, src + (i + 4) * ld + 4 * h),
                                 hn::LoadU(dh, src + i * ld + 4 * h));
  for (int h = 0; h < 2; ++h) {
    const hn::Vec<D8>* g = r + 4 * h;
    const auto t0 =
        hn::BitCast(dd, hn::InterleaveLower(d, g[0], g[1]));  // per block: r0[0] r1[0] r0[1] r1[1]
    const auto t1 =
        hn::BitCast(dd, hn::InterleaveUpper(d, g[0], g[1]));  //            r0[2] r1[2] r0[3] r1[3]
    const auto t2 = hn::BitCast(dd, hn::InterleaveLower(d, g[2], g[3]));
    const auto t3 = hn::BitCast(dd, hn::InterleaveUpper(d, g[2], g[3]));
    out[4 * h + 0] =
        hn::BitCast(d, hn::InterleaveLower(dd, t0, t2));  // column 4h: rows 0-3 | rows 4-7
    out[4 * h + 1] = hn::BitCast(d, hn::InterleaveUpper(dd, t0, t2));
    out[4 * h + 2] = hn::BitCast(d, hn::InterleaveLower(dd, t1, t3));
    out[4 * h + 3] = hn::BitCast(d, hn::InterleaveUpper(dd, t1, t3));
  }
}

// Destination rows outermost: each 8-row strip of dst is written whole before the next, so a
// destination larger than L1 (the AVX2 level's A block of 96 rows) is not written in passes.
template <bool kScale>
HWY_INLINE void Blocks(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float scale,
                       float* dst, int64_t dst_ld) {
  const D8 d;
  const auto s = hn::Set(d, scale);
  hn::Vec<D8> v[8];
  for (int64_t c = 0; c + 8 <= cols; c += 8)
    for (int64_t r = 0; r + 8 <= rows; r += 8) {
      LoadTranspose8x8(src + r * src_ld + c, src_ld, v);  // v[j]: column c + j over rows r..r+7
      for (int j = 0; j < 8; ++j)
        hn::StoreU(kScale ? hn::Mul(s, v[j]) : v[j], d, dst + (c + j) * dst_ld + r);
    }
}

void TransposeBlocks8(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float scale,
                      float* dst, int64_t dst_ld) {
  if (scale == 1.0f)
    Blocks<false>(src, src_ld, rows, cols, scale, dst, dst_ld);
  else
    Blocks<true>(src, src_ld, rows, cols, scale, dst, dst_ld);
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace fusebox::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
