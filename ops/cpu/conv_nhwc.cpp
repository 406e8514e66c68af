// The channels-last kernels (core/ir/conv_params.h): NhwcConv, NhwcMaxPool, NhwcAveragePool,
// NhwcGlobalAveragePool and NhwcGlobalMaxPool, over activations stored [N, spatial..., C]. The
// channels_last pass (core/passes/channels_last.cpp) makes them; this is the layout in which a
// convolution needs no transpose anywhere:
//
//  * NhwcConv is the packed GEMM C[p][co] = A[p][k] B[k][co] + bias with the output positions as
//    rows, written straight into the output (whose rows are the positions). k runs over (kernel
//    tap, input channel), so each tap's channels are one contiguous run of the input: a pointwise
//    conv's A is the input itself, and any other conv copies a tile of kConvTileRows rows of A at a
//    time into its thread's slot with one memcpy per kernel row (a run of taps). The weight is
//    reordered to [k][C_out] and packed once in prepare (as MatMul packs its weight), so at run
//    time there is the GEMM, the row copies and nothing else. The activation is the GEMM's
//    epilogue (ReLU, sigmoid) or applied to the tile's rows while they are in cache.
//  * A depthwise conv (one input and one output channel per group) is a loop over the channels,
//    a vector of them at a time, with the weight reordered to [tap][C] so that each tap's weights
//    are a vector too: four output columns per step share each weight load (AVX-512, AVX2), and
//    the columns whose windows reach into the padding take the taps inside the input only.
//  * A 3x3 stride-1 conv the winograd pass marked is Winograd F(2x2, 3x3) (conv_winograd.h): 16
//    GEMMs over transformed tiles, 2.25x fewer multiplies.
//  * The pools are plain loops over the channels, which the compiler vectorizes; they are
//    memory-bound. Sums are kept in double, as the NCHW kernels keep them.
//
// A weight that is not a constant (node-by-node evaluation hands none) is reordered into the
// scratch at each run and multiplied by OpenBLAS: correct, not fast, and never what a compiled
// plan runs (the pass converts only Convs whose weight is a constant).
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/conv_params.h"
#include "core/ir/shape.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/conv_common.h"
#include "ops/cpu/conv_direct.h"  // first of the Highway headers
#include "ops/cpu/conv_winograd.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/depthwise_row.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/packed_gemm.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

