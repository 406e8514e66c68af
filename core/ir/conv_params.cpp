#include "core/ir/conv_params.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/base/checked.h"
#include "core/base/error.h"

namespace fusebox::ir {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

// An attribute of one value per spatial dim, defaulting to `fallback` for each.
std::vector<int64_t> per_dim(const Node& node, const char* attr, size_t rank, int64_t fallback,
                             int64_t min, const char* op) {
  std::vector<int64_t> v = node.attrs.get_ints(attr, std::vector<int64_t>(rank, fallback));
  if (v.size() != rank)
    throw Error(std::string(op) + ": " + attr + " has " + num(static_cast<int64_t>(v.size())) +
                " values, the input has " + num(static_cast<int64_t>(rank)) + " spatial dims");
  for (int64_t x : v)
    if (x < min)
      throw Error(std::string(op) + ": " + attr + " " + shape_str(v) + " must be >= " + num(min));
  return v;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return a / b + (a % b != 0);
}  // a >= 0, b >= 1

// One step of the window arithmetic (checked.h): its value, or an Error naming the op and what
// passed 2^63 (a kernel, dilation, stride or pad of 2^32 and more, from the file).
int64_t fits(std::optional<int64_t> v, const char* op, const std::string& what) {
  if (!v) throw Error(std::string(op) + ": " + what + " passes 2^63");
  return *v;
}

// (kernel - 1) * dilation + 1: the extent of a window.
int64_t window_span(int64_t kernel, int64_t dilation, const char* op) {
  const std::string what =
      "the window (kernel " + num(kernel) + ", dilation " + num(dilation) + ")";
  return fits(checked_add(fits(checked_mul(kernel - 1, dilation), op, what), 1), op, what);
}

}  // namespace

WindowGeometry window_geometry(const Node& node, const Shape& x, const Shape& kernel, bool ceil_mode,
                               const char* op) {
  if (x.size() < 3)
    throw Error(std::string(op) + ": input " + shape_str(x) + " must be [N, C, spatial...] (rank >= 3)");
  const size_t r = x.size() - 2;
  if (kernel.size() != r)
    throw Error(std::string(op) + ": kernel " + shape_str(kernel) + " has " +
                num(static_cast<int64_t>(kernel.size())) + " dims, the input " + shape_str(x) +
                " has " + num(static_cast<int64_t>(r)) + " spatial dims");
  for (int64_t k : kernel)
    if (k < 1) throw Error(std::string(op) + ": kernel " + shape_str(kernel) + " must be >= 1 in every dim");
  WindowGeometry g;
  g.batch = x[0];
  g.channels = x[1];
  g.in.assign(x.begin() + 2, x.end());
  g.kernel = kernel;
  g.strides = per_dim(node, "strides", r, 1, 1, op);
  g.dilations = per_dim(node, "dilations", r, 1, 1, op);
  const std::string auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads = node.attrs.get_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (pads.size() != 2 * r)
    throw Error(std::string(op) + ": pads has " + num(static_cast<int64_t>(pads.size())) +
                " values, expected " + num(static_cast<int64_t>(2 * r)) + " (begin and end per spatial dim)");
  for (int64_t p : pads)
    if (p < 0) throw Error(std::string(op) + ": pads " + shape_str(pads) + " must be >= 0");
  g.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(r));
  g.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(r), pads.end());
  g.out.resize(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t span = window_span(kernel[i], g.dilations[i], op);
    const int64_t in = g.in[i], s = g.strides[i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = ceil_div(in, s);
      // (out - 1) * s <= in - 1, so only adding the span can pass 2^63.
      const int64_t total = std::max<int64_t>(
          0, fits(checked_add((g.out[i] - 1) * s, span), op, "the padded extent") - in);
      // SAME_UPPER puts the odd pad at the end, SAME_LOWER at the beginning.
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
    } else if (auto_pad == "VALID") {
      g.pad_begin[i] = g.pad_end[i] = 0;
      g.out[i] = in >= span ? (in - span) / s + 1 : 0;
    } else if (auto_pad == "NOTSET") {
      const std::string what = "spatial dim " + num(static_cast<int64_t>(i)) + " of size " +
                               num(in) + " with pads " + num(g.pad_begin[i]) + "+" +
                               num(g.pad_end[i]);
      const int64_t padded = fits(
          checked_add(fits(checked_add(in, g.pad_begin[i]), op, what), g.pad_end[i]), op, what);
      if (padded < span) {
        g.out[i] = 0;
      } else if (ceil_mode) {
        g.out[i] = ceil_div(padded - span, s) + 1;
        // The last window must start inside the input or its begin padding.
        const std::optional<int64_t> last = checked_mul(g.out[i] - 1, s);  // where it starts
        if (!last || *last >= in + g.pad_begin[i]) --g.out[i];
      } else {
        g.out[i] = (padded - span) / s + 1;
      }
    } else {
      throw Error(std::string(op) + ": auto_pad '" + auto_pad +
                  "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    }
    if (g.out[i] < 1 && in > 0)
      throw Error(std::string(op) + ": a window of " + num(span) + " (kernel " + num(kernel[i]) +
                  ", dilation " + num(g.dilations[i]) + ") does not fit spatial dim " +
                  num(static_cast<int64_t>(i)) + " of size " + num(in) + " with pads " +
                  num(g.pad_begin[i]) + "+" + num(g.pad_end[i]));
    g.out[i] = std::max<int64_t>(g.out[i], 0);
  }
  return g;
}

bool ConvShape::depthwise() const {
  const int64_t rows = g.kernel.empty() ? 1 : g.kernel_size() / std::max<int64_t>(1, g.kernel.back());
  return c_in_per_group == 1 && group > 1 && rows <= kDepthwiseMaxKernelRows;
}

bool ConvShape::pointwise() const {
  for (size_t i = 0; i < g.kernel.size(); ++i)
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0) return false;
  return true;
}

