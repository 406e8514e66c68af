#include "ops/cuda/host/launch_geometry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/base/checked.h"

namespace fusebox::cuda {

LaunchGeometry elementwise_geometry(int64_t n, int sm_count) {
  if (n < 0) throw std::invalid_argument("elementwise_geometry: negative item count " + std::to_string(n));
  if (sm_count < 1) throw std::invalid_argument("elementwise_geometry: sm_count must be >= 1, got " + std::to_string(sm_count));
  LaunchGeometry g;
  g.block.x = kElementwiseBlock;
  const int64_t needed = (n + kElementwiseBlock - 1) / kElementwiseBlock;
  g.grid.x = std::min<int64_t>(needed, static_cast<int64_t>(sm_count) * kBlocksPerSm);
  return g;
}

LaunchGeometry row_geometry(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0)
    throw std::invalid_argument("row_geometry: negative size " + std::to_string(rows) + " x " + std::to_string(cols));
  LaunchGeometry g;
  if (rows == 0 || cols == 0) return g;
  int64_t threads = kWarpSize;
  while (threads < cols && threads < kMaxThreadsPerBlock) threads *= 2;
  g.block.x = threads;
  g.grid.x = std::min(rows, kMaxGridX);
  g.grid.y = (rows + g.grid.x - 1) / g.grid.x;
  if (g.grid.y > kMaxGridYZ) throw std::invalid_argument("row_geometry: " + std::to_string(rows) + " rows is more than one launch can hold");
  g.shared_bytes = static_cast<size_t>(threads / kWarpSize) * sizeof(float);
  return g;
}

int64_t tile_count(int64_t batches, int64_t rows, int64_t cols) {
  if (batches < 0 || rows < 0 || cols < 0)
    throw std::invalid_argument("tile_count: negative size " + std::to_string(batches) + " x " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  const int64_t row_tiles = (rows + kTileDim - 1) / kTileDim, col_tiles = (cols + kTileDim - 1) / kTileDim;
  const auto per_matrix = checked_mul(row_tiles, col_tiles);
  const auto total = per_matrix ? checked_mul(*per_matrix, batches) : std::nullopt;
  if (!total) throw std::invalid_argument("tile_count: too many tiles");
  return *total;
}

LaunchGeometry tile_geometry(int64_t tiles, int sm_count, size_t elem_bytes) {
  if (tiles < 0) throw std::invalid_argument("tile_geometry: negative tile count " + std::to_string(tiles));
  if (sm_count < 1)
    throw std::invalid_argument("tile_geometry: sm_count must be >= 1, got " + std::to_string(sm_count));
  if (elem_bytes != 4 && elem_bytes != 8)
    throw std::invalid_argument("tile_geometry: element size must be 4 or 8 bytes, got " + std::to_string(elem_bytes));
  LaunchGeometry g;
  g.block.x = kTileDim;
  g.block.y = kTileBlockRows;
  g.grid.x = std::min<int64_t>(tiles, static_cast<int64_t>(sm_count) * kBlocksPerSm);
  g.shared_bytes = static_cast<size_t>(kTileDim) * (kTileDim + 1) * elem_bytes;
  return g;
}

}  // namespace fusebox::cuda
