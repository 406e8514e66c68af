#pragma once
// Placement strategies: given buffers with sizes and lifetimes, choose arena offsets.
// Registered by name; each reads in one screen (strategies/*.cpp... here, strategies.cpp).
#include <functional>
#include <string>
#include <vector>

#include "core/base/registry.h"
#include "core/planner/lifetimes.h"

namespace fusebox::planner {

// The most buffers the gap-searching strategies (first_fit, best_fit, greedy_by_size) place: each
// placement scans the placed buffers, so their work grows with the square of the count (20,000
// take about half a second here; a 100,000-node model ran for minutes). Past it they refuse,
// naming naive, which is linear; the `best` planner then tries naive alone.
inline constexpr size_t kMaxGapSearchBuffers = 20000;

// Returns one 64-byte aligned offset per buffer.
using StrategyFn = std::function<std::vector<size_t>(const std::vector<Buffer>&)>;

struct Strategy {
  std::string name;
  std::string description;
  StrategyFn place;
};

// Every strategy, by name (core/base/registry.h): strategies().find("first_fit"), .names().
const Registry<Strategy>& strategies();

}  // namespace fusebox::planner
