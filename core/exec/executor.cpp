#include "core/exec/executor.h"

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::exec {

std::vector<std::string> executor_names() { return {"eager", "interpreted", "compiled"}; }

std::unique_ptr<Executor> make_executor(const std::string& name, const Program& program,
                                        const planner::ExecutionPlan& plan) {
  if (name == "eager") return make_eager_executor(program);
  if (name == "interpreted") return make_interpreted_executor(program, plan);
  if (name == "compiled") return make_compiled_executor(program, plan);
  throw Error("unknown executor '" + name + "' (valid: " + join(executor_names(), ", ") + ")");
}

}  // namespace fusebox::exec
