// Scaled dot-product attention:
//   S = MatMul(Q, K^T) [transB=1 after absorb_matmul, alpha = folded scale]
//   (optionally Mul/Div(S, c) when the scale was not absorbed)
//   (optionally a mask: Where(cond, -inf, S) / Where(cond, S, -inf) with a constant cond, as
//    PyTorch exports masked_fill; or Add(S, M))
//   -> Softmax(axis=-1) -> MatMul(P, V)
// -> Attention(Q, K, V [, mask], scale = alpha * c, k_transposed = the MatMul read K as
//    [.., D, Skv], causal).
// A mask that hides exactly the keys j > i of every query i (GPT's tril buffer) becomes causal=1,
// which the kernel skips instead of computing; any other constant Where mask becomes an additive
// 0 / -inf weight, and the M of an Add is passed as the additive mask (input 3) as it is.
// One kernel keeps the Sq x Skv scores in scratch instead of writing and rereading them twice.
#include <algorithm>
#include <cmath>
#include <limits>

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

// A mask between the scores and the softmax.
struct Mask {
  size_t node = 0;                  // the Where or Add
  std::string scores;               // the tensor it masks
  bool causal = false;              // it hides exactly the keys past the diagonal
  std::string additive;             // else: the additive mask tensor (input 3)
  std::optional<ir::Tensor> value;  // ... to be added as a new weight (a Where's 0 / -inf)
  std::string problem;
};

bool is_neg_inf(const ir::Graph& g, const std::string& t) {
  auto v = scalar_constant(g, t);
  return v && std::isinf(*v) && *v < 0;
}

// Element `flat` of `scores` shape, read from a tensor broadcast to it with `strides`: the
// tensor's offset, and (i, j) of the last two dims.
struct Pos {
  int64_t offset, i, j;
};
template <typename F>
void for_each_score(const ir::Shape& scores, const std::vector<int64_t>& strides, F f) {
  const size_t r = scores.size();
  const int64_t n = ir::numel(scores);
  for (int64_t flat = 0; flat < n; ++flat) {
    Pos p{0, 0, 0};
    int64_t rest = flat;
    for (size_t d = r; d-- > 0;) {
      const int64_t id = rest % scores[d];
      rest /= scores[d];
      p.offset += id * strides[d];
      if (d == r - 1) p.j = id;
      if (d == r - 2) p.i = id;
    }
    f(p);
  }
}

double element(const ir::Tensor& t, int64_t i) {
  return t.dtype() == ir::DType::f32 ? static_cast<double>(t.data<float>()[i])
                                     : static_cast<double>(t.data<int64_t>()[i]);
}

// Whether `hidden(offset)` says, at every score position, exactly "key j is past query i".
// Leading dims the mask broadcasts over (stride 0) are visited once, not per head.
template <typename H>
bool hides_upper_triangle(const ir::Shape& scores, const std::vector<int64_t>& strides, H hidden) {
  ir::Shape visit = scores;
  for (size_t d = 0; d + 2 < visit.size(); ++d)
    if (strides[d] == 0) visit[d] = std::min<int64_t>(visit[d], 1);
  bool causal = true;
  for_each_score(visit, strides, [&](Pos p) { causal = causal && hidden(p.offset) == (p.j > p.i); });
  return causal;
}

