// Winograd F(2x2, 3x3) for channels-last 3x3 stride-1 convs (conv_winograd.h).
//
// With the matrices of Lavin and Gray (2015),
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   (input:  V = B^T d B, d a 4x4 input block)
//   G   = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]         (weight: U = G g G^T, g a 3x3 kernel)
//   A^T = [1 1 1 0; 0 1 -1 -1]                        (output: Y = A^T M A, a 2x2 output block)
// a 2x2 block of outputs is Y = A^T [sum over input channels of U (.) V] A, the sum over channels
// of 16 element-wise products: for each of the 16 positions xi, a GEMM over the tiles of the block
// and the channels. The transforms are adds only and run a vector of channels at a time (the
// channels are contiguous in NHWC, so each of a tile's 16 input points is one run of C_in floats).
#include "ops/cpu/conv_winograd.h"

#include <algorithm>

#include "ops/cpu/blas.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

namespace {

// 8 floats through GCC's generic vectors: the build's target turns each into one AVX move or add;
// unaligned (channel runs start anywhere) and free to alias the float arrays they read.
using F8 = float __attribute__((vector_size(32), aligned(4), may_alias));

inline F8 load8(const float* p) { return *reinterpret_cast<const F8*>(p); }
inline void store8(float* p, F8 v) { *reinterpret_cast<F8*>(p) = v; }

// V[xi] row `t` (xi = 4 i + j at v + xi * vs) from the 16 input runs p[4 i + j], channels [0, c).
void input_transform(const float* const* p, int64_t c, float* v, int64_t vs) {
  int64_t k = 0;
  for (; k + 8 <= c; k += 8) {
    F8 d[16], t[16];
    for (int q = 0; q < 16; ++q) d[q] = load8(p[q] + k);
    for (int j = 0; j < 4; ++j) {  // t = B^T d: over the rows
      t[0 + j] = d[0 + j] - d[8 + j];
      t[4 + j] = d[4 + j] + d[8 + j];
      t[8 + j] = d[8 + j] - d[4 + j];
      t[12 + j] = d[4 + j] - d[12 + j];
    }
    for (int i = 0; i < 4; ++i) {  // V = t B: over the columns
      const F8* r = t + 4 * i;
      store8(v + (4 * i + 0) * vs + k, r[0] - r[2]);
      store8(v + (4 * i + 1) * vs + k, r[1] + r[2]);
      store8(v + (4 * i + 2) * vs + k, r[2] - r[1]);
      store8(v + (4 * i + 3) * vs + k, r[1] - r[3]);
    }
  }
  for (; k < c; ++k) {
    float d[16], t[16];
    for (int q = 0; q < 16; ++q) d[q] = p[q][k];
    for (int j = 0; j < 4; ++j) {
      t[0 + j] = d[0 + j] - d[8 + j];
      t[4 + j] = d[4 + j] + d[8 + j];
      t[8 + j] = d[8 + j] - d[4 + j];
      t[12 + j] = d[4 + j] - d[12 + j];
    }
    for (int i = 0; i < 4; ++i) {
      const float* r = t + 4 * i;
      v[(4 * i + 0) * vs + k] = r[0] - r[2];
      v[(4 * i + 1) * vs + k] = r[1] + r[2];
      v[(4 * i + 2) * vs + k] = r[2] - r[1];
      v[(4 * i + 3) * vs + k] = r[1] - r[3];
    }
  }
}

// The 2x2 outputs y[2 i + j] (channels [0, c), null where the tile overhangs the output) from
// M[xi] row (xi at m + xi * ms), plus the bias (zeros when there is none).
void output_transform(const float* m, int64_t ms, const float* bias, int64_t c, float* const* y) {
  int64_t k = 0;
  for (; k + 8 <= c; k += 8) {
    F8 a[16], s[8];
    for (int q = 0; q < 16; ++q) a[q] = load8(m + q * ms + k);
    for (int j = 0; j < 4; ++j) {  // s = A^T M: over the rows
      s[j] = a[j] + a[4 + j] + a[8 + j];
      s[4 + j] = a[4 + j] - a[8 + j] - a[12 + j];
    }
    const F8 b = load8(bias + k);
    for (int i = 0; i < 2; ++i) {  // Y = s A: over the columns
      const F8* r = s + 4 * i;
      if (y[2 * i]) store8(y[2 * i] + k, r[0] + r[1] + r[2] + b);
      if (y[2 * i + 1]) store8(y[2 * i + 1] + k, r[1] - r[2] - r[3] + b);
    }
  }
  for (; k < c; ++k) {
    float a[16], s[8];
    for (int q = 0; q < 16; ++q) a[q] = m[q * ms + k];
    for (int j = 0; j < 4; ++j) {
      s[j] = a[j] + a[4 + j] + a[8 + j];
      s[4 + j] = a[4 + j] - a[8 + j] - a[12 + j];
    }
    for (int i = 0; i < 2; ++i) {
      const float* r = s + 4 * i;
      if (y[2 * i]) y[2 * i][k] = r[0] + r[1] + r[2] + bias[k];
      if (y[2 * i + 1]) y[2 * i + 1][k] = r[1] - r[2] - r[3] + bias[k];
    }
  }
}

// The input transform of tiles [t0, t0 + nt) of the whole batch (image-major, then tile row, then
// tile column) into the slot's V.
void transform_block(const WinogradConv& w, const float* x, int64_t t0, int64_t nt, float* slot) {
  const Dims& d = w.d;
  const int64_t per_image = w.tiles_h * w.tiles_w;
  float* v = slot;  // 16 x kWinogradBlockTiles x ldv
  const int64_t vs = ir::kWinogradBlockTiles * w.ldv;
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t tile = t0 + t, n = tile / per_image, th = tile % per_image / w.tiles_w, tw = tile % w.tiles_w;
    const float* p[16];
    for (int i = 0; i < 4; ++i) {
      const int64_t ih = 2 * th - d.ph + i;
      for (int j = 0; j < 4; ++j) {
        const int64_t iw = 2 * tw - d.pw + j;
        p[4 * i + j] = ih >= 0 && ih < d.h && iw >= 0 && iw < d.w ? x + ((n * d.h + ih) * d.w + iw) * w.c_in
                                                                  : w.zeros.data();
      }
    }
    input_transform(p, w.c_in, v + t * w.ldv, vs);
  }
}

