// The eager executor: what an eager framework does for every op. It allocates the op's outputs
// (and scratch), looks up the kernel by name, prepares it again from the shapes and attributes,
// runs it, and frees each tensor after its last use. No plan, no arena: the baseline.
#include <unordered_map>

#include "core/base/error.h"
#include "core/exec/executor.h"

namespace fusebox::exec {

namespace {

class EagerExecutor final : public Executor {
 public:
  explicit EagerExecutor(const Program& p) : program_(p) {
    const ir::Graph& g = *p.graph;
    // Last step each tensor is read at (graph outputs: never freed during the run).
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (const auto& t : g.nodes[i].inputs) last_use_[t] = i;
    for (const auto& t : g.outputs) last_use_[t] = g.nodes.size();
  }

  std::string name() const override { return "eager"; }

  void run(const void* const* inputs, void* const* outputs, ExecutionObserver* observer) override {
    const ir::Graph& g = *program_.graph;
    Backend& backend = *program_.backend;
    const OpHooks hooks(observer, backend);
    std::unordered_map<std::string, std::shared_ptr<const void>> live;
    for (const auto& [name, ptr] : program_.weights) live[name] = std::shared_ptr<const void>(ptr, [](const void*) {});
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      if (!inputs[i])
        throw Error("input '" + g.inputs[i] + "': the eager executor allocates every tensor per run, so " +
                    "nothing stays from the last run; give its bytes (or plan: interpreted, compiled)");
      size_t bytes = g.tensor(g.inputs[i]).nbytes();
      std::shared_ptr<void> buf = backend.allocate(bytes);
      backend.copy_to_device(buf.get(), inputs[i], bytes);
      live[g.inputs[i]] = buf;
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& node = g.nodes[i];
      const PreparedNode& pn = program_.nodes[i];
      if (pn.view) {
        live[node.outputs[0]] = live.at(node.inputs[0]);  // shares the bytes: no work, no hook
      } else {
        hooks.begin(i);
        const KernelDef* kernel = backend.kernels().find(node.op);
        KernelContext ctx{node,          pn.inputs,         pn.outputs,       pn.scratch_bytes,
                          &pn.constants, backend.context(), &program_.options};
        std::shared_ptr<const void> state = kernel->prepare ? kernel->prepare(ctx) : nullptr;
        std::vector<const void*> ins;
        for (const auto& t : node.inputs) ins.push_back(live.at(t).get());
        std::vector<void*> outs;
        for (size_t k = 0; k < node.outputs.size(); ++k) {
          std::shared_ptr<void> buf = backend.allocate(pn.outputs[k].nbytes());
          outs.push_back(buf.get());
          live[node.outputs[k]] = buf;
        }
        std::shared_ptr<void> scratch = pn.scratch_bytes ? backend.allocate(pn.scratch_bytes) : nullptr;
        kernel->run(KernelArgs{ins.data(), outs.data(), scratch.get(), state.get(), backend.context()});
        hooks.end(i);
      }
      for (const auto& t : node.inputs) {
        auto it = last_use_.find(t);
        if (it != last_use_.end() && it->second == i && !g.is_weight(t)) live.erase(t);
      }
      for (const auto& t : node.outputs)
        if (!last_use_.count(t)) live.erase(t);  // never read (e.g. LayerNorm's unused Mean)
    }
    backend.synchronize();
    for (size_t i = 0; i < g.outputs.size(); ++i)
      if (outputs[i]) backend.copy_to_host(outputs[i], live.at(g.outputs[i]).get(), g.tensor(g.outputs[i]).nbytes());
  }

 private:
  const Program& program_;
  std::unordered_map<std::string, size_t> last_use_;
};

}  // namespace

std::unique_ptr<Executor> make_eager_executor(const Program& program) {
  return std::make_unique<EagerExecutor>(program);
}

}  // namespace fusebox::exec
