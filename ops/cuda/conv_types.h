#pragma once
// The plain parameter structs of the conv family's CUDA kernels (conv_kernels.cu) and the pieces of
// their arithmetic both sides compute: the window taps a pooled output reads, and the fused
// activations. C++17, no core headers (nvcc includes this); host/conv_geometry.h fills the structs
// from core's conv_params, and tests/cuda/conv_geometry_test.cpp checks these functions on the
// host.
#include <cstdint>

#include "ops/cuda/ew_math.cuh"
#include "ops/cuda/host_device.h"

namespace fusebox::cuda {

// Up to three spatial dims, right-aligned as (depth, height, width): a 2-D window has depth 1, a
// 1-D one height 1 too, so one kernel serves all three. Output position o of dim i reads inputs
// o * s[i] - pb[i] + j * dil[i], j < k[i]; those outside [0, in[i]) are padding.
struct Window3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t s[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
  FUSEBOX_HD int64_t in_size() const { return in[0] * in[1] * in[2]; }
  FUSEBOX_HD int64_t out_size() const { return out[0] * out[1] * out[2]; }
  FUSEBOX_HD int64_t kernel_size() const { return k[0] * k[1] * k[2]; }
};

// The taps [j0, j1) of dim i's window at output o that fall inside the input, and how many fall
// inside the padded input (AveragePool's count_include_pad divisor): the CPU's pooling loop's own
// reading (ops/cpu/conv.cpp), so the two never disagree on a border.
struct Taps {
  int64_t j0 = 0, j1 = 0, padded = 0;
};
FUSEBOX_HD Taps window_taps(const Window3& w, int i, int64_t o) {
  Taps t;
  const int64_t start = o * w.s[i] - w.pb[i];
  t.j1 = w.k[i];
  for (int64_t j = 0; j < w.k[i]; ++j) {
    const int64_t idx = start + j * w.dil[i];
    if (idx < 0) t.j0 = j + 1;
    if (idx >= w.in[i] && t.j1 == w.k[i]) t.j1 = j;
    if (idx >= -w.pb[i] && idx < w.in[i] + w.pe[i]) ++t.padded;
  }
  if (t.j1 < t.j0) t.j1 = t.j0;
  return t;
}

// The activation a Conv applies before it stores (core/ir/conv_params.h, ConvActKind, same order),
// with the CPU's formulas (ReLU and sigmoid are the standalone ops', ew_math.cuh): ReLU and Clip
// keep NaN, HardSigmoid is clamp(a x + b, 0, 1), HardSwish x * clamp(x / 6 + 1/2, 0, 1).
enum class ConvAct : int { kNone, kRelu, kSigmoid, kClip, kHardSigmoid, kHardSwish };
struct ConvActParams {
  ConvAct kind = ConvAct::kNone;
  float a = 0, b = 0;  // clip: min, max; hardsigmoid: alpha, beta
};
FUSEBOX_HD float conv_clamp01(float g) {
  return g < 0.0f ? 0.0f : (g > 1.0f ? 1.0f : g);
}
FUSEBOX_HD float conv_activate(float v, const ConvActParams& act) {
  switch (act.kind) {
    case ConvAct::kNone:
      return v;
    case ConvAct::kRelu:
      return ew_relu(v);
    case ConvAct::kSigmoid:
      return ew_sigmoid(v);
    case ConvAct::kClip:
      return v < act.a ? act.a : (v > act.b ? act.b : v);
    case ConvAct::kHardSigmoid:
      return conv_clamp01(act.a * v + act.b);
    case ConvAct::kHardSwish:
      return v * conv_clamp01(v * (1.0f / 6.0f) + 0.5f);
  }
  return v;
}

// Which way a Conv runs (host/conv_geometry.h chooses):
//  - kPointwise: 1x1, stride 1, no pads: the input image is already the GEMM's [C_in, P] matrix;
//  - kIm2col: im2col of one image into scratch, then the GEMM per group;
//  - kDepthwise: one input channel per group: a direct kernel, one thread per output (K is the
//    kernel size, 9 for 3x3: a GEMM would be all overhead).
enum class ConvPath : int { kPointwise, kIm2col, kDepthwise };

// The GEMMs of a Conv, in row-major terms: per image and group, Y[M, P] = W[M, K] X[K, P], with
// M = C_out / group, K = C_in / group * kernel size, P = output positions. `calls` strided-batched
// cuBLAS calls of `batch` GEMMs each; call c's b-th GEMM reads X at c * x_call + b * x_batch (in
// the input for kPointwise, in the scratch for kIm2col, which holds one image), W at b * w_batch
// and writes Y at c * y_call + b * y_batch (element offsets).
struct ConvGemmPlan {
  ConvPath path = ConvPath::kIm2col;
  int64_t m = 0, n = 0, k = 0;  // M, P, K
  int64_t calls = 0, batch = 0;
  int64_t x_call = 0, x_batch = 0, w_batch = 0, y_call = 0, y_batch = 0;
  int64_t im2col_rows = 0;     // C_in * kernel size: rows of one image's im2col (all groups)
  int64_t scratch_floats = 0;  // im2col_rows * P for kIm2col, else 0
};

struct ConvParams {
  ConvGemmPlan plan;
  Window3 w;
  int64_t batch = 0, c_in = 0, c_out = 0, c_in_per_group = 0, c_out_per_group = 0;
  bool has_bias = false;
  ConvActParams act;
};

// ConvTranspose, per image: col[g] [C_out/group * taps, P_in] = W[g]^T X[g] (one strided-batched
// GEMM over the groups: cuBLAS m = P_in, n = rows, k = C_in/group, its second operand transposed),
// col into scratch, then col2im gathers each output from the taps that reach it, over the bias.
// w.in / w.out are the input and output spatial dims (pe unused).
struct ConvTransposeParams {
  Window3 w;
  int64_t batch = 0, group = 1, c_in = 0, c_out = 0, c_in_per_group = 0, c_out_per_group = 0;
  int64_t rows = 0;            // C_out/group * taps: one group's col rows
  int64_t scratch_floats = 0;  // C_out * taps * P_in: one image's col, all groups
  bool has_bias = false;
};

// Input index along dim i that kernel tap j of output o reads in a ConvTranspose, or -1 when that
// tap does not reach o (o + pb - j dil not a multiple of the stride, or outside the input).
FUSEBOX_HD int64_t transpose_source(const Window3& w, int i, int64_t o, int64_t j) {
  const int64_t t = o + w.pb[i] - j * w.dil[i];
  if (t < 0 || t % w.s[i] != 0) return -1;
  const int64_t src = t / w.s[i];
  return src < w.in[i] ? src : -1;
}

struct BatchNormParams {
  int64_t numel = 0, channels = 1, spatial = 1;
  double epsilon = 1e-5;
};

struct PoolParams {
  Window3 w;
  int64_t planes = 0;
  bool max = true, include_pad = false;
};

}  // namespace fusebox::cuda