namespace {

// ---- NhwcConv --------------------------------------------------------------------------------

struct NhwcConvState {
  ir::ConvShape c;  // the geometry, read channels-first
  Dims d;
  int64_t k = 0, row_floats = 0, taps = 0;  // GEMM depth (taps x channels per group), A row stride
  int64_t cig = 0, cog = 0, groups = 1, c_in = 0, c_out = 0;
  int64_t positions = 0;  // output positions per image
  int64_t tiles = 0, tile_rows = 0;         // tiles of output positions per image and group
  bool pointwise = false, depthwise = false;
  Isa isa = Isa::kPortable;
  ir::ConvActivation act;
  std::vector<PackedB> packed;  // GEMM, constant weight: per group, op(B) [k][cog], k = (tap, ci)
  std::vector<float> dw;        // depthwise, constant weight: [tap][C]
  std::vector<float> zeros;     // depthwise or direct without a bias: C_out zeros
  int64_t weight_floats = 0;    // scratch before the slots: the weight reordered at each run
  // The input's element strides per channel, column, row and depth plane, and per image: a
  // channels-last input, or a channels-first one (channels_first_input: a stem reading the graph's
  // input in place).
  bool channels_first_input = false;
  int64_t xs_c = 1, xs_w = 1, xs_h = 1, xs_d = 1, x_image = 0;
  bool direct = false;  // few input channels, one group: the GEMM fed from the input (below)
  std::optional<WinogradConv> winograd;  // attribute winograd, a constant weight, a 3x3 stride-1 shape
};

// The direct path: at most this many input channels, one group, a constant weight, a vector ISA
// (the convs the channels_last pass lets read a channels-first input).
constexpr int64_t kDirectMaxChannels = ir::kChannelsFirstInputMaxChannels;

// W[g * cog + co][ci][t] -> dst[(t * cig + ci) * cog + co]: group g's op(B), row-major.
void reorder_group(const NhwcConvState& st, const float* w, int64_t g, float* dst) {
  for (int64_t co = 0; co < st.cog; ++co)
    for (int64_t ci = 0; ci < st.cig; ++ci) {
      const float* src = w + ((g * st.cog + co) * st.cig + ci) * st.taps;
      for (int64_t t = 0; t < st.taps; ++t) dst[(t * st.cig + ci) * st.cog + co] = src[t];
    }
}

// Depthwise: W[c][0][t] -> dst[t * C + c].
void reorder_depthwise(const NhwcConvState& st, const float* w, float* dst) {
  for (int64_t c = 0; c < st.c_out; ++c)
    for (int64_t t = 0; t < st.taps; ++t) dst[t * st.c_out + c] = w[c * st.taps + t];
}

// NhwcConv's scratch in this context: no room for the weight when it is a constant.
size_t nhwc_conv_scratch(const exec::KernelContext& ctx) {
  const ir::Shape x = ir::nhwc_conv_input_as_channels_first(ctx.node, ctx.inputs.at(0).shape);
  const ir::ConvShape c =
      ir::conv_shape(ctx.node, x, ctx.inputs.at(1).shape, ctx.inputs.size() > 2 ? &ctx.inputs[2].shape : nullptr);
  const bool constant = constant_weight(ctx) != nullptr;
  return ir::nhwc_conv_scratch_bytes(c, ir::reads_channels_first(ctx.node), constant,
                                     ir::takes_winograd(ctx.node, c, constant));
}

std::shared_ptr<const void> prepare_nhwc_conv(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) require_dtype(ctx, i, ir::DType::f32);
  NhwcConvState st;
  st.c = or_fail(ctx, [&] {
    if (ctx.inputs[0].shape.size() < 3)
      throw Error("input " + ir::shape_str(ctx.inputs[0].shape) + " must be [N, spatial..., C]");
    return ir::conv_shape(ctx.node, ir::nhwc_conv_input_as_channels_first(ctx.node, ctx.inputs[0].shape),
                          ctx.inputs[1].shape, ctx.inputs.size() > 2 ? &ctx.inputs[2].shape : nullptr);
  });
  st.channels_first_input = ir::reads_channels_first(ctx.node);
  if (ir::channels_last(st.c.output_shape()) != ctx.outputs[0].shape)
    fail(ctx, "output " + ir::shape_str(ctx.outputs[0].shape) + " is not the convolution's " +
                  ir::shape_str(ir::channels_last(st.c.output_shape())));
  st.d = dims_of(st.c.g);
  st.k = st.c.k();
  st.row_floats = ir::nhwc_conv_row_floats(st.c);
  st.taps = st.c.g.kernel_size();
  st.cig = st.c.c_in_per_group;
  st.cog = st.c.c_out_per_group;
  st.groups = st.c.group;
  st.c_in = st.c.c_in;
  st.c_out = st.c.c_out;
  st.positions = st.d.rows() * st.d.ow;
  st.tiles = (st.positions + ir::kConvTileRows - 1) / ir::kConvTileRows;
  st.tile_rows = st.tiles ? (st.positions + st.tiles - 1) / st.tiles : 0;
  // A channels-first input always goes through the im2col (or the direct path): its channels are
  // not contiguous.
  st.pointwise = st.c.pointwise() && !st.channels_first_input;
  st.depthwise = ir::nhwc_depthwise(st.c) && !st.channels_first_input;
  const int64_t plane = st.d.plane();
  if (st.channels_first_input) {
    st.xs_w = 1, st.xs_h = st.d.w, st.xs_d = st.d.h * st.d.w, st.xs_c = plane;
  } else {
    st.xs_c = 1, st.xs_w = st.c_in, st.xs_h = st.d.w * st.c_in, st.xs_d = st.d.h * st.d.w * st.c_in;
  }
  st.x_image = plane * st.c_in;
  st.isa = kernel_isa(ctx);
  st.act = or_fail(ctx, [&] { return ir::conv_activation(ctx.node); });
  const ir::Tensor* weight = constant_weight(ctx);
  st.weight_floats = weight ? 0 : ir::nhwc_conv_weight_floats(st.c);  // a constant is reordered here, once
  const bool winograd = ir::takes_winograd(ctx.node, st.c, weight != nullptr);
  const size_t need = ir::nhwc_conv_scratch_bytes(st.c, st.channels_first_input, weight != nullptr, winograd);
  if (ctx.scratch_bytes < need)
    fail(ctx, "needs " + std::to_string(need) + " scratch bytes, the plan gives " + std::to_string(ctx.scratch_bytes));
  for (int64_t v : {st.k, st.cog, st.positions, st.c_in, st.c_out, st.row_floats})
    if (!fits_blas_int(v)) fail(ctx, "GEMM dimension " + std::to_string(v) + " exceeds the BLAS int range");
  st.direct = weight && !st.depthwise && st.groups == 1 && st.c_in <= kDirectMaxChannels && st.isa != Isa::kPortable &&
              st.d.row_taps() <= ir::kDepthwiseMaxKernelRows;
  if ((st.depthwise || st.direct) && !st.c.has_bias) st.zeros.assign(static_cast<size_t>(st.c_out), 0.0f);
  if (winograd) {
    st.winograd = make_winograd(st.c, weight->data<float>(), st.isa, st.act);
  } else if (weight) {
    const float* w = weight->data<float>();
    if (st.depthwise) {
      st.dw.resize(static_cast<size_t>(st.taps * st.c_out));
      reorder_depthwise(st, w, st.dw.data());
    } else {
      std::vector<float> b(static_cast<size_t>(st.k * st.cog));
      for (int64_t g = 0; g < st.groups; ++g) {
        reorder_group(st, w, g, b.data());
        st.packed.push_back(PackedB::pack(st.isa, b.data(), st.k, st.cog, false));
      }
    }
  }
  return exec::make_state(std::move(st));
}

