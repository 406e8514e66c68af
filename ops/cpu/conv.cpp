// Conv, ConvTranspose, BatchNorm and the pooling ops (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool),
// NCHW. Shapes and attributes are read once, in prepare(), by core/ir/conv_params.h.
//
// Conv on the packed GEMM (packed_gemm.h). Per image and group, out[co][p] = sum_k W[co][k]
// col[k][p] + bias[co], k running over (input channel, kernel position). The weight is the
// constant, so it is op(B) (packed once in prepare, K x C_out/group panels, as MatMul packs its
// weight) and the output positions are the GEMM's rows: a tile of kConvTileRows positions is
// C[p][co] = A[p][k] B[k][co] with the bias as the GEMM's epilogue (one bias per column = per output
// channel), then transposed into the NCHW output while it is still in cache. A is the im2col of
// the tile, written as [k][p] rows so that each row is a contiguous run of the input (stride 1) and
// read by the GEMM with strides (1, tile); a pointwise conv (1x1, stride 1, no pads) has no im2col:
// A is the input itself, read with strides (1, H*W). Each thread has its own scratch slot (im2col
// and result tile); a weight that is a graph input is packed into the scratch at each run.
//
// Depthwise conv (one input channel per group) is no GEMM (K is the kernel size: 9 for 3x3), but
// a stencil: each plane is copied once into a padded, phase-split buffer (so every stride reads
// contiguous floats with no bounds checks), then blocks of up to four output rows by two vectors
// of columns stay in registers across all kernel taps (conv_planes.cpp at both vector levels; a
// plain loop at the portable level).
//
// The pools are per-plane loops over the window taps that fall inside the input (padding is
// skipped for MaxPool, counted or not by count_include_pad for AveragePool); they are memory-bound
// and stay plain C++. Every op is parallelized over (image, channel) planes or GEMM tiles.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/conv_params.h"
#include "core/ir/shape.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/conv_common.h"
#include "ops/cpu/conv_planes.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/packed_gemm.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/transpose.h"
#include "ops/cpu/vector_math.h"

