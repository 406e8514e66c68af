#include "core/ir/verifier.h"

#include <unordered_set>

#include "core/base/error.h"
#include "core/ir/op_schema.h"

namespace fusebox::ir {

void verify(const Graph& g) {
  const std::string where = "graph '" + g.name + "'";
  std::unordered_set<std::string> defined;
  for (const auto& [name, t] : g.tensors()) {
    if (t.kind == TensorKind::Weight) {
      if (!t.value) throw Error(where + ": weight '" + name + "' has no value");
      if (t.value->shape() != t.shape || t.value->dtype() != t.dtype)
        throw Error(where + ": weight '" + name + "' value does not match its shape " + shape_str(t.shape));
      defined.insert(name);
    }
  }
  for (const auto& in : g.inputs) {
    if (g.tensor(in).kind != TensorKind::Input) throw Error(where + ": graph input '" + in + "' is not an Input tensor");
    defined.insert(in);
  }
  for (const auto& [name, t] : g.tensors())
    if (t.kind == TensorKind::Input && !defined.count(name))
      throw Error(where + ": Input tensor '" + name + "' is not listed in the graph inputs");

  std::unordered_set<std::string> node_names;
  std::unordered_set<std::string> produced;
  for (const auto& node : g.nodes) {
    // Built only for a refusal: verify runs after every pass that changed the graph, and one
    // string per node per pass was a fifth of its time on a 100,000-node graph.
    auto nw = [&] { return where + ", node '" + node.name + "' (" + node.op + ")"; };
    if (!node_names.insert(node.name).second) throw Error(nw() + ": node name used twice");
    std::vector<TensorType> in_types;
    for (const auto& in : node.inputs) {
      if (!g.has_tensor(in)) throw Error(nw() + ": reads '" + in + "', which does not exist");
      if (!defined.count(in)) throw Error(nw() + ": reads '" + in + "' before it is produced");
      const TensorInfo& t = g.tensor(in);
      in_types.push_back({t.dtype, t.shape});
    }
    std::vector<TensorType> expect = infer_node(node, in_types);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const std::string& out = node.outputs[i];
      if (!g.has_tensor(out)) throw Error(nw() + ": writes '" + out + "', which does not exist");
      const TensorInfo& t = g.tensor(out);
      if (t.kind != TensorKind::Intermediate)
        throw Error(nw() + ": writes '" + out + "', which is an input or weight");
      if (!produced.insert(out).second)
        throw Error(nw() + ": '" + out + "' already has a producer");
      if (t.shape != expect[i].shape || t.dtype != expect[i].dtype)
        throw Error(nw() + ": output '" + out + "' recorded as " + dtype_name(t.dtype) +
                    shape_str(t.shape) + " but inference gives " + dtype_name(expect[i].dtype) +
                    shape_str(expect[i].shape));
      defined.insert(out);
    }
  }
  if (g.outputs.empty()) throw Error(where + ": has no outputs");
  for (const auto& out : g.outputs)
    if (!defined.count(out)) throw Error(where + ": output '" + out + "' is never produced");
}

}  // namespace fusebox::ir
