#include "core/planner/lifetimes.h"

#include <algorithm>

#include "core/ir/op_schema.h"

namespace fusebox::planner {

size_t align_bytes(size_t bytes) {
  size_t a = ir::kAlignment;
  return std::max<size_t>(a, (bytes + a - 1) / a * a);
}

Lifetimes analyze_lifetimes(const ir::Graph& g) {
  Lifetimes lt;
  lt.num_steps = static_cast<int>(g.nodes.size());
  const int last_step = std::max(0, lt.num_steps - 1);
  std::unordered_map<std::string, size_t> index;  // root tensor -> buffer index

  auto root_of = [&](const std::string& t) {
    auto it = lt.alias_root.find(t);
    return it == lt.alias_root.end() ? t : it->second;
  };
  auto touch = [&](const std::string& t, int step) {
    auto it = index.find(root_of(t));
    if (it != index.end()) lt.buffers[it->second].last = std::max(lt.buffers[it->second].last, step);
  };

  for (const auto& in : g.inputs) {
    index[in] = lt.buffers.size();
    lt.buffers.push_back({in, align_bytes(g.tensor(in).nbytes()), 0, 0, false, -1});
  }
  for (int step = 0; step < lt.num_steps; ++step) {
    const ir::Node& node = g.nodes[step];
    const ir::OpSchema& schema = ir::OpRegistry::instance().get(node.op);
    for (const auto& in : node.inputs) touch(in, step);
    if (schema.view) {
      lt.alias_root[node.outputs[0]] = root_of(node.inputs[0]);
      continue;
    }
    for (const auto& out : node.outputs) {
      index[out] = lt.buffers.size();
      lt.buffers.push_back({out, align_bytes(g.tensor(out).nbytes()), step, step, false, -1});
    }
    std::vector<ir::TensorType> in_types, out_types;
    for (const auto& in : node.inputs) in_types.push_back({g.tensor(in).dtype, g.tensor(in).shape});
    for (const auto& out : node.outputs) out_types.push_back({g.tensor(out).dtype, g.tensor(out).shape});
    size_t scratch = ir::node_scratch_bytes(node, in_types, out_types);
    if (scratch > 0)
      lt.buffers.push_back({node.name + ":scratch", align_bytes(scratch), step, step, true, step});
  }
  for (const auto& out : g.outputs) touch(out, last_step);

  lt.live_bytes.assign(std::max(1, lt.num_steps), 0);
  for (const auto& b : lt.buffers)
    for (int s = b.first; s <= b.last; ++s) lt.live_bytes[s] += b.bytes;
  lt.lower_bound = *std::max_element(lt.live_bytes.begin(), lt.live_bytes.end());
  return lt;
}

}  // namespace fusebox::planner
