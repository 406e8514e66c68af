// Decomposed LayerNorm, as exporters write it:
//   mean = ReduceMean(x, axes=[-1]); d = Sub(x, mean); var = ReduceMean(Pow(d, 2), axes=[-1])
//   y = Div(d, Sqrt(Add(var, eps))) * gamma + beta
// -> LayerNorm(x, gamma, beta, axis=-1, epsilon=eps). Mul(d, d) is accepted for Pow(d, 2), and
// gamma/beta may be [D] or [1,..,1,D] (reshaped to [D], sharing storage).
#include <cstdint>

#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

namespace {

// Why `node` (a ReduceMean) does not average over exactly the last axis with keepdims, or "".
std::string check_last_axis_mean(const ir::Graph& g, const ir::Node& node) {
  size_t rank = g.tensor(node.inputs[0]).shape.size();
  auto axes = node.attrs.get_ints("axes");
  bool last = axes.size() == 1 && (axes[0] == -1 || axes[0] == static_cast<int64_t>(rank) - 1);
  if (!last && !(axes.empty() && rank == 1))
    return node.name + " reduces axes " + fmt_ints(axes) + ", not [-1]";
  if (node.attrs.get_int("keepdims", 1) == 0)
    return node.name + " drops the reduced dim (keepdims=0)";
  return "";
}

// gamma/beta must be weights broadcast-equivalent to [D]; returns the [D] weight's name (new
// weights go to `m`), or sets `why`.
std::string affine_param(const ir::Graph& g, const std::string& t, int64_t d, const char* what,
                         FusionMatch& m, std::string& why) {
  if (!why.empty()) return "";
  if (!g.is_weight(t)) {
    why = std::string(what) + " '" + t + "' is not a weight";
    return "";
  }
  const ir::TensorInfo& info = g.tensor(t);
  bool ok = info.dtype == ir::DType::f32 && !info.shape.empty() &&
            (info.shape.back() == d || info.shape.back() == 1);
  for (size_t i = 0; ok && i + 1 < info.shape.size(); ++i) ok = info.shape[i] == 1;
  if (!ok) {
    why = std::string(what) + " '" + t + "' has shape " + ir::shape_str(info.shape) +
          ", expected [" + std::to_string(d) + "]";
    return "";
  }
  if (info.shape.size() == 1) return t;
  for (const auto& [name, value] : m.new_weights)  // gamma and beta may be the same weight
    if (name.rfind(t + ":1d", 0) == 0) return name;
  std::string name = g.unique_name(t + ":1d");
  m.new_weights.emplace_back(name, info.value->reshaped({info.shape.back()}));
  return name;
}

MatchResult match_layernorm(const ir::Graph& g, const GraphUses& uses, size_t anchor) {
  for (auto [mul, beta] : operands_from(uses, g.nodes[anchor], "Mul")) {
    for (auto [div, gamma] : operands_from(uses, g.nodes[mul], "Div")) {
      const ir::Node& dv = g.nodes[div];
      const std::string& d = dv.inputs[0];
      auto sub = uses.produced_by(d, "Sub");
      auto sqrt = uses.produced_by(dv.inputs[1], "Sqrt");
      if (!sub || !sqrt) continue;
      const std::string& x = g.nodes[*sub].inputs[0];
      auto mean = uses.produced_by(g.nodes[*sub].inputs[1], "ReduceMean");
      auto add_eps = uses.produced_by(g.nodes[*sqrt].inputs[0], "Add");
      if (!mean || g.nodes[*mean].inputs[0] != x || !add_eps) continue;
      for (auto [var, eps] : operands_from(uses, g.nodes[*add_eps], "ReduceMean")) {
        const std::string& sq = g.nodes[var].inputs[0];
        auto pow = uses.produced_by(sq, "Pow");
        auto mul_sq = uses.produced_by(sq, "Mul");
        size_t square = pow ? *pow : mul_sq ? *mul_sq : SIZE_MAX;
        if (square == SIZE_MAX || g.nodes[square].inputs[0] != d) continue;
        // The structure is there: from here on, a failed condition is a near miss.
        const ir::Node& sq_node = g.nodes[square];
        std::string why =
            pow ? check_scalar(g, sq_node.inputs[1], 2.0, sq_node.name + "'s exponent")
                : (sq_node.inputs[1] == d ? "" : sq_node.name + " does not square " + d);
        if (why.empty()) why = check_last_axis_mean(g, g.nodes[*mean]);
        if (why.empty()) why = check_last_axis_mean(g, g.nodes[var]);
        auto epsilon = scalar_constant(g, eps);
        if (why.empty() && !epsilon)
          why = g.nodes[*add_eps].name + "'s epsilon is not a scalar constant";
        const ir::Shape& xs = g.tensor(x).shape;
        FusionMatch m;
        std::string gamma_1d = affine_param(g, gamma, xs.empty() ? 0 : xs.back(), "scale", m, why);
        std::string beta_1d = affine_param(g, beta, xs.empty() ? 0 : xs.back(), "bias", m, why);
        if (!why.empty()) return MatchResult::miss(why);
        m.nodes = {*mean, *sub, square, var, *add_eps, *sqrt, div, mul, anchor};
        m.op = "LayerNorm";
        m.inputs = {x, gamma_1d, beta_1d};
        m.attrs.set("axis", int64_t{-1});
        m.attrs.set("epsilon", *epsilon);
        return MatchResult::found(std::move(m));
      }
    }
  }
  return MatchResult::none();
}

}  // namespace

void register_layernorm_fusion(FusionRegistry& registry) {
  registry.add({"layernorm", "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add -> LayerNorm",
                "Add", match_layernorm});
}

}  // namespace fusebox::passes
