#pragma once
// Who lives in each buffer of a plan, and which nodes write and read it: the links a front end
// follows from a box in the arena to a node in the graph and a span in the trace, and back.
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/graph.h"
#include "core/planner/plan.h"

namespace fusebox::planner {

struct BufferUse {
  std::vector<std::string> tensors;  // the buffer's own tensor and every view of it (none: scratch)
  std::vector<int> producers;        // nodes writing one of them, or the node owning the scratch
  std::vector<int> consumers;        // nodes reading one of them
};

struct PlanIndex {
  std::vector<BufferUse> buffers;                        // parallel to plan.placements
  std::unordered_map<std::string, int> buffer_of_tensor;  // arena tensors (views too) -> placement
  std::vector<std::vector<int>> buffers_of_node;         // per node: placements it touches, sorted
};

// `plan` must have been made for `graph`.
PlanIndex index_plan(const ir::Graph& graph, const ExecutionPlan& plan);

}  // namespace fusebox::planner
