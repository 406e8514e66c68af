#include "core/passes/rewrite_utils.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/strings.h"

namespace fusebox::passes {

GraphUses::GraphUses(const ir::Graph& g)
    : graph(g), producer(g.producers()), readers(g.consumers()) {}

std::optional<size_t> GraphUses::produced_by(const std::string& tensor,
                                             const std::string& op) const {
  auto it = producer.find(tensor);
  if (it == producer.end() || graph.nodes[it->second].op != op) return std::nullopt;
  return it->second;
}

const std::vector<size_t>& GraphUses::readers_of(const std::string& tensor) const {
  static const std::vector<size_t> kNone;
  auto it = readers.find(tensor);
  return it == readers.end() ? kNone : it->second;
}

bool GraphUses::only_read_by(const std::string& tensor, size_t node) const {
  const auto& r = readers_of(tensor);
  return r.size() == 1 && r[0] == node && !graph.is_output(tensor);
}

std::string GraphUses::other_uses(const std::string& tensor, size_t node) const {
  std::vector<std::string> names;
  for (size_t r : readers_of(tensor))
    if (r != node) names.push_back(graph.nodes[r].name);
  std::string out = names.empty() ? "" : "read by " + join(names, " and ");
  if (graph.is_output(tensor)) out += (out.empty() ? "" : " and ") + std::string("a graph output");
  return out;
}

std::optional<double> scalar_constant(const ir::Graph& g, const std::string& tensor) {
  if (!g.is_weight(tensor)) return std::nullopt;
  const ir::Tensor& v = *g.tensor(tensor).value;
  if (v.numel() != 1) return std::nullopt;
  if (v.dtype() == ir::DType::f32) return static_cast<double>(v.data<float>()[0]);
  return static_cast<double>(v.data<int64_t>()[0]);
}

bool near(double value, double want) {
  return std::abs(value - want) <= 1e-4;
}

std::string fmt_num(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

std::string fmt_ints(const std::vector<int64_t>& values) {
  return "[" + join(values, ",") + "]";
}

std::string fused_node_base(const std::string& op, const ir::Node& first) {
  // Keep the scope ("attn.q_proj.", "/self_attn/") and swap the op inside the last segment.
  const std::string& n = first.name;
  size_t cut = n.find_last_of("./");
  std::string head = cut == std::string::npos ? "" : n.substr(0, cut + 1);
  std::string tail = n.substr(head.size());
  const std::string& old = first.op;
  if (tail == old) return head + op;                                              // fc1.MatMul
  if (tail.rfind(old + "_", 0) == 0) return head + op + tail.substr(old.size());  // MatMul_3
  if (tail.size() > old.size() && tail.compare(tail.size() - old.size(), old.size(), old) == 0 &&
      tail[tail.size() - old.size() - 1] == '_')
    return head + tail.substr(0, tail.size() - old.size()) + op;  // Gemm_MatMul
  return head + op + "_" + tail;
}

std::string fused_node_name(const ir::Graph& g, const std::string& op, const ir::Node& first) {
  return g.unique_name(fused_node_base(op, first));
}

std::string node_list(const ir::Graph& g, std::vector<size_t> nodes) {
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::string> names;
  for (size_t i : nodes) names.push_back(g.nodes[i].name);
  return join(names, " + ");
}

size_t replace_nodes(ir::Graph& g, std::vector<size_t> nodes, ir::Node fused) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const size_t last = nodes.back();
  fused.outputs = g.nodes[last].outputs;
  for (size_t i : nodes)
    for (const auto& out : g.nodes[i].outputs)
      if (std::find(fused.outputs.begin(), fused.outputs.end(), out) == fused.outputs.end())
        g.remove_tensor(out);
  g.nodes[last] = std::move(fused);
  for (auto it = nodes.rbegin() + 1; it != nodes.rend(); ++it)
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(*it));
  return last - (nodes.size() - 1);
}

void remove_node(ir::Graph& g, size_t index, bool keep_outputs) {
  if (!keep_outputs)
    for (const auto& out : g.nodes[index].outputs) g.remove_tensor(out);
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(index));
}

}  // namespace fusebox::passes
