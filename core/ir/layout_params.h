#pragma once
// How Transpose, Slice, Concat and Gather move their data: one reading of their attributes
// against the shapes, shared by every backend's kernel (ops/cpu/layout.cpp,
// ops/cuda/layout.cpp), which only maps it onto its own copy loops. Each function throws
// fusebox::Error naming the attribute or input at fault.
#include <cstdint>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/op_schema.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

// A read of the input into a contiguous output of `shape`: output element (i_0, .., i_{r-1})
// is input element offset + sum_d i_d * strides[d]. Unlike a StridedView a stride may be
// negative (Slice with a negative step).
struct StridedRead {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// Transpose of a row-major x by `perm` (empty: the dims reversed): output dim i is x's perm[i].
StridedRead transpose_read(const Shape& x, std::vector<int64_t> perm);

// Slice of a row-major x into `out`, the schema's output shape (which already holds each count):
// the first index read along each sliced axis, clamped as the schema does (ONNX rules), and the
// step. Empty axes: 0, 1, ..; empty steps: all 1.
StridedRead slice_read(const Shape& x, const Shape& out, const std::vector<int64_t>& starts,
                       std::vector<int64_t> axes, std::vector<int64_t> steps);

// Concat along attribute axis (default 0) into `out`: for each of `outer` indices (the dims
// before the axis), input i contributes chunk[i] contiguous elements, at chunk[0] + .. +
// chunk[i-1] in an output row of `row` elements.
struct ConcatSplit {
  int axis = 0;
  int64_t outer = 0;
  std::vector<int64_t> chunk;
  int64_t row = 0;
};
ConcatSplit concat_split(const Node& node, const std::vector<TensorType>& inputs,
                         const TensorType& out);

// Gather along attribute axis (default 0) of data: data as [outer, axis_dim, inner], `count`
// indices, each picking a slice of `inner` elements.
struct GatherSplit {
  int axis = 0;
  int64_t outer = 0, axis_dim = 0, inner = 0, count = 0;
};
GatherSplit gather_split(const Node& node, const Shape& data, const Shape& indices);

}  // namespace fusebox::ir
