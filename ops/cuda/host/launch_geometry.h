#pragma once
// Launch geometry for the CUDA backend's kernels, as pure functions compiled by both g++ and nvcc
// (C++17, no CUDA headers), so the choices are unit-tested on machines without a GPU
// (tests/cuda/launch_geometry_test.cpp). Each function returns what a launch needs: the grid, the
// block and the dynamic shared memory; an empty grid means there is nothing to launch.
#include <cstddef>
#include <cstdint>

namespace fusebox::cuda {

inline constexpr int kWarpSize = 32;
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int64_t kMaxGridX = 2147483647;  // 2^31 - 1
inline constexpr int64_t kMaxGridYZ = 65535;
// Blocks per SM a grid-stride loop is given: enough to hide latency, few enough that each thread
// loops over several items (no tail of tiny blocks).
inline constexpr int kBlocksPerSm = 8;
inline constexpr int kElementwiseBlock = 256;

struct Dim3 {
  int64_t x = 1, y = 1, z = 1;
};

struct LaunchGeometry {
  Dim3 grid{0, 1, 1};
  Dim3 block{1, 1, 1};
  size_t shared_bytes = 0;
  bool empty() const { return grid.x == 0 || grid.y == 0 || grid.z == 0; }
  int64_t threads() const { return grid.x * grid.y * grid.z * block.x * block.y * block.z; }
};

// n independent items, one per thread in a grid-stride loop: blocks of kElementwiseBlock
// threads, at most kBlocksPerSm per SM (the loop covers the rest). n == 0: empty. Throws
// std::invalid_argument for n < 0 or sm_count < 1.
LaunchGeometry elementwise_geometry(int64_t n, int sm_count);

// `rows` independent rows of `cols` floats, reduced along the row (Softmax, LayerNorm,
// ReduceMean): one block per row (rows beyond the grid's x limit spill into y), threads a power
// of two from 32 to 1024, the smallest covering the row or 1024 (each thread strides over the
// rest); shared memory for one float per warp. rows == 0 or cols == 0: empty.
LaunchGeometry row_geometry(int64_t rows, int64_t cols);

// Which row a block of row_geometry works on: blockIdx.y * gridDim.x + blockIdx.x.
inline int64_t row_of_block(int64_t block_x, int64_t block_y, int64_t grid_x) { return block_y * grid_x + block_x; }

// ---- tiled transposes (Transpose, Slice) ----------------------------------------------------------

// A batched matrix transpose (the input's rows are the output's columns) moves 32 x 32 tiles
// through shared memory, so both the reads and the writes of a warp are contiguous. A block of
// 32 x 8 threads moves one tile at a time (each thread 4 elements per tile), in a grid-stride
// loop over the tiles.
inline constexpr int kTileDim = 32;
inline constexpr int kTileBlockRows = 8;

// Tiles covering `batches` matrices of rows x cols (partial tiles at the edges count as
// tiles). 0 when any size is 0. Throws std::invalid_argument for negative sizes or when the count
// does not fit in int64.
int64_t tile_count(int64_t batches, int64_t rows, int64_t cols);

// `tiles` tiles of elements `elem_bytes` wide (4 or 8): blocks of kTileDim x kTileBlockRows
// threads, at most kBlocksPerSm per SM (the loop covers the rest), and dynamic shared memory
// for one tile padded by a column (kTileDim x (kTileDim + 1) elements), so a warp reading a
// column of the tile hits 32 different banks. tiles == 0: empty. Throws std::invalid_argument
// for tiles < 0, sm_count < 1 or an element size other than 4 or 8.
LaunchGeometry tile_geometry(int64_t tiles, int sm_count, size_t elem_bytes);

}  // namespace fusebox::cuda