namespace fusebox::cpu {

namespace {

// ---- Conv ----------------------------------------------------------------------------------

// The input row that kernel row t of output row orow reads, or null when it lies in the padding.
inline const float* input_row(const Dims& d, const float* x, int64_t orow, int64_t t) {
  const int64_t id = (orow / d.oh) * d.sd - d.pd + (t / d.kh) * d.dd;
  const int64_t ih = (orow % d.oh) * d.sh - d.ph + (t % d.kh) * d.dh;
  if (id < 0 || id >= d.d || ih < 0 || ih >= d.h) return nullptr;
  return x + (id * d.h + ih) * d.w;
}

struct ConvState {
  ir::ConvShape c;
  Dims d;
  int64_t k = 0, cig = 0, cog = 0, groups = 1;  // GEMM depth, channels per group in and out
  int64_t positions = 0, tiles = 0;             // output positions per image, tiles of them
  int64_t tile_rows = 0;                        // positions per tile: as even as kConvTileRows allows
  bool pointwise = false, depthwise = false;
  Isa isa = Isa::kPortable;
  ir::ConvActivation act;  // applied to each tile (or depthwise plane) while it is in cache
  std::vector<PackedB> packed;  // per group, when the weight is a constant (else packed per run)
  int64_t weight_floats = 0, slot_floats = 0;  // scratch layout (conv_params.h)
  int64_t dw_phase_w = 0;                       // depthwise: floats per phase row of a padded plane
};

// Conv's scratch in this context: no room to pack the weight when it is a constant.
size_t conv_scratch(const exec::KernelContext& ctx) {
  return ir::conv_scratch_bytes(
      ir::conv_shape(ctx.node, ctx.inputs.at(0).shape, ctx.inputs.at(1).shape, ctx.inputs.size() > 2 ? &ctx.inputs[2].shape : nullptr),
      constant_weight(ctx) != nullptr);
}

std::shared_ptr<const void> prepare_conv(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) require_dtype(ctx, i, ir::DType::f32);
  ConvState st;
  st.c = or_fail(ctx, [&] {
    return ir::conv_shape(ctx.node, ctx.inputs[0].shape, ctx.inputs[1].shape,
                          ctx.inputs.size() > 2 ? &ctx.inputs[2].shape : nullptr);
  });
  if (st.c.output_shape() != ctx.outputs[0].shape)
    fail(ctx, "output " + ir::shape_str(ctx.outputs[0].shape) + " is not the convolution's " +
                  ir::shape_str(st.c.output_shape()));
  st.d = dims_of(st.c.g);
  st.k = st.c.k();
  st.cig = st.c.c_in_per_group;
  st.cog = st.c.c_out_per_group;
  st.groups = st.c.group;
  st.positions = st.d.rows() * st.d.ow;
  st.tiles = (st.positions + ir::kConvTileRows - 1) / ir::kConvTileRows;
  // 196 positions as 66 + 66 + 64, not 96 + 96 + 4: the tiles are what threads share out.
  st.tile_rows = st.tiles ? (st.positions + st.tiles - 1) / st.tiles : 0;
  st.pointwise = st.c.pointwise();
  st.depthwise = st.c.depthwise();
  st.isa = kernel_isa(ctx);
  st.act = or_fail(ctx, [&] { return ir::conv_activation(ctx.node); });
  const ir::Tensor* weight = constant_weight(ctx);
  st.weight_floats = weight ? 0 : ir::conv_weight_floats(st.c);  // a constant is packed here, once
  st.slot_floats = ir::conv_slot_floats(st.c);
  st.dw_phase_w = st.depthwise ? ir::depthwise_phase_width(st.c) : 0;
  const size_t need = ir::conv_scratch_bytes(st.c, weight != nullptr);
  if (ctx.scratch_bytes < need)
    fail(ctx, "needs " + std::to_string(need) + " scratch bytes, the plan gives " +
                  std::to_string(ctx.scratch_bytes));
  for (int64_t v : {st.k, st.cog, st.positions})
    if (!fits_blas_int(v)) fail(ctx, "GEMM dimension " + std::to_string(v) + " exceeds the BLAS int range");
  if (weight && !st.depthwise) {
    // W[g] is [C_out/group, K] row-major: op(B) = W[g]^T, stored transposed.
    for (int64_t g = 0; g < st.groups; ++g)
      st.packed.push_back(PackedB::pack(st.isa, weight->data<float>() + g * st.cog * st.k, st.k, st.cog, true));
  }
  return exec::make_state(std::move(st));
}

// col[kk * kConvTileRows + r] for the tile's positions p0 + r (r < rows), kk = (ci, kd, kh, kw):
// the input value each kernel tap reads, 0 in the padding.
void im2col_tile(const ConvState& st, const float* x, int64_t p0, int64_t rows, float* col) {
  const Dims& d = st.d;
  constexpr int64_t ld = ir::kConvTileRows;
  for (int64_t ci = 0; ci < st.cig; ++ci) {
    const float* xc = x + ci * d.plane();
    for (int64_t t = 0; t < d.row_taps(); ++t)
      for (int64_t kw = 0; kw < d.kw; ++kw) {
        float* dst = col + ((ci * d.row_taps() + t) * d.kw + kw) * ld;
        // Walk the tile one output row at a time: within a row the input index is linear.
        int64_t r = 0;
        while (r < rows) {
          const int64_t p = p0 + r, orow = p / d.ow, ow0 = p % d.ow;
          const int64_t len = std::min(rows - r, d.ow - ow0);
          const float* xr = input_row(d, xc, orow, t);
          float* out = dst + r;
          if (!xr) {
            std::fill(out, out + len, 0.0f);
          } else {
            // iw = ow * sw + base lies inside the row for ow in [lo, hi): zeros around, no checks
            // within (a plain copy at stride 1).
            const int64_t base = kw * d.dw - d.pw;
            const int64_t lo = std::clamp<int64_t>(base >= 0 ? 0 : (-base + d.sw - 1) / d.sw, ow0, ow0 + len);
            const int64_t hi = std::clamp<int64_t>(d.w - 1 - base < 0 ? 0 : (d.w - 1 - base) / d.sw + 1, lo, ow0 + len);
            std::fill(out, out + (lo - ow0), 0.0f);
            const float* src = xr + lo * d.sw + base;
            float* dst = out + (lo - ow0);
            if (d.sw == 1) std::copy(src, src + (hi - lo), dst);
            else
              for (int64_t i = 0; i < hi - lo; ++i) dst[i] = src[i * d.sw];
            std::fill(out + (hi - ow0), out + len, 0.0f);
          }
          r += len;
        }
      }
  }
}

// One tile of one image and group: GEMM into the slot's tile (with the activation), then
// transposed into NCHW.
// Item `item` of the conv's ConvShare (conv_common.h): output channels [c0, c0 + cn) of the group,
// whole panels of the packed weight.
void conv_tile(const ConvState& st, const float* x, const float* bias, const float* scratch,
               float* out, float* slot, int64_t item, int64_t col_chunks) {
  const ConvItem it = conv_item(item, col_chunks, st.tiles, st.tile_rows, st.positions, st.groups, st.cog);
  const int64_t g = it.g, n = it.n, p0 = it.p0, rows = it.rows, c0 = it.c0, cn = it.cn;
  const float* xg = x + (n * st.c.c_in + g * st.cig) * st.d.plane();
  float* result = slot;  // [rows][cog]
  const float* a;
  int64_t rs = 1, cs;
  if (st.pointwise) {
    a = xg + p0;
    cs = st.positions;
  } else {
    float* col = slot + ir::kConvTileRows * st.cog;
    im2col_tile(st, xg, p0, rows, col);
    a = col;
    cs = ir::kConvTileRows;
  }
  // A pointwise conv of one position per image: A is one contiguous row. Said as such, as CBLAS
  // (the portable level) refuses a leading dim below K.
  if (cs == 1) rs = std::max<int64_t>(st.k, 1);
  const GemmAct in_store = epilogue_act(st.act);
  const GemmEpilogue ep{bias ? bias + g * st.cog + c0 : nullptr, in_store};
  const PanelsView weight = (st.packed.empty()
                                 ? panels_view(st.isa, scratch + g * st.weight_floats / st.groups, st.k, st.cog)
                                 : st.packed[static_cast<size_t>(g)].view())
                                .cols(c0, cn);
  sgemm_panels(rows, 1.0f, a, rs, cs, weight, 0.0f, result, cn, ep);  // result: [rows][cn]
  if (in_store == GemmAct::kNone) apply_activation(st.act, st.isa, result, rows * cn);
  float* o = out + (n * st.c.c_out + g * st.cog + c0) * st.positions + p0;
  // o[co * positions + r] = result[r * cn + co]: whole 8 x 8 blocks in registers at the vector
  // levels, the rest one float at a time.
  const bool vector = st.isa != Isa::kPortable;
  if (vector) transpose_blocks8(st.isa, result, cn, rows, cn, 1.0f, o, st.positions);
  const int64_t r8 = vector ? rows / 8 * 8 : 0, c8 = vector ? cn / 8 * 8 : 0;
  for (int64_t co = 0; co < cn; ++co) {
    float* dst = o + co * st.positions;
    for (int64_t r = co < c8 ? r8 : 0; r < rows; ++r) dst[r] = result[r * cn + co];
  }
}

// ---- Depthwise -----------------------------------------------------------------------------
//
// Each input plane is first copied into the thread's slot, padded in width and split into `sw`
// phases (ir::depthwise_phase_width): padded column c goes to phase c % sw at index c / sw. Output
// column o's tap kw then reads phase (kw * dw) % sw at index o + (kw * dw) / sw: consecutive
// outputs read consecutive floats at every stride, and no tap needs a bounds check. Rows in the
// height (and depth) padding are skipped. The copy is one pass over the plane; the taps are 9 or
// 25 passes over it, so they are what the vector code is for.

struct DwPlane {
  int64_t phase_w = 0;  // floats per phase row
  int64_t row = 0;      // floats per padded row: sw phases
};

// Copies plane x into buf, padded and phase-split (rows of the input, in order): `fill` (zero for
// a conv, -inf for MaxPool) where a phase index falls in the padding, the row's floats (every sw-th)
// in between (at stride 2 in vector registers at the vector levels).
void dw_copy_plane(const Dims& d, const DwPlane& p, const float* x, float* buf, float fill, Isa isa) {
  for (int64_t r = 0; r < d.d * d.h; ++r) {
    const float* xr = x + r * d.w;
    for (int64_t ph = 0; ph < d.sw; ++ph) {
      float* dst = buf + r * p.row + ph * p.phase_w;
      // Index j reads iw = j * sw + ph - pw: inside the row for j in [j0, j1).
      const int64_t j0 = std::min(p.phase_w, std::max<int64_t>(0, (d.pw - ph + d.sw - 1) / d.sw));
      const int64_t j1 = std::max(j0, std::min(p.phase_w, (d.w - 1 + d.pw - ph) / d.sw + 1));
      std::fill(dst, dst + j0, fill);
      const float* src = xr + j0 * d.sw + ph - d.pw;
      if (d.sw == 1) std::copy(src, src + (j1 - j0), dst + j0);
      else if (d.sw == 2 && isa == Isa::kAvx512) N_AVX3::CopyEven(src, xr + d.w, dst + j0, j1 - j0);
      else if (d.sw == 2 && isa == Isa::kAvx2) N_AVX2::CopyEven(src, xr + d.w, dst + j0, j1 - j0);
      else
        for (int64_t j = j0; j < j1; ++j) dst[j] = src[(j - j0) * d.sw];
      std::fill(dst + j1, dst + p.phase_w, fill);
    }
  }
}

// Each kernel row's offset in depth and height (t = kd * KH + kh), so that finding the rows an
// output row reads takes no division per tap.
struct DwTapRows {
  int64_t dz[ir::kDepthwiseMaxKernelRows], dy[ir::kDepthwiseMaxKernelRows];
  explicit DwTapRows(const Dims& d) {
    for (int64_t t = 0; t < d.row_taps(); ++t) dz[t] = (t / d.kh) * d.dd, dy[t] = (t % d.kh) * d.dh;
  }
};

// rows[t]: the padded row kernel row t of output row (od, oh) reads, or null in the padding.
inline void dw_rows_of(const Dims& d, const DwPlane& p, const DwTapRows& taps, const float* buf, int64_t od,
                       int64_t oh, const float** rows) {
  const int64_t z0 = od * d.sd - d.pd, y0 = oh * d.sh - d.ph;
  for (int64_t t = 0; t < d.row_taps(); ++t) {
    const int64_t id = z0 + taps.dz[t], ih = y0 + taps.dy[t];
    rows[t] = id < 0 || id >= d.d || ih < 0 || ih >= d.h ? nullptr : buf + (id * d.h + ih) * p.row;
  }
}

// Offset of tap kw of output column 0 within a padded row.
inline int64_t dw_tap(const Dims& d, const DwPlane& p, int64_t kw) {
  return ((kw * d.dw) % d.sw) * p.phase_w + (kw * d.dw) / d.sw;
}

void dw_output_row_plain(const Dims& d, const DwPlane& p, const float* const* rows, const float* w, float bias,
                         float* y) {
  for (int64_t o = 0; o < d.ow; ++o) y[o] = bias;
  for (int64_t t = 0; t < d.row_taps(); ++t) {
    if (!rows[t]) continue;
    for (int64_t kw = 0; kw < d.kw; ++kw) {
      const float* src = rows[t] + dw_tap(d, p, kw);
      const float wt = w[t * d.kw + kw];
      for (int64_t o = 0; o < d.ow; ++o) y[o] += wt * src[o];
    }
  }
}

struct DepthwiseArgs {
  const float* x;
  const float* w;
  const float* bias;
  float* y;
};

void depthwise_planes(const ConvState& st, const DepthwiseArgs& a, float* buf, int64_t begin, int64_t end) {
  const Dims& d = st.d;
  const DwPlane p{st.dw_phase_w, st.dw_phase_w * d.sw};
  const bool vector = st.isa != Isa::kPortable;
  const DwTapRows tap_rows(d);
  int64_t taps[16];
  for (int64_t kw = 0; kw < std::min<int64_t>(d.kw, 16); ++kw) taps[kw] = dw_tap(d, p, kw);
  for (int64_t plane = begin; plane < end; ++plane) {
    const int64_t co = plane % st.c.c_out, n = plane / st.c.c_out;
    const int64_t ci = co / st.cog;  // the group's one input channel
    dw_copy_plane(d, p, a.x + (n * st.c.c_in + ci) * d.plane(), buf, 0.0f, st.isa);
    const float* w = a.w + co * d.row_taps() * d.kw;
    const float bias = a.bias ? a.bias[co] : 0.0f;
    float* y = a.y + plane * st.positions;
    const int64_t nt = d.row_taps();
    if (!vector || d.kw > 16) {  // the portable level, or a kernel wider than the tap table
      const float* rows[ir::kDepthwiseMaxKernelRows];  // ConvShape::depthwise() bounds row_taps()
      for (int64_t od = 0; od < d.od; ++od)
        for (int64_t oh = 0; oh < d.oh; ++oh) {
          dw_rows_of(d, p, tap_rows, buf, od, oh, rows);
          dw_output_row_plain(d, p, rows, w, bias, y + (od * d.oh + oh) * d.ow);
        }
    } else {
      const float* rows[4 * ir::kDepthwiseMaxKernelRows];
      for (int64_t od = 0; od < d.od; ++od)
        for (int64_t oh = 0; oh < d.oh;) {
          // Four output rows at a time where four are left in this depth slice.
          const int64_t r = d.oh - oh >= 4 ? 4 : 1;
          for (int64_t i = 0; i < r; ++i) dw_rows_of(d, p, tap_rows, buf, od, oh + i, rows + i * nt);
          float* yr = y + (od * d.oh + oh) * d.ow;
          if (st.isa == Isa::kAvx512) N_AVX3::DwRows(d, static_cast<int>(r), rows, taps, w, bias, yr);
          else N_AVX2::DwRows(d, static_cast<int>(r), rows, taps, w, bias, yr);
          oh += r;
        }
    }
    apply_activation(st.act, st.isa, y, st.positions);  // the plane is still in cache
  }
}

void run_conv(const exec::KernelArgs& args) {
  const auto& st = state_of<ConvState>(args);
  const float* x = input_ptr<float>(args, 0);
  const float* w = input_ptr<float>(args, 1);
  const float* bias = st.c.has_bias ? input_ptr<float>(args, 2) : nullptr;
  float* y = output_ptr<float>(args, 0);
  const int64_t planes = st.c.g.batch * st.c.c_out;
  if (planes == 0 || st.positions == 0) return;
  const double flops = 2.0 * static_cast<double>(planes * st.positions) * static_cast<double>(st.k);
  float* scratch = static_cast<float*>(args.scratch);
  if (st.depthwise) {
    // One padded plane per slot; as many threads as the work pays for and there are slots.
    const int64_t per_plane = std::max<int64_t>(1, 2 * st.positions * st.k);
    const double work_us = static_cast<double>(planes) / std::max<int64_t>(1, kGrainSimple / per_plane);
    const int team = static_cast<int>(
        std::min<int64_t>({ir::kConvScratchSlots, planes, static_cast<int64_t>(threads_for(work_us))}));
    const int64_t chunk = (planes + team - 1) / team;
    parallel_for_team(planes, team, [&](int64_t b, int64_t e) {
      depthwise_planes(st, {x, w, bias, y}, scratch + (b / chunk) * st.slot_floats, b, e);
    });
    return;
  }
  if (st.packed.empty()) {
    // The weight is a graph input: pack it into the scratch now (conv_tile reads it there).
    for (int64_t g = 0; g < st.groups; ++g)
      pack_b_into(st.isa, scratch + g * st.weight_floats / st.groups, w + g * st.cog * st.k, st.k, st.cog, 1, st.k);
  }
  float* slots = scratch + st.weight_floats;
  const ConvShare share = share_conv(st.c.g.batch * st.groups * st.tiles, st.cog, flops);
  parallel_for_team(share.items, share.team, [&](int64_t b, int64_t e) {
    float* slot = slots + (b / share.chunk) * st.slot_floats;
    for (int64_t item = b; item < e; ++item) conv_tile(st, x, bias, scratch, y, slot, item, share.col_chunks);
  });
}

// ---- ConvTranspose ---------------------------------------------------------------------------
//
// Per image and group, the GEMM col = W[g]^T X[g] ([C_out/group * kernel, in positions], OpenBLAS:
// the weight's rows are the input channels, so it is A transposed) gives every input position's
// contribution through every kernel tap; col2im then adds each into the output position it lands
// on (a scatter: taps overlap when the stride is below the kernel), per output channel in parallel.

// Up to three spatial dims as (d, h, w); missing leading dims have size 1.
struct Spatial3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t s[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
};

struct ConvTransposeState {
  ir::ConvTransposeShape c;
  Spatial3 d;
  int64_t in_size = 0, out_size = 0, taps = 0;
};

std::shared_ptr<const void> prepare_conv_transpose(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) require_dtype(ctx, i, ir::DType::f32);
  ConvTransposeState st;
  st.c = or_fail(ctx, [&] {
    return ir::conv_transpose_shape(ctx.node, ctx.inputs[0].shape, ctx.inputs[1].shape,
                                    ctx.inputs.size() > 2 ? &ctx.inputs[2].shape : nullptr);
  });
  const size_t r = st.c.in.size();
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    st.d.in[j] = st.c.in[i], st.d.out[j] = st.c.out[i], st.d.k[j] = st.c.kernel[i];
    st.d.s[j] = st.c.strides[i], st.d.dil[j] = st.c.dilations[i], st.d.pb[j] = st.c.pad_begin[i];
  }
  st.in_size = ir::numel(st.c.in);
  st.out_size = ir::numel(st.c.out);
  st.taps = ir::numel(st.c.kernel);
  const size_t need = static_cast<size_t>(st.c.c_out_per_group * st.taps * st.in_size) * sizeof(float);
  if (ctx.scratch_bytes < need)
    fail(ctx, "needs " + std::to_string(need) + " scratch bytes, the plan gives " + std::to_string(ctx.scratch_bytes));
  for (int64_t v : {st.c.c_out_per_group * st.taps, st.in_size, st.c.c_in_per_group})
    if (!fits_blas_int(v)) fail(ctx, "GEMM dimension " + std::to_string(v) + " exceeds the BLAS int range");
  return exec::make_state(st);
}