Shape ConvShape::output_shape() const {
  Shape out{g.batch, c_out};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return out;
}

ConvActivation conv_activation(const Node& node) {
  ConvActivation act;
  const std::string kind = node.attrs.get_string("activation", "");
  const double inf = std::numeric_limits<double>::infinity();
  if (kind.empty()) return act;
  if (kind == "relu") {
    act.kind = ConvActKind::kRelu;
  } else if (kind == "sigmoid") {
    act.kind = ConvActKind::kSigmoid;
  } else if (kind == "hardswish") {
    act.kind = ConvActKind::kHardSwish;
  } else if (kind == "clip") {
    act.kind = ConvActKind::kClip;
    act.a = static_cast<float>(node.attrs.get_float("activation_min", -inf));
    act.b = static_cast<float>(node.attrs.get_float("activation_max", inf));
  } else if (kind == "hardsigmoid") {
    act.kind = ConvActKind::kHardSigmoid;
    act.a = static_cast<float>(node.attrs.get_float("activation_alpha", 0.2));
    act.b = static_cast<float>(node.attrs.get_float("activation_beta", 0.5));
  } else {
    throw Error("activation '" + kind + "' is not one a Conv applies (relu, sigmoid, clip, hardsigmoid, hardswish)");
  }
  return act;
}

double ConvActivation::flops_per_output() const {
  switch (kind) {
    case ConvActKind::kNone: return 0;
    case ConvActKind::kRelu: return 1;
    case ConvActKind::kClip: return 2;
    case ConvActKind::kHardSigmoid: return 3;
    case ConvActKind::kSigmoid: return 4;
    case ConvActKind::kHardSwish: return 4;
  }
  return 0;
}

std::string conv_activation_text(const ConvActivation& act) {
  auto fnum = [](float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    return std::string(buf);
  };
  switch (act.kind) {
    case ConvActKind::kNone: return "none";
    case ConvActKind::kRelu: return "relu";
    case ConvActKind::kSigmoid: return "sigmoid";
    case ConvActKind::kHardSwish: return "hardswish";
    case ConvActKind::kClip: return "clip [" + fnum(act.a) + ", " + fnum(act.b) + "]";
    case ConvActKind::kHardSigmoid: return "hardsigmoid (alpha " + fnum(act.a) + ", beta " + fnum(act.b) + ")";
  }
  return "";
}

