// The interpreted executor: the plan's arena, but each op looks up its kernel in the backend's
// table and its tensors' addresses by name, every run (ONNX Runtime's sequential executor does
// similar per-node work: kernel context set-up and value lookups).
#include "core/exec/arena_binding.h"
#include "core/exec/executor.h"

namespace fusebox::exec {

namespace {

class InterpretedExecutor final : public Executor {
 public:
  InterpretedExecutor(const Program& p, const planner::ExecutionPlan& plan)
      : program_(p), binding_(bind_arena(p, plan)) {}

  std::string name() const override { return "interpreted"; }

  void run(const void* const* inputs, void* const* outputs, ExecutionObserver* observer) override {
    Backend& backend = *program_.backend;
    binding_.copy_inputs(backend, inputs);
    const KernelTable& table = backend.kernels();
    const OpHooks hooks(observer, backend);
    for (size_t i = 0; i < program_.nodes.size(); ++i) {
      const PreparedNode& pn = program_.nodes[i];
      if (pn.view) continue;
      const ir::Node& node = *pn.node;
      hooks.begin(i);
      const KernelDef* kernel = table.find(node.op);  // lookup by op name
      ins_.clear();
      outs_.clear();
      for (const auto& t : node.inputs) ins_.push_back(binding_.address.at(t));  // lookup by tensor name
      for (const auto& t : node.outputs) outs_.push_back(binding_.address.at(t));
      kernel->run(KernelArgs{ins_.data(), outs_.data(), binding_.scratch[i], pn.state.get(), backend.context()});
      hooks.end(i);
    }
    backend.synchronize();
    binding_.copy_outputs(backend, outputs);
  }

 private:
  const Program& program_;
  ArenaBinding binding_;
  std::vector<const void*> ins_;
  std::vector<void*> outs_;
};

}  // namespace

std::unique_ptr<Executor> make_interpreted_executor(const Program& program,
                                                    const planner::ExecutionPlan& plan) {
  return std::make_unique<InterpretedExecutor>(program, plan);
}

}  // namespace fusebox::exec
