#include "core/exec/arena_binding.h"

namespace fusebox::exec {

ArenaBinding bind_arena(const Program& p, const planner::ExecutionPlan& plan) {
  ArenaBinding b;
  const ir::Graph& g = *p.graph;
  b.arena = p.backend->allocate(plan.arena_bytes);
  auto* base = static_cast<std::byte*>(b.arena.get());
  for (const auto& [name, loc] : plan.locations) {
    if (loc.storage == planner::Storage::Weight)
      b.address[name] = const_cast<void*>(p.weights.at(loc.root));
    else
      b.address[name] = base + loc.offset;
  }
  for (const auto& in : g.inputs) {
    b.inputs.push_back(b.address.at(in));
    b.input_bytes.push_back(g.tensor(in).nbytes());
  }
  for (const auto& out : g.outputs) {
    b.outputs.push_back(b.address.at(out));
    b.output_bytes.push_back(g.tensor(out).nbytes());
  }
  b.scratch.assign(g.nodes.size(), nullptr);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (plan.scratch_of_step[i] >= 0) b.scratch[i] = base + plan.placements[plan.scratch_of_step[i]].offset;
  return b;
}

void ArenaBinding::copy_inputs(Backend& backend, const void* const* host_inputs) const {
  for (size_t i = 0; i < inputs.size(); ++i) backend.copy_to_device(inputs[i], host_inputs[i], input_bytes[i]);
}

void ArenaBinding::copy_outputs(Backend& backend, void* const* host_outputs) const {
  for (size_t i = 0; i < outputs.size(); ++i) backend.copy_to_host(host_outputs[i], outputs[i], output_bytes[i]);
}

}  // namespace fusebox::exec