// For the block transform_block left in the slot: output channels [c0, c0 + cn) (whole weight
// panels) through the 16 GEMMs and the output transform, into y.
void multiply_block(const WinogradConv& w, const float* bias, float* y, int64_t t0, int64_t nt, int64_t c0,
                    int64_t cn, float* slot) {
  const Dims& d = w.d;
  const int64_t per_image = w.tiles_h * w.tiles_w;
  const float* v = slot;
  float* m = slot + 16 * ir::kWinogradBlockTiles * w.ldv;  // 16 x kWinogradBlockTiles x ldm
  const int64_t vs = ir::kWinogradBlockTiles * w.ldv, ms = ir::kWinogradBlockTiles * w.ldm;
  for (int xi = 0; xi < 16; ++xi)
    sgemm_panels(nt, 1.0f, v + xi * vs, w.ldv, 1, w.u[static_cast<size_t>(xi)].view().cols(c0, cn), 0.0f,
                 m + xi * ms + c0, w.ldm);
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t tile = t0 + t, n = tile / per_image, th = tile % per_image / w.tiles_w, tw = tile % w.tiles_w;
    float* out[4];
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const int64_t oh = 2 * th + i, ow = 2 * tw + j;
        out[2 * i + j] = oh < d.oh && ow < d.ow ? y + ((n * d.oh + oh) * d.ow + ow) * w.c_out + c0 : nullptr;
      }
    output_transform(m + t * w.ldm + c0, ms, bias + c0, cn, out);
    if (w.act.kind != ir::ConvActKind::kNone)
      for (float* o : out)
        if (o) apply_activation(w.act, w.isa, o, cn);
  }
}

}  // namespace