// Adds output channel co's taps from col into its plane y (already holding the bias).
void col2im_channel(const ConvTransposeState& st, const float* col, int64_t co, float* y) {
  const Spatial3& d = st.d;
  for (int64_t k0 = 0; k0 < d.k[0]; ++k0)
    for (int64_t k1 = 0; k1 < d.k[1]; ++k1)
      for (int64_t k2 = 0; k2 < d.k[2]; ++k2) {
        const float* src = col + ((co * d.k[0] + k0) * d.k[1] * d.k[2] + k1 * d.k[2] + k2) * st.in_size;
        for (int64_t i0 = 0; i0 < d.in[0]; ++i0) {
          const int64_t o0 = i0 * d.s[0] - d.pb[0] + k0 * d.dil[0];
          if (o0 < 0 || o0 >= d.out[0]) continue;
          for (int64_t i1 = 0; i1 < d.in[1]; ++i1) {
            const int64_t o1 = i1 * d.s[1] - d.pb[1] + k1 * d.dil[1];
            if (o1 < 0 || o1 >= d.out[1]) continue;
            const float* srow = src + (i0 * d.in[1] + i1) * d.in[2];
            float* yrow = y + (o0 * d.out[1] + o1) * d.out[2];
            for (int64_t i2 = 0; i2 < d.in[2]; ++i2) {
              const int64_t o2 = i2 * d.s[2] - d.pb[2] + k2 * d.dil[2];
              if (o2 >= 0 && o2 < d.out[2]) yrow[o2] += srow[i2];
            }
          }
        }
      }
}

