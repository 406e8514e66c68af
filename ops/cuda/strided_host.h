#pragma once
// Host side of StridedIndex (g++, C++20): building one from core shapes in a kernel's prepare(),
// with the same broadcast rules and depth limit as the CPU's strided plans (ops/cpu/strided.h),
// failing with the node's name where those refuse.
#include <string>
#include <vector>

#include "core/ir/shape.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/host/tile_geometry.h"
#include "ops/cuda/strided_index.h"

namespace fusebox::cuda {

// Element i of a row-major walk over `dims` is at sum_d idx_d * strides[d], collapsed.
inline StridedIndex strided_index(const exec::KernelContext& ctx, const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& strides) {
  const CollapsedStrides c = collapse_strided(dims, strides);
  if (c.dims.size() > static_cast<size_t>(kMaxStridedRank))
    fail(ctx, "strided walk needs " + std::to_string(c.dims.size()) + " dims after collapsing " + ir::shape_str(dims) +
                  "; the CUDA kernels support at most " + std::to_string(kMaxStridedRank));
  StridedIndex idx;
  idx.rank = static_cast<int>(c.dims.size());
  for (size_t d = 0; d < c.dims.size(); ++d) {
    idx.dims[d] = c.dims[d];
    idx.strides[d] = c.strides[d];
  }
  idx.dense = c.dense();
  return idx;
}

// `in` read broadcast (numpy rules, never enlarging `out`) at each element of `out`.
inline StridedIndex broadcast_index(const exec::KernelContext& ctx, const ir::Shape& in, const ir::Shape& out) {
  bool ok = in.size() <= out.size();
  for (size_t i = 0; ok && i < in.size(); ++i) {
    const int64_t o = out[out.size() - in.size() + i];
    ok = in[i] == o || in[i] == 1;
  }
  if (!ok) fail(ctx, ir::shape_str(in) + " does not broadcast to " + ir::shape_str(out));
  return strided_index(ctx, out, ir::broadcast_strides(in, out));
}

}  // namespace fusebox::cuda
