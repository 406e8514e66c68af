#pragma once
// Program: a graph bound to a backend, with every kernel found and prepared once and every weight
// uploaded (and, where a kernel wants it, packed). It does not depend on the memory plan: the
// executors bind a plan to it, so a planner or executor flip reuses the prepared kernels.
// All three executors run from it; they differ in what they look up again on each run.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/backend/backend.h"
#include "core/ir/graph.h"

namespace fusebox::exec {

struct PreparedNode {
  const ir::Node* node = nullptr;
  const KernelDef* kernel = nullptr;  // null for views (no work)
  bool view = false;
  std::shared_ptr<const void> state;  // from kernel->prepare
  std::vector<ir::TensorType> inputs, outputs;
  size_t scratch_bytes = 0;
  std::vector<const ir::Tensor*> constants;  // per input: the weight's host value, or null
};

struct Program {
  const ir::Graph* graph = nullptr;
  Backend* backend = nullptr;
  CompileOptions options;  // resolved by the backend; what every kernel was prepared with
  std::vector<PreparedNode> nodes;  // parallel to graph->nodes
  // Weights made available on the device once, by root tensor name.
  std::unordered_map<std::string, const void*> weights;
  std::vector<std::shared_ptr<const void>> weight_holds;
};

// The host values of `node`'s inputs that are weights of `graph`, null for the others: what
// prepare() and the scratch question get as KernelContext::constants.
std::vector<const ir::Tensor*> constants_of(const ir::Graph& graph, const ir::Node& node);

// Finds and prepares every kernel, with `options` (Backend::resolve), and uploads every weight.
// Throws fusebox::Error for options the backend does not offer, and naming the node when the
// backend has no kernel for its op or the kernel refuses the shapes.
Program build_program(const ir::Graph& graph, Backend& backend, const CompileOptions& options = {});

}  // namespace fusebox::exec
