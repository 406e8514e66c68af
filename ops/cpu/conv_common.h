#pragma once
// What the CPU's convolution kernels share, NCHW (conv.cpp) and channels-last (conv_nhwc.cpp):
// the window's dims as 3-D, and the activation a Conv applies to its outputs while they are in
// cache (core/ir/conv_params.h: ConvActivation).
#include <cstdint>

#include "core/backend/kernel.h"
#include "core/ir/conv_params.h"
#include "ops/cpu/isa.h"
#include "ops/cpu/vector_math.h"

namespace fusebox::cpu {

// The spatial dims as 3-D, depth x height x width (a 2-D conv has depth 1, a 1-D one height 1 too).
// The loops below walk output rows: row `orow` is (od, oh) = (orow / oh, orow % oh), and its
// kernel rows over depth and height, t = kd * KH + kh, each read one input row (or padding).
struct Dims {
  int64_t d = 1, h = 1, w = 1, od = 1, oh = 1, ow = 1, kd = 1, kh = 1, kw = 1;
  int64_t sd = 1, sh = 1, sw = 1, dd = 1, dh = 1, dw = 1, pd = 0, ph = 0, pw = 0;
  int64_t rows() const { return od * oh; }      // output rows
  int64_t row_taps() const { return kd * kh; }  // kernel rows
  int64_t plane() const { return d * h * w; }   // one input channel
};

inline Dims dims_of(const ir::WindowGeometry& g) {
  Dims d;
  const size_t r = g.in.size();
  // Right-aligned: the last geometry dim is the width.
  int64_t* in[3] = {&d.d, &d.h, &d.w};
  int64_t* out[3] = {&d.od, &d.oh, &d.ow};
  int64_t* k[3] = {&d.kd, &d.kh, &d.kw};
  int64_t* s[3] = {&d.sd, &d.sh, &d.sw};
  int64_t* dil[3] = {&d.dd, &d.dh, &d.dw};
  int64_t* pad[3] = {&d.pd, &d.ph, &d.pw};
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    *in[j] = g.in[i], *out[j] = g.out[i], *k[j] = g.kernel[i];
    *s[j] = g.strides[i], *dil[j] = g.dilations[i], *pad[j] = g.pad_begin[i];
  }
  return d;
}

// The convs' weight (input 1) when the context hands it as a constant, else null.
inline const ir::Tensor* constant_weight(const exec::KernelContext& ctx) {
  return ctx.constants && ctx.constants->size() > 1 ? (*ctx.constants)[1] : nullptr;
}

// The fused activation over n floats in place: ReLU and sigmoid on the vector code the GEMM's
// epilogue uses, Clip, HardSigmoid and HardSwish as the standalone ops' kernels compute them
// (ew_ops.h, elementwise.cpp), on the level's vector code (vector_math.h, over Highway).
void apply_activation(const ir::ConvActivation& act, Isa isa, float* v, int64_t n);

// The GEMM epilogue's own activation where it has one (applied in registers before the store):
// ReLU and sigmoid; kNone for the others, which apply_activation applies after the GEMM.
GemmAct epilogue_act(const ir::ConvActivation& act);

// How a GEMM conv shares out its work, in either layout: items are (image, group, tile of output
// positions, column chunk), the chunk fastest. A conv with fewer tiles than two per thread
// (ResNet's 7x7 and 14x14 layers) splits its output channels into chunks of whole weight panels
// too, so the items divide evenly: a team left with one thread's worth of work reads as contention
// to parallel.h and steps every later region down. Each thread of the team takes `chunk`
// consecutive items and one scratch slot (item / chunk).
struct ConvShare {
  int64_t col_chunks = 1, items = 0, chunk = 1;
  int team = 1;
};
// tiles: over all images and groups; cog: output channels per group; flops: the whole conv's.
ConvShare share_conv(int64_t tiles, int64_t cog, double flops);

// What item `item` of a ConvShare covers: image n, group g, positions [p0, p0 + rows) of the
// image, output channels [c0, c0 + cn) of the group.
struct ConvItem {
  int64_t n = 0, g = 0, p0 = 0, rows = 0, c0 = 0, cn = 0;
};
// tiles, tile_rows: per image and group; positions: per image.
ConvItem conv_item(int64_t item, int64_t col_chunks, int64_t tiles, int64_t tile_rows, int64_t positions,
                   int64_t groups, int64_t cog);

}  // namespace fusebox::cpu
