// cse: common-subexpression elimination. fusebox's ops are pure functions of their inputs and
// attributes (none draws random numbers or keeps state between runs: Dropout imports as the
// identity), so two nodes that run the same op, with the same attributes, on the same input
// tensors compute the same outputs. The later one goes and its readers read the earlier one's
// outputs; a chain of twins goes whole, since the second link's inputs become the first's. ONNX
// Runtime's CommonSubexpressionElimination does the same (onnxruntime/core/optimizer). Exporters
// leave such twins where every layer recomputes what the first one has already computed: in
// gpt_small_static's step both layers Expand the same attention mask and Reshape the same tensor
// (66 -> 64 nodes); the other shipped models have none left after import and folding.
//
// It runs after the fusions, so a fusion pattern, which wants its intermediates read once, still
// sees each layer's own copy; what the fusions leave twinned (two identical FusedElementwise
// chains) merges here. A node one of whose outputs the caller receives stays: the graph's output
// names are its interface.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/passes/pass_manager.h"

namespace fusebox::passes {

namespace {

// What makes two nodes compute the same thing. Weights are compared by name, not by content:
// two weights with equal bytes stay two tensors.
using NodeKey = std::tuple<std::string, std::vector<std::string>, std::map<std::string, ir::AttrValue>,
                           size_t>;

PassResult cse(ir::Graph& g, const PassContext&) {
  PassResult r;
  std::map<std::string, std::string> replaced;  // a dropped node's output -> its twin's
  std::map<NodeKey, size_t> first;              // each computation -> the kept node that does it
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (ir::Node& n : g.nodes) {
    for (std::string& in : n.inputs)
      if (auto it = replaced.find(in); it != replaced.end()) in = it->second;
    NodeKey key{n.op, n.inputs, n.attrs.all(), n.outputs.size()};
    bool returned = false;
    for (const std::string& o : n.outputs) returned = returned || g.is_output(o);
    const auto twin = first.find(key);
    if (twin == first.end() || returned) {
      if (twin == first.end()) first.emplace(std::move(key), kept.size());
      kept.push_back(std::move(n));
      continue;
    }
    const ir::Node& keep = kept[twin->second];
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      replaced[n.outputs[i]] = keep.outputs[i];
      g.remove_tensor(n.outputs[i]);
    }
    r.rewrite("merge_twin", {n.name}, {}, {},
              "merged " + n.name + " (" + n.op + ") into " + keep.name +
                  ": the same op, attributes and inputs");
  }
  r.changed = kept.size() != g.nodes.size();
  g.nodes = std::move(kept);
  return r;
}

}  // namespace

void register_cse(PassRegistry& registry) {
  registry.add({"cse",
                "merges nodes that run the same op with the same attributes on the same inputs "
                "(common-subexpression elimination)",
                cse, /*to_fixed_point=*/false});
}

}  // namespace fusebox::passes
