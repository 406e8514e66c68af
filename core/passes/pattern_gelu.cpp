// erf GELU, as PyTorch's exporter writes x * 0.5 * (1 + erf(x / sqrt(2))):
//   Div(x, sqrt2) -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5)      (the usual order)
//   Mul(x, 0.5) and Div(x, sqrt2) -> Erf -> Add(., 1) -> Mul(half, .)  (0.5 applied first)
// with commuted operands anywhere, and Mul(x, 1/sqrt2) for the Div. Becomes Gelu(x).
//
// tanh GELU, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch exports
// nn.GELU(approximate="tanh") (GPT-2's "gelu_new"):
//   x^3 = Mul(x, Mul(x, x)) or Pow(x, 3) -> Mul(., 0.044715) -> Add(x, .) -> Mul(., sqrt(2/pi))
//   -> Tanh -> Add(., 1) -> then the same two Muls (by x and by 0.5) as the erf form
// Becomes Gelu(x, approximate="tanh").
#include <cmath>
#include <tuple>

#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

namespace {

// Add(Erf(Div(x, sqrt2)), 1) or Add(Tanh(...), 1): the nodes, x, and what is wrong with its
// constants (if anything).
struct ErfBranch {
  std::vector<size_t> nodes;
  std::string x;
  std::string problem;
  std::string approximate = "none";
};

// x^3 spelled Mul(x, Mul(x, x)) (either order) or Pow(x, 3): the nodes and x.
std::optional<std::pair<std::vector<size_t>, std::string>> cube_of(const ir::Graph& g,
                                                                   const GraphUses& uses,
                                                                   const std::string& t) {
  if (auto pw = uses.produced_by(t, "Pow")) {
    const ir::Node& n = g.nodes[*pw];
    auto e = scalar_constant(g, n.inputs[1]);
    if (e && *e == 3.0) return std::make_pair(std::vector<size_t>{*pw}, n.inputs[0]);
    return std::nullopt;
  }
  auto outer = uses.produced_by(t, "Mul");
  if (!outer) return std::nullopt;
  const ir::Node& o = g.nodes[*outer];
  for (int s : {0, 1}) {
    auto sq = uses.produced_by(o.inputs[s], "Mul");
    if (!sq) continue;
    const ir::Node& q = g.nodes[*sq];
    const std::string& x = o.inputs[1 - s];
    if (q.inputs[0] == x && q.inputs[1] == x)
      return std::make_pair(std::vector<size_t>{*sq, *outer}, x);
  }
  return std::nullopt;
}

// Mul(c, t) with c a scalar constant (either side): (node, t, c).
std::optional<std::tuple<size_t, std::string, std::string>> scaled(const ir::Graph& g,
                                                                   const GraphUses& uses,
                                                                   const std::string& t) {
  auto mul = uses.produced_by(t, "Mul");
  if (!mul) return std::nullopt;
  const ir::Node& m = g.nodes[*mul];
  for (int c : {0, 1})
    if (scalar_constant(g, m.inputs[c]) && !scalar_constant(g, m.inputs[1 - c]))
      return std::make_tuple(*mul, m.inputs[1 - c], m.inputs[c]);
  return std::nullopt;
}

// Add(Tanh(Mul(Add(x, Mul(x^3, 0.044715)), sqrt(2/pi))), 1).
std::optional<ErfBranch> tanh_branch(const ir::Graph& g, const GraphUses& uses,
                                     const std::string& t) {
  auto add = uses.produced_by(t, "Add");
  if (!add) return std::nullopt;
  auto tanhs = operands_from(uses, g.nodes[*add], "Tanh");
  if (tanhs.empty()) return std::nullopt;
  auto [tanh, one] = tanhs[0];
  auto outer = scaled(g, uses, g.nodes[tanh].inputs[0]);  // sqrt(2/pi) * inner
  if (!outer) return std::nullopt;
  auto [outer_mul, inner, c1] = *outer;
  auto inner_add = uses.produced_by(inner, "Add");
  if (!inner_add) return std::nullopt;
  const ir::Node& ia = g.nodes[*inner_add];
  for (int s : {0, 1}) {
    auto cubic = scaled(g, uses, ia.inputs[s]);  // 0.044715 * x^3
    if (!cubic) continue;
    auto [cubic_mul, cube, c2] = *cubic;
    auto c = cube_of(g, uses, cube);
    if (!c || c->second != ia.inputs[1 - s]) continue;
    ErfBranch b;
    b.approximate = "tanh";
    b.x = c->second;
    b.nodes = c->first;
    b.nodes.insert(b.nodes.end(), {cubic_mul, *inner_add, outer_mul, tanh, *add});
    const ir::Node& cm = g.nodes[cubic_mul];
    const ir::Node& om = g.nodes[outer_mul];
    b.problem = check_scalar(g, c2, 0.044715, cm.name + "'s factor");
    if (b.problem.empty())
      b.problem = check_scalar(g, c1, 0.7978845608028654 /* sqrt(2/pi) */, om.name + "'s factor");
    if (b.problem.empty())
      b.problem = check_scalar(g, one, 1.0, g.nodes[*add].name + "'s constant");
    return b;
  }
  return std::nullopt;
}

std::optional<ErfBranch> erf_branch(const ir::Graph& g, const GraphUses& uses,
                                    const std::string& t);

// Either GELU branch ending at `t`.
std::optional<ErfBranch> gelu_branch(const ir::Graph& g, const GraphUses& uses,
                                     const std::string& t) {
  if (auto b = erf_branch(g, uses, t)) return b;
  return tanh_branch(g, uses, t);
}

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
    m.attrs.set("approximate", b.approximate);
    return std::optional<MatchResult>(MatchResult::found(std::move(m)));
  };
  for (int side : {0, 1}) {
    const std::string& p = last.inputs[side];
    const std::string& q = last.inputs[1 - side];
    // Usual order: last = Mul(Mul(x, branch(x)), 0.5).
    if (auto inner = uses.produced_by(p, "Mul")) {
      const ir::Node& m = g.nodes[*inner];
      for (int s : {0, 1}) {
        auto b = gelu_branch(g, uses, m.inputs[s]);
        if (b && b->x == m.inputs[1 - s])
          if (auto r = candidate(*b, {*inner, anchor}, q, last.name)) return *r;
      }
    }
    // 0.5 first: last = Mul(Mul(x, 0.5), branch(x)).
    auto b = gelu_branch(g, uses, q);
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
  registry.add({"gelu",
                "x * 0.5 * (1 + erf(x / sqrt 2)) -> Gelu(x); 0.5 x (1 + tanh(sqrt(2/pi) (x + "
                "0.044715 x^3))) -> Gelu(x, approximate=tanh)",
                "Mul", match_gelu});
}

}  // namespace fusebox::passes
