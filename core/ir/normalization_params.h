#pragma once
// How Softmax, LayerNorm (SkipLayerNorm), ReduceMean, ArgMax and CumSum split their input: one
// reading of their attributes (axis, epsilon, axes) against the input shape, shared by every
// backend's kernel (ops/cpu/normalization.cpp, ops/cuda/normalization.cpp), which only maps it onto
// its own loops.
// Each function throws fusebox::Error naming the attribute at fault.
#include <cstdint>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/op_schema.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

// x as [outer, n, inner] around one axis: n elements reduced, `inner` apart, for each of
// outer * inner rows.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};

// x split around `axis`, an index into x's dims (normalized: 0 <= axis < rank).
AxisSplit split_at(const Shape& x, int axis);

// Softmax's attribute axis (default -1) on x; a scalar is one row of one element.
AxisSplit softmax_split(const Node& node, const Shape& x);

// LayerNorm(x, scale[, bias]) and SkipLayerNorm(x, skip, scale[, bias]): x as `rows` rows of `d`
// elements, the normalized block being dims axis.. (attribute axis, default -1).
struct LayerNormSplit {
  Shape norm;  // the normalized dims: scale and bias broadcast to it
  int64_t rows = 0, d = 0;
  double epsilon = 1e-5;
  int first_param = 1;    // input index of scale: 1, or 2 after SkipLayerNorm's skip
  bool has_bias = false;  // the node has an input after scale
  // Optional outputs Mean and InvStdDev: present when the node names them (an empty name is an
  // omitted output).
  bool write_mean = false, write_inv_std = false;
};

// `inputs` are the node's (x first). Throws for a rank-0 x, an axis out of range, or (first_param
// 2) a skip input whose shape is not x's: SkipLayerNorm does not broadcast.
LayerNormSplit layer_norm_split(const Node& node, const std::vector<TensorType>& inputs,
                                int first_param);

// ReduceMean over attribute axes (default: all) of a row-major x: the kept and the reduced dims,
// each with x's strides, in x's order.
struct ReduceSplit {
  std::vector<bool> reduce;  // per dim of x
  Shape kept_dims, reduced_dims;
  std::vector<int64_t> kept_strides, reduced_strides;
  int64_t count = 1;  // elements averaged per output: numel(reduced_dims)
};

ReduceSplit reduce_mean_split(const Node& node, const Shape& x);

}  // namespace fusebox::ir
