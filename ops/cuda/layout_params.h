#pragma once
// Host-side (C++20) parameter building for the CUDA Transpose and Slice kernels: the same
// attribute handling as the CPU's prepare (ops/cpu/layout.cpp), the collapsed walk
// (strided_walk.h) and the copy kind. Header-only and free of the backend, so layout.cpp's
// prepare() and the host test that runs the kernels' index arithmetic against the CPU
// (tests/cuda/layout_index_test.cpp) build the very same parameters. Each throws fusebox::Error
// with the message prepare() reports for the node.
#include <algorithm>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/dtype.h"
#include "core/ir/shape.h"
#include "ops/cuda/layout_types.h"
#include "ops/cuda/strided_walk.h"

namespace fusebox::cuda {

// A contiguous `out` whose element (i_0..) reads input element base + sum_d i_d * strides[d] of
// an input of `in_numel` elements of `dtype`.
inline StridedCopyParams make_strided_copy(const ir::Shape& out, const std::vector<int64_t>& strides, int64_t base,
                                           int64_t in_numel, ir::DType dtype) {
  StridedCopyParams p{};
  p.elem_bytes = static_cast<int32_t>(ir::dtype_size(dtype));
  p.numel = ir::numel(out);
  p.base = base;
  p.index32 = p.numel <= kIndex32Limit && in_numel <= kIndex32Limit;
  const CollapsedWalk w = collapse_walk(out, {strides});
  if (w.dims.size() > static_cast<size_t>(kLayoutMaxDims))
    throw Error("the strided copy needs " + std::to_string(w.dims.size()) + " dims after collapsing " +
                ir::shape_str(out) + "; the CUDA kernel supports at most " + std::to_string(kLayoutMaxDims));
  p.rank = static_cast<int32_t>(w.dims.size());
  for (int d = 0; d < p.rank; ++d) {
    p.dims[d] = w.dims[static_cast<size_t>(d)];
    p.strides[d] = w.strides[0][static_cast<size_t>(d)];
  }
  const int r = p.rank;
  if (r == 1 && p.strides[0] == 1) {
    p.kind = CopyKind::Memcpy;
  } else if (p.strides[r - 1] == 1) {
    p.kind = CopyKind::Gather;  // the CPU's row copies: reads along the innermost dim coalesce
  } else if (r >= 2 && p.strides[r - 2] == 1) {
    p.kind = CopyKind::Tiles;
  } else {
    p.kind = CopyKind::Gather;
  }
  return p;
}

// Transpose of `x` by `perm` (empty: reversed).
inline StridedCopyParams make_transpose(const ir::Shape& x, ir::DType dtype, std::vector<int64_t> perm) {
  if (perm.empty())
    for (size_t i = 0; i < x.size(); ++i) perm.push_back(static_cast<int64_t>(x.size() - 1 - i));
  if (perm.size() != x.size()) throw Error("perm does not match the input rank");
  const std::vector<int64_t> in_strides = ir::strides_of(x);
  ir::Shape out;
  std::vector<int64_t> strides;
  std::vector<bool> seen(x.size(), false);
  for (int64_t p : perm) {
    const int ax = ir::normalize_axis(p, x.size(), "Transpose");
    if (seen[ax]) throw Error("perm is not a permutation");
    seen[ax] = true;
    out.push_back(x[ax]);
    strides.push_back(in_strides[ax]);
  }
  return make_strided_copy(out, strides, 0, ir::numel(x), dtype);
}

// Slice of `x` into `out` (the schema's output shape, which already holds each count): the
// first index read along each sliced axis and the step, with the schema's clamping (ONNX rules).
inline StridedCopyParams make_slice(const ir::Shape& x, const ir::Shape& out, ir::DType dtype,
                                    const std::vector<int64_t>& starts, std::vector<int64_t> axes,
                                    std::vector<int64_t> steps) {
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size() || out.size() != x.size())
    throw Error("starts/axes/steps differ in length");
  const std::vector<int64_t> in_strides = ir::strides_of(x);
  std::vector<int64_t> start(x.size(), 0), step(x.size(), 1);
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int ax = ir::normalize_axis(axes[i], x.size(), "Slice");
    if (seen[ax]) throw Error("axis " + std::to_string(axes[i]) + " is sliced twice");
    seen[ax] = true;
    if (steps[i] == 0) throw Error("step 0");
    const int64_t dim = x[ax];
    if (out[ax] == 0 || dim == 0) continue;  // nothing is read along this axis
    int64_t b = starts[i];
    if (b < 0) b += dim;
    b = steps[i] > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
    start[ax] = b;
    step[ax] = steps[i];
  }
  int64_t base = 0;
  std::vector<int64_t> strides(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    base += start[d] * in_strides[d];
    strides[d] = step[d] * in_strides[d];
  }
  return make_strided_copy(out, strides, base, ir::numel(x), dtype);
}

}  // namespace fusebox::cuda
