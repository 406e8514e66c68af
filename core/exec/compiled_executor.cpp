// The compiled executor: every lookup resolved once into a flat array of kernel calls with bound
// pointers. A run copies the inputs in, walks the array, and copies the outputs out. With
// capture on, the first run's walk is captured by the backend and later runs replay it.
#include "core/base/error.h"
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
  CompiledExecutor(const Program& p, const planner::ExecutionPlan& plan, bool capture)
      : program_(p),
        binding_(bind_arena(p, plan)),
        capture_(capture) {
    const ExecContext* context = p.backend->context();
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
      steps_.push_back({pn.kernel->run, KernelArgs{ins, outs, binding_.scratch[i], pn.state.get(), context}, i});
    }
  }

  std::string name() const override { return "compiled"; }
  bool captures() const override { return capture_; }
  std::string captured() const override { return captured_ ? captured_->describe() : ""; }

  void run(const void* const* inputs, void* const* outputs, ExecutionObserver* observer) override {
    Backend& backend = *program_.backend;
    binding_.copy_inputs(backend, inputs);
    if (captured_) {
      captured_->replay();
    } else if (capture_) {
      // The captured kernels read and write the arena's fixed addresses, so replaying them after
      // copying new inputs into the same places is the same run. One eager run comes first, so
      // that what libraries and lazily loaded kernels set up on first use (cuBLAS, CUDA modules)
      // is not first done inside the capture; it may reuse the inputs' arena space, so the
      // inputs are copied in again.
      walk(backend, nullptr);  // not observed: a recording sees the run once
      backend.synchronize();
      binding_.copy_inputs(backend, inputs);
      backend.begin_capture();
      try {
        walk(backend, observer);
      } catch (...) {
        backend.end_capture();  // leave the backend out of capture mode; nothing is kept
        throw;
      }
      captured_ = backend.end_capture();
      if (!captured_) throw Error("backend '" + backend.name() + "' captured nothing");
      captured_->replay();
    } else {
      walk(backend, observer);
    }
    backend.synchronize();
    binding_.copy_outputs(backend, outputs);
  }

 private:
  // One pass over the steps. The plain loop (no observer, a backend that wants no op events) has
  // no hook in it.
  void walk(Backend& backend, ExecutionObserver* observer) const {
    const OpHooks hooks(observer, backend);
    if (hooks.any()) {
      for (const Step& s : steps_) {
        hooks.begin(s.node_index);
        s.fn(s.args);
        hooks.end(s.node_index);
      }
    } else {
      for (const Step& s : steps_) s.fn(s.args);
    }
  }

  const Program& program_;
  ArenaBinding binding_;
  const bool capture_;
  std::unique_ptr<CapturedRun> captured_;
  std::vector<const void*> in_ptrs_;
  std::vector<void*> out_ptrs_;
  std::vector<Step> steps_;
};

}  // namespace

std::unique_ptr<Executor> make_compiled_executor(const Program& program,
                                                 const planner::ExecutionPlan& plan, bool capture) {
  if (capture && !program.backend->caps().capture)
    throw Error("capture asked of backend '" + program.backend->name() + "', which cannot capture a run");
  return std::make_unique<CompiledExecutor>(program, plan, capture);
}

}  // namespace fusebox::exec