// The im2col's copies are runs of a few to a few hundred floats (a stem conv's: 3 taps of 3
// channels, 9 floats). A libc call per run cost more than the GEMM on MobileNet's stem (37,000 runs
// a call), so they are copied inline through GCC's generic vector types (8 floats: one move for the
// build's target), the last 0-7 floats one by one; ops/cpu/CMakeLists.txt stops GCC from turning
// these loops back into memmove calls.
using Floats8 = float __attribute__((vector_size(32), aligned(4), may_alias));

inline void copy_run(float* __restrict d, const float* __restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) *reinterpret_cast<Floats8*>(d + i) = *reinterpret_cast<const Floats8*>(s + i);
  switch (n - i) {  // no loop: GCC would make it a memmove
    case 7: d[i + 6] = s[i + 6]; [[fallthrough]];
    case 6: d[i + 5] = s[i + 5]; [[fallthrough]];
    case 5: d[i + 4] = s[i + 4]; [[fallthrough]];
    case 4: d[i + 3] = s[i + 3]; [[fallthrough]];
    case 3: d[i + 2] = s[i + 2]; [[fallthrough]];
    case 2: d[i + 1] = s[i + 1]; [[fallthrough]];
    case 1: d[i] = s[i]; [[fallthrough]];
    default: break;
  }
}

inline void zero_run(float* d, int64_t n) {
  const Floats8 zero = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) *reinterpret_cast<Floats8*>(d + i) = zero;
  switch (n - i) {
    case 7: d[i + 6] = 0.0f; [[fallthrough]];
    case 6: d[i + 5] = 0.0f; [[fallthrough]];
    case 5: d[i + 4] = 0.0f; [[fallthrough]];
    case 4: d[i + 3] = 0.0f; [[fallthrough]];
    case 3: d[i + 2] = 0.0f; [[fallthrough]];
    case 2: d[i + 1] = 0.0f; [[fallthrough]];
    case 1: d[i] = 0.0f; [[fallthrough]];
    default: break;
  }
}

