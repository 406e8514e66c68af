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

TEST(AttentionTiles, ThreadsCoverTheKeysUpTo128) {
  EXPECT_EQ(attention_tiles(1, 64, 64).threads, 32);
  EXPECT_EQ(attention_tiles(40, 64, 64).threads, 64);
  EXPECT_EQ(attention_tiles(100000, 64, 64).threads, 128);
  // q row + probabilities + accumulator + one float per warp.
  EXPECT_EQ(attention_tiles(100000, 64, 32).shared_bytes, (64 + 32 + 128 + 4) * sizeof(float));
  EXPECT_EQ(attention_tiles(0, 0, 0).shared_bytes, (32 + 1) * sizeof(float));
  EXPECT_THROW(attention_tiles(-1, 1, 1), std::invalid_argument);
}

}  // namespace
