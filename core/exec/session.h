#pragma once
// Session: takes a model graph down the pipeline once, then runs it as often as asked.
//   graph -> passes (each on/off) -> planner (strategy by name) -> Program (kernels prepared,
//   weights uploaded) -> executor (eager | interpreted | compiled) -> run(inputs) -> outputs
#include <memory>
#include <string>
#include <vector>

#include "core/exec/backend.h"
#include "core/exec/executor.h"
#include "core/exec/observer.h"
#include "core/exec/program.h"
#include "core/ir/graph.h"
#include "core/passes/pass_manager.h"
#include "core/planner/plan.h"

namespace fusebox::exec {

struct SessionOptions {
  std::string backend = "cpu";
  std::string executor = "compiled";
  int threads = 1;
  std::string passes = "all";  // "all", "none" or "absorb_matmul,dce"
  std::string planner = "greedy_by_size";
  ExecutionObserver* observer = nullptr;  // sees the stages and every run
};

struct StageTime {
  std::string name;  // "verify", "pass fuse_patterns", "plan", "compile"
  double millis = 0;
};

class Session {
 public:
  // Throws fusebox::Error for bad options (unknown executor, planner, pass, backend, threads < 1)
  // and for graphs the backend cannot run.
  Session(ir::Graph model, SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Inputs in graph().inputs order; checks count, dtype and shape (errors name the input).
  std::vector<ir::Tensor> run(const std::vector<ir::Tensor>& inputs);
  // The allocation-free path: host pointers in graph order, no checks. For benchmarks.
  void run_raw(const void* const* inputs, void* const* outputs);

  const ir::Graph& original_graph() const { return original_; }
  const ir::Graph& graph() const { return graph_; }
  const passes::PassLog& pass_log() const { return pass_log_; }
  const planner::ExecutionPlan& plan() const { return plan_; }
  Backend& backend() { return *backend_; }
  const Executor& executor() const { return *executor_; }
  const SessionOptions& options() const { return options_; }
  const std::vector<StageTime>& stages() const { return stages_; }
  int64_t runs() const { return runs_; }
  void set_observer(ExecutionObserver* observer) { options_.observer = observer; }

 private:
  SessionOptions options_;
  ir::Graph original_;
  ir::Graph graph_;
  std::unique_ptr<Backend> backend_;
  passes::PassLog pass_log_;
  planner::ExecutionPlan plan_;
  Program program_;
  std::unique_ptr<Executor> executor_;
  std::vector<StageTime> stages_;
  int64_t runs_ = 0;
};

}  // namespace fusebox::exec