ConvShape conv_shape(const Node& node, const Shape& x, const Shape& w, const Shape* bias) {
  if (x.size() < 3 || x.size() > 5)
    throw Error("Conv: input " + shape_str(x) + " must be [N, C, spatial...] with 1 to 3 spatial dims");
  if (w.size() != x.size())
    throw Error("Conv: weight " + shape_str(w) + " must have the input's rank " +
                num(static_cast<int64_t>(x.size())) + ": [C_out, C_in / group, kernel...]");
  ConvShape c;
  c.group = node.attrs.get_int("group", 1);
  c.c_in = x[1];
  c.c_out = w[0];
  if (c.group < 1) throw Error("Conv: group " + num(c.group) + " must be >= 1");
  if (c.c_in % c.group != 0)
    throw Error("Conv: input channels " + num(c.c_in) + " are not divisible by group " + num(c.group));
  if (c.c_out % c.group != 0)
    throw Error("Conv: output channels " + num(c.c_out) + " (weight dim 0) are not divisible by group " +
                num(c.group));
  c.c_in_per_group = c.c_in / c.group;
  c.c_out_per_group = c.c_out / c.group;
  if (w[1] != c.c_in_per_group)
    throw Error("Conv: weight " + shape_str(w) + " has " + num(w[1]) + " input channels per group, the input " +
                shape_str(x) + " with group " + num(c.group) + " has " + num(c.c_in_per_group));
  Shape kernel(w.begin() + 2, w.end());
  if (node.attrs.has("kernel_shape") && node.attrs.get_ints("kernel_shape") != kernel)
    throw Error("Conv: kernel_shape " + shape_str(node.attrs.get_ints("kernel_shape")) +
                " does not match the weight's " + shape_str(kernel));
  c.g = window_geometry(node, x, kernel, false, "Conv");
  if (bias) {
    if (*bias != Shape{c.c_out})
      throw Error("Conv: bias " + shape_str(*bias) + " must be [" + num(c.c_out) + "] (one per output channel)");
    c.has_bias = true;
  }
  return c;
}

Shape ConvTransposeShape::output_shape() const {
  Shape s{batch, c_out};
  s.insert(s.end(), out.begin(), out.end());
  return s;
}

