#pragma once
// One output row of a channels-last depthwise conv (conv_nhwc.cpp), the part that is vector code:
// depthwise_row.cpp writes it once over Highway and compiles it for AVX2 and AVX-512.
//
// Output row (od, oh) of one image: the kernel rows inside the input are listed once (rows[i]
// the input row, tap0[i] the index of its first tap), then each output column sums its taps, a
// vector of channels at a time. Columns [lo, hi) have every tap inside the input: the vector paths
// take four of them per step, sharing each weight load; the others take their in-input taps only.
#include <algorithm>
#include <cstdint>

#include "core/ir/conv_params.h"
#include "ops/cpu/conv_common.h"

namespace fusebox::cpu {

struct DwRow {
  const float* rows[ir::kDepthwiseMaxKernelRows];
  int64_t tap0[ir::kDepthwiseMaxKernelRows];
  int64_t count = 0;
  int64_t lo = 0, hi = 0;  // output columns whose window lies inside the input's width
};

// Taps [k0, k1) of output column ow that read inside the input's width.
inline void dw_cols(const Dims& d, int64_t ow, int64_t* k0, int64_t* k1) {
  const int64_t base = ow * d.sw - d.pw;
  *k0 = std::min(d.kw, base >= 0 ? 0 : (-base + d.dw - 1) / d.dw);
  *k1 = std::max(*k0, std::min(d.kw, d.w - 1 - base < 0 ? 0 : (d.w - 1 - base) / d.dw + 1));
}

// y[ow][c] = bias[c] + sum over the row's taps of x[..][c] * w[tap][c], for the c channels of
// every output column of the row (y: [OW][C], w: [tap][C]). Per Highway target.
namespace N_AVX3 {
void DwRowChannelsLast(const Dims& d, int64_t channels, const DwRow& r, const float* w, const float* bias, float* y);
}
namespace N_AVX2 {
void DwRowChannelsLast(const Dims& d, int64_t channels, const DwRow& r, const float* w, const float* bias, float* y);
}

}  // namespace fusebox::cpu
