#include "core/ir/attention_layout.h"

#include <utility>

#include "core/base/error.h"

namespace fusebox::ir {

namespace {

constexpr const char* kPrefix[3] = {"q", "k", "v"};

// Operand `slot` as given by the attributes (or the whole tensor), checked against its storage.
StridedView operand_view(const Node& n, int slot, const TensorType& t) {
  const std::string p = kPrefix[slot];
  if (t.dtype != DType::f32) throw Error("Attention inputs must be f32");
  if (!n.attrs.has(p + "_shape") && !n.attrs.has(p + "_strides") && !n.attrs.has(p + "_offset")) {
    if (t.shape.size() < 2) throw Error("Attention inputs must have rank >= 2");
    return StridedView::contiguous(t.shape);
  }
  if (!n.attrs.has(p + "_shape") || !n.attrs.has(p + "_strides"))
    throw Error(p + "_shape and " + p + "_strides go together");
  StridedView v{n.attrs.get_ints(p + "_shape"), n.attrs.get_ints(p + "_strides"),
                n.attrs.get_int(p + "_offset", 0)};
  const std::string what = p + " view " + v.to_string();
  if (v.shape.size() < 2 || v.strides.size() != v.shape.size())
    throw Error(what + ": needs rank >= 2 and one stride per dim");
  for (size_t i = 0; i < v.shape.size(); ++i)
    if (v.shape[i] < 0 || v.strides[i] < 0) throw Error(what + ": negative size or stride");
  if (v.offset < 0) throw Error(what + ": negative offset");
  const int64_t storage = numel(t.shape);
  int64_t extent = 0;
  try {
    extent = v.extent();
  } catch (const Error&) {
    throw Error(what + ": too many elements");
  }
  if (extent > storage)
    throw Error(what + " reaches element " + std::to_string(extent - 1) + " of input " +
                std::to_string(slot) + " " + shape_str(t.shape) + ", which has " +
                std::to_string(storage));
  return v;
}

}  // namespace

double AttentionLayout::scored_pairs() const {
  if (!causal) return static_cast<double>(sq) * static_cast<double>(skv);
  double pairs = 0;
  for (int64_t i = 0; i < sq; ++i) pairs += static_cast<double>(std::min(skv, i + 1));
  return pairs;
}

AttentionLayout attention_layout(const Node& n, const std::vector<TensorType>& in) {
  if (in.size() != 3 && in.size() != 4)
    throw Error("Attention takes 3 inputs (Q, K, V) and an optional additive mask, got " +
                std::to_string(in.size()));
  AttentionLayout a;
  a.scale = n.attrs.get_float("scale", 1.0);
  const int64_t causal = n.attrs.get_int("causal", 0);
  if (causal != 0 && causal != 1)
    throw Error("Attention causal=" + std::to_string(causal) + ": expected 0 or 1");
  a.causal = causal == 1;
  a.q = operand_view(n, 0, in[0]);
  a.k = operand_view(n, 1, in[1]);
  a.v = operand_view(n, 2, in[2]);
  const size_t r = a.q.shape.size();
  if (a.k.shape.size() != r || a.v.shape.size() != r)
    throw Error("Q, K, V must have the same rank (Q " + shape_str(a.q.shape) + ", K " +
                shape_str(a.k.shape) + ", V " + shape_str(a.v.shape) + ")");
  if (n.attrs.get_int("k_transposed", 0) != 0) {
    std::vector<int64_t> perm(r);
    for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[r - 2], perm[r - 1]);
    a.k = a.k.transposed(perm);
  }
  for (size_t i = 0; i + 2 < r; ++i) {
    if (a.q.shape[i] != a.k.shape[i] || a.q.shape[i] != a.v.shape[i])
      throw Error("Q, K, V leading dims differ (Q " + shape_str(a.q.shape) + ", K " +
                  shape_str(a.k.shape) + ", V " + shape_str(a.v.shape) + ")");
    a.lead.push_back(a.q.shape[i]);
  }
  a.batch = numel(a.lead);
  a.sq = a.q.shape[r - 2];
  a.d = a.q.shape[r - 1];
  a.skv = a.k.shape[r - 2];
  if (a.k.shape[r - 1] != a.d) throw Error("Q and K head sizes differ");
  if (a.v.shape[r - 2] != a.skv) throw Error("K and V sequence lengths differ");
  a.dv = a.v.shape[r - 1];

  if (in.size() == 4) {
    const TensorType& m = in[3];
    if (m.dtype != DType::f32) throw Error("Attention mask (input 3) must be f32");
    Shape scores = a.lead;
    scores.push_back(a.sq);
    scores.push_back(a.skv);
    bool fits = m.shape.size() <= scores.size();
    for (size_t i = 0; fits && i < m.shape.size(); ++i) {
      const int64_t md = m.shape[m.shape.size() - 1 - i], sd = scores[scores.size() - 1 - i];
      fits = md == sd || md == 1;
    }
    if (!fits)
      throw Error("Attention mask (input 3) " + shape_str(m.shape) +
                  " does not broadcast to the scores " + shape_str(scores));
    a.mask_shape = m.shape;
    a.mask = StridedView{scores, broadcast_strides(m.shape, scores), 0};
  }

  Shape logical = a.lead;
  logical.push_back(a.sq);
  logical.push_back(a.dv);
  if (!n.attrs.has("out_shape") && !n.attrs.has("out_strides")) {
    a.out_shape = logical;
    a.out = StridedView::contiguous(logical);
    return a;
  }
  if (!n.attrs.has("out_shape") || !n.attrs.has("out_strides"))
    throw Error("out_shape and out_strides go together");
  a.out_shape = n.attrs.get_ints("out_shape");
  a.out = {logical, n.attrs.get_ints("out_strides"), 0};
  const std::string what = "out view " + a.out.to_string() + " into " + shape_str(a.out_shape);
  if (a.out.strides.size() != r) throw Error(what + ": needs one stride per output dim");
  if (!a.out.covers_densely(numel(a.out_shape)))
    throw Error(what + ": does not write every element of the output exactly once");
  if (a.dv > 1 && a.out.strides.back() != 1) throw Error(what + ": the last stride must be 1");
  return a;
}

void set_attention_input_view(Node& node, int slot, const StridedView& view) {
  if (slot < 0 || slot > 2) throw Error("Attention has inputs 0..2");
  const std::string p = kPrefix[slot];
  node.attrs.set(p + "_shape", view.shape);
  node.attrs.set(p + "_strides", view.strides);
  if (view.offset)
    node.attrs.set(p + "_offset", view.offset);
  else
    node.attrs.erase(p + "_offset");
  if (slot == 1) node.attrs.set("k_transposed", int64_t{0});
}

void set_attention_output_view(Node& node, const StridedView& view, const Shape& out_shape) {
  node.attrs.set("out_shape", out_shape);
  node.attrs.set("out_strides", view.strides);
}

}  // namespace fusebox::ir
