#include "app/workbench/memory_budget.h"

#include <string_view>

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
  // The largest buffer may be a node's scratch (a pool window of 2^32 taps asked 64 GiB for a
  // 2x2 input): naming the largest tensor (16 B) would point the user at the wrong thing.
  const planner::Buffer* scratch = nullptr;
  for (const auto& p : plan.placements)
    if (p.buffer.scratch && (!scratch || p.buffer.bytes > scratch->bytes)) scratch = &p.buffer;
  if (scratch && (!largest || scratch->bytes > largest->nbytes())) {
    std::string node = scratch->name;
    if (node.ends_with(":scratch")) node.resize(node.size() - std::string_view(":scratch").size());
    throw Error(msg + "; its largest buffer is the scratch space of node '" + node + "' (" +
                format_bytes(static_cast<double>(scratch->bytes)) +
                "): make that node's dims or attributes smaller");
  }
  if (largest)
    msg += "; its largest tensor is '" + largest->name + "' " + ir::shape_str(largest->shape) + " (" +
           format_bytes(static_cast<double>(largest->nbytes())) + ")";
  throw Error(msg + ": make its dims smaller");
}

}  // namespace fusebox::workbench
