#pragma once
// The graph verifier: the invariants every pass must keep. Throws fusebox::Error describing the
// first violation (which node, which tensor, expected vs got).
//  - every tensor a node reads exists and is defined before the node runs (topological order)
//  - every tensor has at most one producer; inputs and weights have none; weights hold values
//  - node names are unique; every op is registered; arity fits the schema
//  - recorded shapes and dtypes equal what shape inference computes
//  - graph inputs are Input tensors, graph outputs are produced by a node or are weights/inputs
#include "core/ir/graph.h"

namespace fusebox::ir {

void verify(const Graph& graph);

}  // namespace fusebox::ir