void run_conv_transpose(const exec::KernelArgs& args) {
  const auto& st = state_of<ConvTransposeState>(args);
  const auto& c = st.c;
  const float* x = input_ptr<float>(args, 0);
  const float* w = input_ptr<float>(args, 1);
  const float* bias = c.has_bias ? input_ptr<float>(args, 2) : nullptr;
  float* y = output_ptr<float>(args, 0);
  float* col = static_cast<float*>(args.scratch);
  const int64_t rows = c.c_out_per_group * st.taps;
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t g = 0; g < c.group; ++g) {
      const float* xg = x + (n * c.c_in + g * c.c_in_per_group) * st.in_size;
      const float* wg = w + g * c.c_in_per_group * rows;
      sgemm(true, false, rows, st.in_size, c.c_in_per_group, 1.0f, wg, rows, xg, st.in_size, 0.0f, col, st.in_size);
      float* yg = y + (n * c.c_out + g * c.c_out_per_group) * st.out_size;
      const int64_t per_channel = std::max<int64_t>(1, st.taps * st.in_size + st.out_size);
      parallel_for(c.c_out_per_group, std::max<int64_t>(1, kGrainSimple / per_channel), [&](int64_t b, int64_t e) {
        for (int64_t co = b; co < e; ++co) {
          float* plane = yg + co * st.out_size;
          std::fill(plane, plane + st.out_size, bias ? bias[g * c.c_out_per_group + co] : 0.0f);
          col2im_channel(st, col, co, plane);
        }
      });
    }
}

