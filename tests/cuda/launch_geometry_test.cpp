// Launch geometry of the CUDA kernels (ops/cuda/host/launch_geometry.h): exact grids, blocks and
// shared memory for the element-wise grid-stride loops, the per-row reductions and the tiled
// transposes, including empty inputs, the per-SM caps and the hardware limits. Pure functions:
// these run on machines without a GPU.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ops/cuda/host/launch_geometry.h"

using namespace fusebox::cuda;

namespace {

// ---- elementwise_geometry ----------------------------------------------------------------------

TEST(ElementwiseGeometry, EmptyInputLaunchesNothing) {
  const LaunchGeometry g = elementwise_geometry(0, 132);
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.threads(), 0);
}

TEST(ElementwiseGeometry, SmallInputsGetJustEnoughBlocks) {
  LaunchGeometry g = elementwise_geometry(1, 132);
  EXPECT_FALSE(g.empty());
  EXPECT_EQ(g.grid.x, 1);
  EXPECT_EQ(g.block.x, kElementwiseBlock);
  EXPECT_EQ(g.block.y, 1);
  EXPECT_EQ(g.shared_bytes, 0u);
  EXPECT_EQ(elementwise_geometry(256, 132).grid.x, 1);
  EXPECT_EQ(elementwise_geometry(257, 132).grid.x, 2);
  EXPECT_EQ(elementwise_geometry(1000, 132).grid.x, 4);
}

TEST(ElementwiseGeometry, LargeInputsAreCappedPerSm) {
  // 132 SMs x 8 blocks: the grid-stride loop covers everything beyond 1056 blocks.
  EXPECT_EQ(elementwise_geometry(int64_t{1} << 30, 132).grid.x, 132 * kBlocksPerSm);
  EXPECT_EQ(elementwise_geometry(int64_t{1} << 40, 1).grid.x, kBlocksPerSm);
  // Exactly at the cap, and one block past it.
  EXPECT_EQ(elementwise_geometry(int64_t{256} * 16, 2).grid.x, 16);
  EXPECT_EQ(elementwise_geometry(int64_t{256} * 16 + 1, 2).grid.x, 16);
  // Sizes past 2^31 elements stay exact in 64 bits.
  const LaunchGeometry g = elementwise_geometry((int64_t{1} << 33) + 5, 1000);
  EXPECT_EQ(g.grid.x, 8000);
  EXPECT_EQ(g.threads(), int64_t{8000} * kElementwiseBlock);
}

TEST(ElementwiseGeometry, RejectsBadArguments) {
  EXPECT_THROW(elementwise_geometry(-1, 132), std::invalid_argument);
  EXPECT_THROW(elementwise_geometry(10, 0), std::invalid_argument);
  EXPECT_THROW(elementwise_geometry(10, -3), std::invalid_argument);
}

// ---- row_geometry ------------------------------------------------------------------------------

TEST(RowGeometry, EmptyRowsOrColumnsLaunchNothing) {
  EXPECT_TRUE(row_geometry(0, 128).empty());
  EXPECT_TRUE(row_geometry(64, 0).empty());
  EXPECT_TRUE(row_geometry(0, 0).empty());
}

TEST(RowGeometry, ThreadsArePowersOfTwoCoveringTheRow) {
  LaunchGeometry g = row_geometry(64, 1);
  EXPECT_EQ(g.block.x, 32);  // never below a warp
  EXPECT_EQ(g.grid.x, 64);
  EXPECT_EQ(g.grid.y, 1);
  EXPECT_EQ(g.shared_bytes, sizeof(float));
  EXPECT_EQ(row_geometry(1, 32).block.x, 32);
  EXPECT_EQ(row_geometry(1, 33).block.x, 64);
  EXPECT_EQ(row_geometry(1, 768).block.x, 1024);
  g = row_geometry(1, 1024);
  EXPECT_EQ(g.block.x, 1024);
  EXPECT_EQ(g.shared_bytes, 32 * sizeof(float));
  // Longer rows keep 1024 threads; each strides over the rest.
  EXPECT_EQ(row_geometry(1, 50000).block.x, kMaxThreadsPerBlock);
}

