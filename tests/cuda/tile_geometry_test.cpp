// The CUDA kernels' tiling choices (ops/cuda/host/tile_geometry.h), checked without a GPU.
#include "ops/cuda/host/tile_geometry.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace fusebox::cuda;

namespace {

using V = std::vector<int64_t>;

TEST(CollapseStrided, DenseTensorIsOneDim) {
  const CollapsedStrides c = collapse_strided({2, 3, 4}, {12, 4, 1});
  EXPECT_EQ(c.dims, V({24}));
  EXPECT_EQ(c.strides, V({1}));
  EXPECT_TRUE(c.dense());
}

TEST(CollapseStrided, BiasRowKeepsItsBroadcastDim) {
  // A [256] bias read across a [2, 64, 256] output: the two outer dims merge (both stride 0).
  const CollapsedStrides c = collapse_strided({2, 64, 256}, {0, 0, 1});
  EXPECT_EQ(c.dims, V({128, 256}));
  EXPECT_EQ(c.strides, V({0, 1}));
  EXPECT_FALSE(c.dense());
}

TEST(CollapseStrided, DropsSizeOneDimsAndKeepsScalars) {
  const CollapsedStrides c = collapse_strided({1, 5, 1}, {5, 1, 1});
  EXPECT_EQ(c.dims, V({5}));
  EXPECT_TRUE(c.dense());
  const CollapsedStrides s = collapse_strided({1, 1}, {0, 0});
  EXPECT_EQ(s.dims, V({1}));
  EXPECT_EQ(s.strides, V({0}));
  const CollapsedStrides t = collapse_strided({3, 4}, {1, 3});  // a transpose does not merge
  EXPECT_EQ(t.dims, V({3, 4}));
  EXPECT_EQ(t.strides, V({1, 3}));
  EXPECT_THROW(collapse_strided({2}, {}), std::invalid_argument);
}

TEST(SplitGemmBatches, ArithmeticOffsetsAreOneCall) {
  // [4, M, K] x [K, N] not folded (e.g. transA): B broadcast at stride 0.
  const GemmBatches g = split_gemm_batches({0, 10, 20, 30}, {0, 0, 0, 0});
  EXPECT_EQ(g.calls(), 1u);
  EXPECT_EQ(g.per_call, 4);
  EXPECT_EQ(g.a_stride, 10);
  EXPECT_EQ(g.b_stride, 0);
  EXPECT_EQ(g.a_base, V({0}));
}

TEST(SplitGemmBatches, TwoWayBroadcastSplitsOnTheInnerDim) {
  // A batch [2, 1], B batch [1, 3] -> output batch [2, 3]; matrices of 6 (A) and 5 (B) elements.
  const GemmBatches g = split_gemm_batches({0, 0, 0, 6, 6, 6}, {0, 5, 10, 0, 5, 10});
  EXPECT_EQ(g.calls(), 2u);
  EXPECT_EQ(g.per_call, 3);
  EXPECT_EQ(g.a_stride, 0);
  EXPECT_EQ(g.b_stride, 5);
  EXPECT_EQ(g.a_base, V({0, 6}));
  EXPECT_EQ(g.b_base, V({0, 0}));
}

TEST(SplitGemmBatches, SingleGemmAndIrregularOffsets) {
  const GemmBatches one = split_gemm_batches({7}, {3});
  EXPECT_EQ(one.calls(), 1u);
  EXPECT_EQ(one.per_call, 1);
  EXPECT_EQ(one.a_base, V({7}));
  EXPECT_EQ(one.b_base, V({3}));
  const GemmBatches odd = split_gemm_batches({0, 1, 5}, {0, 0, 0});
  EXPECT_EQ(odd.calls(), 3u);
  EXPECT_EQ(odd.per_call, 1);
  EXPECT_EQ(odd.a_base, V({0, 1, 5}));
  EXPECT_THROW(split_gemm_batches({}, {}), std::invalid_argument);
  EXPECT_THROW(split_gemm_batches({0}, {0, 1}), std::invalid_argument);
}

// The flash kernel's shared memory, float by float: Q rows, padded K tile, V tile, scores,
// accumulator, three per-row values.
TEST(AttentionTiles, SharedBytesCountEveryArray) {
  EXPECT_EQ(attention_shared_bytes(16, 64, 64, 32),
            (16 * 64 + 64 * 65 + 64 * 32 + 16 * 64 + 16 * 32 + 3 * 16) * sizeof(float));
  EXPECT_EQ(attention_shared_bytes(4, 16, 0, 0), (16 * 1 + 4 * 16 + 3 * 4) * sizeof(float));
}

TEST(AttentionTiles, LargestTilesThatFitPreferringRows) {
  const size_t k48 = 48 * 1024, h100 = 227 * 1024;
  // d = dv = 64 at 48 KiB: 32 x 64 needs 57,984 bytes, 16 x 64 (45,504) fits.
  AttentionTiles t = attention_tiles(8, 1000, 1000, 64, 64, k48);
  EXPECT_TRUE(t.fits);
  EXPECT_EQ(t.threads, kAttentionThreads);
  EXPECT_EQ(t.rows, 16);
  EXPECT_EQ(t.keys, 64);
  EXPECT_LE(t.shared_bytes, k48);
  EXPECT_GT(attention_shared_bytes(32, 64, 64, 64), k48);
  EXPECT_EQ(t.blocks, 8 * 63);  // ceil(1000 / 16) tiles of rows per batch-head
  // With an H100's opt-in limit the largest tile fits.
  t = attention_tiles(8, 1000, 1000, 64, 64, h100);
  EXPECT_EQ(t.rows, 32);
  EXPECT_EQ(t.keys, 64);
  EXPECT_EQ(t.blocks, 8 * 32);
  // d = dv = 256 at 48 KiB steps down to 4 x 16 (8 x 16 needs 49,824 bytes).
  t = attention_tiles(1, 512, 512, 256, 256, k48);
  EXPECT_TRUE(t.fits);
  EXPECT_EQ(t.rows, 4);
  EXPECT_EQ(t.keys, 16);
  EXPECT_LE(t.shared_bytes, k48);
}

TEST(AttentionTiles, ShortSequencesGetSmallTiles) {
  // One query row and 5 keys: 4 rows (the least) and 16 keys (the least), not 32 x 64.
  AttentionTiles t = attention_tiles(3, 1, 5, 64, 64, 48 * 1024);
  EXPECT_EQ(t.rows, 4);
  EXPECT_EQ(t.keys, 16);
  EXPECT_EQ(t.blocks, 3);
  t = attention_tiles(2, 9, 40, 32, 32, 48 * 1024);
  EXPECT_EQ(t.rows, 16);  // 9 rounded up to a power of two
  EXPECT_EQ(t.keys, 64);  // 40 likewise
  EXPECT_EQ(t.blocks, 2);
  // No rows or keys at all still gives a valid (empty) launch.
  t = attention_tiles(0, 0, 0, 0, 0, 48 * 1024);
  EXPECT_TRUE(t.fits);
  EXPECT_EQ(t.blocks, 0);
}

TEST(AttentionTiles, HeadDimsTooLargeForSharedMemoryDoNotFit) {
  // d = dv = 1024 at 48 KiB: even 4 x 16 needs 4 * (4096 + 16400 + 16384 + 64 + 4096 + 12) bytes.
  const AttentionTiles t = attention_tiles(1, 64, 64, 1024, 1024, 48 * 1024);
  EXPECT_FALSE(t.fits);
  EXPECT_EQ(t.rows, 4);
  EXPECT_EQ(t.keys, 16);
  EXPECT_EQ(t.shared_bytes, attention_shared_bytes(4, 16, 1024, 1024));
  EXPECT_GT(t.shared_bytes, size_t{48 * 1024});
  // The same head dims fit an H100's 227 KiB.
  EXPECT_TRUE(attention_tiles(1, 64, 64, 1024, 1024, 227 * 1024).fits);
  EXPECT_THROW(attention_tiles(1, -1, 1, 1, 1, 48 * 1024), std::invalid_argument);
}

}  // namespace