// ---- BatchNorm -----------------------------------------------------------------------------

struct BatchNormState {
  ir::BatchNormShape b;
};

std::shared_ptr<const void> prepare_batch_norm(const exec::KernelContext& ctx) {
  require_arity(ctx, 5, 1);
  for (size_t i = 0; i < 5; ++i) require_dtype(ctx, i, ir::DType::f32);
  BatchNormState st;
  st.b = or_fail(ctx, [&] {
    return ir::batch_norm_shape(ctx.node, ctx.inputs[0].shape,
                                {ctx.inputs[1].shape, ctx.inputs[2].shape, ctx.inputs[3].shape, ctx.inputs[4].shape});
  });
  return exec::make_state(st);
}

void run_batch_norm(const exec::KernelArgs& args) {
  const auto& st = state_of<BatchNormState>(args).b;
  const float* x = input_ptr<float>(args, 0);
  const float* scale = input_ptr<float>(args, 1);
  const float* shift = input_ptr<float>(args, 2);
  const float* mean = input_ptr<float>(args, 3);
  const float* var = input_ptr<float>(args, 4);
  float* y = output_ptr<float>(args, 0);
  const int64_t planes = st.batch * st.channels;
  parallel_for(planes, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(1, st.spatial)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) {
                   const int64_t c = p % st.channels;
                   // y = x * a + s: the per-channel affine map, in double for the rsqrt.
                   const double inv = 1.0 / std::sqrt(static_cast<double>(var[c]) + st.epsilon);
                   const float a = static_cast<float>(scale[c] * inv);
                   const float s = static_cast<float>(shift[c] - mean[c] * scale[c] * inv);
                   const float* xp = x + p * st.spatial;
                   float* yp = y + p * st.spatial;
                   for (int64_t i = 0; i < st.spatial; ++i) yp[i] = xp[i] * a + s;
                 }
               });
}

