// conv_planes.h's loops, written once over Highway: compiled once per Highway target
// (foreach_target.h re-includes this file; ops/cpu/CMakeLists.txt says which targets).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/conv_planes.cpp"
#include "ops/cpu/conv_planes.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <limits>

HWY_BEFORE_NAMESPACE();
namespace fusebox::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR  // vector targets only: the portable level is conv.cpp's loops

// ---- CopyEven ---------------------------------------------------------------------------------

void CopyEven(const float* src, const float* end, float* dst, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n && src + 2 * i + 2 * N <= end; i += N) {
    const auto lo = hn::LoadU(d, src + 2 * i), hi = hn::LoadU(d, src + 2 * i + N);
    hn::StoreU(hn::ConcatEven(d, hi, lo), d, dst + i);
  }
  for (; i < n; ++i) dst[i] = src[2 * i];
}

// ---- DwRows -----------------------------------------------------------------------------------

// R output rows x V vectors from column o, in registers across all taps: R * V independent FMA
// chains, enough to cover the FMA latency even when a row is one vector wide (a 14x14 plane).
// Masked: one vector, its first n lanes (the row's last outputs).
template <int R, int V, bool Masked>
HWY_INLINE void DwBlock(const Dims& dm, const float* const* rows, const int64_t* taps,
                        const float* w, float bias, int64_t o, int64_t n, float* y) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto m = hn::FirstN(d, static_cast<size_t>(n));
  hn::Vec<decltype(d)> acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = hn::Set(d, bias);
  const int64_t nt = dm.row_taps();
  for (int64_t t = 0; t < nt; ++t)
    for (int64_t kw = 0; kw < dm.kw; ++kw) {
      const auto wt = hn::Set(d, w[t * dm.kw + kw]);
      for (int r = 0; r < R; ++r) {
        const float* row = rows[r * nt + t];
        if (!row) continue;
        const float* src = row + taps[kw] + o;
        for (int v = 0; v < V; ++v)
          acc[r][v] = hn::MulAdd(wt, Masked ? hn::MaskedLoad(m, d, src) : hn::LoadU(d, src + N * v),
                                 acc[r][v]);
      }
    }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) {
      if (Masked)
        hn::BlendedStore(acc[r][v], m, d, y + r * dm.ow + o);
      else
        hn::StoreU(acc[r][v], d, y + r * dm.ow + o + N * v);
    }
}

template <int R>
HWY_INLINE void DwRowsR(const Dims& dm, const float* const* rows, const int64_t* taps,
                        const float* w, float bias, float* y) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  int64_t o = 0;
  for (; o + 2 * N <= dm.ow; o += 2 * N) DwBlock<R, 2, false>(dm, rows, taps, w, bias, o, 2 * N, y);
  for (; o + N <= dm.ow; o += N) DwBlock<R, 1, false>(dm, rows, taps, w, bias, o, N, y);
  if (o < dm.ow) DwBlock<R, 1, true>(dm, rows, taps, w, bias, o, dm.ow - o, y);
}

void DwRows(const Dims& dm, int R, const float* const* rows, const int64_t* taps, const float* w,
            float bias, float* y) {
  if (R == 4)
    DwRowsR<4>(dm, rows, taps, w, bias, y);
  else
    DwRowsR<1>(dm, rows, taps, w, bias, y);
}

// ---- MaxRow -----------------------------------------------------------------------------------

// Two vectors of columns at a time, then one, the rest masked. Max(v, acc) is x86's max_ps(v,
// acc), which returns acc when v is NaN, as std::max(acc, v) does on the plain path.
void MaxRow(const Dims& dm, const float* const* rows, const int64_t* taps, float* y) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto lowest = hn::Set(d, -std::numeric_limits<float>::infinity());
  const int64_t nt = dm.row_taps();
  int64_t o = 0;
  for (; o + 2 * N <= dm.ow; o += 2 * N) {
    auto a0 = lowest, a1 = lowest;
    for (int64_t t = 0; t < nt; ++t) {
      if (!rows[t]) continue;
      for (int64_t kw = 0; kw < dm.kw; ++kw) {
        const float* src = rows[t] + taps[kw] + o;
        a0 = hn::Max(hn::LoadU(d, src), a0);
        a1 = hn::Max(hn::LoadU(d, src + N), a1);
      }
    }
    hn::StoreU(a0, d, y + o);
    hn::StoreU(a1, d, y + o + N);
  }
  for (; o < dm.ow; o += N) {
    const auto m = hn::FirstN(d, static_cast<size_t>(std::min(N, dm.ow - o)));
    auto a = lowest;
    for (int64_t t = 0; t < nt; ++t) {
      if (!rows[t]) continue;
      for (int64_t kw = 0; kw < dm.kw; ++kw)
        a = hn::Max(hn::MaskedLoad(m, d, rows[t] + taps[kw] + o), a);
    }
    hn::BlendedStore(a, m, d, y + o);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace fusebox::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
