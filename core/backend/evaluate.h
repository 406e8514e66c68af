#pragma once
// Runs one node on host tensors through a backend's kernel: used by constant folding (to
// evaluate static subgraphs at load time) and by tests. Allocates; not for the hot path.
#include <vector>

#include "core/backend/backend.h"
#include "core/ir/node.h"
#include "core/ir/tensor.h"

namespace fusebox::exec {

// Throws fusebox::Error when the backend has no kernel for the op or the shapes are wrong, and
// when the backend's memory is not the host's (BackendCaps::host_memory): constant folding always
// evaluates on the CPU, whatever backend the graph will run on.
std::vector<ir::Tensor> evaluate_node(const Backend& backend, const ir::Node& node,
                                      const std::vector<ir::Tensor>& inputs);

}  // namespace fusebox::exec
