#pragma once
// Index helpers of the layout kernels (layout_kernels.cu): where each output element of a
// strided copy, a Concat batch, a Gather and a transpose tile comes from. Plain C++ outside
// nvcc, so tests/cuda/layout_index_test.cpp runs the same arithmetic on the host against the CPU
// kernels' results.
//
// I is the index type: int32_t when the tensors have at most kIndex32Limit elements, else int64_t.
#include <cstdint>

#include "ops/cuda/host/launch_geometry.h"
#include "ops/cuda/host_device.h"
#include "ops/cuda/layout_types.h"

namespace fusebox::cuda {

// Input offset of output element i of a strided copy: base + sum_d i_d * strides[d].
template <typename I>
FUSEBOX_HD I strided_offset(const StridedCopyParams& p, I i) {
  I rem = i, off = static_cast<I>(p.base);
  FUSEBOX_UNROLL
  for (int d = kLayoutMaxDims - 1; d >= 0; --d) {
    if (d >= p.rank) continue;
    const I dim = static_cast<I>(p.dims[d]);
    off += (rem % dim) * static_cast<I>(p.strides[d]);
    rem /= dim;
  }
  return off;
}

// Element e of a Concat batch's span (outer index e / width, column e % width): which of the
// batch's inputs it comes from (returned), the offset in that input (*src) and in the output
// (*dst). The input is found by a binary search over the batch's column starts.
template <typename I>
FUSEBOX_HD int concat_locate(const ConcatBatch& b, I e, I* src, I* dst) {
  const I width = static_cast<I>(b.begin[b.count]);
  const I o = e / width, c = e % width;
  int lo = 0, hi = b.count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<I>(b.begin[mid]) <= c) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const I begin = static_cast<I>(b.begin[lo]), chunk = static_cast<I>(b.begin[lo + 1]) - begin;
  *src = o * chunk + (c - begin);
  *dst = o * static_cast<I>(b.row) + static_cast<I>(b.out_offset) + c;
  return lo;
}

// Data offset output element e of a Gather copies, or -1 when its index is out of range (the
// element is then 0).
template <typename I>
FUSEBOX_HD I gather_source(const GatherParams& p, const int64_t* indices, I e) {
  const I slice = static_cast<I>(p.slice), count = static_cast<I>(p.count);
  const I s = e % slice, u = e / slice;
  const I o = u / count;
  int64_t j = indices[u % count];
  if (j < 0) j += p.axis_dim;
  if (j < 0 || j >= p.axis_dim) return -1;
  return (o * static_cast<I>(p.axis_dim) + static_cast<I>(j)) * slice + s;
}

// One 32 x 32 tile of a batched transpose (CopyKind::Tiles): the output is [batch, rows, cols]
// with rows = dims[rank - 2] and cols = dims[rank - 1]; input element (r, c) of the tile's batch
// is at in_base + r + c * col_stride.
struct TransposeTile {
  int64_t in_base;   // input offset of the batch's element (0, 0)
  int64_t out_base;  // output offset of the batch's element (0, 0)
  int64_t r0, c0;    // the tile's first row and column
  int64_t rows, cols, col_stride;
};

// The number of tiles of a Tiles copy.
FUSEBOX_HD int64_t transpose_tiles(const StridedCopyParams& p) {
  const int64_t rows = p.dims[p.rank - 2], cols = p.dims[p.rank - 1];
  const int64_t per_batch = ((rows + kTileDim - 1) / kTileDim) * ((cols + kTileDim - 1) / kTileDim);
  return p.numel / (rows * cols) * per_batch;
}

FUSEBOX_HD TransposeTile transpose_tile(const StridedCopyParams& p, int64_t t) {
  TransposeTile tile;
  const int r = p.rank;
  tile.rows = p.dims[r - 2];
  tile.cols = p.dims[r - 1];
  tile.col_stride = p.strides[r - 1];
  const int64_t col_tiles = (tile.cols + kTileDim - 1) / kTileDim;
  const int64_t per_batch = ((tile.rows + kTileDim - 1) / kTileDim) * col_tiles;
  const int64_t batch = t / per_batch, in_batch = t % per_batch;
  tile.r0 = in_batch / col_tiles * kTileDim;
  tile.c0 = in_batch % col_tiles * kTileDim;
  tile.out_base = batch * tile.rows * tile.cols;
  tile.in_base = p.base;
  int64_t rem = batch;
  for (int d = r - 3; d >= 0; --d) {
    tile.in_base += (rem % p.dims[d]) * p.strides[d];
    rem /= p.dims[d];
  }
  return tile;
}

}  // namespace fusebox::cuda
