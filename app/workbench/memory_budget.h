#pragma once
// The memory a model needs before anything is bound: its arena, its weights and its inputs,
// against the process's memory budget (core/base/machine.h: of the physical memory or a ulimit). Builtin specs are sized against their own
// limit when they are built; an ONNX model (any dims up to their caps) is checked here, after
// planning, so a model that cannot fit is refused with a sentence instead of running the machine
// out of memory.
#include <cstddef>
#include <string>

#include "core/base/machine.h"
#include "core/ir/graph.h"
#include "core/planner/plan.h"

namespace fusebox::workbench {

// Throws fusebox::Error naming `model`, what it needs (arena, weights, inputs) and its largest
// tensor when arena + weights + inputs exceed `budget`. The pipeline calls it after planning and
// before any input is made.
void check_memory_budget(const std::string& model, const ir::Graph& graph, const planner::ExecutionPlan& plan,
                         size_t input_bytes, const MemoryBudget& budget);

}  // namespace fusebox::workbench
