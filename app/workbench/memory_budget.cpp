#include "app/workbench/memory_budget.h"

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::workbench {

void check_memory_budget(const std::string& model, const ir::Graph& graph, const planner::ExecutionPlan& plan,
                         size_t input_bytes, const MemoryBudget& budget) {
  size_t weight_bytes = 0;
  const ir::TensorInfo* largest = nullptr;
  for (const auto& [name, t] : graph.tensors()) {
    if (t.kind == ir::TensorKind::Weight) weight_bytes += t.nbytes();
    if (!largest || t.nbytes() > largest->nbytes()) largest = &t;
  }
  const double need = static_cast<double>(plan.arena_bytes) + static_cast<double>(weight_bytes) +
                      static_cast<double>(input_bytes);
  if (need <= static_cast<double>(budget.bytes)) return;
  std::string msg = model + ": needs " + format_bytes(need) + " of memory (arena " +
                    format_bytes(static_cast<double>(plan.arena_bytes)) + ", weights " +
                    format_bytes(static_cast<double>(weight_bytes)) + ", inputs " +
                    format_bytes(static_cast<double>(input_bytes)) + "), over the memory budget of " +
                    format_bytes(static_cast<double>(budget.bytes)) + " (" + budget.source + ")";
  if (largest)
    msg += "; its largest tensor is '" + largest->name + "' " + ir::shape_str(largest->shape) + " (" +
           format_bytes(static_cast<double>(largest->nbytes())) + ")";
  throw Error(msg + ": make its dims smaller");
}

}  // namespace fusebox::workbench
