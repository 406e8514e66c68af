// The layout kernels behind layout_kernels.h: strided copies (one thread per output element, or
// 32 x 32 shared-memory tiles for batched matrix transposes), Concat by batches of inputs,
// Gather by slices, and device-to-device copies. Elements move as 4- or 8-byte unsigned words.
#include <cuda_runtime.h>

#include "ops/cuda/device_util.cuh"
#include "ops/cuda/host/launch_geometry.h"
#include "ops/cuda/layout_index.cuh"
#include "ops/cuda/layout_kernels.h"

namespace fusebox::cuda {

namespace {

// Kernels whose parameter structs are indexed at run time take them as __grid_constant__ (sm_70+):
// read in place from the parameter bank instead of copied to each thread's local memory.

// ---- strided copies --------------------------------------------------------------------------

template <typename T, typename I>
__global__ void strided_gather_kernel(const __grid_constant__ StridedCopyParams p, const T* x, T* y) {
  const I n = static_cast<I>(p.numel);
  for (I i = first_index<I>(); i < n; i += grid_stride<I>()) y[i] = x[strided_offset(p, i)];
}

// Batched matrix transpose: the output is [batch, rows, cols] (contiguous), and input element
// (r, c) of a batch is at its base + r + c * strides[rank - 1] (rows are contiguous in the
// input). A block moves one 32 x 32 tile at a time: it reads the tile along the input's rows and
// writes it along the output's, both coalesced, through shared memory padded by a column.
template <typename T>
__global__ void transpose_tiles_kernel(const __grid_constant__ StridedCopyParams p, const T* x, T* y) {
  extern __shared__ __align__(8) unsigned char smem[];
  T* tile = reinterpret_cast<T*>(smem);  // [kTileDim][kTileDim + 1], indexed [c][r]
  constexpr int kPitch = kTileDim + 1;
  const int64_t tiles = transpose_tiles(p);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const TransposeTile w = transpose_tile(p, t);
    // Read: threadIdx.x runs along the input's contiguous rows.
    for (int j = ty; j < kTileDim; j += kTileBlockRows) {
      const int64_t rr = w.r0 + tx, cc = w.c0 + j;
      if (rr < w.rows && cc < w.cols) tile[j * kPitch + tx] = x[w.in_base + rr + cc * w.col_stride];
    }
    __syncthreads();
    // Write: threadIdx.x runs along the output's contiguous columns.
    for (int j = ty; j < kTileDim; j += kTileBlockRows) {
      const int64_t rr = w.r0 + j, cc = w.c0 + tx;
      if (rr < w.rows && cc < w.cols) y[w.out_base + rr * w.cols + cc] = tile[tx * kPitch + j];
    }
    __syncthreads();  // the next tile overwrites this one
  }
}

template <typename T>
void strided_copy_typed(const StridedCopyParams& p, const void* x, void* y, cudaStream_t s, int sm_count) {
  const T* tx = static_cast<const T*>(x);
  T* ty = static_cast<T*>(y);
  if (p.kind == CopyKind::Tiles) {
    const int r = p.rank;
    const int64_t rows = p.dims[r - 2], cols = p.dims[r - 1];
    const LaunchGeometry g = tile_geometry(tile_count(p.numel / (rows * cols), rows, cols), sm_count < 1 ? 1 : sm_count,
                                           sizeof(T));
    if (g.empty()) return;
    const dim3 grid(static_cast<unsigned>(g.grid.x));
    const dim3 block(static_cast<unsigned>(g.block.x), static_cast<unsigned>(g.block.y));
    transpose_tiles_kernel<T><<<grid, block, g.shared_bytes, s>>>(p, tx, ty);
    return;
  }
  dim3 g, bl;
  if (!ew_grid(p.numel, sm_count, &g, &bl)) return;
  if (p.index32) {
    strided_gather_kernel<T, int32_t><<<g, bl, 0, s>>>(p, tx, ty);
  } else {
    strided_gather_kernel<T, int64_t><<<g, bl, 0, s>>>(p, tx, ty);
  }
}

// ---- Concat ----------------------------------------------------------------------------------

template <typename T, typename I>
__global__ void concat_kernel(const __grid_constant__ ConcatBatch b, T* y) {
  const I n = static_cast<I>(b.outer) * static_cast<I>(b.begin[b.count]);
  for (I e = first_index<I>(); e < n; e += grid_stride<I>()) {
    I src = 0, dst = 0;
    const int j = concat_locate(b, e, &src, &dst);
    y[dst] = static_cast<const T*>(b.src[j])[src];
  }
}

template <typename T>
void concat_typed(const ConcatBatch& b, void* y, cudaStream_t s, dim3 g, dim3 bl) {
  T* ty = static_cast<T*>(y);
  if (b.index32) {
    concat_kernel<T, int32_t><<<g, bl, 0, s>>>(b, ty);
  } else {
    concat_kernel<T, int64_t><<<g, bl, 0, s>>>(b, ty);
  }
}

// ---- Gather ----------------------------------------------------------------------------------

template <typename T, typename I>
__global__ void gather_kernel(GatherParams p, const T* x, const int64_t* indices, T* y) {
  const I n = static_cast<I>(p.outer) * static_cast<I>(p.count) * static_cast<I>(p.slice);
  for (I e = first_index<I>(); e < n; e += grid_stride<I>()) {
    const I src = gather_source(p, indices, e);
    y[e] = src < 0 ? T{0} : x[src];
  }
}

template <typename T>
void gather_typed(const GatherParams& p, const void* x, const int64_t* indices, void* y, cudaStream_t s, dim3 g,
                  dim3 bl) {
  const T* tx = static_cast<const T*>(x);
  T* ty = static_cast<T*>(y);
  if (p.index32) {
    gather_kernel<T, int32_t><<<g, bl, 0, s>>>(p, tx, indices, ty);
  } else {
    gather_kernel<T, int64_t><<<g, bl, 0, s>>>(p, tx, indices, ty);
  }
}

// One block finds the first index of the tensor outside [-axis_dim, axis_dim) (the position the
// CPU's scan reports), and records it unless an earlier op of the run already recorded a fault.
constexpr int kGatherCheckThreads = 256;

__global__ void gather_check_kernel(const int64_t* indices, int64_t count, int64_t axis_dim, uint32_t site,
                                    GatherFault* fault) {
  __shared__ unsigned long long first;
  if (threadIdx.x == 0) first = ~0ull;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    const int64_t j = indices[i];
    if (j < -axis_dim || j >= axis_dim) {
      atomicMin(&first, static_cast<unsigned long long>(i));
      break;  // this thread's later positions are larger
    }
  }
  __syncthreads();
  if (threadIdx.x != 0 || first == ~0ull) return;
  if (atomicCAS(&fault->site, 0u, site) != 0u) return;  // an earlier op's fault stays the one reported
  fault->element = static_cast<int64_t>(first);
  fault->index = indices[first];
  __threadfence_system();
}

}  // namespace

