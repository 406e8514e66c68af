#pragma once
// Launchers and parameters of the layout kernels (layout_kernels.cu): strided copies
// (Transpose, Slice), Concat, Gather and plain copies (view ops outside an executor). C++17 with
// no core headers, so nvcc never sees core's C++20; layout.cpp fills the parameters in prepare().
// Elements are copied by value as 4- or 8-byte words, so one kernel serves f32 and i64.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace fusebox::cuda {

inline constexpr int kLayoutMaxDims = 8;  // collapsed dims of a strided copy (more are refused)
inline constexpr int kConcatBatch = 32;   // Concat inputs one launch copies
inline constexpr int kConcatMaxInputs = 1024;  // the schema's max_inputs

// How a strided copy runs, chosen in prepare() from the collapsed walk, as on the CPU:
// Memcpy: one contiguous run; Tiles: the last two collapsed dims swapped (batched matrix
// transpose: 32 x 32 tiles through shared memory, tile_geometry); Gather: one thread per output
// element reading through the strides (rows whose innermost dim is contiguous read coalesced).
enum class CopyKind : int32_t { Memcpy, Tiles, Gather };

// Output element (i_0..i_{r-1}) of the collapsed walk reads input element
// base + sum_d i_d * strides[d]; strides may be negative (Slice with steps < 0).
struct StridedCopyParams {
  CopyKind kind;
  int32_t rank;
  int32_t elem_bytes;  // 4 or 8
  bool index32;        // input and output have at most kIndex32Limit elements
  int64_t numel;       // output elements
  int64_t base;
  int64_t dims[kLayoutMaxDims];
  int64_t strides[kLayoutMaxDims];
};

// Up to kConcatBatch inputs of a Concat, copied by one launch: per outer index, input j
// contributes its chunk (elements) at columns [begin[j], begin[j + 1]) of the batch's span,
// which starts `out_offset` elements into an output row of `row` elements.
struct ConcatBatch {
  int32_t count;
  int32_t elem_bytes;
  bool index32;
  int64_t outer;
  int64_t row;
  int64_t out_offset;
  const void* src[kConcatBatch];
  int64_t begin[kConcatBatch + 1];  // begin[count]: the batch's width
};

// Gather along an axis: data [outer, axis_dim, slice] (elements), indices [count], output
// [outer, count, slice]. An index outside [-axis_dim, axis_dim) gives a zero slice (run() cannot
// throw), as on the CPU.
struct GatherParams {
  int32_t elem_bytes;
  bool index32;
  int64_t outer;
  int64_t axis_dim;
  int64_t count;
  int64_t slice;
};

// None allocates or synchronizes (graph-capturable); empty work launches nothing.
void launch_strided_copy(const StridedCopyParams& p, const void* x, void* y, cudaStream_t stream, int sm_count);
void launch_concat_batch(const ConcatBatch& b, void* y, cudaStream_t stream, int sm_count);
void launch_gather(const GatherParams& p, const void* x, const int64_t* indices, void* y, cudaStream_t stream,
                   int sm_count);
// y = x, `bytes` bytes (nothing when x == y).
void launch_copy(const void* x, void* y, size_t bytes, cudaStream_t stream);

}  // namespace fusebox::cuda
