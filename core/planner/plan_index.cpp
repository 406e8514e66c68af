#include "core/planner/plan_index.h"

#include <algorithm>

namespace fusebox::planner {

namespace {

// Nodes are visited in order, so a node already in a buffer's list is its last entry (a search of
// the whole list made a Sum of 100,000 inputs quadratic).
void add_node(std::vector<int>& v, int node) {
  if (v.empty() || v.back() != node) v.push_back(node);
}

}  // namespace

PlanIndex index_plan(const ir::Graph& graph, const ExecutionPlan& plan) {
  PlanIndex ix;
  ix.buffers.resize(plan.placements.size());
  ix.buffers_of_node.resize(graph.nodes.size());
  std::unordered_map<std::string, int> by_name;  // non-scratch buffer name (its tensor) -> placement
  for (size_t b = 0; b < plan.placements.size(); ++b) {
    const Buffer& buf = plan.placements[b].buffer;
    if (buf.scratch) {
      ix.buffers[b].producers.push_back(buf.step_of_scratch);
      if (buf.step_of_scratch >= 0 && static_cast<size_t>(buf.step_of_scratch) < graph.nodes.size())
        ix.buffers_of_node[static_cast<size_t>(buf.step_of_scratch)].push_back(static_cast<int>(b));
    } else {
      by_name[buf.name] = static_cast<int>(b);
    }
  }
  // Every arena tensor belongs to the buffer of its root (itself, or what it is a view of).
  for (const auto& [tensor, loc] : plan.locations) {
    if (loc.storage != Storage::Arena) continue;
    auto it = by_name.find(loc.root);
    if (it == by_name.end()) continue;
    ix.buffer_of_tensor[tensor] = it->second;
    ix.buffers[static_cast<size_t>(it->second)].tensors.push_back(tensor);
  }
  for (auto& use : ix.buffers) std::sort(use.tensors.begin(), use.tensors.end());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const int node = static_cast<int>(n);
    for (const auto& out : graph.nodes[n].outputs) {
      auto it = ix.buffer_of_tensor.find(out);
      if (it == ix.buffer_of_tensor.end()) continue;
      add_node(ix.buffers[static_cast<size_t>(it->second)].producers, node);
      ix.buffers_of_node[n].push_back(it->second);
    }
    for (const auto& in : graph.nodes[n].inputs) {
      auto it = ix.buffer_of_tensor.find(in);
      if (it == ix.buffer_of_tensor.end()) continue;
      add_node(ix.buffers[static_cast<size_t>(it->second)].consumers, node);
      ix.buffers_of_node[n].push_back(it->second);
    }
  }
  for (auto& v : ix.buffers_of_node) {  // sorted, each once
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return ix;
}

}  // namespace fusebox::planner
