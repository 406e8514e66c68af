#pragma once
// The memory a model needs before anything is bound: its arena, its weights and its inputs,
// against a budget of this machine's physical memory. Builtin specs are sized against their own
// limit when they are built; an ONNX model (any dims up to their caps) is checked here, after
// planning, so a model that cannot fit is refused with a sentence instead of running the machine
// out of memory.
#include <cstddef>
#include <string>

#include "core/ir/graph.h"
#include "core/planner/plan.h"

namespace fusebox::workbench {

inline constexpr double kMemoryBudgetFraction = 0.8;  // of the physical memory

// kMemoryBudgetFraction of this machine's physical memory, in bytes.
size_t memory_budget_bytes();

// Throws fusebox::Error naming `model`, what it needs (arena, weights, inputs) and its largest
// tensor when arena + weights + inputs exceed `budget_bytes`.
void check_memory_budget(const std::string& model, const ir::Graph& graph, const planner::ExecutionPlan& plan,
                         size_t input_bytes, size_t budget_bytes);

}  // namespace fusebox::workbench
