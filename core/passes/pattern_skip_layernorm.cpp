// The residual connection of a post-LN transformer block:
//   s = Add(x, sublayer(x)); y = LayerNorm(s, gamma, beta)
// -> SkipLayerNorm(x, sublayer(x), gamma, beta): the sum is formed row by row inside the
// normalization and never written out (ONNX Runtime's SkipLayerNormalization).
// Runs after the layernorm pattern, so decomposed LayerNorms are already whole.
#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

namespace {

MatchResult match_skip_layernorm(const ir::Graph& g, const GraphUses& uses, size_t anchor) {
  const ir::Node& ln = g.nodes[anchor];
  auto add = uses.produced_by(ln.inputs[0], "Add");
  if (!add) return MatchResult::none();
  for (size_t i = 1; i < ln.outputs.size(); ++i)
    if (!ln.outputs[i].empty() && !uses.readers_of(ln.outputs[i]).empty())
      return MatchResult::miss(ln.name + "'s mean or inverse std output is read");
  const ir::Node& sum = g.nodes[*add];
  const ir::Shape& x = g.tensor(ln.inputs[0]).shape;
  for (const auto& operand : sum.inputs)
    if (g.tensor(operand).shape != x)
      return MatchResult::miss(sum.name + " broadcasts " + ir::shape_str(g.tensor(operand).shape) +
                               " to " + ir::shape_str(x) + " (SkipLayerNorm does not broadcast)");
  FusionMatch m;
  m.nodes = {*add, anchor};
  m.op = "SkipLayerNorm";
  m.inputs = {sum.inputs[0], sum.inputs[1]};
  m.inputs.insert(m.inputs.end(), ln.inputs.begin() + 1, ln.inputs.end());
  m.attrs = ln.attrs;
  return MatchResult::found(std::move(m));
}

}  // namespace

void register_skip_layernorm_fusion(FusionRegistry& registry) {
  registry.add({"skip_layernorm", "Add(x, r) -> LayerNorm -> SkipLayerNorm(x, r)", "LayerNorm",
                match_skip_layernorm});
}

}  // namespace fusebox::passes
