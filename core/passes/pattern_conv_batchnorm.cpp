// Conv followed by an inference BatchNorm: both are affine per output channel, so the BatchNorm
// folds into the Conv's weight and bias and disappears:
//   s[c] = scale[c] / sqrt(var[c] + epsilon)
//   W'[c, ...] = W[c, ...] * s[c]
//   B'[c]      = (B[c] - mean[c]) * s[c] + bias[c]      (B = 0 when the Conv has no bias)
//   Conv(X, W, B) + BatchNorm -> Conv(X, W', B')
// Computed in double and rounded once, so the folded Conv is as close to the pair as f32 allows.
// It needs the weight, the Conv's bias and the four BatchNorm inputs as constants; a graph input
// there is a near miss.
#include <cmath>

#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

namespace {

// The values of `tensor` when it is an f32 weight of `n` elements, else null.
const float* constant_of(const ir::Graph& g, const std::string& tensor, int64_t n) {
  if (!g.is_weight(tensor)) return nullptr;
  const ir::Tensor& v = *g.tensor(tensor).value;
  if (v.dtype() != ir::DType::f32 || v.numel() != n) return nullptr;
  return v.data<float>();
}

MatchResult match_conv_batchnorm(const ir::Graph& g, const GraphUses& uses, size_t bn) {
  const ir::Node& norm = g.nodes[bn];
  auto conv_index = uses.produced_by(norm.inputs[0], "Conv");
  if (!conv_index) return MatchResult::none();
  const ir::Node& conv = g.nodes[*conv_index];
  const std::string& y = conv.outputs[0];
  if (!uses.only_read_by(y, bn)) return MatchResult::miss(conv.name + "'s output is " + uses.other_uses(y, bn));

  const ir::TensorInfo& wt = g.tensor(conv.inputs[1]);
  if (!g.is_weight(conv.inputs[1]))
    return MatchResult::miss(conv.name + "'s weight '" + conv.inputs[1] + "' is computed at run time, not a constant");
  const int64_t c_out = wt.shape.empty() ? 0 : wt.shape[0];
  const int64_t per_channel = c_out > 0 ? ir::numel(wt.shape) / c_out : 0;
  const float* w = constant_of(g, conv.inputs[1], c_out * per_channel);
  const bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
  const float* b = has_bias ? constant_of(g, conv.inputs[2], c_out) : nullptr;
  if (!w || (has_bias && !b))
    return MatchResult::miss(conv.name + "'s " + (w ? "bias" : "weight") + " is not an f32 constant");
  const char* roles[] = {"scale", "bias", "mean", "variance"};
  const float* p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = constant_of(g, norm.inputs[1 + i], c_out);
    if (!p[i])
      return MatchResult::miss(norm.name + "'s " + roles[i] + " '" + norm.inputs[1 + i] + "' is not an f32 constant of " +
                               std::to_string(c_out) + " values (one per output channel of " + conv.name + ")");
  }
  const double eps = norm.attrs.get_float("epsilon", 1e-5);

  ir::Tensor folded_w(ir::DType::f32, wt.shape);
  ir::Tensor folded_b(ir::DType::f32, {c_out});
  float* fw = folded_w.data<float>();
  float* fb = folded_b.data<float>();
  for (int64_t c = 0; c < c_out; ++c) {
    const double s = static_cast<double>(p[0][c]) / std::sqrt(static_cast<double>(p[3][c]) + eps);
    for (int64_t k = 0; k < per_channel; ++k)
      fw[c * per_channel + k] = static_cast<float>(static_cast<double>(w[c * per_channel + k]) * s);
    const double bias = b ? static_cast<double>(b[c]) : 0.0;
    fb[c] = static_cast<float>((bias - static_cast<double>(p[2][c])) * s + static_cast<double>(p[1][c]));
  }

  FusionMatch m;
  m.nodes = {*conv_index, bn};
  m.op = "Conv";
  const std::string w_name = g.unique_name(conv.inputs[1] + ":folded");
  std::string b_name = g.unique_name(conv.name + ".bias:folded");
  if (b_name == w_name) b_name += "_b";
  m.inputs = {conv.inputs[0], w_name, b_name};
  m.attrs = conv.attrs;  // strides, pads, dilations, group carry over
  m.new_weights.emplace_back(w_name, std::move(folded_w));
  m.new_weights.emplace_back(b_name, std::move(folded_b));
  m.note = "BatchNormalization folded into the weight and bias";
  return MatchResult::found(std::move(m));
}

}  // namespace

void register_conv_batchnorm_fusion(FusionRegistry& registry) {
  registry.add({"conv_batchnorm", "Conv + BatchNorm -> Conv (scale and shift folded into the weight and bias)",
                "BatchNorm", match_conv_batchnorm});
}

}  // namespace fusebox::passes
