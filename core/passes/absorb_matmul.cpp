// absorb_matmul: BLAS flag absorption. GEMM reads either operand transposed and scales the
// product for free (transA/transB, alpha), so a Transpose of the last two dims feeding a MatMul,
// and a multiply or divide by a scalar constant before or after it, are separate passes over
// memory that the MatMul can do itself.
#include <algorithm>
#include <cstdint>

#include "core/ir/elementwise_program.h"
#include "core/ir/op_schema.h"
#include "core/passes/pass_manager.h"
#include "core/passes/rewrite_utils.h"

namespace fusebox::passes {

namespace {

bool swaps_last_two(std::vector<int64_t> perm, size_t rank) {
  if (perm.empty())  // ONNX default: reversed, which swaps the last two dims only for rank 2
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank || rank < 2) return false;
  for (size_t i = 0; i < rank; ++i) {
    size_t want = i + 2 < rank ? i : (i + 2 == rank ? rank - 1 : rank - 2);
    int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(rank) : perm[i];
    if (p != static_cast<int64_t>(want)) return false;
  }
  return true;
}

// A scalar Mul/Div node: which operand is the data and what factor it applies ("x 0.125").
struct ScalarScale {
  std::string data;
  double factor = 1;
  std::string text;
};

// Returns nullopt when `node` is not a Mul/Div by a scalar weight; `why` says what disqualified
// a Mul/Div whose other operand is a weight (a near miss), and stays empty otherwise.
std::optional<ScalarScale> scalar_scale(const ir::Graph& g, const ir::Node& node,
                                        std::string* why) {
  if (node.op != "Mul" && node.op != "Div") return std::nullopt;
  for (int c : {1, 0}) {
    if (node.op == "Div" && c == 0) break;  // c / x is not a scale of x
    if (auto v = scalar_constant(g, node.inputs[c])) {
      if (node.op == "Div" && *v == 0) return std::nullopt;
      ScalarScale s{node.inputs[1 - c], node.op == "Mul" ? *v : 1.0 / *v,
                    (node.op == "Mul" ? "x " : "/ ") + fmt_num(*v)};
      // A scalar of higher rank would broadcast the data to a bigger shape.
      if (g.tensor(node.outputs[0]).shape != g.tensor(s.data).shape) {
        *why = node.name + " broadcasts its input to " +
               ir::shape_str(g.tensor(node.outputs[0]).shape);
        return std::nullopt;
      }
      return s;
    }
  }
  if (g.is_weight(node.inputs[1]) || (node.op == "Mul" && g.is_weight(node.inputs[0])))
    *why = node.name + " operand is not a scalar constant";
  return std::nullopt;
}

void scale_alpha(ir::Node& mm, double factor) {
  mm.attrs.set("alpha", mm.attrs.get_float("alpha", 1.0) * factor);
}

// Transpose(last two dims) -> MatMul input `slot`: read the transpose's input with the flag.
bool absorb_transpose(ir::Graph& g, LiveUses& live, size_t m, int slot, PassResult& r) {
  auto t = live.uses().produced_by(g.nodes[m].inputs[slot], "Transpose");
  if (!t) return false;
  const ir::Node tr = g.nodes[*t];
  std::vector<int64_t> perm = tr.attrs.get_ints("perm");
  if (!swaps_last_two(perm, g.tensor(tr.inputs[0]).shape.size())) {
    r.near_miss("transpose_to_flag", tr.name,
                tr.name + " perm " + (perm.empty() ? "(reversed)" : fmt_ints(perm)) +
                    " does not swap the last two dims");
    return false;
  }
  ir::Node& mm = g.nodes[m];
  const char* flag = slot == 0 ? "transA" : "transB";
  bool was_set = mm.attrs.get_int(flag, 0) != 0;
  mm.attrs.set(flag, int64_t{was_set ? 0 : 1});
  live.set_input(g, m, slot, tr.inputs[0]);
  std::string msg = "absorbed " + tr.name + " into " + mm.name + " as " + flag +
                    (was_set ? " (cancelling the one it had)" : "");
  const std::string matmul = mm.name;
  // The transpose stays when something else still reads it (that reader still needs the data).
  std::string still = live.uses().other_uses(tr.outputs[0], SIZE_MAX);
  std::vector<std::string> removed;
  if (still.empty()) {
    live.remove(g, *t);
    removed.push_back(tr.name);
  } else {
    msg += " (" + tr.name + " kept: " + still + ")";
  }
  r.rewrite("transpose_to_flag", removed, {}, {matmul}, msg);
  return true;
}

// Mul/Div by a scalar producing MatMul input `slot`, read by nothing else: fold into alpha.
bool fold_input_scale(ir::Graph& g, LiveUses& live, size_t m, int slot, PassResult& r) {
  const GraphUses& uses = live.uses();
  const ir::Node& mm = g.nodes[m];
  const std::string in = mm.inputs[slot];
  if (mm.inputs[0] == mm.inputs[1]) return false;  // the factor would apply twice
  auto p = uses.producer.find(in);
  if (p == uses.producer.end()) return false;
  const size_t scale_index = p->second;
  const ir::Node scale_node = g.nodes[scale_index];
  std::string why;
  auto s = scalar_scale(g, scale_node, &why);
  if (!s) {
    if (!why.empty()) r.near_miss("scale_to_alpha", scale_node.name, why);
    return false;
  }
  if (!uses.only_read_by(in, m)) {
    r.near_miss("scale_to_alpha", scale_node.name,
                scale_node.name + " (" + s->text + ") not folded into " + mm.name +
                    ": its output is " + uses.other_uses(in, m));
    return false;
  }
  // After an element-wise op the multiply fuses into that chain for free, and patterns like
  // erf-GELU (..., Mul(x, 0.5)) need it in place: leave it to fuse_patterns/fuse_elementwise.
  auto src = uses.producer.find(s->data);
  if (src != uses.producer.end()) {
    const ir::Node& prev = g.nodes[src->second];
    const ir::OpSchema* schema = ir::OpRegistry::instance().find(prev.op);
    // Only ops a FusedElementwise program can run: after LeakyRelu or a comparison the Mul would
    // be left alone by fusion too, so it folds here.
    ir::EwOp ew;
    if (schema && schema->elementwise &&
        ir::ew_from_op(prev.op, prev.attrs.get_string("approximate", "none"), &ew)) {
      r.near_miss("scale_to_alpha", scale_node.name,
                  scale_node.name + " (" + s->text +
                      ") left for element-wise fusion: its input comes from " + prev.name + " (" +
                      prev.op + ")");
      return false;
    }
  }
  live.set_input(g, m, slot, s->data);
  ir::Node& target = g.nodes[m];
  scale_alpha(target, s->factor);
  r.rewrite("scale_to_alpha", {scale_node.name}, {}, {target.name},
            "folded " + scale_node.name + " (" + s->text + ") on input " + (slot == 0 ? "A" : "B") +
                " into " + target.name + " alpha");
  live.remove(g, scale_index);
  return true;
}

// Mul/Div by a scalar reading the MatMul's output, which nothing else reads: fold into alpha.
bool fold_output_scale(ir::Graph& g, LiveUses& live, size_t m, PassResult& r) {
  const GraphUses& uses = live.uses();
  const std::string y = g.nodes[m].outputs[0];
  const std::vector<size_t> readers = uses.readers_of(y);  // a copy: the rewrite edits the lists
  for (size_t c : readers) {
    const ir::Node scale_node = g.nodes[c];
    std::string why;
    auto s = scalar_scale(g, scale_node, &why);
    if (!s || s->data != y) {
      if (!why.empty()) r.near_miss("scale_to_alpha", scale_node.name, why);
      continue;
    }
    if (!uses.only_read_by(y, c)) {
      r.near_miss("scale_to_alpha", scale_node.name,
                  scale_node.name + " (" + s->text + ") not folded into " + g.nodes[m].name +
                      ": its output is " + uses.other_uses(y, c));
      return false;
    }
    ir::Node& mm = g.nodes[m];
    scale_alpha(mm, s->factor);
    mm.outputs[0] = scale_node.outputs[0];
    r.rewrite("scale_to_alpha", {scale_node.name}, {}, {mm.name},
              "folded " + scale_node.name + " (" + s->text + ") into " + mm.name + " alpha");
    g.remove_tensor(y);
    live.remove(g, c, /*keep_outputs=*/true);
    live.replace_output(y, scale_node.outputs[0], m);
    return true;
  }
  return false;
}

// Each MatMul in execution order takes one rewrite at a time until none applies: each one
// changes who reads what, and LiveUses keeps that current at the cost of the tensors touched.
PassResult absorb_matmul(ir::Graph& g, const PassContext&) {
  PassResult r;
  LiveUses live(g);
  for (size_t m = 0; m < g.nodes.size(); ++m) {
    if (live.dead(m) || g.nodes[m].op != "MatMul") continue;
    for (bool again = true; again;) {
      again = absorb_transpose(g, live, m, 0, r) || absorb_transpose(g, live, m, 1, r) ||
              fold_input_scale(g, live, m, 0, r) || fold_input_scale(g, live, m, 1, r) ||
              fold_output_scale(g, live, m, r);
      r.changed = r.changed || again;
    }
  }
  live.compact(g);
  return r;
}

}  // namespace

void register_absorb_matmul(PassRegistry& registry) {
  registry.add(
      {"absorb_matmul",
       "folds last-two-dim Transposes into MatMul transA/transB and scalar Mul/Div into alpha",
       absorb_matmul, /*to_fixed_point=*/true});
}

}  // namespace fusebox::passes
