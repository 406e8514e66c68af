#pragma once
// Pieces shared by the builtin model builders (internal to core/models).
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox::models {

// Attributes with one entry.
ir::Attributes attrs_ints(const std::string& name, std::vector<int64_t> values);
ir::Attributes attrs_int(const std::string& name, int64_t value);

// nn.Linear as the ONNX exporter writes it and our importer lowers Gemm: weights
// "<prefix>weight" [out, in] and "<prefix>bias" [out]; nodes "<prefix>Transpose" (perm [1,0]),
// "<prefix>MatMul" (x @ W^T), "<prefix>Add" (+ bias). Returns the Add's output.
std::string add_linear(ir::Graph& g, const std::string& x, const std::string& prefix,
                       int64_t in_features, int64_t out_features, uint64_t seed);

// Renames an intermediate tensor (its producer's output and every reader), e.g. the last node's
// "fc2.Add:out" to the graph output name "logits". Throws if `to` exists.
void rename_tensor(ir::Graph& g, const std::string& from, const std::string& to);

}  // namespace fusebox::models