TEST(RowGeometry, RowsPastTheGridLimitSpillIntoY) {
  LaunchGeometry g = row_geometry(kMaxGridX, 64);
  EXPECT_EQ(g.grid.x, kMaxGridX);
  EXPECT_EQ(g.grid.y, 1);
  g = row_geometry(kMaxGridX + 1, 64);
  EXPECT_EQ(g.grid.x, kMaxGridX);
  EXPECT_EQ(g.grid.y, 2);
  // Every row has a block, and row_of_block finds the last one.
  EXPECT_GE(g.grid.x * g.grid.y, kMaxGridX + 1);
  EXPECT_EQ(row_of_block(0, 1, g.grid.x), kMaxGridX);
  EXPECT_EQ(row_of_block(5, 0, g.grid.x), 5);
}

TEST(RowGeometry, RejectsBadArguments) {
  EXPECT_THROW(row_geometry(-1, 4), std::invalid_argument);
  EXPECT_THROW(row_geometry(4, -1), std::invalid_argument);
  EXPECT_THROW(row_geometry(kMaxGridX * (kMaxGridYZ + 1), 4), std::invalid_argument);
}

// ---- tile_count / tile_geometry -------------------------------------------------------------

TEST(TileCount, CountsPartialTiles) {
  EXPECT_EQ(tile_count(1, 32, 32), 1);
  EXPECT_EQ(tile_count(1, 33, 32), 2);
  EXPECT_EQ(tile_count(1, 1, 1), 1);
  EXPECT_EQ(tile_count(12, 128, 64), 12 * 4 * 2);
  EXPECT_EQ(tile_count(3, 100, 70), 3 * 4 * 3);
}

TEST(TileCount, EmptyAndInvalidSizes) {
  EXPECT_EQ(tile_count(0, 32, 32), 0);
  EXPECT_EQ(tile_count(4, 0, 32), 0);
  EXPECT_EQ(tile_count(4, 32, 0), 0);
  EXPECT_THROW(tile_count(-1, 32, 32), std::invalid_argument);
  EXPECT_THROW(tile_count(1, -32, 32), std::invalid_argument);
  EXPECT_THROW(tile_count(int64_t{1} << 62, int64_t{1} << 40, int64_t{1} << 40), std::invalid_argument);
}

TEST(TileGeometry, BlocksAndSharedMemory) {
  LaunchGeometry g = tile_geometry(5, 132, 4);
  EXPECT_EQ(g.grid.x, 5);
  EXPECT_EQ(g.block.x, kTileDim);
  EXPECT_EQ(g.block.y, kTileBlockRows);
  EXPECT_EQ(g.block.z, 1);
  EXPECT_EQ(g.shared_bytes, 32u * 33u * 4u);
  EXPECT_EQ(tile_geometry(5, 132, 8).shared_bytes, 32u * 33u * 8u);
  // The tile fits in the 48 KiB every block may use without opting in.
  EXPECT_LE(tile_geometry(1, 1, 8).shared_bytes, 48u * 1024u);
}

TEST(TileGeometry, EmptyAndCapped) {
  EXPECT_TRUE(tile_geometry(0, 132, 4).empty());
  EXPECT_EQ(tile_geometry(int64_t{1} << 40, 132, 4).grid.x, 132 * kBlocksPerSm);
  EXPECT_EQ(tile_geometry(16, 2, 4).grid.x, 16);
  EXPECT_EQ(tile_geometry(17, 2, 4).grid.x, 16);
}

TEST(TileGeometry, RejectsBadArguments) {
  EXPECT_THROW(tile_geometry(-1, 132, 4), std::invalid_argument);
  EXPECT_THROW(tile_geometry(1, 0, 4), std::invalid_argument);
  EXPECT_THROW(tile_geometry(1, 132, 2), std::invalid_argument);
  EXPECT_THROW(tile_geometry(1, 132, 16), std::invalid_argument);
}

}  // namespace
