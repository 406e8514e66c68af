#pragma once
// ExecutionPlan: where every tensor lives while a graph runs. Made by make_plan() from the
// lifetimes and a placement strategy chosen by name (strategies.h).
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/planner/lifetimes.h"

namespace fusebox::planner {

struct Placement {
  Buffer buffer;
  size_t offset = 0;  // bytes from the arena start, a multiple of the plan's alignment
};

enum class Storage : uint8_t { Arena, Weight };

struct Location {
  Storage storage = Storage::Arena;
  size_t offset = 0;  // Arena: byte offset. Weight: unused (the root tensor names the weight)
  std::string root;   // the tensor that owns the bytes (itself unless a view)
};

struct ExecutionPlan {
  std::string strategy;  // the strategy that placed the buffers (with "best": the winner)
  // With "best": every strategy tried and its arena bytes, in registry order.
  std::vector<std::pair<std::string, size_t>> tried;
  std::vector<Placement> placements;                     // one per buffer
  std::unordered_map<std::string, Location> locations;   // every tensor a node or output uses
  std::vector<int> scratch_of_step;  // per node: index into placements, or -1
  size_t alignment = 0;              // the rules' (the target backend's)
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;
  std::vector<size_t> live_bytes;    // per step, from the lifetimes

  double ratio() const {
    return lower_bound_bytes ? static_cast<double>(arena_bytes) / lower_bound_bytes : 1.0;
  }
  // The printable plan: per tensor offset, size, steps; and an ASCII arena chart.
  std::string to_text(const ir::Graph& graph, int chart_width = 64) const;
};

// Plans `graph` with the named strategy, or with kBestPlanner every registered strategy, keeping
// the smallest arena (the first in registry order on ties), with the target backend's alignment
// and scratch sizes (`rules`). Throws fusebox::Error for an unknown strategy (listing the valid
// ones), bad rules or an inconsistent graph.
inline constexpr const char* kBestPlanner = "best";
ExecutionPlan make_plan(const ir::Graph& graph, const std::string& strategy, const MemoryRules& rules);

// Checks the plan's invariant: buffers whose lifetimes overlap do not overlap in the arena, and
// every buffer fits. Returns an empty string when it holds, else a description of the clash.
std::string check_plan(const ExecutionPlan& plan);

}  // namespace fusebox::planner
