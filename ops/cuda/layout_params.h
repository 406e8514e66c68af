#pragma once
// Host-side (C++20) parameter building for the CUDA Transpose and Slice kernels: the attribute
// handling every backend shares (core/ir/layout_params.h), the collapsed walk
// (strided_walk.h) and the copy kind. Header-only and free of the backend, so layout.cpp's
// prepare() and the host test that runs the kernels' index arithmetic against the CPU
// (tests/cuda/layout_index_test.cpp) build the very same parameters. Each throws fusebox::Error
// with the message prepare() reports for the node.
#include <string>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/ir/dtype.h"
#include "core/ir/layout_params.h"
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

// Transpose of `x` by `perm` (empty: reversed), read as every backend reads it (ir::transpose_read).
inline StridedCopyParams make_transpose(const ir::Shape& x, ir::DType dtype, std::vector<int64_t> perm) {
  const ir::StridedRead r = ir::transpose_read(x, std::move(perm));
  return make_strided_copy(r.shape, r.strides, r.offset, ir::numel(x), dtype);
}

// Slice of `x` into `out` (the schema's output shape), read as every backend reads it
// (ir::slice_read: the first index read along each sliced axis and the step, ONNX's clamping).
inline StridedCopyParams make_slice(const ir::Shape& x, const ir::Shape& out, ir::DType dtype,
                                    const std::vector<int64_t>& starts, std::vector<int64_t> axes,
                                    std::vector<int64_t> steps) {
  const ir::StridedRead r = ir::slice_read(x, out, starts, std::move(axes), std::move(steps));
  return make_strided_copy(r.shape, r.strides, r.offset, ir::numel(x), dtype);
}

}  // namespace fusebox::cuda
