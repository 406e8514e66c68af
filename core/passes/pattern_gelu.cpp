// erf GELU, as PyTorch's exporter writes x * 0.5 * (1 + erf(x / sqrt(2))):
//   Div(x, sqrt2) -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5)      (the usual order)
//   Mul(x, 0.5) and Div(x, sqrt2) -> Erf -> Add(., 1) -> Mul(half, .)  (0.5 applied first)
// with commuted operands anywhere, and Mul(x, 1/sqrt2) for the Div. Becomes Gelu(x).
#include <cmath>

#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

namespace {

// Add(Erf(Div(x, sqrt2)), 1): the nodes, x, and what is wrong with its constants (if anything).
struct ErfBranch {
  std::vector<size_t> nodes;
  std::string x;
  std::string problem;
};

std::optional<ErfBranch> erf_branch(const ir::Graph& g, const GraphUses& uses,
                                    const std::string& t) {
  auto add = uses.produced_by(t, "Add");
  if (!add) return std::nullopt;
  auto erfs = operands_from(uses, g.nodes[*add], "Erf");
  if (erfs.empty()) return std::nullopt;
  auto [erf, one] = erfs[0];
  const std::string& scaled = g.nodes[erf].inputs[0];
  ErfBranch b;
  std::string problem;
  if (auto div = uses.produced_by(scaled, "Div")) {
    const ir::Node& d = g.nodes[*div];
    b.nodes = {*div, erf, *add};
    b.x = d.inputs[0];
    problem = check_scalar(g, d.inputs[1], std::sqrt(2.0), d.name + "'s divisor");
  } else if (auto mul = uses.produced_by(scaled, "Mul")) {
    const ir::Node& m = g.nodes[*mul];
    int c = scalar_constant(g, m.inputs[0]) ? 0 : 1;
    b.nodes = {*mul, erf, *add};
    b.x = m.inputs[1 - c];
    problem = check_scalar(g, m.inputs[c], std::sqrt(0.5), m.name + "'s factor");
  } else {
    return std::nullopt;
  }
  if (problem.empty()) problem = check_scalar(g, one, 1.0, g.nodes[*add].name + "'s constant");
  b.problem = problem;
  return b;
}

MatchResult match_gelu(const ir::Graph& g, const GraphUses& uses, size_t anchor) {
  const ir::Node& last = g.nodes[anchor];
  std::optional<MatchResult> first_miss;
  auto candidate = [&](ErfBranch b, std::vector<size_t> more, const std::string& half,
                       const std::string& half_node) {
    std::string problem = b.problem;
    if (problem.empty()) problem = check_scalar(g, half, 0.5, half_node + "'s factor");
    if (!problem.empty()) {
      if (!first_miss) first_miss = MatchResult::miss(problem);
      return std::optional<MatchResult>();
    }
    FusionMatch m;
    m.nodes = b.nodes;
    m.nodes.insert(m.nodes.end(), more.begin(), more.end());
    m.op = "Gelu";
    m.inputs = {b.x};
    m.attrs.set("approximate", std::string("none"));
    return std::optional<MatchResult>(MatchResult::found(std::move(m)));
  };
  for (int side : {0, 1}) {
    const std::string& p = last.inputs[side];
    const std::string& q = last.inputs[1 - side];
    // Usual order: last = Mul(Mul(x, branch(x)), 0.5).
    if (auto inner = uses.produced_by(p, "Mul")) {
      const ir::Node& m = g.nodes[*inner];
      for (int s : {0, 1}) {
        auto b = erf_branch(g, uses, m.inputs[s]);
        if (b && b->x == m.inputs[1 - s])
          if (auto r = candidate(*b, {*inner, anchor}, q, last.name)) return *r;
      }
    }
    // 0.5 first: last = Mul(Mul(x, 0.5), branch(x)).
    auto b = erf_branch(g, uses, q);
    auto half = uses.produced_by(p, "Mul");
    if (b && half) {
      const ir::Node& h = g.nodes[*half];
      for (int s : {0, 1})
        if (h.inputs[s] == b->x)
          if (auto r = candidate(*b, {*half, anchor}, h.inputs[1 - s], h.name)) return *r;
    }
  }
  return first_miss ? *first_miss : MatchResult::none();
}

}  // namespace

void register_gelu_fusion(FusionRegistry& registry) {
  registry.add({"gelu", "x * 0.5 * (1 + erf(x / sqrt 2)) -> Gelu(x)", "Mul", match_gelu});
}

}  // namespace fusebox::passes
