#pragma once
// Placement strategies: given buffers with sizes and lifetimes, choose arena offsets.
// Registered by name; each reads in one screen (strategies/*.cpp... here, strategies.cpp).
#include <functional>
#include <string>
#include <vector>

#include "core/planner/lifetimes.h"

namespace fusebox::planner {

// Returns one 64-byte aligned offset per buffer.
using StrategyFn = std::function<std::vector<size_t>(const std::vector<Buffer>&)>;

struct Strategy {
  std::string name;
  std::string description;
  StrategyFn place;
};

const std::vector<Strategy>& strategies();
const Strategy* find_strategy(const std::string& name);
std::vector<std::string> strategy_names();

}  // namespace fusebox::planner