// ---- Pools ---------------------------------------------------------------------------------

enum class PoolKind : uint8_t { kMax, kAverage };

// Up to three spatial dims as (d, h, w); missing leading dims have size 1.
struct Dims3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t s[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
};

struct PoolState {
  PoolKind kind = PoolKind::kMax;
  bool include_pad = false;
  int64_t planes = 0, in_size = 0, out_size = 0;
  Dims3 d;
  // MaxPool's vector path: the depthwise conv's padded, phase-split planes (filled with -inf).
  bool vector = false;
  Isa isa = Isa::kPortable;  // its level
  Dims dims;
  int64_t phase_w = 0, slot_floats = 0;
};

std::shared_ptr<const void> prepare_pool(const exec::KernelContext& ctx, PoolKind kind) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  if (ctx.outputs.size() > 1) fail(ctx, "the Indices output is not supported");
  const char* op = kind == PoolKind::kMax ? "MaxPool" : "AveragePool";
  ir::WindowGeometry g = or_fail(ctx, [&] { return ir::pool_geometry(ctx.node, ctx.inputs[0].shape, op); });
  const size_t r = g.in.size();
  if (r > 3) fail(ctx, "pooling over " + std::to_string(r) + " spatial dims is not supported (at most 3)");
  PoolState st;
  st.kind = kind;
  st.include_pad = ctx.node.attrs.get_int("count_include_pad", 0) != 0;
  st.planes = g.batch * g.channels;
  st.in_size = g.in_size();
  st.out_size = g.out_size();
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    st.d.in[j] = g.in[i], st.d.out[j] = g.out[i], st.d.k[j] = g.kernel[i];
    st.d.s[j] = g.strides[i], st.d.dil[j] = g.dilations[i];
    st.d.pb[j] = g.pad_begin[i], st.d.pe[j] = g.pad_end[i];
  }
  if (kind == PoolKind::kMax && kernel_isa(ctx) != Isa::kPortable && ir::max_pool_uses_planes(g)) {
    st.isa = kernel_isa(ctx);
    st.dims = dims_of(g);
    st.phase_w = ir::phase_width(g);
    st.slot_floats = ir::padded_plane_floats(g);
    st.vector = ctx.scratch_bytes >= ir::max_pool_scratch_bytes(g);
  }
  return exec::make_state(st);
}

