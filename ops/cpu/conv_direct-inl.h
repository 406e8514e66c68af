// The channels-last direct convolution (conv_nhwc.cpp's run_direct, for convs with few input
// channels, whose im2col GEMM would be mostly copying), written once over Google Highway's
// vectors: one output row, every weight panel, in blocks of R output columns x NV vectors of
// output channels, each block's bias, kernel taps and input channels accumulated in registers and
// stored once.
//
// A Highway "-inl" header, included once per target through conv_direct.h: it defines
// ConvDirectRow in fusebox::cpu::N_AVX3, N_AVX2, ...

#ifndef FUSEBOX_OPS_CPU_CONV_DIRECT_ARGS_
#define FUSEBOX_OPS_CPU_CONV_DIRECT_ARGS_
#include <cstdint>

#include "ops/cpu/conv_common.h"  // Dims

namespace fusebox::cpu {
// What one output row reads, the same for every target. Element offsets are into the image's
// input.
struct DirectRowArgs {
  const Dims* d = nullptr;            // the conv's geometry
  const int64_t* row_off = nullptr;   // per kernel row inside the input: offset of its input row
  const int64_t* row_tap0 = nullptr;  // ... and the index of its first tap
  int64_t rows = 0;                   // how many
  int64_t lo = 0, hi = 0;  // output columns whose whole window lies inside the input's width
  int64_t xs_w = 0;        // input elements between consecutive input columns
  int64_t xs_c = 0;        // ... and input channels
  int64_t c_in = 0;
  int64_t c_out = 0;                  // output elements between consecutive output columns
  const float* weight = nullptr;      // packed in panels of kConvPanelWidth columns,
  int64_t k_stride = 0;               // k_stride floats apart
};
}  // namespace fusebox::cpu
#endif

// Per-target include guard (Highway's idiom): the rest is read again for each target.
#if defined(FUSEBOX_OPS_CPU_CONV_DIRECT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FUSEBOX_OPS_CPU_CONV_DIRECT_INL_H_
#undef FUSEBOX_OPS_CPU_CONV_DIRECT_INL_H_
#else
#define FUSEBOX_OPS_CPU_CONV_DIRECT_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>

#include "core/ir/conv_params.h"  // kConvPanelWidth

HWY_BEFORE_NAMESPACE();
namespace fusebox::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR  // vector targets only

// One block: output columns [0, R) into y, from xn (the image's input) with the block's first
// column at tap 0 at element x0 (negative at a left edge: only taps inside the input are read).
// Output channels NV * N wide (N: the target's floats per vector), the last vector's valid lanes
// `last` (1..N), the weight panel `width` floats wide. Taps [k0, k1) of each kernel row: the whole
// row for an interior block, the ones inside the input's width at an edge. CI: the input channels
// (1..4: the loop over them unrolls; 0: a.c_in). Only a partial last vector is masked: AMD
// microcodes masked stores (179a606).
template <int R, int NV, int CI>
HWY_INLINE void DirectBlock(const DirectRowArgs& a, const float* xn, int64_t x0, int64_t k0,
                            int64_t k1, const float* panel, int64_t width, const float* bias,
                            int last, float* y) {
  constexpr hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(d));
  const bool partial = last < N;
  const auto mask = hn::FirstN(d, static_cast<size_t>(last));
  const int64_t col_step = a.d->sw * a.xs_w, tap_step = a.d->dw * a.xs_w;
  V acc[R][NV];
  for (int v = 0; v < NV; ++v) {
    const V b = v == NV - 1 && partial ? hn::MaskedLoad(mask, d, bias + N * v)
                                       : hn::LoadU(d, bias + N * v);
    for (int r = 0; r < R; ++r) acc[r][v] = b;
  }
  const int64_t c_in = CI ? CI : a.c_in;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t kw = k0; kw < k1; ++kw) {
      const float* xk = xn + (x0 + a.row_off[i] + kw * tap_step);
      const float* wk = panel + (a.row_tap0[i] + kw) * c_in * width;
#pragma GCC unroll 4
      for (int64_t ci = 0; ci < c_in; ++ci, wk += width) {
        V w[NV];
        for (int v = 0; v < NV; ++v) w[v] = hn::Load(d, wk + N * v);
        const float* xc = xk + ci * a.xs_c;
        for (int r = 0; r < R; ++r) {
          const V xv = hn::Set(d, xc[r * col_step]);
          for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(xv, w[v], acc[r][v]);
        }
      }
    }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) {
      float* yv = y + r * a.c_out + N * v;
      if (v == NV - 1 && partial)
        hn::BlendedStore(acc[r][v], mask, d, yv);
      else
        hn::StoreU(acc[r][v], d, yv);
    }
}

