#pragma once
// The pass manager: a registry of graph passes in pipeline order, the parser for pass toggles
// ("all", "none", "absorb_matmul,dce") and run_pipeline, which runs the enabled passes, verifies
// the graph after each one, times it and keeps a snapshot of the graph whenever a pass changed it.
//
// A pass rewrites the graph in place and says what it did, as data: each Rewrite names the nodes
// it removed, added and edited, and the sentence ("fused MatMul_3 + Add_4 + Relu_5 ->
// FusedBiasRelu_3"); each NearMiss names the node it stopped at and why something that almost
// matched was left alone ("Mul_12 operand is not a scalar constant"). Front ends light up exactly
// those nodes.
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/observer.h"
#include "core/base/registry.h"
#include "core/ir/graph.h"

namespace fusebox::passes {

struct PassContext {
  // Backend that evaluates nodes on host tensors (constant folding). When null, constant_fold
  // does nothing and says so in the log.
  const exec::Backend* evaluator = nullptr;
  // The backend the graph will run on. A rewrite that would create an op it does not support()
  // is not done and becomes a near miss saying so. When null, every rewrite is allowed.
  const exec::Backend* target = nullptr;
  // Told "pass <name>" around each enabled pass (the profiler turns these into NVTX ranges).
  exec::ExecutionObserver* observer = nullptr;
  // Fusion patterns fuse_patterns skips: no rewrite, no near miss (FusionRegistry names;
  // run_pipeline rejects others).
  std::set<std::string> disabled_patterns;
};

// One rewrite a pass made, as data: which nodes went, which came, which were edited in place. A
// node renamed counts as removed and added.
struct Rewrite {
  // The fusion pattern ("bias_relu", "attention", ...) or, for other passes, the kind of rewrite
  // ("transpose_to_flag", "scale_to_alpha", "fold", "remove_node", ...): short, stable snake_case.
  std::string pattern;
  std::vector<std::string> removed;  // names of nodes no longer in the graph
  std::vector<std::string> added;    // names of nodes new in the graph
  std::vector<std::string> changed;  // names of nodes kept but edited (the MatMul given transB)
  std::string text;                  // the sentence --explain prints
};

// Something that almost matched, and why it was left alone.
struct NearMiss {
  std::string pattern;  // as Rewrite::pattern
  std::string node;     // the node it stopped at, in the graph the pass saw; "" when there is none
  std::string text;     // the sentence --explain prints
};

struct PassResult {
  bool changed = false;
  std::vector<Rewrite> rewrites;
  std::vector<NearMiss> near_misses;

  void rewrite(std::string pattern, std::vector<std::string> removed,
               std::vector<std::string> added, std::vector<std::string> changed_nodes,
               std::string text) {
    rewrites.push_back({std::move(pattern), std::move(removed), std::move(added),
                        std::move(changed_nodes), std::move(text)});
  }
  // Records a near miss. A pass may meet one again: the log keeps each text once (run_passes).
  void near_miss(std::string pattern, std::string node, std::string text);
};

// Why the target backend cannot run `op` on inputs of these types, as the end of a near-miss
// sentence ("backend 'x' does not support Attention on f32[2,4,8], f32[2,4,8]"); "" when it can
// or there is no target.
std::string target_refuses(const PassContext& ctx, const std::string& op,
                           const std::vector<ir::TensorType>& inputs);


using PassFn = std::function<PassResult(ir::Graph&, const PassContext&)>;

struct PassInfo {
  std::string name;
  std::string description;  // one line
  PassFn run;
  bool to_fixed_point = false;  // rerun while it changes something (capped)
};

// The passes in pipeline order (core/base/registry.h: add appends, the same name replaces in
// place). The builtin passes are registered on first use (explicit calls, not static
// initializers, which static libraries drop).
class PassRegistry : public Registry<PassInfo> {
 public:
  PassRegistry() : Registry("pass") {}
  static PassRegistry& instance();
};

struct PassLogEntry {
  std::string pass;
  bool enabled = false;
  bool changed = false;
  size_t nodes_before = 0, nodes_after = 0;
  double millis = 0;
  std::vector<Rewrite> rewrites;
  std::vector<NearMiss> near_misses;
  std::optional<ir::Graph> snapshot;  // graph after the pass, only when changed
};

struct PassLog {
  std::vector<PassLogEntry> entries;
  std::string to_text() const;  // the --explain printout
};

// "all" | "none" | "absorb_matmul,dce": the enabled pass names in pipeline order. Throws
// fusebox::Error "unknown pass 'x' (valid: absorb_matmul, constant_fold, ...)" for a bad or
// empty entry.
std::vector<std::string> parse_pass_list(const std::string& text);

// Runs the registered passes in pipeline order, each only if its name is in `enabled` (disabled
// ones get an entry with enabled=false). Passes marked to_fixed_point rerun while they change
// something, at most kMaxFixedPointIterations times. The graph is verified after each pass; a
// failure there is an internal error and throws fusebox::Error naming the pass.
inline constexpr int kMaxFixedPointIterations = 10;
PassLog run_pipeline(ir::Graph& graph, const std::vector<std::string>& enabled,
                     const PassContext& ctx);

}  // namespace fusebox::passes
