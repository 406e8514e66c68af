#pragma once
// Executors: three ways to run the same Program, from the slowest dispatch to the fastest.
//  - eager:       like an eager framework. Each op allocates its outputs, looks up its kernel
//                 by name and prepares it again (shapes, strides), then frees what died.
//  - interpreted: planned arena. Each op still looks up its kernel and its tensors by name.
//  - compiled:    every lookup done once: a flat array of (kernel, bound pointers); a run is
//                 one loop. No allocation during a run.
// Their difference is the dispatch overhead the workbench teaches. All three call the observer's
// op hooks for the same nodes: every node with a kernel (views do no work and get no hook).
#include <memory>
#include <string>
#include <vector>

#include "core/exec/observer.h"
#include "core/exec/program.h"
#include "core/planner/plan.h"

namespace fusebox::exec {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;
  // Host pointers, one per graph input / output, in graph order. Sizes come from the graph.
  virtual void run(const void* const* inputs, void* const* outputs, ExecutionObserver* observer) = 0;
};

std::vector<std::string> executor_names();  // eager, interpreted, compiled
// Binds `plan` (made for program.graph) to the program: the interpreted and compiled executors
// allocate its arena now; the eager one ignores it (it allocates per op, as eager frameworks do).
// Both must outlive the executor. Throws fusebox::Error for an unknown name (listing the valid
// ones).
std::unique_ptr<Executor> make_executor(const std::string& name, const Program& program,
                                        const planner::ExecutionPlan& plan);

std::unique_ptr<Executor> make_eager_executor(const Program& program);
std::unique_ptr<Executor> make_interpreted_executor(const Program& program, const planner::ExecutionPlan& plan);
std::unique_ptr<Executor> make_compiled_executor(const Program& program, const planner::ExecutionPlan& plan);

}  // namespace fusebox::exec