ConvTransposeShape conv_transpose_shape(const Node& node, const Shape& x, const Shape& w, const Shape* bias) {
  const char* op = "ConvTranspose";
  if (x.size() < 3 || x.size() > 5)
    throw Error(std::string(op) + ": input " + shape_str(x) + " must be [N, C, spatial...] with 1 to 3 spatial dims");
  if (w.size() != x.size())
    throw Error(std::string(op) + ": weight " + shape_str(w) + " must have the input's rank " +
                num(static_cast<int64_t>(x.size())) + ": [C_in, C_out / group, kernel...]");
  const size_t r = x.size() - 2;
  ConvTransposeShape c;
  c.batch = x[0];
  c.c_in = x[1];
  c.group = node.attrs.get_int("group", 1);
  if (c.group < 1) throw Error(std::string(op) + ": group " + num(c.group) + " must be >= 1");
  if (c.c_in % c.group != 0)
    throw Error(std::string(op) + ": input channels " + num(c.c_in) + " are not divisible by group " + num(c.group));
  if (w[0] != c.c_in)
    throw Error(std::string(op) + ": weight " + shape_str(w) + " must have " + num(c.c_in) +
                " rows (dim 0), one per input channel of " + shape_str(x));
  c.c_in_per_group = c.c_in / c.group;
  c.c_out_per_group = w[1];
  c.c_out = w[1] * c.group;
  c.in.assign(x.begin() + 2, x.end());
  c.kernel.assign(w.begin() + 2, w.end());
  if (node.attrs.has("kernel_shape") && node.attrs.get_ints("kernel_shape") != c.kernel)
    throw Error(std::string(op) + ": kernel_shape " + shape_str(node.attrs.get_ints("kernel_shape")) +
                " does not match the weight's " + shape_str(c.kernel));
  c.strides = per_dim(node, "strides", r, 1, 1, op);
  c.dilations = per_dim(node, "dilations", r, 1, 1, op);
  const std::vector<int64_t> out_pad = per_dim(node, "output_padding", r, 0, 0, op);
  std::vector<int64_t> pads = node.attrs.get_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (pads.size() != 2 * r)
    throw Error(std::string(op) + ": pads has " + num(static_cast<int64_t>(pads.size())) + " values, expected " +
                num(static_cast<int64_t>(2 * r)));
  const std::string auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    throw Error(std::string(op) + ": auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  std::vector<int64_t> target = node.attrs.get_ints("output_shape");
  if (target.size() == r + 2) target.erase(target.begin(), target.begin() + 2);
  if (!target.empty() && target.size() != r)
    throw Error(std::string(op) + ": output_shape " + shape_str(target) + " must give " +
                num(static_cast<int64_t>(r)) + " spatial dims");
  c.out.resize(r);
  c.pad_begin.resize(r);
  for (size_t i = 0; i < r; ++i) {
    const std::string dim = "output spatial dim " + num(static_cast<int64_t>(i)) + " (input " +
                            num(c.in[i]) + ", stride " + num(c.strides[i]) + ")";
    const int64_t strided = fits(checked_mul(c.strides[i], c.in[i] - 1), op, dim);
    const int64_t padded = fits(checked_add(strided, out_pad[i]), op, dim);
    const int64_t full =
        fits(checked_add(padded, window_span(c.kernel[i], c.dilations[i], op)), op, dim);
    int64_t want = -1;
    if (!target.empty()) want = target[i];
    else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
      want = fits(checked_mul(c.in[i], c.strides[i]), op, dim);
    if (want >= 0) {
      if (want < 1)
        throw Error(std::string(op) + ": output_shape " + shape_str(target) + " must be >= 1 in every dim");
      const int64_t total = full - want;
      // ONNX: SAME_UPPER puts the odd pad at the end, otherwise it goes at the beginning. An output
      // larger than the input and kernel reach grows at the end, as with output_padding.
      c.pad_begin[i] = total < 0 ? 0 : auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      c.out[i] = want;
    } else {
      if (auto_pad != "VALID") {
        if (pads[i] < 0 || pads[i + r] < 0) throw Error(std::string(op) + ": pads " + shape_str(pads) + " must be >= 0");
        c.pad_begin[i] = pads[i];
        // Each pad at most `full`, or the difference could pass -2^63.
        c.out[i] = pads[i] > full || pads[i + r] > full ? 0 : full - pads[i] - pads[i + r];
      } else {
        c.out[i] = full;
      }
      if (c.out[i] < 1)
        throw Error(std::string(op) + ": pads " + shape_str(pads) + " leave no output in spatial dim " +
                    num(static_cast<int64_t>(i)));
    }
  }
  if (bias) {
    if (*bias != Shape{c.c_out})
      throw Error(std::string(op) + ": bias " + shape_str(*bias) + " must be [" + num(c.c_out) + "] (one per output channel)");
    c.has_bias = true;
  }
  return c;
}

WindowGeometry pool_geometry(const Node& node, const Shape& x, const char* op) {
  if (!node.attrs.has("kernel_shape")) throw Error(std::string(op) + ": attribute kernel_shape is required");
  const int64_t ceil_mode = node.attrs.get_int("ceil_mode", 0);
  return window_geometry(node, x, node.attrs.get_ints("kernel_shape"), ceil_mode != 0, op);
}

BatchNormShape batch_norm_shape(const Node& node, const Shape& x, const std::vector<Shape>& params) {
  if (x.size() < 2)
    throw Error("BatchNormalization: input " + shape_str(x) + " must be [N, C, ...] (rank >= 2)");
  BatchNormShape b;
  b.batch = x[0];
  b.channels = x[1];
  for (size_t i = 2; i < x.size(); ++i) b.spatial *= x[i];
  static const char* kNames[] = {"scale", "B", "mean", "var"};
  if (params.size() != 4) throw Error("BatchNormalization: expects X, scale, B, mean and var");
  for (size_t i = 0; i < 4; ++i)
    if (params[i] != Shape{b.channels})
      throw Error(std::string("BatchNormalization: ") + kNames[i] + " " + shape_str(params[i]) + " must be [" +
                  num(b.channels) + "] (one per channel of " + shape_str(x) + ")");
  b.epsilon = node.attrs.get_float("epsilon", 1e-5);
  return b;
}

}  // namespace fusebox::ir

namespace fusebox::ir {

int64_t phase_width(const WindowGeometry& g) {
  if (g.kernel.empty()) return 0;
  const int64_t ow = g.out.back(), kw = g.kernel.back(), sw = g.strides.back(), dw = g.dilations.back();
  // Output column o's tap j reads padded column o * sw + j * dw: phase (j * dw) % sw, index
  // o + (j * dw) / sw, at most ow - 1 + ((kw - 1) * dw) / sw.
  return ow + ((kw - 1) * dw) / sw;
}

int64_t depthwise_phase_width(const ConvShape& c) { return phase_width(c.g); }

int64_t padded_plane_floats(const WindowGeometry& g) {
  if (g.kernel.empty()) return 0;
  int64_t rows = 1;  // the input rows of one plane: every spatial dim but the width
  for (size_t i = 0; i + 1 < g.in.size(); ++i) rows *= g.in[i];
  return (rows * g.strides.back() * phase_width(g) + 15) / 16 * 16;
}

bool max_pool_uses_planes(const WindowGeometry& g) {
  if (g.kernel.empty() || g.kernel.back() > kMaxPoolVectorWidth) return false;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < g.kernel.size(); ++i) {
    if (g.kernel[i] > kDepthwiseMaxKernelRows) return false;  // before the product can overflow
    rows *= g.kernel[i];
  }
  return rows <= kDepthwiseMaxKernelRows;
}