// The output row's columns for NV vectors of one panel: interior blocks of R columns, then of
// R / 2, the columns whose window reaches into the padding one at a time with their in-input
// taps only.
template <int R, int NV, int CI>
HWY_INLINE void DirectColumns(const DirectRowArgs& a, const float* xn, const float* panel,
                              int64_t width, const float* bias, int last, float* y) {
  const Dims& g = *a.d;
  int64_t ow = 0;
  while (ow < g.ow) {
    const int64_t x0 = (ow * g.sw - g.pw) * a.xs_w;
    float* yo = y + ow * a.c_out;
    if (ow >= a.lo && ow + R <= a.hi) {
      DirectBlock<R, NV, CI>(a, xn, x0, 0, g.kw, panel, width, bias, last, yo);
      ow += R;
      continue;
    }
    if (ow >= a.lo && ow + R / 2 <= a.hi) {
      DirectBlock<R / 2, NV, CI>(a, xn, x0, 0, g.kw, panel, width, bias, last, yo);
      ow += R / 2;
      continue;
    }
    const int64_t base = ow * g.sw - g.pw;
    const int64_t k0 = std::min(g.kw, base >= 0 ? 0 : (-base + g.dw - 1) / g.dw);
    const int64_t k1 =
        std::max(k0, std::min(g.kw, g.w - 1 - base < 0 ? 0 : (g.w - 1 - base) / g.dw + 1));
    DirectBlock<1, NV, CI>(a, xn, x0, k0, k1, panel, width, bias, last, yo);
    ++ow;
  }
}

template <int CI>
HWY_ATTR void DirectRowCi(const DirectRowArgs& a, const float* xn, const float* bias,
                          float* yrow) {
  constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(hn::ScalableTag<float>()));
  // Accumulators a block may hold: 16 of the 32 zmm, 12 of the 16 ymm (the rest hold the
  // weight vectors and the broadcast input value).
  constexpr int kAcc = HWY_TARGET <= HWY_AVX3 ? 16 : 12;
  constexpr int64_t kPanel = ir::kConvPanelWidth;
  for (int64_t col = 0; col < a.c_out; col += kPanel) {
    const int64_t valid = std::min(kPanel, a.c_out - col);
    const int64_t width = valid > 16 ? kPanel : 16;  // a narrow last panel is 16 floats wide
    const float* panel = a.weight + col * a.k_stride;
    // Two vectors of the panel at a time: on AVX3 the whole panel, on AVX2 its 16-column halves.
    for (int64_t h = 0; h < valid; h += 2 * N) {
      const int64_t cols = std::min(2 * N, valid - h);
      float* y = yrow + col + h;
      if (cols > N)
        DirectColumns<kAcc / 2, 2, CI>(a, xn, panel + h, width, bias + col + h,
                                       static_cast<int>(cols - N), y);
      else
        DirectColumns<kAcc, 1, CI>(a, xn, panel + h, width, bias + col + h,
                                   static_cast<int>(cols), y);
    }
  }
}

// One output row of image xn into yrow ([OW][C_out]), every panel of the weight. The input
// channels pick the specialization once per row.
HWY_ATTR inline void ConvDirectRow(const DirectRowArgs& a, const float* xn, const float* bias,
                                   float* yrow) {
  switch (a.c_in) {
    case 1: return DirectRowCi<1>(a, xn, bias, yrow);
    case 2: return DirectRowCi<2>(a, xn, bias, yrow);
    case 3: return DirectRowCi<3>(a, xn, bias, yrow);
    case 4: return DirectRowCi<4>(a, xn, bias, yrow);
    default: return DirectRowCi<0>(a, xn, bias, yrow);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace fusebox::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
