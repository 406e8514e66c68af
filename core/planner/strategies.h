#pragma once
// Placement strategies: given buffers with sizes and lifetimes, choose arena offsets.
// Registered by name; each reads in one screen (strategies/*.cpp... here, strategies.cpp).
#include <functional>
#include <string>
#include <vector>

#include "core/base/registry.h"
#include "core/planner/lifetimes.h"

namespace fusebox::planner {

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
