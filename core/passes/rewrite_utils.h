#pragma once
// Helpers the passes share: who produces and who reads each tensor, scalar constants, and the
// one way nodes get replaced by a fused node (so every pass keeps the same invariants).
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox::passes {

// Producer and readers of every tensor, computed once; rebuild after changing the graph.
struct GraphUses {
  explicit GraphUses(const ir::Graph& g);

  const ir::Graph& graph;
  std::unordered_map<std::string, size_t> producer;
  std::unordered_map<std::string, std::vector<size_t>> readers;  // node indices, each once

  // The node producing `tensor` when its op is `op`; nullopt otherwise (input, weight, other op).
  std::optional<size_t> produced_by(const std::string& tensor, const std::string& op) const;
  const std::vector<size_t>& readers_of(const std::string& tensor) const;
  // Whether `tensor` is read by `node` alone and is not a graph output.
  bool only_read_by(const std::string& tensor, size_t node) const;
  // "read by Add_9 and Mul_12" / "a graph output": why `tensor` cannot disappear into `node`.
  std::string other_uses(const std::string& tensor, size_t node) const;
};

// The value of a weight holding exactly one element (f32 or i64); nullopt otherwise.
std::optional<double> scalar_constant(const ir::Graph& g, const std::string& tensor);
// Whether `value` is within 1e-4 of `want` (constants exported by frameworks are rounded).
bool near(double value, double want);
// Short numbers for logs: 0.125, 0.353553, 8.
std::string fmt_num(double value);
// "[0,2,1,3]"
std::string fmt_ints(const std::vector<int64_t>& values);

// Name for a node fusing `first` and the nodes after it, unique in the graph:
// "MatMul_3" -> "FusedBiasRelu_3", "fc1.MatMul" -> "fc1.MatMulAdd",
// "/attn/MatMul_1" -> "/attn/Attention_1", "/fc/Gemm_MatMul" -> "/fc/Gemm_MatMulAdd", "x" ->
// "Gelu_x".
std::string fused_node_name(const ir::Graph& g, const std::string& op, const ir::Node& first);
// "MatMul_3 + Add_4 + Relu_5": the names of `nodes` in execution order.
std::string node_list(const ir::Graph& g, std::vector<size_t> nodes);

// Replaces `nodes` (indices into g.nodes) by `fused`, which takes over the output tensors of the
// last of them in execution order (fused.outputs is filled in here) and is placed where that last
// node was. That position is always valid: every input of the fused node was read by one of the
// replaced nodes, so it is defined before the last one, and every reader of the output comes
// after it. The caller guarantees the other outputs of `nodes` are read only inside `nodes`;
// they are removed from the tensor registry. Returns the fused node's index.
size_t replace_nodes(ir::Graph& g, std::vector<size_t> nodes, ir::Node fused);

// Removes the node at `index`; its outputs are removed from the tensor registry unless
// `keep_outputs`.
void remove_node(ir::Graph& g, size_t index, bool keep_outputs = false);

}  // namespace fusebox::passes