std::optional<Mask> find_mask(const ir::Graph& g, const GraphUses& uses, const std::string& s) {
  auto p = uses.producer.find(s);
  if (p == uses.producer.end()) return std::nullopt;
  const ir::Node& node = g.nodes[p->second];
  Mask m;
  m.node = p->second;
  const ir::Shape& out = g.tensor(node.outputs[0]).shape;
  if (node.op == "Where") {
    const std::string& cond = node.inputs[0];
    int fill;  // the -inf branch: 1 (cond true hides) or 2 (cond false hides)
    if (is_neg_inf(g, node.inputs[1]))
      fill = 1;
    else if (is_neg_inf(g, node.inputs[2]))
      fill = 2;
    else
      return Mask{p->second, "", false, "", std::nullopt,
                  node.name + " fills with neither -inf constant (" + node.inputs[1] + ", " +
                      node.inputs[2] + "): not a mask Attention takes"};
    m.scores = node.inputs[3 - fill];
    if (g.tensor(m.scores).shape != out || out.size() < 2)
      m.problem = node.name + " broadcasts the scores " + ir::shape_str(g.tensor(m.scores).shape) +
                  " to " + ir::shape_str(out);
    else if (!g.is_weight(cond))
      m.problem = node.name + "'s condition '" + cond +
                  "' is computed at run time, not a constant mask";
    if (!m.problem.empty()) return m;
    const ir::Tensor& c = *g.tensor(cond).value;
    const std::vector<int64_t> strides = ir::broadcast_strides(c.shape(), out);
    auto hidden = [&](int64_t off) { return (element(c, off) != 0) == (fill == 1); };
    m.causal = hides_upper_triangle(out, strides, hidden);
    if (!m.causal) {  // any other constant mask: 0 where visible, -inf where hidden
      ir::Tensor add(ir::DType::f32, c.shape());
      for (int64_t i = 0; i < c.numel(); ++i)
        add.data<float>()[i] = hidden(i) ? -std::numeric_limits<float>::infinity() : 0.0f;
      m.value = std::move(add);
      m.additive = g.unique_name(node.name + ".additive_mask");
    }
    return m;
  }
  if (node.op != "Add") return std::nullopt;
  // Add(S, M): S is the operand the scores come from.
  for (int side : {0, 1}) {
    const std::string& sc = node.inputs[side];
    const std::string& mk = node.inputs[1 - side];
    if (!find_scores(g, uses, sc)) continue;
    m.scores = sc;
    if (g.tensor(sc).shape != out || out.size() < 2)
      m.problem = node.name + " broadcasts the scores " + ir::shape_str(g.tensor(sc).shape) +
                  " to " + ir::shape_str(out);
    else if (g.tensor(mk).dtype != ir::DType::f32)
      m.problem = node.name + "'s mask '" + mk + "' is not f32";
    if (!m.problem.empty()) return m;
    if (g.is_weight(mk)) {
      const ir::Tensor& c = *g.tensor(mk).value;
      const std::vector<int64_t> strides = ir::broadcast_strides(c.shape(), out);
      bool zero_or_neg_inf = true;
      for (int64_t i = 0; i < c.numel() && zero_or_neg_inf; ++i) {
        const float v = c.data<float>()[i];
        zero_or_neg_inf = v == 0.0f || (std::isinf(v) && v < 0);
      }
      m.causal = zero_or_neg_inf &&
                 hides_upper_triangle(out, strides, [&](int64_t off) { return c.data<float>()[off] != 0.0f; });
    }
    if (!m.causal) m.additive = mk;
    return m;
  }
  return std::nullopt;
}

MatchResult match_attention(const ir::Graph& g, const GraphUses& uses, size_t anchor) {
  const ir::Node& pv = g.nodes[anchor];
  auto softmax = uses.produced_by(pv.inputs[0], "Softmax");
  if (!softmax) return MatchResult::none();
  const ir::Node& sm = g.nodes[*softmax];
  auto mask = find_mask(g, uses, sm.inputs[0]);
  if (mask && !mask->problem.empty()) return MatchResult::miss(mask->problem);
  const std::string& scores_tensor = mask ? mask->scores : sm.inputs[0];
  auto scores = find_scores(g, uses, scores_tensor);
  if (!scores) {
    auto p = uses.producer.find(scores_tensor);
    return MatchResult::miss(
        (mask ? g.nodes[mask->node].name + "'s scores come from " : sm.name + "'s input comes from ") +
        (p == uses.producer.end() ? "'" + scores_tensor + "'" : g.nodes[p->second].name) +
        ", not from a MatMul Q K^T" + (mask ? "" : " or a mask (Where / Add) of one"));
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
  if (mask) {
    m.nodes.push_back(mask->node);
    if (mask->causal) {
      m.attrs.set("causal", int64_t{1});
      m.note = "causal mask: the keys past the diagonal are skipped";
    }
    if (!mask->additive.empty()) {
      m.inputs.push_back(mask->additive);
      m.note = "additive mask '" + mask->additive + "'";
    }
    if (mask->value) m.new_weights.emplace_back(mask->additive, std::move(*mask->value));
  }
  m.attrs.set("scale", qk.attrs.get_float("alpha", 1.0) * scores->factor);
  m.attrs.set("k_transposed", int64_t{qk.attrs.get_int("transB", 0) != 0 ? 0 : 1});
  return MatchResult::found(std::move(m));
}

}  // namespace

void register_attention_fusion(FusionRegistry& registry) {
  registry.add({"attention",
                "MatMul(Q, K^T) [* scale] [-> Where/Add mask] -> Softmax -> MatMul(., V) -> "
                "Attention [causal | additive mask]",
                "MatMul", match_attention});
}

}  // namespace fusebox::passes