size_t max_pool_scratch_bytes(const WindowGeometry& g) {
  if (!max_pool_uses_planes(g)) return 0;
  const int64_t slots = std::min(kConvScratchSlots, std::max<int64_t>(g.batch * g.channels, 1));
  return static_cast<size_t>(slots * padded_plane_floats(g)) * sizeof(float);
}

int64_t conv_slot_floats(const ConvShape& c) {
  if (c.depthwise()) return padded_plane_floats(c.g);
  const int64_t floats = (c.pointwise() ? 0 : kConvTileRows * c.k()) + kConvTileRows * c.c_out_per_group;
  return (floats + 15) / 16 * 16;
}

int64_t conv_weight_floats(const ConvShape& c) {
  if (c.depthwise()) return 0;
  const int64_t panels = (c.c_out_per_group + kConvPanelWidth - 1) / kConvPanelWidth;
  const int64_t per_group = (panels * kConvPanelWidth * c.k() + 15) / 16 * 16;
  return c.group * per_group;
}

size_t conv_scratch_bytes(const ConvShape& c, bool weight_constant) {
  // No more slots than there are work items to share out (a small conv needs one): depthwise
  // planes, or GEMM tiles times the weight panels a tile's output channels may be split into
  // when there are fewer tiles than threads.
  const int64_t panels = (c.c_out_per_group + kConvPanelWidth - 1) / kConvPanelWidth;
  const int64_t tiles = c.depthwise() ? c.g.batch * c.c_out
                                      : c.g.batch * c.group * ((c.g.out_size() + kConvTileRows - 1) / kConvTileRows) *
                                            std::max<int64_t>(panels, 1);
  const int64_t slots = std::min(kConvScratchSlots, std::max<int64_t>(tiles, 1));
  return static_cast<size_t>((weight_constant ? 0 : conv_weight_floats(c)) + conv_slot_floats(c) * slots) *
         sizeof(float);
}

}  // namespace fusebox::ir

