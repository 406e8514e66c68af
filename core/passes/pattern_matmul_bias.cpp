// MatMul followed by an Add (and an activation): GEMM adds C to its result in the same pass over
// the output (beta=1), and applies the activation before it stores, so the Add and the
// activation need not reread it.
//   MatMul + Add + Relu    -> FusedBiasRelu(A, B, bias)
//   MatMul + Add + Gelu    -> FusedBiasGelu(A, B, bias)  (either form; approximate carries over)
//   MatMul + Add + Tanh    -> FusedBiasTanh(A, B, bias)
//   MatMul + Add + Sigmoid -> FusedBiasSigmoid(A, B, bias)
//   MatMul + Add        -> MatMulAdd(A, B, C), C a bias weight or a residual intermediate
// C may be either Add operand and must broadcast to the MatMul output (not enlarge it). The fused
// node takes the Add's (or Relu's) place; C is read there, so C may be computed after the MatMul.
#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

namespace {

// Finds MatMul(A, B) + C feeding `add`; prefers the first operand order that satisfies every
// condition, else reports the first one's problem.
MatchResult match_matmul_plus(const ir::Graph& g, const GraphUses& uses, size_t add, size_t anchor,
                              const std::string& fused_op) {
  if (g.nodes[add].op != "Add") return MatchResult::none();
  std::string first_problem;
  for (auto [mm, c] : operands_from(uses, g.nodes[add], "MatMul")) {
    const ir::Node& matmul = g.nodes[mm];
    const std::string& y = matmul.outputs[0];
    const ir::TensorInfo& ct = g.tensor(c);
    const ir::Shape& ys = g.tensor(y).shape;
    std::string problem;
    if (c == y)
      problem = g.nodes[add].name + " adds " + matmul.name + "'s output to itself";
    else if (!uses.only_read_by(y, add))
      problem = matmul.name + "'s output is " + uses.other_uses(y, add);
    else if (ct.dtype != ir::DType::f32)
      problem = "'" + c + "' is not f32";
    else if (g.tensor(g.nodes[add].outputs[0]).shape != ys)
      problem = "'" + c + "' " + ir::shape_str(ct.shape) + " does not broadcast to " + matmul.name +
                "'s output " + ir::shape_str(ys);
    if (problem.empty()) {
      FusionMatch m;
      m.nodes = {mm, add};
      if (anchor != add) m.nodes.push_back(anchor);
      m.op = fused_op;
      m.inputs = {matmul.inputs[0], matmul.inputs[1], c};
      m.attrs = matmul.attrs;  // transA, transB, alpha carry over
      return MatchResult::found(std::move(m));
    }
    if (first_problem.empty()) first_problem = problem;
  }
  return first_problem.empty() ? MatchResult::none() : MatchResult::miss(first_problem);
}

// MatMul + Add + `anchor` (a unary activation) -> `fused_op`.
TryMatchFn match_bias_act(const std::string& fused_op) {
  return [fused_op](const ir::Graph& g, const GraphUses& uses, size_t anchor) {
    auto add = uses.produced_by(g.nodes[anchor].inputs[0], "Add");
    if (!add) return MatchResult::none();
    return match_matmul_plus(g, uses, *add, anchor, fused_op);
  };
}

MatchResult match_bias_gelu(const ir::Graph& g, const GraphUses& uses, size_t anchor) {
  auto add = uses.produced_by(g.nodes[anchor].inputs[0], "Add");
  if (!add) return MatchResult::none();
  const std::string approx = g.nodes[anchor].attrs.get_string("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return MatchResult::miss(g.nodes[anchor].name + " is the '" + approx +
                             "' approximation; FusedBiasGelu computes 'none' (erf) and 'tanh'");
  MatchResult r = match_matmul_plus(g, uses, *add, anchor, "FusedBiasGelu");
  if (r.match) r.match->attrs.set("approximate", approx);
  return r;
}

MatchResult match_matmul_add(const ir::Graph& g, const GraphUses& uses, size_t anchor) {
  return match_matmul_plus(g, uses, anchor, anchor, "MatMulAdd");
}

}  // namespace

void register_matmul_bias_fusions(FusionRegistry& registry) {
  registry.add({"bias_relu", "MatMul + Add + Relu -> FusedBiasRelu", "Relu",
                match_bias_act("FusedBiasRelu")});
  registry.add({"bias_gelu", "MatMul + Add + Gelu (erf or tanh) -> FusedBiasGelu", "Gelu",
                match_bias_gelu});
  registry.add({"bias_tanh", "MatMul + Add + Tanh -> FusedBiasTanh", "Tanh",
                match_bias_act("FusedBiasTanh")});
  registry.add({"bias_sigmoid", "MatMul + Add + Sigmoid -> FusedBiasSigmoid", "Sigmoid",
                match_bias_act("FusedBiasSigmoid")});
  registry.add(
      {"matmul_add", "MatMul + Add -> MatMulAdd (bias or residual)", "Add", match_matmul_add});
}

}  // namespace fusebox::passes
