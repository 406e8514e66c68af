#pragma once
// Helpers the passes share: who produces and who reads each tensor, scalar constants, and the
// one way nodes get replaced by a fused node (so every pass keeps the same invariants).
#include <algorithm>
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

// The producer and readers of every tensor, kept up to date through each rewrite instead of
// rebuilt (rebuilding per rewrite made absorb_matmul and fuse_patterns quadratic), and the nodes
// removed so far, marked and erased all at once at the end so node indices stay stable. Reader
// lists stay sorted by node index with each node once, exactly as GraphUses builds them, so the
// rewrites and messages are the ones a rebuild would give.
class LiveUses {
 public:
  explicit LiveUses(const ir::Graph& g) : uses_(g), dead_(g.nodes.size(), false) {}

  const GraphUses& uses() const { return uses_; }
  bool dead(size_t node) const { return dead_[node]; }

  // Points input `slot` of `node` at `tensor`.
  void set_input(ir::Graph& g, size_t node, int slot, const std::string& tensor) {
    std::vector<std::string>& inputs = g.nodes[node].inputs;
    const std::string old = inputs[slot];
    inputs[slot] = tensor;
    if (std::find(inputs.begin(), inputs.end(), old) == inputs.end()) drop_reader(old, node);
    add_reader(tensor, node);
  }

  // `node` now writes `now` instead of `old` (which is gone from the graph).
  void replace_output(const std::string& old, const std::string& now, size_t node) {
    uses_.producer.erase(old);
    uses_.readers.erase(old);
    uses_.producer[now] = node;
  }

  // Marks `node` removed; its outputs leave the tensor registry unless `keep_outputs`.
  void remove(ir::Graph& g, size_t node, bool keep_outputs = false) {
    for (const auto& in : g.nodes[node].inputs) drop_reader(in, node);
    for (const auto& out : g.nodes[node].outputs) {
      auto p = uses_.producer.find(out);
      if (p != uses_.producer.end() && p->second == node) uses_.producer.erase(p);
      if (!keep_outputs) g.remove_tensor(out);
    }
    dead_[node] = true;
  }

  // replace_nodes (below) without moving a node: `fused` takes the place of the last of `nodes`
  // (sorted), the others are emptied (no name, so unique_name does not see them) and marked
  // removed, and the use lists follow.
  void replace_nodes(ir::Graph& g, const std::vector<size_t>& nodes, ir::Node fused) {
    const size_t last = nodes.back();
    fused.outputs = g.nodes[last].outputs;
    for (size_t k : nodes) {
      for (const auto& in : g.nodes[k].inputs) drop_reader(in, k);
      for (const auto& out : g.nodes[k].outputs) {
        if (std::find(fused.outputs.begin(), fused.outputs.end(), out) != fused.outputs.end())
          continue;
        g.remove_tensor(out);
        uses_.producer.erase(out);
        uses_.readers.erase(out);
      }
    }
    for (const auto& in : fused.inputs) add_reader(in, last);
    for (size_t k : nodes)
      if (k != last) g.nodes[k] = ir::Node{}, dead_[k] = true;
    g.nodes[last] = std::move(fused);
  }

  // Erases the removed nodes from the graph, keeping the order of the others.
  void compact(ir::Graph& g) const {
    size_t kept = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!dead_[i]) {
        if (kept != i) g.nodes[kept] = std::move(g.nodes[i]);
        ++kept;
      }
    g.nodes.resize(kept);
  }

 private:
  void drop_reader(const std::string& tensor, size_t node) {
    auto it = uses_.readers.find(tensor);
    if (it == uses_.readers.end()) return;
    std::vector<size_t>& r = it->second;
    auto at = std::lower_bound(r.begin(), r.end(), node);
    if (at != r.end() && *at == node) r.erase(at);
    if (r.empty()) uses_.readers.erase(it);
  }
  void add_reader(const std::string& tensor, size_t node) {
    std::vector<size_t>& r = uses_.readers[tensor];
    auto at = std::lower_bound(r.begin(), r.end(), node);
    if (at == r.end() || *at != node) r.insert(at, node);
  }

  GraphUses uses_;
  std::vector<bool> dead_;
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
// The same name before it is made unique: for a pass that keeps its own set of the names taken
// (Graph::unique_name scans every node, once per call).
std::string fused_node_base(const std::string& op, const ir::Node& first);
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
