#pragma once
// Graph: named tensors plus nodes in execution (topological) order. Inputs and weights are
// tensors with no producer; every node is a real computation. Passes rewrite the graph in place.
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/tensor.h"

namespace fusebox::ir {

class Graph {
 public:
  std::string name;
  std::vector<Node> nodes;          // execution order
  std::vector<std::string> inputs;  // fed by the caller, in this order
  std::vector<std::string> outputs; // returned to the caller, in this order

  // Tensor registry (ordered by name, so iteration is deterministic).
  TensorInfo& add_tensor(TensorInfo info);  // throws if the name exists
  bool has_tensor(const std::string& name) const { return tensors_.count(name) != 0; }
  TensorInfo& tensor(const std::string& name);  // throws fusebox::Error naming the tensor
  const TensorInfo& tensor(const std::string& name) const;
  void remove_tensor(const std::string& name) { tensors_.erase(name); }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }

  // Convenience constructors used by builders and importers.
  const std::string& add_input(const std::string& name, DType dtype, Shape shape);
  const std::string& add_weight(const std::string& name, Tensor value);
  // Appends a node, creating its (intermediate) outputs with shapes from the op schema.
  // Returns the node's first output name.
  const std::string& add_node(const std::string& op, std::vector<std::string> inputs,
                              Attributes attrs = {}, const std::string& name = "",
                              int num_outputs = 1);

  // A name not yet used by any tensor or node: "<prefix>", "<prefix>_1", ...
  std::string unique_name(const std::string& prefix) const;
  bool is_weight(const std::string& tensor) const;
  bool is_output(const std::string& tensor) const;

  // Index of the node producing each tensor, and of the nodes consuming it (computed fresh).
  std::unordered_map<std::string, size_t> producers() const;
  std::unordered_map<std::string, std::vector<size_t>> consumers() const;

  // Re-runs shape inference for every node in order, updating intermediate TensorInfos.
  void infer_shapes();
  // Histogram of op types, e.g. {"MatMul": 6, "Add": 9}.
  std::map<std::string, int> op_histogram() const;

 private:
  std::map<std::string, TensorInfo> tensors_;
};

}  // namespace fusebox::ir
