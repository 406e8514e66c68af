#include "core/ir/graph.h"

#include "core/base/error.h"
#include "core/ir/op_schema.h"

namespace fusebox::ir {

TensorInfo& Graph::add_tensor(TensorInfo info) {
  if (info.name.empty()) throw Error("tensor with an empty name");
  auto [it, inserted] = tensors_.emplace(info.name, std::move(info));
  if (!inserted) throw Error("tensor '" + it->first + "' defined twice");
  return it->second;
}

TensorInfo& Graph::tensor(const std::string& name) {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw Error("no tensor named '" + name + "' in graph '" + this->name + "'");
  return it->second;
}

const TensorInfo& Graph::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw Error("no tensor named '" + name + "' in graph '" + this->name + "'");
  return it->second;
}

const std::string& Graph::add_input(const std::string& name, DType dtype, Shape shape) {
  TensorInfo info{name, dtype, std::move(shape), TensorKind::Input, std::nullopt};
  nbytes_of(info.shape, dtype_size(dtype));  // validates: its elements and bytes fit
  inputs.push_back(add_tensor(std::move(info)).name);
  return inputs.back();
}

const std::string& Graph::add_weight(const std::string& name, Tensor value) {
  TensorInfo info{name, value.dtype(), value.shape(), TensorKind::Weight, std::move(value)};
  return add_tensor(std::move(info)).name;
}

const std::string& Graph::add_node(const std::string& op, std::vector<std::string> inputs_,
                                   Attributes attrs, const std::string& name, int num_outputs) {
  Node node;
  node.op = op;
  node.name = name.empty() ? unique_name(op + "_" + std::to_string(nodes.size())) : name;
  node.inputs = std::move(inputs_);
  node.attrs = std::move(attrs);
  std::vector<TensorType> in_types;
  for (const auto& in : node.inputs) {
    const TensorInfo& t = tensor(in);
    in_types.push_back({t.dtype, t.shape});
  }
  for (int i = 0; i < num_outputs; ++i)
    node.outputs.push_back(unique_name(node.name + (num_outputs == 1 ? "" : "_" + std::to_string(i)) + ":out"));
  std::vector<TensorType> out_types = infer_node(node, in_types);
  for (int i = 0; i < num_outputs; ++i)
    add_tensor({node.outputs[i], out_types[i].dtype, out_types[i].shape, TensorKind::Intermediate, std::nullopt});
  nodes.push_back(std::move(node));
  return nodes.back().outputs[0];
}

std::string Graph::unique_name(const std::string& prefix) const {
  auto used = [&](const std::string& n) {
    if (tensors_.count(n)) return true;
    for (const auto& node : nodes)
      if (node.name == n) return true;
    return false;
  };
  if (!used(prefix)) return prefix;
  for (int i = 1;; ++i) {
    std::string candidate = prefix + "_" + std::to_string(i);
    if (!used(candidate)) return candidate;
  }
}

bool Graph::is_weight(const std::string& t) const {
  auto it = tensors_.find(t);
  return it != tensors_.end() && it->second.kind == TensorKind::Weight;
}

bool Graph::is_output(const std::string& t) const {
  for (const auto& o : outputs)
    if (o == t) return true;
  return false;
}

std::unordered_map<std::string, size_t> Graph::producers() const {
  std::unordered_map<std::string, size_t> p;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs) p[o] = i;
  return p;
}

std::unordered_map<std::string, std::vector<size_t>> Graph::consumers() const {
  std::unordered_map<std::string, std::vector<size_t>> c;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& in : nodes[i].inputs) {
      auto& v = c[in];
      if (v.empty() || v.back() != i) v.push_back(i);
    }
  return c;
}

void Graph::infer_shapes() {
  for (const auto& node : nodes) {
    std::vector<TensorType> in_types;
    for (const auto& in : node.inputs) {
      const TensorInfo& t = tensor(in);
      in_types.push_back({t.dtype, t.shape});
    }
    std::vector<TensorType> out = infer_node(node, in_types);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      TensorInfo& t = tensor(node.outputs[i]);
      t.dtype = out[i].dtype;
      t.shape = out[i].shape;
    }
  }
}

std::map<std::string, int> Graph::op_histogram() const {
  std::map<std::string, int> h;
  for (const auto& n : nodes) h[n.op]++;
  return h;
}

}  // namespace fusebox::ir
