#pragma once
// Tiling and layout choices of the CUDA matmul, normalization and attention kernels, as pure
// functions (C++17, no CUDA headers) so they are unit-tested without a GPU
// (tests/cuda/tile_geometry_test.cpp).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fusebox::cuda {

// A strided walk with its size-1 dims dropped and neighbouring dims merged where the strides
// allow (outer stride == inner stride * inner size), the way ops/cpu/strided.h collapses its
// plans: a [256] bias read across a [64, 256] output is dims {64, 256} strides {0, 1}; a dense
// tensor becomes one dim. Never empty: all-size-1 input gives dims {1}, strides {0}.
struct CollapsedStrides {
  std::vector<int64_t> dims, strides;
  bool dense() const { return dims.size() == 1 && strides[0] == 1; }
};
// Throws std::invalid_argument when dims and strides differ in length.
CollapsedStrides collapse_strided(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides);

// How a batch of GEMMs whose operands start at arbitrary offsets (broadcast batch dims resolved
// to repeated offsets) becomes strided-batched cuBLAS calls: `calls` calls of `per_call` GEMMs
// each; call c multiplies A at a_base[c] + j * a_stride with B at b_base[c] + j * b_stride
// (j < per_call) into output matrices c * per_call + j. per_call is the largest divisor of the
// batch for which that holds (all of it when both operands' offsets are arithmetic, e.g. one
// operand broadcast at stride 0).
struct GemmBatches {
  int64_t per_call = 0;
  int64_t a_stride = 0, b_stride = 0;
  std::vector<int64_t> a_base, b_base;  // one per call
  size_t calls() const { return a_base.size(); }
};
// a_offsets and b_offsets have one entry per output matrix (same length, >= 1).
GemmBatches split_gemm_batches(const std::vector<int64_t>& a_offsets, const std::vector<int64_t>& b_offsets);

// Attention, one block per (batch-head, query row): `threads` (a power of two, 32..128) each
// score one key of a chunk of `threads` keys, then stride over the Dv output columns. Shared
// memory holds the query row (d floats), the chunk's probabilities (threads floats), the output
// accumulator (dv floats) and one float per warp for the reductions.
struct AttentionTiles {
  int threads = 32;
  size_t shared_bytes = 0;
};
AttentionTiles attention_tiles(int64_t skv, int64_t d, int64_t dv);

}  // namespace fusebox::cuda