// Taps [j0, j1) of dim i's window at output o that fall inside the input, and how many fall
// inside the padded input (AveragePool's count_include_pad divisor).
// In closed form: the work is what the output needs, however large the kernel attribute.
void taps(const Dims3& d, int i, int64_t o, int64_t* j0, int64_t* j1, int64_t* padded) {
  const int64_t start = o * d.s[i] - d.pb[i];
  // The first tap j in [0, k] whose index start + j * dil reaches `bound`.
  auto first_at = [&](int64_t bound) {
    const int64_t gap = bound - start;
    return gap <= 0 ? 0 : std::min<int64_t>(d.k[i], (gap + d.dil[i] - 1) / d.dil[i]);
  };
  *j0 = first_at(0);
  *j1 = std::max(first_at(d.in[i]), *j0);
  *padded = std::max<int64_t>(0, first_at(d.in[i] + d.pe[i]) - first_at(-d.pb[i]));
}

// Each output's window along each dim: the taps inside the input and the padded count, computed
// once per call rather than once per output.
struct PoolTaps {
  std::vector<int64_t> lo[3], hi[3], padded[3];
  explicit PoolTaps(const Dims3& d) {
    for (int i = 0; i < 3; ++i) {
      lo[i].resize(static_cast<size_t>(d.out[i]));
      hi[i].resize(static_cast<size_t>(d.out[i]));
      padded[i].resize(static_cast<size_t>(d.out[i]));
      for (int64_t o = 0; o < d.out[i]; ++o) {
        const auto u = static_cast<size_t>(o);
        taps(d, i, o, &lo[i][u], &hi[i][u], &padded[i][u]);
      }
    }
  }
};

// MaxPool keeps a float max only, AveragePool a double sum only (one chain each per output).
template <PoolKind kKind>
void pool_planes(const PoolState& st, const PoolTaps& t, const float* x, float* y, int64_t begin, int64_t end) {
  const Dims3& d = st.d;
  for (int64_t plane = begin; plane < end; ++plane) {
    const float* xp = x + plane * st.in_size;
    float* yp = y + plane * st.out_size;
    for (int64_t o0 = 0; o0 < d.out[0]; ++o0) {
      const auto u0 = static_cast<size_t>(o0);
      const int64_t a0 = t.lo[0][u0], b0 = t.hi[0][u0];
      for (int64_t o1 = 0; o1 < d.out[1]; ++o1) {
        const auto u1 = static_cast<size_t>(o1);
        const int64_t a1 = t.lo[1][u1], b1 = t.hi[1][u1];
        float* out = yp + (o0 * d.out[1] + o1) * d.out[2];
        for (int64_t o2 = 0; o2 < d.out[2]; ++o2) {
          const auto u2 = static_cast<size_t>(o2);
          const int64_t a2 = t.lo[2][u2], b2 = t.hi[2][u2];
          const int64_t base2 = o2 * d.s[2] - d.pb[2];
          float mx = -std::numeric_limits<float>::infinity();
          double sum = 0;
          for (int64_t j0 = a0; j0 < b0; ++j0) {
            const int64_t i0 = o0 * d.s[0] - d.pb[0] + j0 * d.dil[0];
            for (int64_t j1 = a1; j1 < b1; ++j1) {
              const int64_t i1 = o1 * d.s[1] - d.pb[1] + j1 * d.dil[1];
              const float* row = xp + (i0 * d.in[1] + i1) * d.in[2];
              for (int64_t j2 = a2; j2 < b2; ++j2) {
                if constexpr (kKind == PoolKind::kMax) mx = std::max(mx, row[base2 + j2 * d.dil[2]]);
                else sum += row[base2 + j2 * d.dil[2]];
              }
            }
          }
          if constexpr (kKind == PoolKind::kMax) {
            out[o2] = mx;
          } else {
            // In double: padded counts of enormous windows would overflow int64 as a product.
            const double count = st.include_pad ? static_cast<double>(t.padded[0][u0]) *
                                                      static_cast<double>(t.padded[1][u1]) *
                                                      static_cast<double>(t.padded[2][u2])
                                                : static_cast<double>((b0 - a0) * (b1 - a1) * (b2 - a2));
            out[o2] = count > 0 ? static_cast<float>(sum / count) : 0.0f;
          }
        }
      }
    }
  }
}

void max_pool_planes_vector(const PoolState& st, const float* x, float* y, float* buf, int64_t begin, int64_t end) {
  const Dims& d = st.dims;
  const DwPlane p{st.phase_w, st.phase_w * d.sw};
  const DwTapRows tap_rows(d);
  int64_t taps[16];
  for (int64_t kw = 0; kw < d.kw; ++kw) taps[kw] = dw_tap(d, p, kw);
  const float* rows[ir::kDepthwiseMaxKernelRows];
  for (int64_t plane = begin; plane < end; ++plane) {
    dw_copy_plane(d, p, x + plane * st.in_size, buf, -std::numeric_limits<float>::infinity(), st.isa);
    float* yp = y + plane * st.out_size;
    for (int64_t od = 0; od < d.od; ++od)
      for (int64_t oh = 0; oh < d.oh; ++oh) {
        dw_rows_of(d, p, tap_rows, buf, od, oh, rows);
        float* yr = yp + (od * d.oh + oh) * d.ow;
        if (st.isa == Isa::kAvx512) N_AVX3::MaxRow(d, rows, taps, yr);
        else N_AVX2::MaxRow(d, rows, taps, yr);
      }
  }
}

