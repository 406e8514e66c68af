#pragma once
// StridedIndex: where the i-th element (row-major over `dims`) of a logical tensor sits in its
// storage, as a plain struct a kernel takes by value (C++17, no core headers, so both g++ and nvcc
// read it). The device side that walks it is in device_util.cuh; host code fills it from
// collapse_strided (host/tile_geometry.h), which keeps the rank small.
#include <cstdint>

namespace fusebox::cuda {

// The CPU's strided walks stop at 16 collapsed dims (ops/cpu/strided.h): the same limit here, so
// the two backends refuse the same shapes.
inline constexpr int kMaxStridedRank = 16;

struct StridedIndex {
  int rank = 0;  // 0: element i is at offset i * 0 = one value (a scalar); see device_util.cuh
  int64_t dims[kMaxStridedRank] = {};
  int64_t strides[kMaxStridedRank] = {};
  bool dense = false;  // offset(i) == i: the kernel skips the divisions
};

}  // namespace fusebox::cuda
