// Scaled dot-product attention:
//   S = MatMul(Q, K^T) [transB=1 after absorb_matmul, alpha = folded scale]
//   (optionally Mul/Div(S, c) when the scale was not absorbed) -> Softmax(axis=-1) -> MatMul(P, V)
// -> Attention(Q, K, V, scale = alpha * c, k_transposed = the MatMul read K as [.., D, Skv]).
// One kernel keeps the Sq x Skv scores in scratch instead of writing and rereading them twice.
#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

namespace {

// The Q K^T MatMul feeding the softmax, possibly through a scalar Mul/Div: (index, factor).
struct Scores {
  size_t matmul = 0;
  std::optional<size_t> scale_node;
  double factor = 1;
  std::string problem;
};

std::optional<Scores> find_scores(const ir::Graph& g, const GraphUses& uses, const std::string& s) {
  if (auto mm = uses.produced_by(s, "MatMul")) return Scores{*mm, std::nullopt, 1.0, ""};
  auto p = uses.producer.find(s);
  if (p == uses.producer.end()) return std::nullopt;
  const ir::Node& node = g.nodes[p->second];
  if (node.op != "Mul" && node.op != "Div") return std::nullopt;
  for (auto [mm, c] : operands_from(uses, node, "MatMul")) {
    if (node.op == "Div" && g.nodes[mm].outputs[0] != node.inputs[0])
      continue;  // c / S is no scale
    Scores r{mm, p->second, 1.0, ""};
    auto v = scalar_constant(g, c);
    if (!v || *v == 0)
      r.problem = node.name + "'s operand is not a non-zero scalar constant";
    else
      r.factor = node.op == "Mul" ? *v : 1.0 / *v;
    return r;
  }
  return std::nullopt;
}

MatchResult match_attention(const ir::Graph& g, const GraphUses& uses, size_t anchor) {
  const ir::Node& pv = g.nodes[anchor];
  auto softmax = uses.produced_by(pv.inputs[0], "Softmax");
  if (!softmax) return MatchResult::none();
  const ir::Node& sm = g.nodes[*softmax];
  auto scores = find_scores(g, uses, sm.inputs[0]);
  if (!scores) {
    auto p = uses.producer.find(sm.inputs[0]);
    return MatchResult::miss(
        sm.name + "'s input comes from " +
        (p == uses.producer.end() ? "'" + sm.inputs[0] + "'" : g.nodes[p->second].name) +
        ", not from a MatMul Q K^T (e.g. a mask is added)");
  }
  if (!scores->problem.empty()) return MatchResult::miss(scores->problem);
  const ir::Node& qk = g.nodes[scores->matmul];
  const std::string &q = qk.inputs[0], &k = qk.inputs[1], &v = pv.inputs[1];
  size_t rank = g.tensor(q).shape.size();
  int64_t axis = sm.attrs.get_int("axis", -1);
  if (axis != -1 && axis != static_cast<int64_t>(rank) - 1)
    return MatchResult::miss(sm.name + " normalizes axis " + std::to_string(axis) +
                             ", not the last");
  if (qk.attrs.get_int("transA", 0) != 0)
    return MatchResult::miss(qk.name + " reads Q transposed (transA=1)");
  if (pv.attrs.get_int("transA", 0) != 0 || pv.attrs.get_int("transB", 0) != 0 ||
      pv.attrs.get_float("alpha", 1.0) != 1.0)
    return MatchResult::miss(pv.name + " has transA/transB/alpha set (" + pv.attrs.to_string() +
                             ")");
  // Attention does not broadcast: Q, K, V must agree in rank and in every leading dim.
  const ir::Shape &qs = g.tensor(q).shape, &ks = g.tensor(k).shape, &vs = g.tensor(v).shape;
  bool same = rank >= 2 && ks.size() == rank && vs.size() == rank;
  for (size_t i = 0; same && i + 2 < rank; ++i) same = qs[i] == ks[i] && qs[i] == vs[i];
  if (!same)
    return MatchResult::miss("leading dims differ: Q " + ir::shape_str(qs) + ", K " +
                             ir::shape_str(ks) + ", V " + ir::shape_str(vs) +
                             " (Attention does not broadcast)");
  FusionMatch m;
  m.nodes = {scores->matmul, *softmax, anchor};
  if (scores->scale_node) m.nodes.push_back(*scores->scale_node);
  m.op = "Attention";
  m.inputs = {q, k, v};
  m.attrs.set("scale", qk.attrs.get_float("alpha", 1.0) * scores->factor);
  m.attrs.set("k_transposed", int64_t{qk.attrs.get_int("transB", 0) != 0 ? 0 : 1});
  return MatchResult::found(std::move(m));
}

}  // namespace

void register_attention_fusion(FusionRegistry& registry) {
  registry.add({"attention", "MatMul(Q, K^T) [* scale] -> Softmax -> MatMul(., V) -> Attention",
                "MatMul", match_attention});
}

}  // namespace fusebox::passes
