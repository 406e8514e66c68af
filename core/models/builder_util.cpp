#include "core/models/builder_util.h"

#include "core/base/error.h"
#include "core/models/weights.h"

namespace fusebox::models {

ir::Attributes attrs_ints(const std::string& name, std::vector<int64_t> values) {
  ir::Attributes a;
  a.set(name, std::move(values));
  return a;
}

ir::Attributes attrs_int(const std::string& name, int64_t value) {
  ir::Attributes a;
  a.set(name, value);
  return a;
}

std::string add_linear(ir::Graph& g, const std::string& x, const std::string& prefix,
                       int64_t in_features, int64_t out_features, uint64_t seed) {
  const std::string weight = prefix + "weight", bias = prefix + "bias";
  add_linear_weights(g, weight, bias, in_features, out_features, seed);
  std::string wt =
      g.add_node("Transpose", {weight}, attrs_ints("perm", {1, 0}), prefix + "Transpose");
  std::string mm = g.add_node("MatMul", {x, wt}, {}, prefix + "MatMul");
  return g.add_node("Add", {mm, bias}, {}, prefix + "Add");
}

void rename_tensor(ir::Graph& g, const std::string& from, const std::string& to) {
  if (from == to) return;
  if (g.has_tensor(to)) throw Error("cannot rename '" + from + "' to '" + to + "': name taken");
  ir::TensorInfo info = g.tensor(from);
  g.remove_tensor(from);
  info.name = to;
  g.add_tensor(std::move(info));
  for (auto& node : g.nodes) {
    for (auto& in : node.inputs)
      if (in == from) in = to;
    for (auto& out : node.outputs)
      if (out == from) out = to;
  }
  for (auto& in : g.inputs)
    if (in == from) in = to;
  for (auto& out : g.outputs)
    if (out == from) out = to;
}

}  // namespace fusebox::models
