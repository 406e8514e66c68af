// absorb_layout: layout ops around attention become strided reads and writes.
//
// Exporters split a projection into heads and merge them back with Slice, Reshape and Transpose:
// each Slice and Transpose is a full pass over memory that produces no new values. Attention can
// read its operands through strided views and write its output through one
// (core/ir/attention_layout.h), so those copies disappear:
//   a. A Transpose whose perm only moves size-1 dims keeps every element where it was: it becomes
//      a Reshape, which the planner aliases (no copy).
//   b. For each Attention operand, the chain of Transpose / Slice / view ops (Reshape, Flatten,
//      Squeeze, Unsqueeze, Identity) that produced it collapses into one StridedView of the
//      chain's first input, as far back as strides can express it; Attention reads that input.
//   c. When the Attention output only feeds a chain of Transpose / view ops, Attention writes the
//      chain's last tensor directly, through the view the chain's inverse describes.
#include <algorithm>
#include <cstdint>

#include "core/base/strings.h"
#include "core/ir/attention_layout.h"
#include "core/ir/op_schema.h"
#include "core/ir/strided_view.h"
#include "core/passes/pass_manager.h"
#include "core/passes/rewrite_utils.h"

namespace fusebox::passes {

namespace {

constexpr const char* kOperand[3] = {"Q", "K", "V"};
constexpr const char* kPrefix[3] = {"q", "k", "v"};

size_t index_of(const ir::Graph& g, const std::string& name) {
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (g.nodes[k].name == name) return k;
  return g.nodes.size();
}

bool is_read(const ir::Graph& g, const std::string& tensor) {
  if (g.is_output(tensor)) return true;
  for (const auto& n : g.nodes)
    if (std::find(n.inputs.begin(), n.inputs.end(), tensor) != n.inputs.end()) return true;
  return false;
}

bool is_view_op(const std::string& op) {
  const ir::OpSchema* s = ir::OpRegistry::instance().find(op);
  return s && s->view;
}

const ir::Shape& shape_of(const ir::Graph& g, const std::string& tensor) {
  return g.tensor(tensor).shape;
}

// The Transpose's perm with ONNX's default (reversed) filled in and negative axes normalized.
std::vector<int64_t> perm_of(const ir::Node& t, size_t rank) {
  std::vector<int64_t> perm = t.attrs.get_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  for (auto& p : perm)
    if (p < 0) p += static_cast<int64_t>(rank);
  return perm;
}

std::string perm_text(const ir::Node& t) {
  std::vector<int64_t> perm = t.attrs.get_ints("perm");
  return perm.empty() ? "(reversed)" : fmt_ints(perm);
}

// (a) Transposes that only move size-1 dims: the dims of size > 1 keep their order, so every
// element keeps its row-major position and the output is the input under another shape.
void unit_transposes_to_reshapes(ir::Graph& g, PassResult& r) {
  for (auto& n : g.nodes) {
    if (n.op != "Transpose") continue;
    const ir::Shape& in = shape_of(g, n.inputs[0]);
    std::vector<int64_t> perm = perm_of(n, in.size());
    int64_t last = -1;
    bool keeps_order = true;
    for (int64_t p : perm) {
      if (in[static_cast<size_t>(p)] <= 1) continue;
      keeps_order = keeps_order && p > last;
      last = p;
    }
    if (!keeps_order) continue;
    const ir::Shape out = shape_of(g, n.outputs[0]);
    r.rewrite("transpose_to_reshape", {}, {}, {n.name},
              n.name + " perm " + perm_text(n) + " only moves size-1 dims -> Reshape " +
                  ir::shape_str(out) + " (no copy)");
    n.op = "Reshape";
    n.attrs = {};
    n.attrs.set("shape", out);
    if (std::find(out.begin(), out.end(), 0) != out.end()) n.attrs.set("allowzero", int64_t{1});
    r.changed = true;
  }
}

// A Slice that reads a strided view of its input: static starts/ends with positive steps. Returns
// why not ("" when it does).
std::string slice_problem(const ir::Node& n) {
  if (!n.attrs.has("starts") || !n.attrs.has("ends")) return n.name + " has no static starts/ends";
  for (int64_t step : n.attrs.get_ints("steps"))
    if (step < 1)
      return n.name + " has step " + std::to_string(step) + " (a negative step is no strided view)";
  return "";
}

// `in` (the view of the node's input) seen through one layout node; nullopt and `why` when strides
// cannot express the result.
std::optional<ir::StridedView> apply_forward(const ir::Graph& g, const ir::Node& n,
                                             const ir::StridedView& in, std::string* why) {
  if (n.op == "Transpose") return in.transposed(perm_of(n, in.shape.size()));
  if (n.op == "Slice") {
    ir::StridedView v = in;
    auto starts = n.attrs.get_ints("starts"), ends = n.attrs.get_ints("ends");
    auto axes = n.attrs.get_ints("axes"), steps = n.attrs.get_ints("steps");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    for (size_t i = 0; i < starts.size(); ++i) {
      // ONNX clamping, as the Slice schema (core/ir/ops/layout.cpp) infers the output shape.
      const size_t ax = static_cast<size_t>(ir::normalize_axis(axes[i], v.shape.size(), "Slice"));
      const int64_t dim = v.shape[ax], step = std::min(steps[i], dim + 1);
      int64_t b = std::clamp<int64_t>(starts[i], -dim - 1, dim + 1);
      int64_t e = std::clamp<int64_t>(ends[i], -dim - 1, dim + 1);
      if (b < 0) b += dim;
      if (e < 0) e += dim;
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      const int64_t count = e > b ? (e - b + step - 1) / step : 0;
      v = v.sliced(ax, count > 0 ? b : 0, count, count > 1 ? step : 1);
    }
    return v;
  }
  const ir::Shape& out = shape_of(g, n.outputs[0]);
  auto v = in.reshaped(out);
  if (!v)
    *why =
        n.name + " cannot view " + in.to_string() + " as " + ir::shape_str(out) + " without a copy";
  return v;
}

// The view `chain` (nearest the operand first) makes of its last node's input, applied oldest
// first; nullopt and `why` when a reshape on the way needs a copy.
std::optional<ir::StridedView> compose(const ir::Graph& g, const std::vector<size_t>& chain,
                                       size_t len, std::string* why) {
  ir::StridedView v = ir::StridedView::contiguous(shape_of(g, g.nodes[chain[len - 1]].inputs[0]));
  for (size_t i = len; i-- > 0;) {
    auto next = apply_forward(g, g.nodes[chain[i]], v, why);
    if (!next) return std::nullopt;
    v = std::move(*next);
  }
  return v;
}

bool has_copy(const ir::Graph& g, const std::vector<size_t>& chain, size_t len) {
  for (size_t i = 0; i < len; ++i)
    if (g.nodes[chain[i]].op == "Transpose" || g.nodes[chain[i]].op == "Slice") return true;
  return false;
}

std::vector<std::string> names_of(const ir::Graph& g, const std::vector<size_t>& nodes) {
  std::vector<std::string> out;
  for (size_t k : nodes) out.push_back(g.nodes[k].name);
  return out;
}

// (b) Attention operand `slot` produced by a chain of layout ops: read the chain's input instead.
bool absorb_input(ir::Graph& g, const GraphUses& uses, size_t m, int slot, PassResult& r) {
  const std::string p = kPrefix[slot];
  const ir::Node& att = g.nodes[m];
  if (att.attrs.has(p + "_shape") || att.attrs.has(p + "_strides"))
    return false;  // already a view (of a tensor whose own chain we cannot compose with)
  const std::string who = att.name + " " + kOperand[slot];

  // Walk back while the producer is a layout op we can follow (chain[0] produces the operand).
  std::vector<size_t> chain;
  std::string stop;
  for (std::string t = att.inputs[slot];;) {
    auto it = uses.producer.find(t);
    if (it == uses.producer.end()) break;
    const ir::Node& n = g.nodes[it->second];
    if (n.op == "Slice") {
      stop = slice_problem(n);
      if (!stop.empty()) break;
    } else if (n.op != "Transpose" && !is_view_op(n.op)) {
      break;
    }
    chain.push_back(it->second);
    t = n.inputs[0];
  }
  if (!stop.empty()) r.near_miss("layout_view", att.name, who + ": " + stop);
  // The longest chain whose composition strides can express.
  size_t len = chain.size();
  std::optional<ir::StridedView> view;
  for (; len > 0; --len) {
    std::string why;
    view = compose(g, chain, len, &why);
    if (view) break;
    if (len == chain.size()) stop = why;
  }
  if (len < chain.size() && len > 0)
    r.near_miss("layout_view", att.name,
                who + ": " + stop + "; read from " + g.nodes[chain[len - 1]].inputs[0] +
                    " instead (" + g.nodes[chain[len]].name + " not absorbed)");
  else if (len < chain.size())
    r.near_miss("layout_view", att.name, who + ": " + stop);
  if (len == 0 || !has_copy(g, chain, len)) return false;

  const std::vector<size_t> absorbed(chain.begin(),
                                     chain.begin() + static_cast<std::ptrdiff_t>(len));
  const std::string root = g.nodes[chain[len - 1]].inputs[0];
  const std::vector<std::string> names = names_of(g, absorbed);
  std::string msg = "absorbed " + node_list(g, absorbed) + " into " + att.name + ": ";
  // Every operand reading the same tensor (self-attention may share one) follows it together.
  const std::string operand = att.inputs[slot];
  const bool k_transposed = att.attrs.get_int("k_transposed", 0) != 0;
  ir::Node& node = g.nodes[m];
  for (int s = slot; s < 3; ++s) {
    const std::string ps = kPrefix[s];
    if (node.inputs[s] != operand || node.attrs.has(ps + "_shape") ||
        node.attrs.has(ps + "_strides"))
      continue;
    ir::StridedView v = *view;
    if (s == 1 && k_transposed) {
      // The chain makes K^T [..., D, Skv]; the view Attention takes is K [..., Skv, D].
      std::vector<int64_t> perm(v.shape.size());
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
      std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
      v = v.transposed(perm);
    }
    msg += std::string(s == slot ? "" : ", ") + kOperand[s] + " read as " + v.to_string();
    ir::set_attention_input_view(node, s, v);
    node.inputs[s] = root;
  }
  msg += " in " + root;

  // Chain nodes nothing reads any more go; the others still feed someone else.
  const std::string attention = node.name;  // `node` moves as nodes are removed
  std::vector<std::string> kept, removed;
  for (const auto& name : names) {
    size_t k = index_of(g, name);
    if (is_read(g, g.nodes[k].outputs[0])) {
      GraphUses now(g);
      kept.push_back(name + " kept: " + now.other_uses(g.nodes[k].outputs[0], SIZE_MAX));
      continue;
    }
    remove_node(g, k);
    removed.push_back(name);
  }
  if (!kept.empty()) msg += " (" + join(kept, "; ") + ")";
  std::reverse(removed.begin(), removed.end());  // the chain was walked backwards
  r.rewrite("layout_view", removed, {}, {attention}, msg);
  return true;
}

std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

// Where each element of the chain's input lands in its output, the chain taken backwards from
// the tensor its last node (index len-1) writes.
std::optional<ir::StridedView> compose_inverse(const ir::Graph& g, const std::vector<size_t>& chain,
                                               size_t len, std::string* why) {
  ir::StridedView v = ir::StridedView::contiguous(shape_of(g, g.nodes[chain[len - 1]].outputs[0]));
  for (size_t i = len; i-- > 0;) {
    const ir::Node& n = g.nodes[chain[i]];
    const ir::Shape& in = shape_of(g, n.inputs[0]);
    if (n.op == "Transpose") {
      v = v.transposed(inverse_perm(perm_of(n, in.size())));
      continue;
    }
    auto back = v.reshaped(in);
    if (!back) {
      *why = n.name + " would need its input " + ir::shape_str(in) + " written as a view of " +
             v.to_string() + ", which strides cannot express";
      return std::nullopt;
    }
    v = std::move(*back);
  }
  return v;
}

// (c) Attention output read only by a chain of Transpose / view ops: write the chain's last tensor.
bool absorb_output(ir::Graph& g, const GraphUses& uses, size_t m, PassResult& r) {
  const ir::Node& att = g.nodes[m];
  if (att.attrs.has("out_shape") || att.attrs.has("out_strides")) return false;
  const std::string y = att.outputs[0];
  const std::string who = att.name + " output";

  auto is_layout = [&](size_t k) {
    return g.nodes[k].op == "Transpose" || is_view_op(g.nodes[k].op);
  };
  std::vector<size_t> chain;  // chain[0] reads the Attention output
  for (std::string t = y;;) {
    const auto& readers = uses.readers_of(t);
    if (readers.size() == 1 && !g.is_output(t)) {
      if (!is_layout(readers[0])) break;
      chain.push_back(readers[0]);
      t = g.nodes[readers[0]].outputs[0];
      continue;
    }
    // A layout op among several readers almost extended the chain.
    for (size_t k : readers)
      if (is_layout(k))
        r.near_miss("layout_view", att.name,
                    who + " not written through " + g.nodes[k].name + ": " + t + " is " +
                        uses.other_uses(t, k) + " too");
    break;
  }
  size_t len = chain.size();
  std::optional<ir::StridedView> view;
  const int64_t dv = shape_of(g, y).empty() ? 1 : shape_of(g, y).back();
  for (; len > 0; --len) {
    if (!has_copy(g, chain, len)) {
      len = 0;  // only view ops left: the chain costs nothing as it is
      break;
    }
    std::string why;
    view = compose_inverse(g, chain, len, &why);
    if (view && dv > 1 && view->strides.back() != 1) {
      std::vector<size_t> prefix(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(len));
      why = node_list(g, prefix) + " would put consecutive elements of a Dv row at stride " +
            std::to_string(view->strides.back()) + " (Attention writes rows contiguously)";
      view.reset();
    }
    if (view) break;
    if (len == chain.size())
      r.near_miss("layout_view", att.name, who + " not written through the whole chain: " + why);
  }
  if (len == 0) return false;

  const std::vector<size_t> absorbed(chain.begin(),
                                     chain.begin() + static_cast<std::ptrdiff_t>(len));
  const std::string z = g.nodes[chain[len - 1]].outputs[0];
  const ir::Shape z_shape = shape_of(g, z);
  const std::vector<std::string> names = names_of(g, absorbed);
  r.rewrite("layout_view", names, {}, {att.name},
            "absorbed " + node_list(g, absorbed) + " into " + att.name + ": output " +
                ir::shape_str(view->shape) + " written into " + z + " " + ir::shape_str(z_shape) +
                " at strides " + fmt_ints(view->strides));
  ir::set_attention_output_view(g.nodes[m], *view, z_shape);
  g.nodes[m].outputs[0] = z;
  g.remove_tensor(y);
  for (const auto& name : names) {
    size_t k = index_of(g, name);
    remove_node(g, k, /*keep_outputs=*/g.nodes[k].outputs[0] == z);
  }
  return true;
}

PassResult absorb_layout(ir::Graph& g, const PassContext&) {
  PassResult r;
  unit_transposes_to_reshapes(g, r);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != "Attention") continue;
    const std::string name = g.nodes[i].name;
    // One rewrite at a time, with fresh use lists: each one changes who reads what.
    for (bool again = true; again;) {
      GraphUses uses(g);
      size_t m = index_of(g, name);
      again = absorb_input(g, uses, m, 0, r) || absorb_input(g, uses, m, 1, r) ||
              absorb_input(g, uses, m, 2, r) || absorb_output(g, uses, m, r);
      r.changed = r.changed || again;
    }
    i = index_of(g, name);
  }
  return r;
}

}  // namespace

void register_absorb_layout(PassRegistry& registry) {
  registry.add({"absorb_layout",
                "Transposes of size-1 dims become Reshapes; Slice/Reshape/Transpose chains into "
                "and out of Attention become strided reads and writes",
                absorb_layout, /*to_fixed_point=*/false});
}

}  // namespace fusebox::passes
