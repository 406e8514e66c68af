#pragma once
// Index helpers of the device kernels that turn a flat output index into operand offsets for a
// broadcast walk made by make_broadcast_walk (ops/cuda/strided_walk.h): collapsed output dims plus,
// per operand, a mask of the dims it reads along. Along those dims an operand is dense, so its
// stride there is the product of the sizes of its inner masked dims, rebuilt here instead of
// passed in (kernel parameters stay small for FusedElementwise's 64 inputs).
//
// I is the index type: int32_t when every tensor has at most kIndex32Limit elements (32-bit
// division is several times cheaper than 64-bit), int64_t otherwise.
//
// Plain C++ outside nvcc, so tests/cuda/broadcast_walk_test.cpp checks the offsets on the host
// against the uncollapsed broadcast strides.
#include <cstdint>

#include "ops/cuda/host_device.h"

namespace fusebox::cuda {

// idx[d] = coordinate of flat output index i along collapsed dim d (rank <= MaxDims).
template <int MaxDims, typename I>
FUSEBOX_HD void decompose_index(I i, int rank, const int64_t* dims, I* idx) {
  if (rank == 1) {
    idx[0] = i;  // same-shape and scalar operands: no division at all
    return;
  }
  I rem = i;
  FUSEBOX_UNROLL
  for (int d = MaxDims - 1; d >= 0; --d) {
    if (d >= rank) continue;
    const I n = static_cast<I>(dims[d]);
    idx[d] = rem % n;
    rem /= n;
  }
}

// Offset of the element an operand with dim mask `mask` reads for output coordinates idx.
// A mask covering every dim is a full-size operand (offset i); an empty one a single value.
template <int MaxDims, typename I>
FUSEBOX_HD I masked_offset(uint32_t mask, I i, int rank, const int64_t* dims, const I* idx) {
  const uint32_t full = (uint32_t{1} << rank) - 1;
  if (mask == full) return i;
  if (mask == 0) return 0;
  I off = 0, mult = 1;
  FUSEBOX_UNROLL
  for (int d = MaxDims - 1; d >= 0; --d) {
    if (d >= rank || !((mask >> d) & 1u)) continue;
    off += idx[d] * mult;
    mult *= static_cast<I>(dims[d]);
  }
  return off;
}

}  // namespace fusebox::cuda
