// depthwise_row.h's row, written once over Highway: compiled once per Highway target
// (foreach_target.h re-includes this file; ops/cpu/CMakeLists.txt says which targets).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/depthwise_row.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "ops/cpu/depthwise_row.h"

HWY_BEFORE_NAMESPACE();
namespace fusebox::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR  // vector targets only: the portable level is conv_nhwc.cpp's loop

// Only the last vector of a row is masked (kFull false): with every load and store masked, the
// AVX2 loop ran 1.8x slower on a Zen 4 (depthwise 3x3 64 at 56x56: 228 against 125 us), slower
// than the channels-first kernel, and AMD microcodes AVX-512's masked stores too (179a606).
template <bool kFull, class D, class M>
HWY_INLINE hn::Vec<D> Load(D d, M m, const float* p) {
  if constexpr (kFull) return hn::LoadU(d, p);
  else return hn::MaskedLoad(m, d, p);
}
template <bool kFull, class D, class M, class V>
HWY_INLINE void Store(D d, M m, V v, float* p) {
  if constexpr (kFull) hn::StoreU(v, d, p);
  else hn::BlendedStore(v, m, d, p);
}

// Channels [c, c + valid) of the row, one vector of them.
template <bool kFull>
void DwChannels(const Dims& dm, int64_t channels, const DwRow& r, const float* w, const float* bias, float* y,
                int64_t c, size_t valid) {
  const hn::ScalableTag<float> d;
  const auto m = hn::FirstN(d, valid);
  const int64_t C = channels, step = dm.sw * C, tap_step = dm.dw * C;
  const auto b = Load<kFull>(d, m, bias + c);
  int64_t ow = 0;
  while (ow < dm.ow) {
    const int64_t base = (ow * dm.sw - dm.pw) * C + c;
    if (ow >= r.lo && ow + 4 <= r.hi) {  // four columns, every tap inside
      auto a0 = b, a1 = b, a2 = b, a3 = b;
      for (int64_t i = 0; i < r.count; ++i) {
        const float* xs = r.rows[i] + base;
        const float* ws = w + r.tap0[i] * C + c;
        for (int64_t kw = 0; kw < dm.kw; ++kw, xs += tap_step, ws += C) {
          const auto wv = Load<kFull>(d, m, ws);
          a0 = hn::MulAdd(Load<kFull>(d, m, xs), wv, a0);
          a1 = hn::MulAdd(Load<kFull>(d, m, xs + step), wv, a1);
          a2 = hn::MulAdd(Load<kFull>(d, m, xs + 2 * step), wv, a2);
          a3 = hn::MulAdd(Load<kFull>(d, m, xs + 3 * step), wv, a3);
        }
      }
      float* out = y + ow * C + c;
      Store<kFull>(d, m, a0, out);
      Store<kFull>(d, m, a1, out + C);
      Store<kFull>(d, m, a2, out + 2 * C);
      Store<kFull>(d, m, a3, out + 3 * C);
      ow += 4;
      continue;
    }
    int64_t k0, k1;
    dw_cols(dm, ow, &k0, &k1);
    auto a = b;
    for (int64_t i = 0; i < r.count; ++i)
      for (int64_t kw = k0; kw < k1; ++kw)
        a = hn::MulAdd(Load<kFull>(d, m, r.rows[i] + (base + kw * tap_step)),
                       Load<kFull>(d, m, w + (r.tap0[i] + kw) * C + c), a);
    Store<kFull>(d, m, a, y + ow * C + c);
    ++ow;
  }
}

void DwRowChannelsLast(const Dims& dm, int64_t channels, const DwRow& r, const float* w, const float* bias,
                       float* y) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  for (int64_t c = 0; c < channels; c += lanes) {
    if (channels - c >= lanes) DwChannels<true>(dm, channels, r, w, bias, y, c, static_cast<size_t>(lanes));
    else DwChannels<false>(dm, channels, r, w, bias, y, c, static_cast<size_t>(channels - c));
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace fusebox::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