void launch_strided_copy(const StridedCopyParams& p, const void* x, void* y, cudaStream_t stream, int sm_count) {
  if (p.numel <= 0) return;
  if (p.kind == CopyKind::Memcpy) {
    const auto* src = static_cast<const unsigned char*>(x) + p.base * p.elem_bytes;
    cudaMemcpyAsync(y, src, static_cast<size_t>(p.numel) * static_cast<size_t>(p.elem_bytes),
                    cudaMemcpyDeviceToDevice, stream);
    return;
  }
  if (p.elem_bytes == 8) {
    strided_copy_typed<uint64_t>(p, x, y, stream, sm_count);
  } else {
    strided_copy_typed<uint32_t>(p, x, y, stream, sm_count);
  }
}

void launch_concat_batch(const ConcatBatch& b, void* y, cudaStream_t stream, int sm_count) {
  if (b.count <= 0 || b.outer <= 0 || b.begin[b.count] <= 0) return;
  dim3 g, bl;
  if (!ew_grid(b.outer * b.begin[b.count], sm_count, &g, &bl)) return;
  if (b.elem_bytes == 8) {
    concat_typed<uint64_t>(b, y, stream, g, bl);
  } else {
    concat_typed<uint32_t>(b, y, stream, g, bl);
  }
}

void launch_gather(const GatherParams& p, const void* x, const int64_t* indices, void* y, cudaStream_t stream,
                   int sm_count) {
  if (p.count <= 0 || p.outer <= 0) return;
  if (p.fault) gather_check_kernel<<<1, kGatherCheckThreads, 0, stream>>>(indices, p.count, p.axis_dim, p.site, p.fault);
  if (p.slice <= 0) return;
  dim3 g, bl;
  if (!ew_grid(p.outer * p.count * p.slice, sm_count, &g, &bl)) return;
  if (p.elem_bytes == 8) {
    gather_typed<uint64_t>(p, x, indices, y, stream, g, bl);
  } else {
    gather_typed<uint32_t>(p, x, indices, y, stream, g, bl);
  }
}

void launch_copy(const void* x, void* y, size_t bytes, cudaStream_t stream) {
  if (bytes == 0 || x == y) return;
  cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, stream);
}

}  // namespace fusebox::cuda