// Rows [p0, p0 + rows) of A for image xn and group g into col (row r at col + r * row_floats):
// for each kernel tap the group's cig input channels (zeros in the padding). With one group and
// no width dilation, a kernel row's taps that fall inside the input are one contiguous run.
void nhwc_im2col(const NhwcConvState& st, const float* xn, int64_t g, int64_t p0, int64_t rows, float* col) {
  const Dims& d = st.d;
  const int64_t cig = st.cig, run = d.kw * cig;
  const bool run_taps = st.groups == 1 && d.dw == 1;  // channels-last: a kernel row's taps are one run
  // The tile's first position, then stepped one at a time: no division per row (a division per
  // row and kernel row cost more than the copies on a stem conv).
  int64_t ow = p0 % d.ow, oh = (p0 / d.ow) % d.oh, od = p0 / d.ow / d.oh;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = ow * d.sw - d.pw;  // input column of tap 0
    // Taps [k0, k1) of each kernel row read inside the input's width (no division without a
    // width dilation: two per row were a third of a stem conv's im2col).
    int64_t k0, k1;
    if (d.dw == 1) {
      k0 = std::clamp<int64_t>(-base, 0, d.kw);
      k1 = std::clamp<int64_t>(d.w - base, k0, d.kw);
    } else {
      k0 = std::min(d.kw, base >= 0 ? 0 : (-base + d.dw - 1) / d.dw);
      k1 = std::max(k0, std::min(d.kw, d.w - 1 - base < 0 ? 0 : (d.w - 1 - base) / d.dw + 1));
    }
    float* dst = col + r * st.row_floats;
    for (int64_t kd = 0; kd < d.kd; ++kd) {
      const int64_t id = od * d.sd - d.pd + kd * d.dd;
      for (int64_t kh = 0; kh < d.kh; ++kh, dst += run) {
        const int64_t ih = oh * d.sh - d.ph + kh * d.dh;
        if (id < 0 || id >= d.d || ih < 0 || ih >= d.h || k0 == k1) {
          zero_run(dst, run);
          continue;
        }
        // Tap kw reads input column base + kw * dw (inside the input for kw in [k0, k1)).
        const float* src = xn + id * st.xs_d + ih * st.xs_h + (base + k0 * d.dw) * st.xs_w + g * cig * st.xs_c;
        if (k0 > 0) zero_run(dst, k0 * cig);
        if (st.channels_first_input) {  // one float per channel and tap
          for (int64_t kw = k0; kw < k1; ++kw)
            for (int64_t ci = 0; ci < cig; ++ci) dst[kw * cig + ci] = src[(kw - k0) * d.dw + ci * st.xs_c];
        } else if (run_taps) {
          copy_run(dst + k0 * cig, src, (k1 - k0) * cig);
        } else {
          for (int64_t kw = k0; kw < k1; ++kw) copy_run(dst + kw * cig, src + (kw - k0) * d.dw * st.c_in, cig);
        }
        if (k1 < d.kw) zero_run(dst + k1 * cig, (d.kw - k1) * cig);
      }
    }
    if (++ow == d.ow) {
      ow = 0;
      if (++oh == d.oh) oh = 0, ++od;
    }
  }
}

// One work item of the conv's ConvShare (conv_common.h): a tile of output positions of one image
// and group, output channels [c0, c0 + cn) of the group (whole weight panels).
void nhwc_conv_tile(const NhwcConvState& st, const float* x, const float* bias, const float* weights, float* y,
                    float* slot, int64_t item, int64_t col_chunks) {
  const ConvItem it = conv_item(item, col_chunks, st.tiles, st.tile_rows, st.positions, st.groups, st.cog);
  const int64_t g = it.g, n = it.n, p0 = it.p0, rows = it.rows, c0 = it.c0, cn = it.cn;
  if (rows <= 0 || cn <= 0) return;
  const float* xn = x + n * st.x_image;
  const float* a;
  int64_t lda;
  if (st.pointwise) {
    a = xn + p0 * st.c_in + g * st.cig;
    lda = st.c_in;
  } else {
    nhwc_im2col(st, xn, g, p0, rows, slot);
    a = slot;
    lda = st.row_floats;
  }
  const PanelsView weight =
      (st.packed.empty() ? panels_view(Isa::kPortable, weights + g * st.k * st.cog, st.k, st.cog)
                         : st.packed[static_cast<size_t>(g)].view())
          .cols(c0, cn);
  const GemmAct in_store = epilogue_act(st.act);
  const GemmEpilogue ep{bias ? bias + g * st.cog + c0 : nullptr, in_store};
  float* c = y + (n * st.positions + p0) * st.c_out + g * st.cog + c0;
  sgemm_panels(rows, 1.0f, a, lda, 1, weight, 0.0f, c, st.c_out, ep);
  if (in_store != GemmAct::kNone || st.act.kind == ir::ConvActKind::kNone) return;
  if (cn == st.c_out) {
    apply_activation(st.act, st.isa, c, rows * cn);  // whole rows: one span
    return;
  }
  for (int64_t r = 0; r < rows; ++r) apply_activation(st.act, st.isa, c + r * st.c_out, cn);
}

// ---- Depthwise ---------------------------------------------------------------------------------
//
// Output row (od, oh) of one image (depthwise_row.h says how it is walked): the vector levels'
// row is written once over Highway (depthwise_row.cpp), the portable level's is the plain loop
// below.

// The kernel rows of output row (od, oh) that lie inside the input's depth and height, and the
// output columns whose whole window lies inside its width: what the depthwise and the direct rows
// walk.
struct KernelRows {
  int64_t id[ir::kDepthwiseMaxKernelRows], ih[ir::kDepthwiseMaxKernelRows];  // input depth, row
  int64_t tap0[ir::kDepthwiseMaxKernelRows];                                 // its first tap
  int64_t count = 0;
  int64_t lo = 0, hi = 0;
};

