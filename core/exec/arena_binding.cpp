#include "core/exec/arena_binding.h"

#include "core/base/error.h"

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
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int s = plan.scratch_of_step[i];
    const size_t planned = s >= 0 ? plan.placements[static_cast<size_t>(s)].buffer.bytes : 0;
    // The plan must come from this backend's rules (exec::memory_rules): its kernels' scratch.
    if (planned < p.nodes[i].scratch_bytes)
      throw Error("node '" + g.nodes[i].name + "': the plan gives it " + std::to_string(planned) +
                  " scratch bytes, backend '" + p.backend->name() + "' needs " +
                  std::to_string(p.nodes[i].scratch_bytes) + " (plan it with this backend's memory rules)");
    if (s >= 0) b.scratch[i] = base + plan.placements[static_cast<size_t>(s)].offset;
  }
  return b;
}

void ArenaBinding::copy_inputs(Backend& backend, const void* const* host_inputs) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (host_inputs[i]) backend.copy_to_device(inputs[i], host_inputs[i], input_bytes[i]);
}

void ArenaBinding::copy_outputs(Backend& backend, void* const* host_outputs) const {
  for (size_t i = 0; i < outputs.size(); ++i)
    if (host_outputs[i]) backend.copy_to_host(host_outputs[i], outputs[i], output_bytes[i]);
}

}  // namespace fusebox::exec
