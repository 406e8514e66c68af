#pragma once
// The pipeline's stages as functions from one immutable result to the next. Session runs them
// once; the workbench runs them with each result cached on the settings that feed it, so a flip
// re-runs only what is downstream of it.
//
//   model Graph --optimize--> OptimizedGraph --plan_memory--> ExecutionPlan ---+
//                                   |                                          +--> bind_executor
//                                   +---------compile (backend)--> Compiled ---+
//
// Planning and compiling both read only the optimized graph: a planner flip keeps the prepared
// kernels (and the weights they packed), and an executor flip keeps both.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/exec/executor.h"
#include "core/backend/observer.h"
#include "core/exec/program.h"
#include "core/ir/graph.h"
#include "core/passes/pass_manager.h"
#include "core/planner/plan.h"

namespace fusebox::exec {

struct OptimizeOptions {
  std::vector<std::string> passes;           // enabled pass names (passes::parse_pass_list)
  std::set<std::string> disabled_patterns;   // fusion patterns fuse_patterns skips
  // Evaluates constant folding: always a CPU backend, whatever the target (a device backend
  // would be handed host pointers); evaluate_node refuses any other.
  const Backend* evaluator = nullptr;
  // The backend the graph will run on: passes ask it supports() before creating an op. Null:
  // no backend asked (every rewrite allowed), for tools that only look at graphs.
  const Backend* target = nullptr;
  ExecutionObserver* observer = nullptr;     // hears "verify" and "pass <name>"
};

struct OptimizedGraph {
  ir::Graph graph;       // after the enabled passes
  passes::PassLog log;   // one entry per registered pass, snapshots where one changed the graph
};

// Verifies `model`, then runs the enabled passes on a copy. Throws fusebox::Error for an invalid
// model, an unknown pass or pattern, or a pass that broke the graph.
std::shared_ptr<const OptimizedGraph> optimize(const ir::Graph& model, const OptimizeOptions& options);

// The planner's rules from the backend that will run the plan: its alignment and its kernels'
// scratch sizes. Holds a reference to `backend`: use it while the backend lives. With `graph` the
// scratch is asked with the node's weights as constants, as build_program asks it (a kernel that
// packs a constant weight in prepare needs no room for it); `graph` must outlive the rules too.
planner::MemoryRules memory_rules(const Backend& backend);
planner::MemoryRules memory_rules(const Backend& backend, const ir::Graph& graph);

// The memory plan of the optimized graph with the named strategy (or planner::kBestPlanner), for
// `backend` (memory_rules).
std::shared_ptr<const planner::ExecutionPlan> plan_memory(const OptimizedGraph& optimized,
                                                         const std::string& strategy, const Backend& backend);

// Kernels prepared with `options` and weights uploaded on `backend`; holds the optimized graph
// it points into. The options are an argument: compiling changes nothing in the backend, so two
// programs on one backend may run at different levels or precisions (program.options says which).
struct Compiled {
  std::shared_ptr<const OptimizedGraph> optimized;
  Program program;
};
std::shared_ptr<const Compiled> compile(std::shared_ptr<const OptimizedGraph> optimized, Backend& backend,
                                        const CompileOptions& options = {});

// An executor over a compiled program and a plan of the same optimized graph; holds both.
struct Bound {
  std::shared_ptr<const Compiled> compiled;
  std::shared_ptr<const planner::ExecutionPlan> plan;
  std::unique_ptr<Executor> executor;
};
std::unique_ptr<Bound> bind_executor(std::shared_ptr<const Compiled> compiled,
                                     std::shared_ptr<const planner::ExecutionPlan> plan, const std::string& executor,
                                     const ExecutorOptions& options = {});

}  // namespace fusebox::exec