KernelRows kernel_rows(const Dims& d, int64_t od, int64_t oh) {
  KernelRows r;
  for (int64_t t = 0; t < d.row_taps(); ++t) {
    const int64_t id = od * d.sd - d.pd + (t / d.kh) * d.dd;
    const int64_t ih = oh * d.sh - d.ph + (t % d.kh) * d.dh;
    if (id < 0 || id >= d.d || ih < 0 || ih >= d.h) continue;
    r.id[r.count] = id;
    r.ih[r.count] = ih;
    r.tap0[r.count] = t * d.kw;
    ++r.count;
  }
  const int64_t span = (d.kw - 1) * d.dw;  // the window's extent past its first tap
  r.lo = std::min(d.ow, (d.pw + d.sw - 1) / d.sw);
  r.hi = d.w - 1 - span + d.pw < 0 ? 0 : std::min(d.ow, (d.w - 1 - span + d.pw) / d.sw + 1);
  r.hi = std::max(r.hi, r.lo);
  return r;
}

DwRow dw_row(const NhwcConvState& st, const float* xn, int64_t od, int64_t oh) {
  const Dims& d = st.d;
  const KernelRows k = kernel_rows(d, od, oh);
  DwRow r;
  for (int64_t i = 0; i < k.count; ++i) {
    r.rows[i] = xn + (k.id[i] * d.h + k.ih[i]) * d.w * st.c_out;
    r.tap0[i] = k.tap0[i];
  }
  r.count = k.count;
  r.lo = k.lo;
  r.hi = k.hi;
  return r;
}

// The plain loop: one output column at a time, the channels innermost (the compiler vectorizes
// them for the build's target).
void dw_row_plain(const NhwcConvState& st, const DwRow& r, const float* w, const float* bias, float* y) {
  const Dims& d = st.d;
  const int64_t C = st.c_out;
  for (int64_t ow = 0; ow < d.ow; ++ow) {
    int64_t k0, k1;
    dw_cols(d, ow, &k0, &k1);
    float* out = y + ow * C;
    std::copy(bias, bias + C, out);
    const int64_t base = ow * d.sw - d.pw;
    for (int64_t i = 0; i < r.count; ++i)
      for (int64_t kw = k0; kw < k1; ++kw) {
        const float* xs = r.rows[i] + (base + kw * d.dw) * C;
        const float* ws = w + (r.tap0[i] + kw) * C;
        for (int64_t c = 0; c < C; ++c) out[c] += xs[c] * ws[c];
      }
  }
}

void run_nhwc_depthwise(const NhwcConvState& st, const float* x, const float* w, const float* bias, float* y) {
  const Dims& d = st.d;
  const int64_t out_rows = st.c.g.batch * d.rows();
  const int64_t per_row = std::max<int64_t>(1, 2 * d.ow * st.c_out * st.taps);
  parallel_for(out_rows, std::max<int64_t>(1, kGrainSimple / per_row), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t n = row / d.rows(), orow = row % d.rows();
      const DwRow r = dw_row(st, x + n * st.x_image, orow / d.oh, orow % d.oh);
      float* out = y + (n * st.positions + orow * d.ow) * st.c_out;
      if (st.isa == Isa::kAvx512) N_AVX3::DwRowChannelsLast(st.d, st.c_out, r, w, bias, out);
      else if (st.isa == Isa::kAvx2) N_AVX2::DwRowChannelsLast(st.d, st.c_out, r, w, bias, out);
      else dw_row_plain(st, r, w, bias, out);
      apply_activation(st.act, st.isa, out, d.ow * st.c_out);
    }
  });
}

// ---- Direct path: few input channels -----------------------------------------------------------
//
// A conv of a few input channels (a stem: 3) has a tiny K (27 for a 3x3) and an im2col of a few
// floats per kernel row, which cost more than the GEMM. Here the packed weight's rows are
// multiplied by the input values directly: for a block of output columns of one output row, each
// (tap, channel) broadcasts one input value per column against that row of the weight panel (the
// GEMM's micro-kernel with A read in place). conv_direct-inl.h's block accumulates, per level, as
// many columns as its registers hold: 8 columns x 32 output channels (or 16 x 16) in zmm, 6 x 16
// (or 12 x 8) in ymm; then blocks of half as many columns, and columns whose window reaches into
// the padding one at a time with their in-input taps only. The input is addressed through its
// strides, so it may be channels-first: the graph's input is read as it comes, with no Transpose
// before the conv.

