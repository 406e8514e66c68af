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

// Attention, flash-style (attention_kernels.cu): a block of kAttentionThreads threads takes
// `rows` query rows of one batch-head and walks the keys in tiles of `keys`, each K and V tile
// staged once in shared memory for all its rows. Shared memory, in floats:
//   Q rows      rows * d
//   K tile      keys * (d + 1)   (one float of padding per key: the score loop reads down a
//                                 column, and a row length of d + 1 keeps lanes on distinct banks)
//   V tile      keys * dv
//   scores      rows * keys      (then the tile's probabilities)
//   output      rows * dv        (the accumulator)
//   per row     3 * rows         (running max, running sum, this tile's rescale factor)
// The largest tiles that fit `shared_limit` bytes are taken, preferring more rows (each K/V tile
// read from memory serves more rows) and then more keys, from 32 x 64 down to 4 x 16; rows are
// capped at sq rounded up to a power of two (at least 4), keys likewise at skv (at least 16), so
// a short sequence does not pay for an empty tile. `fits` is false when even 4 x 16 needs more
// than shared_limit (head dims too large): shared_bytes is then that smallest tile's need.
inline constexpr int kAttentionThreads = 128;
struct AttentionTiles {
  int threads = kAttentionThreads;
  int rows = 0;  // query rows per block
  int keys = 0;  // keys per tile
  size_t shared_bytes = 0;
  int64_t blocks = 0;  // batch * ceil(sq / rows)
  bool fits = false;
};
size_t attention_shared_bytes(int rows, int keys, int64_t d, int64_t dv);
// Throws std::invalid_argument for a negative size.
AttentionTiles attention_tiles(int64_t batch, int64_t sq, int64_t skv, int64_t d, int64_t dv, size_t shared_limit);

}  // namespace fusebox::cuda
