// The compiled executor: every lookup resolved once into a flat array of kernel calls with bound
// pointers. A run copies the inputs in, walks the array, and copies the outputs out.
#include "core/exec/arena_binding.h"
#include "core/exec/executor.h"

namespace fusebox::exec {

namespace {

struct Step {
  KernelFn fn;
  KernelArgs args;
  size_t node_index;
};

class CompiledExecutor final : public Executor {
 public:
  CompiledExecutor(const Program& p, const planner::ExecutionPlan& plan)
      : program_(p), binding_(bind_arena(p, plan)) {
    // Pointer arrays live in two flat vectors sized up front, so Step::args can point into them.
    size_t n_in = 0, n_out = 0;
    for (const auto& pn : p.nodes)
      if (!pn.view) n_in += pn.node->inputs.size(), n_out += pn.node->outputs.size();
    in_ptrs_.reserve(n_in);
    out_ptrs_.reserve(n_out);
    for (size_t i = 0; i < p.nodes.size(); ++i) {
      const PreparedNode& pn = p.nodes[i];
      if (pn.view) continue;
      const void* const* ins = in_ptrs_.data() + in_ptrs_.size();
      for (const auto& t : pn.node->inputs) in_ptrs_.push_back(binding_.address.at(t));
      void* const* outs = out_ptrs_.data() + out_ptrs_.size();
      for (const auto& t : pn.node->outputs) out_ptrs_.push_back(binding_.address.at(t));
      steps_.push_back({pn.kernel->run, KernelArgs{ins, outs, binding_.scratch[i], pn.state.get()}, i});
    }
  }

  std::string name() const override { return "compiled"; }

  void run(const void* const* inputs, void* const* outputs, ExecutionObserver* observer) override {
    Backend& backend = *program_.backend;
    binding_.copy_inputs(backend, inputs);
    if (observer) {
      for (const Step& s : steps_) {
        observer->on_op_begin(s.node_index);
        s.fn(s.args);
        observer->on_op_end(s.node_index);
      }
    } else {
      for (const Step& s : steps_) s.fn(s.args);
    }
    backend.synchronize();
    binding_.copy_outputs(backend, outputs);
  }

 private:
  const Program& program_;
  ArenaBinding binding_;
  std::vector<const void*> in_ptrs_;
  std::vector<void*> out_ptrs_;
  std::vector<Step> steps_;
};

}  // namespace

std::unique_ptr<Executor> make_compiled_executor(const Program& program,
                                                 const planner::ExecutionPlan& plan) {
  return std::make_unique<CompiledExecutor>(program, plan);
}

}  // namespace fusebox::exec
