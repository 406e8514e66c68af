#pragma once
// How ScatterND and ScatterElements read their attributes and inputs: one reading, shared by the
// schemas (core/ir/ops/scatter.cpp) and every backend's kernel (ops/cpu/scatter.cpp). The ops are
// ONNX's (opsets 11-22; `Scatter` of opsets 9-10 imports as ScatterElements):
//
//   ScatterND        data [d_0..d_{r-1}], indices [i_0..i_{q-2}, k] (i64), updates
//                    [i_0..i_{q-2}, d_k..d_{r-1}]: each of the i_0*..*i_{q-2} index tuples names a
//                    slice data[t_0, .., t_{k-1}, :, .., :] that its update slice is written into.
//   ScatterElements  data, indices and updates of one rank r, indices and updates of one shape:
//                    output[.., indices[u], ..] (the index replacing coordinate `axis` of u) = updates[u].
//
// The output is data with the updates applied in index order. Attribute `reduction` combines an
// update with what is there: "none" (replace; ONNX leaves duplicate indices undefined, we keep the
// last), "add", "mul", "max", "min". Indices may be negative (counted from the end of their dim);
// the kernel refuses one out of range, naming the node and the element.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/op_schema.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

struct ScatterParams {
  bool nd = true;  // ScatterND, else ScatterElements
  ScatterReduction reduction = ScatterReduction::kNone;
  Shape data;     // data's (and the output's) shape
  Shape indices;  // indices' shape
  // ScatterND: k = indices' last dim, `tuples` index tuples each writing `slice` contiguous
  // elements; bounds[d] and strides[d] (d < k) are data's dim d and its row-major stride.
  int64_t k = 0, tuples = 0, slice = 1;
  // ScatterElements: the axis; `updates` elements (indices' numel).
  int axis = 0;
  int64_t updates = 0;
  std::vector<int64_t> strides;  // data's row-major strides (every dim)
};

// Reads a ScatterND or ScatterElements node against its input types [data, indices, updates];
// throws fusebox::Error naming the attribute or input at fault.
ScatterParams scatter_params(const Node& node, const std::vector<TensorType>& inputs);

// "none", "add", "mul", "max", "min"; throws fusebox::Error naming the value otherwise.
ScatterReduction parse_scatter_reduction(const std::string& name);

}  // namespace fusebox::ir
