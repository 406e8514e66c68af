#pragma once
// Executors: three ways to run the same Program, from the slowest dispatch to the fastest.
//  - eager:       like an eager framework. Each op allocates its outputs, looks up its kernel
//                 by name and prepares it again (shapes, strides), then frees what died.
//  - interpreted: planned arena. Each op still looks up its kernel and its tensors by name.
//  - compiled:    every lookup done once: a flat array of (kernel, bound pointers); a run is
//                 one loop. No allocation during a run.
// Their difference is the dispatch overhead the workbench teaches. All three announce the same
// nodes through OpHooks (every node with a kernel: views do no work and get no hook), and every
// kernel gets the backend's execution context (KernelArgs::context).
//
// Capture (ExecutorOptions::capture): the compiled executor, on a backend whose caps().capture,
// records its first run as one captured run (a CUDA graph) and replays it on every later run.
// A replayed run launches no kernel itself, so it calls no op hook or op event.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/observer.h"
#include "core/base/registry.h"
#include "core/exec/program.h"
#include "core/planner/plan.h"

namespace fusebox::exec {

// Where an executor announces each op it runs: the run's observer (profiler spans, NVTX ranges)
// and the backend, when it wants op events (BackendCaps::op_events: CUPTI correlation). The
// backend's hooks nest inside the observer's, so its records fall inside the op's span.
struct OpHooks {
  ExecutionObserver* observer = nullptr;
  Backend* backend = nullptr;  // null unless it wants op events
  OpHooks(ExecutionObserver* o, Backend& b) : observer(o), backend(b.caps().op_events ? &b : nullptr) {}
  bool any() const { return observer || backend; }
  void begin(size_t node_index) const {
    if (observer) observer->on_op_begin(node_index);
    if (backend) backend->on_op_begin(node_index);
  }
  void end(size_t node_index) const {
    if (backend) backend->on_op_end(node_index);
    if (observer) observer->on_op_end(node_index);
  }
};

struct ExecutorOptions {
  bool capture = false;  // capture one run and replay it (see capture_unavailable_reason)
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;
  // Whether runs are captured once and replayed (only the compiled executor, only when asked
  // and the backend can).
  virtual bool captures() const { return false; }
  // What the captured run is, once one was captured ("a CUDA graph of 42 nodes"); "" before.
  virtual std::string captured() const { return ""; }
  // Host pointers, one per graph input / output, in graph order. Sizes come from the graph.
  // A null output is not copied out. A null input is not copied in: the planned executors then
  // read what the last run left at its arena place (state kept between runs, such as a KV cache
  // the planner writes in place over its input); the eager one keeps nothing and refuses it.
  virtual void run(const void* const* inputs, void* const* outputs, ExecutionObserver* observer) = 0;
};

// The executors by name (core/base/registry.h), in the order the window offers them.
struct ExecutorDef {
  std::string name;         // "compiled"
  std::string description;  // one line
  std::function<std::unique_ptr<Executor>(const Program&, const planner::ExecutionPlan&, const ExecutorOptions&)> make;
  // It runs in the plan's arena, so the plan's places hold: an update the planner writes in place
  // is written there, and the arena keeps its bytes between runs. The eager one allocates per op.
  bool keeps_to_plan = true;
};
const Registry<ExecutorDef>& executors();  // eager, interpreted, compiled
// executors()' keeps_to_plan for `name`; false for a name it does not know.
bool keeps_to_plan(const std::string& executor);
// Binds `plan` (made for program.graph) to the program: the interpreted and compiled executors
// allocate its arena now; the eager one ignores it (it allocates per op, as eager frameworks do).
// Both must outlive the executor. Throws fusebox::Error for an unknown name (listing the valid
// ones).
std::unique_ptr<Executor> make_executor(const std::string& name, const Program& program,
                                        const planner::ExecutionPlan& plan, const ExecutorOptions& options = {});

// Why capture does not apply to `executor` on `backend` ("" when it does): the sentence a front
// end shows for a capture setting that asks for it, e.g. "backend 'cpu' cannot capture a run".
std::string capture_unavailable_reason(const std::string& executor, const Backend& backend);

std::unique_ptr<Executor> make_eager_executor(const Program& program);
std::unique_ptr<Executor> make_interpreted_executor(const Program& program, const planner::ExecutionPlan& plan);
std::unique_ptr<Executor> make_compiled_executor(const Program& program, const planner::ExecutionPlan& plan,
                                                 bool capture = false);

}  // namespace fusebox::exec
