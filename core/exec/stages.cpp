#include "core/exec/stages.h"

#include "core/base/error.h"
#include "core/exec/program.h"
#include "core/ir/verifier.h"

namespace fusebox::exec {

namespace {

// Tells the observer about a stage around `fn`.
template <typename Fn>
auto observed(ExecutionObserver* observer, const std::string& stage, Fn&& fn) {
  if (observer) observer->on_stage_begin(stage);
  auto result = fn();
  if (observer) observer->on_stage_end(stage);
  return result;
}

}  // namespace

std::shared_ptr<const OptimizedGraph> optimize(const ir::Graph& model, const OptimizeOptions& options) {
  observed(options.observer, "verify", [&] {
    ir::verify(model);
    return 0;
  });
  auto out = std::make_shared<OptimizedGraph>();
  out->graph = model;
  passes::PassContext ctx;
  ctx.evaluator = options.evaluator;
  ctx.target = options.target;
  ctx.observer = options.observer;
  ctx.disabled_patterns = options.disabled_patterns;
  out->log = passes::run_pipeline(out->graph, options.passes, ctx);
  return out;
}

planner::MemoryRules memory_rules(const Backend& backend) {
  planner::MemoryRules rules;
  rules.alignment = backend.alignment();
  rules.scratch = [&backend](const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                             const std::vector<ir::TensorType>& outputs) {
    return backend.scratch_bytes(KernelContext{node, inputs, outputs});
  };
  return rules;
}

planner::MemoryRules memory_rules(const Backend& backend, const ir::Graph& graph) {
  planner::MemoryRules rules = memory_rules(backend);
  rules.scratch = [&backend, &graph](const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                                     const std::vector<ir::TensorType>& outputs) {
    const std::vector<const ir::Tensor*> constants = constants_of(graph, node);
    return backend.scratch_bytes(KernelContext{node, inputs, outputs, 0, &constants});
  };
  return rules;
}

std::shared_ptr<const planner::ExecutionPlan> plan_memory(const OptimizedGraph& optimized,
                                                         const std::string& strategy, const Backend& backend) {
  return std::make_shared<const planner::ExecutionPlan>(
      planner::make_plan(optimized.graph, strategy, memory_rules(backend, optimized.graph)));
}

std::shared_ptr<const Compiled> compile(std::shared_ptr<const OptimizedGraph> optimized, Backend& backend,
                                        const CompileOptions& options) {
  auto out = std::make_shared<Compiled>();
  out->optimized = std::move(optimized);
  out->program = build_program(out->optimized->graph, backend, options);
  return out;
}

std::unique_ptr<Bound> bind_executor(std::shared_ptr<const Compiled> compiled,
                                     std::shared_ptr<const planner::ExecutionPlan> plan, const std::string& executor,
                                     const ExecutorOptions& options) {
  auto out = std::make_unique<Bound>();
  out->compiled = std::move(compiled);
  out->plan = std::move(plan);
  if (out->compiled->program.backend && out->plan->alignment % out->compiled->program.backend->alignment() != 0)
    throw Error("the plan was made for " + std::to_string(out->plan->alignment) + "-byte alignment, backend '" +
                out->compiled->program.backend->name() + "' needs " +
                std::to_string(out->compiled->program.backend->alignment()));
  out->executor = make_executor(executor, out->compiled->program, *out->plan, options);
  return out;
}

}  // namespace fusebox::exec
