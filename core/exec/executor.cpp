#include "core/exec/executor.h"

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::exec {

std::vector<std::string> executor_names() { return {"eager", "interpreted", "compiled"}; }

std::unique_ptr<Executor> make_executor(const std::string& name, const Program& program,
                                        const planner::ExecutionPlan& plan, const ExecutorOptions& options) {
  if (name == "eager") return make_eager_executor(program);
  if (name == "interpreted") return make_interpreted_executor(program, plan);
  if (name == "compiled")
    return make_compiled_executor(program, plan,
                                  options.capture && capture_unavailable_reason(name, *program.backend).empty());
  throw Error("unknown executor '" + name + "' (valid: " + join(executor_names(), ", ") + ")");
}

std::string capture_unavailable_reason(const std::string& executor, const Backend& backend) {
  if (!backend.can_capture())
    return "backend '" + backend.name() + "' cannot capture a run (it has no graph capture)";
  if (executor != "compiled")
    return "the " + executor + " executor does not capture (only the compiled executor replays a captured run)";
  return "";
}

}  // namespace fusebox::exec