// One output row of image xn into yrow ([OW][C_out]), every panel of the weight.
void direct_row(const NhwcConvState& st, const float* xn, int64_t od, int64_t oh, const float* bias, float* yrow) {
  const Dims& d = st.d;
  const KernelRows rows = kernel_rows(d, od, oh);
  int64_t off[ir::kDepthwiseMaxKernelRows];  // element offset of each kernel row's input row
  for (int64_t i = 0; i < rows.count; ++i) off[i] = rows.id[i] * st.xs_d + rows.ih[i] * st.xs_h;
  const PanelsView& w = st.packed[0].view();
  DirectRowArgs a;
  a.d = &d;
  a.row_off = off;
  a.row_tap0 = rows.tap0;
  a.rows = rows.count;
  a.lo = rows.lo;
  a.hi = rows.hi;
  a.xs_w = st.xs_w;
  a.xs_c = st.xs_c;
  a.c_in = st.c_in;
  a.c_out = st.c_out;
  a.weight = w.data;  // panel slots are 32 * k_stride floats apart
  a.k_stride = w.k_stride;
  if (st.isa == Isa::kAvx512) N_AVX3::ConvDirectRow(a, xn, bias, yrow);
  else N_AVX2::ConvDirectRow(a, xn, bias, yrow);
  apply_activation(st.act, st.isa, yrow, d.ow * st.c_out);
}

void run_direct(const NhwcConvState& st, const float* x, const float* bias, float* y) {
  const Dims& d = st.d;
  const int64_t out_rows = st.c.g.batch * d.rows();
  const double row_flops = 2.0 * static_cast<double>(d.ow * st.c_out * st.k);
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kGemmFlopsPerUs / std::max(row_flops, 1.0)));
  parallel_for(out_rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t n = row / d.rows(), orow = row % d.rows();
      direct_row(st, x + n * st.x_image, orow / d.oh, orow % d.oh, bias,
                 y + (n * st.positions + orow * d.ow) * st.c_out);
    }
  });
}

void run_nhwc_conv(const exec::KernelArgs& args) {
  const auto& st = state_of<NhwcConvState>(args);
  const float* x = input_ptr<float>(args, 0);
  const float* w = input_ptr<float>(args, 1);
  const float* bias = st.c.has_bias ? input_ptr<float>(args, 2) : nullptr;
  float* y = output_ptr<float>(args, 0);
  float* scratch = static_cast<float*>(args.scratch);
  if (st.c.g.batch == 0 || st.c_out == 0 || st.positions == 0) return;
  if (st.winograd) {
    run_winograd(*st.winograd, x, bias, y, scratch);
    return;
  }
  if (st.depthwise) {
    const float* taps = st.dw.data();
    if (st.dw.empty()) {  // the weight is not a constant: reorder it now
      reorder_depthwise(st, w, scratch);
      taps = scratch;
    }
    run_nhwc_depthwise(st, x, taps, bias ? bias : st.zeros.data(), y);
    return;
  }
  if (st.direct) {
    run_direct(st, x, bias ? bias : st.zeros.data(), y);
    return;
  }
  if (st.packed.empty())
    for (int64_t g = 0; g < st.groups; ++g) reorder_group(st, w, g, scratch + g * st.k * st.cog);
  float* slots = scratch + st.weight_floats;
  const double flops = 2.0 * static_cast<double>(st.c.g.batch * st.c_out * st.positions) * static_cast<double>(st.k);
  const ConvShare share = share_conv(st.c.g.batch * st.groups * st.tiles, st.cog, flops);
  parallel_for_team(share.items, share.team, [&](int64_t b, int64_t e) {
    float* slot = slots + (b / share.chunk) * ir::kConvTileRows * st.row_floats;
    for (int64_t item = b; item < e; ++item) nhwc_conv_tile(st, x, bias, scratch, y, slot, item, share.col_chunks);
  });
}

// ---- Pools -------------------------------------------------------------------------------------
//
// Per output position, the taps inside the input, the channels innermost in blocks of kBlock
// (accumulators on the stack: a float max, a double sum).

constexpr int64_t kBlock = 64;

struct NhwcPoolState {
  bool max = true, include_pad = false;
  Dims d;
  int64_t batch = 0, channels = 0, in_positions = 0, positions = 0;
  int64_t ped = 0, peh = 0, pew = 0;  // end pads (count_include_pad)
};