void run_pool(const exec::KernelArgs& args) {
  const auto& st = state_of<PoolState>(args);
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  // Work per plane: each output's taps inside the input (at most the kernel, at most the input:
  // a kernel attribute of 2^32 costs what the input holds), in double so no product overflows.
  double taps_per_output = 1;
  for (int i = 0; i < 3; ++i) taps_per_output *= static_cast<double>(std::min(st.d.k[i], st.d.in[i]));
  const int64_t per_plane = static_cast<int64_t>(
      std::clamp(static_cast<double>(st.out_size) * taps_per_output, 1.0, static_cast<double>(kGrainSimple)));
  if (st.vector) {
    const double work_us = static_cast<double>(st.planes) / std::max<int64_t>(1, kGrainSimple / per_plane);
    const int team = static_cast<int>(
        std::min<int64_t>({ir::kConvScratchSlots, st.planes, static_cast<int64_t>(threads_for(work_us))}));
    const int64_t chunk = (st.planes + team - 1) / team;
    float* scratch = static_cast<float*>(args.scratch);
    parallel_for_team(st.planes, team, [&](int64_t b, int64_t e) {
      max_pool_planes_vector(st, x, y, scratch + (b / chunk) * st.slot_floats, b, e);
    });
    return;
  }
  const PoolTaps t(st.d);
  parallel_for(st.planes, std::max<int64_t>(1, kGrainSimple / per_plane), [&](int64_t b, int64_t e) {
    if (st.kind == PoolKind::kMax) pool_planes<PoolKind::kMax>(st, t, x, y, b, e);
    else pool_planes<PoolKind::kAverage>(st, t, x, y, b, e);
  });
}

struct GlobalPoolState {
  PoolKind kind = PoolKind::kMax;
  int64_t planes = 0, size = 0;
};

std::shared_ptr<const void> prepare_global_pool(const exec::KernelContext& ctx, PoolKind kind) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  const ir::Shape& x = ctx.inputs[0].shape;
  if (x.size() < 3) fail(ctx, "input " + ir::shape_str(x) + " must be [N, C, spatial...]");
  GlobalPoolState st;
  st.kind = kind;
  st.planes = x[0] * x[1];
  st.size = ir::numel(x) / std::max<int64_t>(1, st.planes);
  return exec::make_state(st);
}

void run_global_pool(const exec::KernelArgs& args) {
  const auto& st = state_of<GlobalPoolState>(args);
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  parallel_for(st.planes, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(1, st.size)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) {
                   const float* xp = x + p * st.size;
                   // Eight independent chains: one chain waits an add's latency per element.
                   constexpr int64_t kChains = 8;
                   const int64_t whole = st.size / kChains * kChains;
                   if (st.kind == PoolKind::kMax) {
                     float mx[kChains];
                     std::fill(mx, mx + kChains, -std::numeric_limits<float>::infinity());
                     for (int64_t i = 0; i < whole; i += kChains)
                       for (int64_t c = 0; c < kChains; ++c) mx[c] = std::max(mx[c], xp[i + c]);
                     for (int64_t i = whole; i < st.size; ++i) mx[0] = std::max(mx[0], xp[i]);
                     y[p] = *std::max_element(mx, mx + kChains);
                   } else {
                     double sum[kChains] = {};  // double: a 56x56 plane in float loses digits
                     for (int64_t i = 0; i < whole; i += kChains)
                       for (int64_t c = 0; c < kChains; ++c) sum[c] += xp[i + c];
                     for (int64_t i = whole; i < st.size; ++i) sum[0] += xp[i];
                     double total = 0;
                     for (double v : sum) total += v;
                     y[p] = st.size ? static_cast<float>(total / static_cast<double>(st.size)) : 0.0f;
                   }
                 }
               });
}

}  // namespace

void add_conv_kernels(exec::KernelTable& table) {
  table.add("Conv", {prepare_conv, run_conv, conv_scratch});
  table.add("ConvTranspose", {prepare_conv_transpose, run_conv_transpose});
  table.add("BatchNorm", {prepare_batch_norm, run_batch_norm});
  table.add("MaxPool", {[](const exec::KernelContext& ctx) { return prepare_pool(ctx, PoolKind::kMax); }, run_pool});
  table.add("AveragePool",
            {[](const exec::KernelContext& ctx) { return prepare_pool(ctx, PoolKind::kAverage); }, run_pool});
  table.add("GlobalMaxPool",
            {[](const exec::KernelContext& ctx) { return prepare_global_pool(ctx, PoolKind::kMax); }, run_global_pool});
  table.add("GlobalAveragePool",
            {[](const exec::KernelContext& ctx) { return prepare_global_pool(ctx, PoolKind::kAverage); },
             run_global_pool});
}

}  // namespace fusebox::cpu
