#include "core/backend/evaluate.h"

#include "core/base/error.h"
#include "core/ir/op_schema.h"

namespace fusebox::exec {

std::vector<ir::Tensor> evaluate_node(const Backend& backend, const ir::Node& node,
                                      const std::vector<ir::Tensor>& inputs) {
  if (!backend.caps().host_memory)
    throw Error("node '" + node.name + "': cannot evaluate on backend '" + backend.name() +
                "': its memory is not the host's (constant folding evaluates on the CPU backend)");
  std::vector<ir::TensorType> in_types;
  for (const auto& t : inputs) in_types.push_back({t.dtype(), t.shape()});
  std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
  const KernelDef* kernel = backend.kernels().find(node.op);
  if (!kernel)
    throw Error("node '" + node.name + "': backend '" + backend.name() + "' has no kernel for op '" +
                node.op + "'");
  size_t scratch_bytes = backend.scratch_bytes(KernelContext{node, in_types, out_types});
  KernelContext ctx{node, in_types, out_types, scratch_bytes, nullptr, backend.context()};
  std::shared_ptr<const void> state = kernel->prepare ? kernel->prepare(ctx) : nullptr;

  std::vector<ir::Tensor> outputs;
  for (const auto& t : out_types) outputs.emplace_back(t.dtype, t.shape);
  ir::Tensor scratch(ir::DType::f32, {static_cast<int64_t>((scratch_bytes + 3) / 4)});
  std::vector<const void*> in_ptrs;
  for (const auto& t : inputs) in_ptrs.push_back(t.bytes());
  std::vector<void*> out_ptrs;
  for (auto& t : outputs) out_ptrs.push_back(t.bytes());
  KernelArgs args{in_ptrs.data(), out_ptrs.data(), scratch.bytes(), state.get(), backend.context()};
  kernel->run(args);
  return outputs;
}

}  // namespace fusebox::exec
