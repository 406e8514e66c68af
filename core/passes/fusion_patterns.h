#pragma once
// Fusion patterns for the fuse_patterns pass, kept in a registry so a new pattern is one file and
// one register call, not another branch in the pass.
//
// A pattern is anchored at its last node (the one whose output the fused node takes over) and
// matches backwards through producers. try_match only looks: it returns nothing when the structure
// is not there, a near miss when the structure is there but a condition fails (a constant has the
// wrong value, an axis is not the last, ...), or a FusionMatch describing the fused node. The pass
// does the rewrite the same way for every pattern (see replace_nodes in rewrite_utils.h), after
// checking that no intermediate escapes the pattern and that the fused node's shape inference
// gives the anchor's output type.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/registry.h"
#include "core/ir/graph.h"
#include "core/passes/rewrite_utils.h"

namespace fusebox::passes {

struct FusionMatch {
  std::vector<size_t> nodes;  // matched node indices; the anchor is the last in execution order
  std::string op;             // the fused node
  std::vector<std::string> inputs;
  ir::Attributes attrs;
  // Weights the fused node reads that do not exist yet (e.g. a scale reshaped to 1-D, sharing
  // storage with the original), added to the graph under these names before the rewrite.
  std::vector<std::pair<std::string, ir::Tensor>> new_weights;
  // What the rewrite line adds in parentheses after the fused node ("causal mask"); may be empty.
  std::string note;
};

struct MatchResult {
  std::optional<FusionMatch> match;
  std::string near_miss;  // non-empty: the structure matched but this condition failed

  static MatchResult none() { return {}; }
  static MatchResult miss(std::string why) { return {std::nullopt, std::move(why)}; }
  static MatchResult found(FusionMatch m) { return {std::move(m), {}}; }
};

using TryMatchFn = std::function<MatchResult(const ir::Graph&, const GraphUses&, size_t anchor)>;

struct FusionPattern {
  std::string name;         // "matmul_add"
  std::string description;  // one line: "MatMul + Add -> MatMulAdd"
  std::string anchor_op;    // op of the pattern's last node; try_match only sees those
  TryMatchFn try_match;
};

// The patterns in the order they are tried (core/base/registry.h); the builtin ones are
// registered on first use, in order.
class FusionRegistry : public Registry<FusionPattern> {
 public:
  FusionRegistry() : Registry("fusion pattern") {}
  static FusionRegistry& instance();
};

inline void register_fusion(FusionPattern pattern) {
  FusionRegistry::instance().add(std::move(pattern));
}

// Matching helpers.
// For a binary node, the operand produced by a node of `op`: (producer index, other operand).
// Tries operand 0 first. Empty when neither operand comes from `op`.
std::vector<std::pair<size_t, std::string>> operands_from(const GraphUses& uses,
                                                          const ir::Node& node,
                                                          const std::string& op);
// Why `tensor` is not the scalar `want` ("Mul_9 multiplies by 0.4, expected 0.5"), or "" when it
// is.
std::string check_scalar(const ir::Graph& g, const std::string& tensor, double want,
                         const std::string& what);

}  // namespace fusebox::passes
