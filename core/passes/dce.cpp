// dce: dead-code elimination. Nodes have no side effects, so a node none of whose outputs reaches
// a graph output is wasted work; tensors nothing references (weights left behind by folding or
// absorption, orphaned intermediates) are wasted memory. Graph inputs always stay: they are the
// caller's interface.
#include <unordered_set>

#include "core/base/strings.h"
#include "core/passes/pass_manager.h"

namespace fusebox::passes {

namespace {

PassResult dce(ir::Graph& g, const PassContext&) {
  PassResult r;
  // One backward sweep finds every live node: readers come after producers in execution order.
  std::unordered_set<std::string> live(g.outputs.begin(), g.outputs.end());
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    for (const auto& o : g.nodes[i].outputs) keep[i] = keep[i] || live.count(o) != 0;
    if (keep[i]) live.insert(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end());
  }
  std::vector<ir::Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (keep[i]) {
      kept.push_back(std::move(g.nodes[i]));
    } else {
      r.rewrite(
          "remove_node", {g.nodes[i].name}, {}, {},
          "removed " + g.nodes[i].name + " (" + g.nodes[i].op + "): nothing reads its output");
    }
  }
  r.changed = kept.size() != g.nodes.size();
  g.nodes = std::move(kept);

  std::unordered_set<std::string> referenced(g.inputs.begin(), g.inputs.end());
  referenced.insert(g.outputs.begin(), g.outputs.end());
  for (const auto& n : g.nodes) {
    referenced.insert(n.inputs.begin(), n.inputs.end());
    referenced.insert(n.outputs.begin(), n.outputs.end());
  }
  std::vector<std::string> unused;
  for (const auto& [name, info] : g.tensors())
    if (!referenced.count(name)) unused.push_back(name);
  for (const auto& name : unused) {
    const ir::TensorInfo& t = g.tensor(name);
    if (t.kind == ir::TensorKind::Weight)
      r.rewrite("remove_weight", {}, {}, {},
                "removed unused weight '" + name + "' (" +
                    format_bytes(static_cast<double>(t.nbytes())) + ")");
    g.remove_tensor(name);
    r.changed = true;
  }
  return r;
}

}  // namespace

void register_dce(PassRegistry& registry) {
  registry.add({"dce",
                "removes nodes whose outputs reach no graph output, and unreferenced tensors", dce,
                /*to_fixed_point=*/false});
}

}  // namespace fusebox::passes
