#pragma once
// The arena of a plan, allocated once on the backend, and every tensor's device address in it
// (or in the uploaded weights). The interpreted and compiled executors share it.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/exec/program.h"
#include "core/planner/plan.h"

namespace fusebox::exec {

struct ArenaBinding {
  std::shared_ptr<void> arena;
  std::unordered_map<std::string, void*> address;  // tensor name -> device pointer
  std::vector<void*> inputs;                       // per graph input
  std::vector<const void*> outputs;                // per graph output
  std::vector<size_t> input_bytes, output_bytes;
  std::vector<void*> scratch;                      // per node (null when none)

  // A null host pointer copies nothing: the input keeps the bytes the last run left in the arena
  // (a KV cache written in place stays there between runs), the output stays in the arena.
  void copy_inputs(Backend& backend, const void* const* host_inputs) const;
  void copy_outputs(Backend& backend, void* const* host_outputs) const;
};

// Allocates `plan`'s arena on the program's backend and resolves every tensor's address.
ArenaBinding bind_arena(const Program& program, const planner::ExecutionPlan& plan);

}  // namespace fusebox::exec
