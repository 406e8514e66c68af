#include "core/exec/program.h"

#include "core/base/error.h"

namespace fusebox::exec {

std::vector<const ir::Tensor*> constants_of(const ir::Graph& graph, const ir::Node& node) {
  std::vector<const ir::Tensor*> out;
  for (const auto& in : node.inputs) {
    const ir::TensorInfo& t = graph.tensor(in);
    out.push_back(t.kind == ir::TensorKind::Weight ? &*t.value : nullptr);
  }
  return out;
}

Program build_program(const ir::Graph& graph, Backend& backend, const CompileOptions& options) {
  Program p;
  p.graph = &graph;
  p.backend = &backend;
  p.options = backend.resolve(options);
  for (const auto& [name, info] : graph.tensors()) {
    if (info.kind != ir::TensorKind::Weight) continue;
    auto held = backend.upload(*info.value);
    p.weights[name] = held.get();
    p.weight_holds.push_back(std::move(held));
  }
  for (const auto& node : graph.nodes) {
    PreparedNode pn;
    pn.node = &node;
    const ir::OpSchema& schema = ir::OpRegistry::instance().get(node.op);
    pn.view = schema.view;
    for (const auto& in : node.inputs) {
      const ir::TensorInfo& t = graph.tensor(in);
      pn.inputs.push_back({t.dtype, t.shape});
    }
    pn.constants = constants_of(graph, node);
    for (const auto& out : node.outputs) pn.outputs.push_back({graph.tensor(out).dtype, graph.tensor(out).shape});
    if (!pn.view) {
      pn.kernel = backend.kernels().find(node.op);
      if (!pn.kernel)
        throw Error("node '" + node.name + "': backend '" + backend.name() + "' has no kernel for op '" +
                    node.op + "'");
      try {
        // The same question the planner asked (memory_rules), so the region it placed fits.
        pn.scratch_bytes = backend.scratch_bytes(KernelContext{node, pn.inputs, pn.outputs, 0, &pn.constants});
        KernelContext ctx{node,          pn.inputs,         pn.outputs, pn.scratch_bytes, &pn.constants,
                          backend.context(), &p.options};
        if (pn.kernel->prepare) pn.state = pn.kernel->prepare(ctx);
      } catch (const Error& e) {
        throw Error("node '" + node.name + "' (" + node.op + "): " + e.what());
      }
    }
    p.nodes.push_back(std::move(pn));
  }
  return p;
}

}  // namespace fusebox::exec
