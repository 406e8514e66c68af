#pragma once
// Session: takes a model graph down the pipeline once (core/exec/stages.h), then runs it as often
// as asked.
//   graph -> optimize (passes, each on/off) -> plan_memory (strategy by name)
//         -> compile (kernels prepared, weights uploaded) -> bind (executor: eager | interpreted |
//            compiled) -> run(inputs) -> outputs
// The workbench runs the same stages with each result cached; a Session is the one-shot form
// tests, benchmarks and peers use.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/exec/executor.h"
#include "core/backend/observer.h"
#include "core/exec/program.h"
#include "core/exec/stages.h"
#include "core/ir/graph.h"
#include "core/passes/pass_manager.h"
#include "core/planner/plan.h"

namespace fusebox::exec {

struct SessionOptions {
  std::string backend = "cpu";
  std::string executor = "compiled";
  int threads = 1;
  // Instruction-set level of the backend's kernels (CompileOptions::isa): "auto" | "avx512" |
  // "avx2" | "portable" on the CPU.
  std::string isa = "auto";
  // Float GEMM precision (CompileOptions::precision): "fp32" | "tf32" (refused where the backend
  // has no TF32, as on the CPU).
  std::string precision = "fp32";
  // The MatMul family's GEMMs (CompileOptions::gemm): "auto" | "blas" (refused where the backend
  // has one path, as on CUDA).
  std::string gemm = "auto";
  std::string passes = "all";  // "all", "none" or "absorb_matmul,dce"
  std::set<std::string> disabled_patterns;  // fusion patterns fuse_patterns skips
  std::string planner = "greedy_by_size";
  // Capture one run on the backend and replay it (CUDA graphs): only the compiled executor on a
  // backend that can capture; elsewhere capture_note() says why it does not apply.
  bool capture = false;
  ExecutionObserver* observer = nullptr;  // sees the stages and every run
};

struct StageTime {
  std::string name;  // "optimize", "plan", "compile", "bind"
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

  // Runs on the calling thread with options().threads kernel threads (bound at each run).
  // Inputs in graph().inputs order; checks count, dtype and shape (errors name the input).
  std::vector<ir::Tensor> run(const std::vector<ir::Tensor>& inputs);
  // The allocation-free path: host pointers in graph order, no checks. For benchmarks, and for
  // state kept in the arena between runs: a null pointer copies nothing (Executor::run).
  void run_raw(const void* const* inputs, void* const* outputs);

  const ir::Graph& original_graph() const { return original_; }
  const ir::Graph& graph() const { return optimized_->graph; }
  const passes::PassLog& pass_log() const { return optimized_->log; }
  const planner::ExecutionPlan& plan() const { return *plan_; }
  Backend& backend() { return *backend_; }
  const Executor& executor() const { return *bound_->executor; }
  const SessionOptions& options() const { return options_; }
  const std::vector<StageTime>& stages() const { return stages_; }
  int64_t runs() const { return runs_; }
  // Why options().capture does not apply here ("" when it is off or applies).
  const std::string& capture_note() const { return capture_note_; }
  void set_observer(ExecutionObserver* observer) { options_.observer = observer; }
  // The kernel threads of the runs from now on (nothing is prepared per thread count: the same
  // plan and kernels run at any). Throws fusebox::Error for threads < 1.
  void set_threads(int threads);

 private:
  SessionOptions options_;
  ir::Graph original_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Backend> cpu_evaluator_;  // constant folding, when the backend is not the CPU
  std::shared_ptr<const OptimizedGraph> optimized_;
  std::shared_ptr<const planner::ExecutionPlan> plan_;
  std::unique_ptr<Bound> bound_;
  std::vector<StageTime> stages_;
  int64_t runs_ = 0;
  std::string capture_note_;
};

}  // namespace fusebox::exec
