// constant_fold: a node whose inputs are all weights computes the same thing on every run, so
// it is evaluated once, here, and its outputs become weights. Exporters leave such static
// subgraphs behind (transposed weights, i64 shape arithmetic, scaled constants). Nodes are
// visited in execution order, so a chain of constant nodes folds in one sweep.
#include <algorithm>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/backend/evaluate.h"
#include "core/ir/op_schema.h"
#include "core/passes/pass_manager.h"

namespace fusebox::passes {

namespace {

// Folding trades compute for weight memory; past this a folded constant costs more than it saves
// (and an Expand-like node could blow up the model).
constexpr size_t kMaxFoldBytes = size_t{64} << 20;
// What all the folds of one graph may add, beyond the weights the graph came with: a model of a
// few hundred bytes must not make the optimizer hold gigabytes through many folds that are each
// under kMaxFoldBytes (Expand-like chains). Nodes past the budget are left for run time.
constexpr size_t kFoldBudgetBytes = size_t{256} << 20;

size_t weight_bytes(const ir::Graph& g) {
  size_t bytes = 0;
  for (const auto& [name, info] : g.tensors())
    if (info.kind == ir::TensorKind::Weight && info.value) bytes += info.value->nbytes();
  return bytes;
}

// Why `node` is not folded when its outputs take `bytes` and the graph's folds have made `made`
// so far of `budget`; empty when it may be folded.
std::string over_budget(const ir::Node& node, size_t bytes, size_t made, size_t budget) {
  auto mib = [](size_t b) { return format_bytes(static_cast<double>(b)); };
  if (bytes > kMaxFoldBytes)
    return node.name + " not folded: its result would take " + mib(bytes) + " (limit " +
           mib(kMaxFoldBytes) + ")";
  if (bytes > budget - made)
    return node.name + " not folded: its result (" + mib(bytes) +
           ") would take folding past its budget for this graph (" + mib(made) + " made of " +
           mib(budget) + ")";
  return "";
}

// Views (Reshape, Squeeze, ...) reinterpret their input's bytes: fold them by sharing storage.
std::vector<ir::Tensor> evaluate(const exec::Backend& backend, const ir::Graph& g,
                                 const ir::Node& node, const std::vector<ir::Tensor>& inputs) {
  if (ir::OpRegistry::instance().get(node.op).view)
    return {inputs[0].reshaped(g.tensor(node.outputs[0]).shape)};
  return exec::evaluate_node(backend, node, inputs);
}

PassResult constant_fold(ir::Graph& g, const PassContext& ctx) {
  PassResult r;
  if (!ctx.evaluator) {
    r.near_miss("fold", "", "no evaluator backend: constant folding skipped");
    return r;
  }
  const size_t budget = weight_bytes(g) + kFoldBudgetBytes;
  size_t folded = 0;  // bytes the folds so far have made
  for (size_t i = 0; i < g.nodes.size();) {
    const ir::Node& node = g.nodes[i];
    bool constant =
        !node.inputs.empty() && std::all_of(node.inputs.begin(), node.inputs.end(),
                                            [&](const auto& t) { return g.is_weight(t); });
    if (!constant) {
      ++i;
      continue;
    }
    // Keep it simple: a graph output stays produced by a node (callers expect to find it computed).
    auto out = std::find_if(node.outputs.begin(), node.outputs.end(),
                            [&](const auto& t) { return g.is_output(t); });
    if (out != node.outputs.end()) {
      r.near_miss(
          "fold", node.name,
          node.name + " has only constant inputs but its output '" + *out + "' is a graph output");
      ++i;
      continue;
    }
    const bool view = ir::OpRegistry::instance().get(node.op).view;  // shares its input's bytes
    size_t bytes = 0;
    for (const auto& o : node.outputs) bytes += view ? 0 : g.tensor(o).nbytes();
    if (std::string why = over_budget(node, bytes, folded, budget); !why.empty()) {
      r.near_miss("fold", node.name, why);
      ++i;
      continue;
    }
    std::vector<ir::Tensor> inputs, outputs;
    for (const auto& t : node.inputs) inputs.push_back(*g.tensor(t).value);
    try {
      outputs = evaluate(*ctx.evaluator, g, node, inputs);
    } catch (const Error& e) {
      r.near_miss("fold", node.name, node.name + " not folded: " + e.what());
      ++i;
      continue;
    }
    std::vector<std::string> made;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ir::TensorInfo& t = g.tensor(node.outputs[k]);
      t.kind = ir::TensorKind::Weight;
      t.value = outputs[k];
      made.push_back("'" + t.name + "' " + ir::dtype_name(t.dtype) + ir::shape_str(t.shape));
    }
    folded += bytes;
    r.rewrite("fold", {node.name}, {}, {},
              "folded " + node.name + " (" + node.op + ") into weight " + join(made, ", "));
    r.changed = true;
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return r;
}

}  // namespace

void register_constant_fold(PassRegistry& registry) {
  registry.add({"constant_fold", "evaluates nodes whose inputs are all weights once, at load time",
                constant_fold, /*to_fixed_point=*/false});
}

}  // namespace fusebox::passes