std::shared_ptr<const void> prepare_nhwc_pool(const exec::KernelContext& ctx, bool max) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  if (ctx.outputs.size() > 1) fail(ctx, "the Indices output is not supported");
  const char* op = max ? "MaxPool" : "AveragePool";
  const ir::WindowGeometry g = or_fail(ctx, [&] {
    if (ctx.inputs[0].shape.size() < 3)
      throw Error("input " + ir::shape_str(ctx.inputs[0].shape) + " must be [N, spatial..., C]");
    return ir::pool_geometry(ctx.node, ir::channels_first(ctx.inputs[0].shape), op);
  });
  if (g.in.size() > 3) fail(ctx, "pooling over " + std::to_string(g.in.size()) + " spatial dims is not supported (at most 3)");
  NhwcPoolState st;
  st.max = max;
  st.include_pad = ctx.node.attrs.get_int("count_include_pad", 0) != 0;
  st.d = dims_of(g);
  const size_t r = g.in.size();
  int64_t* pe[3] = {&st.ped, &st.peh, &st.pew};
  for (size_t i = 0; i < r; ++i) *pe[3 - r + i] = g.pad_end[i];
  st.batch = g.batch;
  st.channels = g.channels;
  st.in_positions = st.d.plane();
  st.positions = st.d.rows() * st.d.ow;
  return exec::make_state(st);
}

// Taps [j0, j1) of a window starting at input index `start` (stride-free) inside [0, in), and how
// many lie inside the padded input [-pad_begin, in + pad_end).
inline void window_taps(int64_t start, int64_t k, int64_t dil, int64_t in, int64_t pb, int64_t pe, int64_t* j0,
                        int64_t* j1, int64_t* padded) {
  *j0 = start >= 0 ? 0 : std::min(k, (-start + dil - 1) / dil);
  *j1 = std::max(*j0, std::min(k, in - 1 - start < 0 ? 0 : (in - 1 - start) / dil + 1));
  // The taps inside the padded input [-pb, in + pe), in closed form: the work is what the output
  // needs, however large the kernel attribute.
  auto first_at = [&](int64_t bound) {
    const int64_t gap = bound - start;
    return gap <= 0 ? 0 : std::min<int64_t>(k, (gap + dil - 1) / dil);
  };
  *padded = std::max<int64_t>(0, first_at(in + pe) - first_at(-pb));
}

void nhwc_pool_position(const NhwcPoolState& st, const float* xn, int64_t p, float* out) {
  const Dims& d = st.d;
  const int64_t C = st.channels;
  const int64_t orow = p / d.ow, ow = p % d.ow, od = orow / d.oh, oh = orow % d.oh;
  int64_t a[3], b[3], padded[3];
  window_taps(od * d.sd - d.pd, d.kd, d.dd, d.d, d.pd, st.ped, &a[0], &b[0], &padded[0]);
  window_taps(oh * d.sh - d.ph, d.kh, d.dh, d.h, d.ph, st.peh, &a[1], &b[1], &padded[1]);
  window_taps(ow * d.sw - d.pw, d.kw, d.dw, d.w, d.pw, st.pew, &a[2], &b[2], &padded[2]);
  // In double: padded counts of enormous windows would overflow int64 as a product.
  const double count = st.include_pad ? static_cast<double>(padded[0]) * static_cast<double>(padded[1]) *
                                            static_cast<double>(padded[2])
                                      : static_cast<double>((b[0] - a[0]) * (b[1] - a[1]) * (b[2] - a[2]));
  for (int64_t c0 = 0; c0 < C; c0 += kBlock) {
    const int64_t cn = std::min(kBlock, C - c0);
    float mx[kBlock];
    double sum[kBlock];
    std::fill(mx, mx + cn, -std::numeric_limits<float>::infinity());
    std::fill(sum, sum + cn, 0.0);
    for (int64_t j0 = a[0]; j0 < b[0]; ++j0)
      for (int64_t j1 = a[1]; j1 < b[1]; ++j1)
        for (int64_t j2 = a[2]; j2 < b[2]; ++j2) {
          const int64_t id = od * d.sd - d.pd + j0 * d.dd, ih = oh * d.sh - d.ph + j1 * d.dh,
                        iw = ow * d.sw - d.pw + j2 * d.dw;
          const float* src = xn + ((id * d.h + ih) * d.w + iw) * C + c0;
          if (st.max) {
            for (int64_t c = 0; c < cn; ++c) mx[c] = mx[c] < src[c] ? src[c] : mx[c];  // NaN: skipped, as NCHW
          } else {
            for (int64_t c = 0; c < cn; ++c) sum[c] += src[c];
          }
        }
    float* o = out + c0;
    if (st.max) std::copy(mx, mx + cn, o);
    else
      for (int64_t c = 0; c < cn; ++c) o[c] = count > 0 ? static_cast<float>(sum[c] / count) : 0.0f;
  }
}

