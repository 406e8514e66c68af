#include "core/planner/lifetimes.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/ir/op_schema.h"

namespace fusebox::planner {

size_t align_bytes(size_t bytes, size_t a) {
  return std::max<size_t>(a, (bytes + a - 1) / a * a);
}

Lifetimes analyze_lifetimes(const ir::Graph& g, const MemoryRules& rules) {
  const size_t a = rules.alignment;
  if (a == 0 || (a & (a - 1)) != 0)
    throw Error("planner: alignment must be a power of two, got " + std::to_string(a));
  if (!rules.scratch) throw Error("planner: the memory rules have no scratch function");
  auto aligned = [a](size_t bytes) { return align_bytes(bytes, a); };
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

  // Each tensor's last reader (a graph output: past the last step), and the tensors that share
  // each root's bytes, for the in-place rule.
  std::unordered_map<std::string, int> last_use;
  for (int step = 0; step < lt.num_steps; ++step)
    for (const auto& in : g.nodes[step].inputs) last_use[in] = step;
  for (const auto& out : g.outputs) last_use[out] = lt.num_steps;
  std::unordered_map<std::string, std::vector<std::string>> sharing;  // root -> its aliases
  auto dead_after = [&](const ir::Node& node, int step) {
    const std::string root = root_of(node.inputs[0]);
    if (!index.count(root) || g.tensor(root).nbytes() != g.tensor(node.outputs[0]).nbytes()) return false;
    for (size_t i = 1; i < node.inputs.size(); ++i)
      if (root_of(node.inputs[i]) == root) return false;
    auto read_later = [&](const std::string& t) {
      auto it = last_use.find(t);
      return it != last_use.end() && it->second > step;
    };
    if (read_later(root)) return false;
    for (const auto& t : sharing[root])
      if (read_later(t)) return false;
    return true;
  };

  for (const auto& in : g.inputs) {
    index[in] = lt.buffers.size();
    lt.buffers.push_back({in, aligned(g.tensor(in).nbytes()), 0, 0, false, -1});
  }
  for (int step = 0; step < lt.num_steps; ++step) {
    const ir::Node& node = g.nodes[step];
    const ir::OpSchema& schema = ir::OpRegistry::instance().get(node.op);
    for (const auto& in : node.inputs) touch(in, step);
    if (schema.view) {
      const std::string root = root_of(node.inputs[0]);
      lt.alias_root[node.outputs[0]] = root;
      sharing[root].push_back(node.outputs[0]);
      continue;
    }
    const bool in_place = schema.in_place && dead_after(node, step);
    if (in_place) {
      const std::string root = root_of(node.inputs[0]);
      lt.alias_root[node.outputs[0]] = root;
      sharing[root].push_back(node.outputs[0]);
    }
    for (const auto& out : node.outputs) {
      if (in_place && out == node.outputs[0]) continue;
      index[out] = lt.buffers.size();
      lt.buffers.push_back({out, aligned(g.tensor(out).nbytes()), step, step, false, -1});
    }
    std::vector<ir::TensorType> in_types, out_types;
    for (const auto& in : node.inputs) in_types.push_back({g.tensor(in).dtype, g.tensor(in).shape});
    for (const auto& out : node.outputs) out_types.push_back({g.tensor(out).dtype, g.tensor(out).shape});
    size_t scratch = rules.scratch(node, in_types, out_types);
    if (scratch > 0)
      lt.buffers.push_back({node.name + ":scratch", aligned(scratch), step, step, true, step});
  }
  for (const auto& out : g.outputs) touch(out, last_step);

  // Bytes live at each step: +bytes where a buffer starts, -bytes after it ends, summed in order
  // (a loop over each buffer's steps was buffers x steps: minutes for 100,000 side by side).
  lt.live_bytes.assign(std::max(1, lt.num_steps), 0);
  std::vector<size_t> starts(lt.live_bytes.size() + 1, 0), ends(lt.live_bytes.size() + 1, 0);
  for (const auto& b : lt.buffers) {
    starts[static_cast<size_t>(b.first)] += b.bytes;
    ends[static_cast<size_t>(b.last) + 1] += b.bytes;
  }
  size_t live = 0;
  for (size_t s = 0; s < lt.live_bytes.size(); ++s) {
    live = live + starts[s] - ends[s];
    lt.live_bytes[s] = live;
  }
  lt.lower_bound = *std::max_element(lt.live_bytes.begin(), lt.live_bytes.end());
  return lt;
}

}  // namespace fusebox::planner
