#include "core/exec/executor.h"

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::exec {

const Registry<ExecutorDef>& executors() {
  static const Registry<ExecutorDef> all = [] {
    Registry<ExecutorDef> r("executor");
    r.add({"eager", "allocates per op, dispatches by op name each run (as eager frameworks do)",
           [](const Program& program, const planner::ExecutionPlan&, const ExecutorOptions&) {
             return make_eager_executor(program);
           },
           /*keeps_to_plan=*/false});
    r.add({"interpreted", "one arena, dispatches by op name each run",
           [](const Program& program, const planner::ExecutionPlan& plan, const ExecutorOptions&) {
             return make_interpreted_executor(program, plan);
           }});
    r.add({"compiled", "one arena, kernels and pointers resolved once; can capture and replay",
           [](const Program& program, const planner::ExecutionPlan& plan, const ExecutorOptions& options) {
             return make_compiled_executor(
                 program, plan, options.capture && capture_unavailable_reason("compiled", *program.backend).empty());
           }});
    return r;
  }();
  return all;
}

std::unique_ptr<Executor> make_executor(const std::string& name, const Program& program,
                                        const planner::ExecutionPlan& plan, const ExecutorOptions& options) {
  if (const ExecutorDef* def = executors().find(name)) return def->make(program, plan, options);
  throw Error("unknown executor '" + name + "' (valid: " + join(executors().names(), ", ") + ")");
}

bool keeps_to_plan(const std::string& executor) {
  const ExecutorDef* def = executors().find(executor);
  return def && def->keeps_to_plan;
}

std::string capture_unavailable_reason(const std::string& executor, const Backend& backend) {
  if (!backend.caps().capture)
    return "backend '" + backend.name() + "' cannot capture a run (it has no graph capture)";
  if (executor != "compiled")
    return "the " + executor + " executor does not capture (only the compiled executor replays a captured run)";
  return "";
}

}  // namespace fusebox::exec
