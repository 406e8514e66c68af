#include "ops/cuda/host/conv_geometry.h"

#include <climits>
#include <cstdint>

#include "core/base/error.h"

namespace fusebox::cuda {

Window3 window3(const ir::WindowGeometry& g, const char* op) {
  const size_t r = g.in.size();
  if (r > 3)
    throw Error(std::string(op) + ": " + std::to_string(r) +
                " spatial dims, the CUDA kernels take at most 3 (1-D, 2-D or 3-D)");
  Window3 w;
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;  // right-aligned: the last dim is the width
    w.in[j] = g.in[i], w.out[j] = g.out[i], w.k[j] = g.kernel[i];
    w.s[j] = g.strides[i], w.dil[j] = g.dilations[i];
    w.pb[j] = g.pad_begin[i], w.pe[j] = g.pad_end[i];
  }
  return w;
}

ConvGemmPlan conv_gemm_plan(const ir::ConvShape& c) {
  ConvGemmPlan p;
  const int64_t n_images = c.g.batch, groups = c.group;
  p.m = c.c_out_per_group;
  p.n = c.g.out_size();
  p.k = c.k();
  p.im2col_rows = c.c_in * c.g.kernel_size();
  if (c.c_in_per_group == 1 && groups > 1) {
    p.path = ConvPath::kDepthwise;
    return p;
  }
  for (int64_t v : {p.m, p.n, p.k, groups, n_images})
    if (v > INT_MAX)
      throw Error("Conv: GEMM dimension " + std::to_string(v) + " exceeds cuBLAS's int range");
  p.w_batch = p.m * p.k;
  p.y_batch = p.m * p.n;
  p.y_call = c.c_out * p.n;  // one image's output
  if (c.pointwise()) {
    p.path = ConvPath::kPointwise;
    const int64_t image = c.c_in * c.g.in_size();  // P == in size for a pointwise conv
    if (groups == 1) {
      // Every image against the same weight: one call, the weight's batch stride 0.
      p.calls = 1;
      p.batch = n_images;
      p.x_batch = image;
      p.w_batch = 0;
      p.y_batch = p.y_call;
      p.y_call = 0;
      return p;
    }
    p.calls = n_images;
    p.batch = groups;
    p.x_call = image;
    p.x_batch = p.k * p.n;
    return p;
  }
  p.path = ConvPath::kIm2col;
  p.calls = n_images;
  p.batch = groups;
  p.x_call = 0;  // the scratch holds the current image's im2col
  p.x_batch = p.k * p.n;
  p.scratch_floats = p.im2col_rows * p.n;
  return p;
}

size_t conv_scratch_bytes_cuda(const ir::ConvShape& c) {
  return static_cast<size_t>(conv_gemm_plan(c).scratch_floats) * sizeof(float);
}

ConvTransposeParams conv_transpose_params(const ir::ConvTransposeShape& c) {
  const size_t r = c.in.size();
  if (r < 1 || r > 3)
    throw Error("ConvTranspose: " + std::to_string(r) +
                " spatial dims, the CUDA kernels take 1 to 3");
  ConvTransposeParams p;
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    p.w.in[j] = c.in[i], p.w.out[j] = c.out[i], p.w.k[j] = c.kernel[i];
    p.w.s[j] = c.strides[i], p.w.dil[j] = c.dilations[i], p.w.pb[j] = c.pad_begin[i];
  }
  p.batch = c.batch;
  p.group = c.group;
  p.c_in = c.c_in;
  p.c_out = c.c_out;
  p.c_in_per_group = c.c_in_per_group;
  p.c_out_per_group = c.c_out_per_group;
  p.has_bias = c.has_bias;
  p.rows = c.c_out_per_group * p.w.kernel_size();
  p.scratch_floats = c.c_out * p.w.kernel_size() * p.w.in_size();
  for (int64_t v : {p.rows, p.w.in_size(), p.c_in_per_group, p.group})
    if (v > INT_MAX)
      throw Error("ConvTranspose: GEMM dimension " + std::to_string(v) +
                  " exceeds cuBLAS's int range");
  return p;
}

size_t conv_transpose_scratch_bytes_cuda(const ir::ConvTransposeShape& c) {
  return static_cast<size_t>(conv_transpose_params(c).scratch_floats) * sizeof(float);
}

ConvActParams conv_act_params(const ir::ConvActivation& act) {
  ConvActParams p;
  p.a = act.a;
  p.b = act.b;
  switch (act.kind) {
    case ir::ConvActKind::kNone:
      p.kind = ConvAct::kNone;
      break;
    case ir::ConvActKind::kRelu:
      p.kind = ConvAct::kRelu;
      break;
    case ir::ConvActKind::kSigmoid:
      p.kind = ConvAct::kSigmoid;
      break;
    case ir::ConvActKind::kClip:
      p.kind = ConvAct::kClip;
      break;
    case ir::ConvActKind::kHardSigmoid:
      p.kind = ConvAct::kHardSigmoid;
      break;
    case ir::ConvActKind::kHardSwish:
      p.kind = ConvAct::kHardSwish;
      break;
  }
  return p;
}

std::string conv_path_name(ConvPath path) {
  switch (path) {
    case ConvPath::kPointwise:
      return "pointwise";
    case ConvPath::kIm2col:
      return "im2col";
    case ConvPath::kDepthwise:
      return "depthwise";
  }
  return "?";
}

}  // namespace fusebox::cuda