void run_nhwc_pool(const exec::KernelArgs& args) {
  const auto& st = state_of<NhwcPoolState>(args);
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const int64_t total = st.batch * st.positions;
  // Work per position: the taps inside the input (at most the kernel, at most the input), in
  // double so a kernel attribute of 2^32 overflows nothing.
  const double taps = static_cast<double>(std::min(st.d.kd, st.d.d)) * static_cast<double>(std::min(st.d.kh, st.d.h)) *
                      static_cast<double>(std::min(st.d.kw, st.d.w));
  const int64_t per = static_cast<int64_t>(
      std::clamp(static_cast<double>(st.channels) * taps, 1.0, static_cast<double>(kGrainSimple)));
  parallel_for(total, std::max<int64_t>(1, kGrainSimple / per), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t n = i / std::max<int64_t>(1, st.positions), p = i % std::max<int64_t>(1, st.positions);
      nhwc_pool_position(st, x + n * st.in_positions * st.channels, p, y + i * st.channels);
    }
  });
}

struct NhwcGlobalPoolState {
  bool max = true;
  int64_t batch = 0, positions = 0, channels = 0;
};

std::shared_ptr<const void> prepare_nhwc_global_pool(const exec::KernelContext& ctx, bool max) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  const ir::Shape& x = ctx.inputs[0].shape;
  if (x.size() < 3) fail(ctx, "input " + ir::shape_str(x) + " must be [N, spatial..., C]");
  NhwcGlobalPoolState st;
  st.max = max;
  st.batch = x[0];
  st.channels = x.back();
  st.positions = ir::numel(x) / std::max<int64_t>(1, st.batch * st.channels);
  return exec::make_state(st);
}

// Items are (image, block of kBlock channels); each walks every position once.
void run_nhwc_global_pool(const exec::KernelArgs& args) {
  const auto& st = state_of<NhwcGlobalPoolState>(args);
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const int64_t C = st.channels, blocks = (C + kBlock - 1) / kBlock;
  const int64_t per = std::max<int64_t>(1, st.positions * kBlock);
  parallel_for(st.batch * blocks, std::max<int64_t>(1, kGrainSimple / per), [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t n = item / blocks, c0 = item % blocks * kBlock, cn = std::min(kBlock, C - c0);
      const float* xn = x + n * st.positions * C + c0;
      float* out = y + n * C + c0;
      if (st.max) {
        float mx[kBlock];
        std::fill(mx, mx + cn, -std::numeric_limits<float>::infinity());
        for (int64_t p = 0; p < st.positions; ++p)
          for (int64_t c = 0; c < cn; ++c) mx[c] = std::max(mx[c], xn[p * C + c]);
        std::copy(mx, mx + cn, out);
      } else {
        double sum[kBlock];  // double: a 56x56 plane in float loses digits
        std::fill(sum, sum + cn, 0.0);
        for (int64_t p = 0; p < st.positions; ++p)
          for (int64_t c = 0; c < cn; ++c) sum[c] += xn[p * C + c];
        for (int64_t c = 0; c < cn; ++c)
          out[c] = st.positions ? static_cast<float>(sum[c] / static_cast<double>(st.positions)) : 0.0f;
      }
    }
  });
}

}  // namespace

void add_conv_nhwc_kernels(exec::KernelTable& table) {
  table.add("NhwcConv", {prepare_nhwc_conv, run_nhwc_conv, nhwc_conv_scratch});
  table.add("NhwcMaxPool", {[](const exec::KernelContext& ctx) { return prepare_nhwc_pool(ctx, true); }, run_nhwc_pool});
  table.add("NhwcAveragePool",
            {[](const exec::KernelContext& ctx) { return prepare_nhwc_pool(ctx, false); }, run_nhwc_pool});
  table.add("NhwcGlobalMaxPool",
            {[](const exec::KernelContext& ctx) { return prepare_nhwc_global_pool(ctx, true); }, run_nhwc_global_pool});
  table.add("NhwcGlobalAveragePool",
            {[](const exec::KernelContext& ctx) { return prepare_nhwc_global_pool(ctx, false); },
             run_nhwc_global_pool});
}

}  // namespace fusebox::cpu