namespace fusebox::ir {

bool reads_channels_first(const Node& node) {
  return node.attrs.get_int("channels_first_input", 0) != 0;
}

Shape nhwc_conv_input_as_channels_first(const Node& node, const Shape& x) {
  return reads_channels_first(node) ? x : channels_first(x);
}

Shape channels_first(const Shape& x) {
  if (x.size() < 3) return x;
  Shape s{x[0], x.back()};
  s.insert(s.end(), x.begin() + 1, x.end() - 1);
  return s;
}

Shape channels_last(const Shape& x) {
  if (x.size() < 3) return x;
  Shape s{x[0]};
  s.insert(s.end(), x.begin() + 2, x.end());
  s.push_back(x[1]);
  return s;
}

std::vector<int64_t> to_channels_last_perm(size_t rank) {
  std::vector<int64_t> perm{0};
  for (size_t i = 2; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  if (rank > 1) perm.push_back(1);
  return perm;
}

std::vector<int64_t> to_channels_first_perm(size_t rank) {
  std::vector<int64_t> perm{0};
  if (rank > 1) perm.push_back(static_cast<int64_t>(rank - 1));
  for (size_t i = 1; i + 1 < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  return perm;
}

namespace {
constexpr const char* kChannelsLastOps[][2] = {{"Conv", "NhwcConv"},
                                               {"MaxPool", "NhwcMaxPool"},
                                               {"AveragePool", "NhwcAveragePool"},
                                               {"GlobalAveragePool", "NhwcGlobalAveragePool"},
                                               {"GlobalMaxPool", "NhwcGlobalMaxPool"}};
}  // namespace

std::string channels_last_op(const std::string& op) {
  for (const auto& p : kChannelsLastOps)
    if (op == p[0]) return p[1];
  return "";
}

std::string channels_first_op(const std::string& op) {
  for (const auto& p : kChannelsLastOps)
    if (op == p[1]) return p[0];
  return "";
}

bool nhwc_depthwise(const ConvShape& c) {
  const int64_t rows = c.g.kernel.empty() ? 1 : c.g.kernel_size() / std::max<int64_t>(1, c.g.kernel.back());
  return c.group > 1 && c.c_in_per_group == 1 && c.c_out_per_group == 1 && rows <= kDepthwiseMaxKernelRows;
}

int64_t nhwc_conv_row_floats(const ConvShape& c) {
  return (c.k() + 15) / 16 * 16;  // each row 64-byte aligned
}

int64_t nhwc_conv_weight_floats(const ConvShape& c) {
  return (c.c_out * c.k() + 15) / 16 * 16;
}

size_t nhwc_conv_scratch_bytes(const ConvShape& c, bool channels_first_input, bool weight_constant, bool winograd) {
  const int64_t weight = weight_constant ? 0 : nhwc_conv_weight_floats(c);
  if (winograd) {
    // As many slots as work items may run at once: tiles, times the weight panels the output
    // channels are split into when there are few tiles (ops/cpu/conv_winograd.cpp).
    const int64_t panels = (c.c_out + kConvPanelWidth - 1) / kConvPanelWidth;
    const int64_t items = c.g.batch * winograd_tiles(c) * std::max<int64_t>(panels, 1);
    const int64_t slots = std::min(kConvScratchSlots, std::max<int64_t>(items, 1));
    return static_cast<size_t>(slots * winograd_slot_floats(c)) * sizeof(float);
  }
  if (!channels_first_input && (nhwc_depthwise(c) || c.pointwise())) return static_cast<size_t>(weight) * sizeof(float);
  // As many slots as work items may run at once: tiles, times the weight panels a tile's output
  // channels are split into when there are fewer tiles than threads.
  const int64_t panels = (c.c_out_per_group + kConvPanelWidth - 1) / kConvPanelWidth;
  const int64_t tiles = c.g.batch * c.group * ((c.g.out_size() + kConvTileRows - 1) / kConvTileRows);
  const int64_t slots = std::min(kConvScratchSlots, std::max<int64_t>(tiles * std::max<int64_t>(panels, 1), 1));
  return static_cast<size_t>(weight + slots * kConvTileRows * nhwc_conv_row_floats(c)) * sizeof(float);
}

bool winograd_shape(const ConvShape& c) {
  const WindowGeometry& g = c.g;
  if (g.in.size() != 2 || c.group != 1) return false;
  for (size_t i = 0; i < 2; ++i)
    if (g.kernel[i] != 3 || g.strides[i] != 1 || g.dilations[i] != 1) return false;
  return g.out[0] > 0 && g.out[1] > 0;
}

bool wants_winograd(const Node& node) {
  return node.attrs.get_int("winograd", 0) != 0;
}

std::string winograd_refusal(const Node& node, const ConvShape& c) {
  if (reads_channels_first(node)) return "it reads its input channels-first (a stem)";
  for (int64_t s : c.g.strides)
    if (s != 1) return "stride " + std::to_string(s) + " (F(2x2, 3x3) needs stride 1)";
  for (int64_t d : c.g.dilations)
    if (d != 1) return "dilation " + std::to_string(d) + " (F(2x2, 3x3) needs none)";
  if (!winograd_shape(c)) return "not a 2-D 3x3 conv of one group with an output";
  return "";
}

bool takes_winograd(const Node& node, const ConvShape& c, bool weight_constant) {
  return weight_constant && wants_winograd(node) && winograd_refusal(node, c).empty();
}

int64_t winograd_tiles(const ConvShape& c) {
  return ((c.g.out[0] + 1) / 2) * ((c.g.out[1] + 1) / 2);
}

int64_t winograd_slot_floats(const ConvShape& c) {
  return 16 * kWinogradBlockTiles * ((c.c_in + 15) / 16 * 16 + (c.c_out + 15) / 16 * 16);
}

double winograd_flops(const ConvShape& c) {
  const double tiles = static_cast<double>(c.g.batch * winograd_tiles(c));
  const double ci = static_cast<double>(c.c_in), co = static_cast<double>(c.c_out);
  return tiles * (16.0 * 2.0 * ci * co + 32.0 * ci + 24.0 * co) +
         (c.has_bias ? static_cast<double>(c.g.batch * c.g.out_size()) * co : 0.0);
}

}  // namespace fusebox::ir

