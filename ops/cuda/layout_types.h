#pragma once
// The parameters of the layout kernels (layout_kernels.h declares their launchers): plain C++17
// with no CUDA or core headers, so host code and host tests (tests/cuda/layout_index_test.cpp)
// use them on machines without a CUDA toolkit. Elements are copied by value as 4- or 8-byte
// words, so one kernel serves f32 and i64.
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

// Groups the non-empty inputs of a Concat into batches and calls launch(batch) for each, in
// order. `proto` carries the fields every batch shares (elem_bytes, index32, outer, row);
// chunk[i] is input i's elements per outer index and inputs[i] its pointer. Inputs with an empty
// chunk are skipped: they take no columns, so each batch's inputs stay adjacent in an output row
// and the batch starts where the previous non-empty chunk ended. No allocation: run() calls it.
template <typename Launch>
void for_each_concat_batch(const ConcatBatch& proto, int32_t count, const int64_t* chunk, const void* const* inputs,
                           Launch&& launch) {
  ConcatBatch b = proto;
  b.count = 0;
  b.begin[0] = 0;
  int64_t offset = 0;  // where input i's chunk starts in an output row
  for (int32_t i = 0; i < count; ++i) {
    const int64_t c = chunk[i];
    if (c > 0) {
      if (b.count == 0) b.out_offset = offset;
      b.src[b.count] = inputs[i];
      b.begin[b.count + 1] = b.begin[b.count] + c;
      if (++b.count == kConcatBatch) {
        launch(static_cast<const ConcatBatch&>(b));
        b.count = 0;
      }
    }
    offset += c;
  }
  if (b.count > 0) launch(static_cast<const ConcatBatch&>(b));
}

// Gather along an axis: data [outer, axis_dim, slice] (elements), indices [count], output
// [outer, count, slice]. An index outside [-axis_dim, axis_dim) gives a zero slice (run() cannot
// throw) and is reported: a check kernel writes the first such index into `fault` (host-mapped
// memory the backend reads at synchronize, which raises the CPU's error; host/gather_fault.h).
struct GatherFault {
  uint32_t site;    // 0: no fault; else the Gather's site (host/gather_fault.h names it)
  uint32_t unused;
  int64_t element;  // the first out-of-range position in the indices tensor
  int64_t index;    // its value
};

struct GatherParams {
  int32_t elem_bytes;
  bool index32;
  int64_t outer;
  int64_t axis_dim;
  int64_t count;
  int64_t slice;
  uint32_t site;       // this Gather's site id (host/gather_fault.h)
  GatherFault* fault;  // device view of the backend's host-mapped fault record; null: unchecked
};

}  // namespace fusebox::cuda