WinogradConv make_winograd(const ir::ConvShape& c, const float* weight, Isa isa, const ir::ConvActivation& act) {
  WinogradConv w;
  w.d = dims_of(c.g);
  w.batch = c.g.batch;
  w.c_in = c.c_in;
  w.c_out = c.c_out;
  w.tiles_h = (w.d.oh + 1) / 2;
  w.tiles_w = (w.d.ow + 1) / 2;
  w.ldv = (w.c_in + 15) / 16 * 16;
  w.ldm = (w.c_out + 15) / 16 * 16;
  w.slot_floats = ir::winograd_slot_floats(c);
  w.isa = isa;
  w.act = act;
  w.zeros.assign(static_cast<size_t>(std::max<int64_t>(w.c_in, w.c_out)), 0.0f);
  // U = G g G^T per (output, input) channel pair, in double, scattered to U[xi][ci][co].
  static constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<std::vector<float>> u(16, std::vector<float>(static_cast<size_t>(w.c_in * w.c_out)));
  for (int64_t co = 0; co < w.c_out; ++co)
    for (int64_t ci = 0; ci < w.c_in; ++ci) {
      const float* g = weight + (co * w.c_in + ci) * 9;
      double gg[4][3];  // G g
      for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 3; ++k) gg[i][k] = kG[i][0] * g[k] + kG[i][1] * g[3 + k] + kG[i][2] * g[6 + k];
      for (int i = 0; i < 4; ++i)
        for (int l = 0; l < 4; ++l)
          u[static_cast<size_t>(4 * i + l)][static_cast<size_t>(ci * w.c_out + co)] =
              static_cast<float>(gg[i][0] * kG[l][0] + gg[i][1] * kG[l][1] + gg[i][2] * kG[l][2]);
    }
  for (const auto& ux : u) w.u.push_back(PackedB::pack(isa, ux.data(), w.c_in, w.c_out, false));
  return w;
}

void run_winograd(const WinogradConv& w, const float* x, const float* bias, float* y, float* scratch) {
  const int64_t tiles = w.batch * w.tiles_h * w.tiles_w;
  if (tiles == 0 || w.c_out == 0) return;
  // Shared out as the GEMM convs are (conv_common.h: share_conv), blocks of at most
  // kWinogradBlockTiles tiles, as even as the tiles allow, in the place of their tiles of output
  // positions: with fewer blocks than two per thread (ResNet's 7x7 layers: 16 tiles) the output
  // channels are split too, so that each thread streams its share of the transformed weight
  // rather than all of it. A thread transforms a block's input once for its chunks of it.
  const int64_t blocks = (tiles + ir::kWinogradBlockTiles - 1) / ir::kWinogradBlockTiles;
  const int64_t per_block = (tiles + blocks - 1) / blocks;
  const ConvShare share = share_conv(blocks, w.c_out, 32.0 * static_cast<double>(tiles * w.c_in * w.c_out));
  const float* b = bias ? bias : w.zeros.data();
  parallel_for_team(share.items, share.team, [&](int64_t begin, int64_t end) {
    float* slot = scratch + (begin / share.chunk) * w.slot_floats;
    int64_t in_slot = -1;  // the first tile of the block whose input transform the slot holds
    for (int64_t item = begin; item < end; ++item) {
      // Tiles run across the images: one "image" of `tiles` positions, one group.
      const ConvItem it = conv_item(item, share.col_chunks, blocks, per_block, tiles, 1, w.c_out);
      if (it.p0 != in_slot) {
        transform_block(w, x, it.p0, it.rows, slot);
        in_slot = it.p0;
      }
      multiply_block(w, b, y, it.p0, it.rows, it.c0, it.cn, slot);
    }
  });
}

}  // namespace fusebox::cpu
