// Ops that move data without arithmetic: Transpose, Concat, Slice, Gather, and the view ops
// (Reshape, Identity, Flatten, Squeeze, Unsqueeze) for callers that do not alias them.
//
// Kernels copy elements by value as 4- or 8-byte words, so one instantiation serves f32 and i64
// (and any future type of the same size).
//
// Transpose and Slice are strided reads of the input into a contiguous output (a StridedPlan:
// collapsed, so [B,S,H,D] -> [B,H,S,D] is a 3-D walk whose innermost run is D contiguous
// elements). By the collapsed plan:
//   - one contiguous run: memcpy;
//   - innermost dim contiguous in the input (head split (0,2,1,3), slices along outer dims):
//     a row copy per run;
//   - the last two collapsed dims swapped (batched matrix transpose, NCHW <-> NHWC): 32 x 32
//     tiles, so both the reads and the writes of a tile stay in L1;
//   - anything else: a strided gather per run.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/layout_params.h"
#include "core/ir/shape.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/strided.h"

namespace fusebox::cpu {

namespace {

constexpr int64_t kTransposeTile = 32;

// ---- views ---------------------------------------------------------------------------------

struct CopyState {
  size_t bytes = 0;
};

// Executors alias view ops and never call this; the eager fallback may, with its own output.
void run_view_copy(const exec::KernelArgs& args) {
  const auto& st = state_of<CopyState>(args);
  if (args.outputs[0] != args.inputs[0] && st.bytes)
    std::memcpy(args.outputs[0], args.inputs[0], st.bytes);
}

std::shared_ptr<const void> prepare_view_copy(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  if (ctx.outputs[0].nbytes() != ctx.inputs[0].nbytes()) fail(ctx, "view changes the byte size");
  return exec::make_state(CopyState{ctx.inputs[0].nbytes()});
}

// ---- strided copies: Transpose and Slice ---------------------------------------------------

enum class CopyKind : uint8_t { Memcpy, Rows, Tiles, Gather };

struct StridedCopyState {
  StridedPlan plan;  // operand 0: the input, walked in output order
  CopyKind kind = CopyKind::Gather;
  size_t elem = 4;
};

template <typename T>
void transpose_tiles(const StridedPlan& p, const T* x, T* y) {
  // The last two collapsed dims are swapped: output [rows, cols] reads input element (r, c) at
  // r + c * sc. Leading dims are a batch with their own strides.
  const int r = p.rank;
  const int64_t rows = p.dims[r - 2], cols = p.dims[r - 1], sc = p.inner_stride(0);
  const int64_t batches = p.numel / (rows * cols);
  const int64_t row_tiles = (rows + kTransposeTile - 1) / kTransposeTile;
  const int64_t grain = std::max<int64_t>(1, kGrainSimple / (kTransposeTile * cols));
  parallel_for(batches * row_tiles, grain, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t batch = u / row_tiles, r0 = (u % row_tiles) * kTransposeTile;
      int64_t in_base = p.base[0], rem = batch;
      for (int d = r - 3; d >= 0; --d) {
        in_base += (rem % p.dims[d]) * p.stride(0, d);
        rem /= p.dims[d];
      }
      const int64_t r1 = std::min(rows, r0 + kTransposeTile);
      T* out = y + batch * rows * cols;
      for (int64_t c0 = 0; c0 < cols; c0 += kTransposeTile) {
        const int64_t c1 = std::min(cols, c0 + kTransposeTile);
        for (int64_t i = r0; i < r1; ++i) {
          const T* src = x + in_base + i;
          T* dst = out + i * cols;
          for (int64_t j = c0; j < c1; ++j) dst[j] = src[j * sc];
        }
      }
    }
  });
}

template <typename T>
void run_strided_copy_typed(const StridedCopyState& st, const T* x, T* y) {
  const StridedPlan& p = st.plan;
  switch (st.kind) {
    case CopyKind::Memcpy:
      parallel_for(p.numel, kGrainCopyBytes / static_cast<int64_t>(sizeof(T)),
                   [&](int64_t begin, int64_t end) {
                     std::memcpy(y + begin, x + p.base[0] + begin,
                                 static_cast<size_t>(end - begin) * sizeof(T));
                   });
      return;
    case CopyKind::Tiles:
      transpose_tiles(p, x, y);
      return;
    case CopyKind::Rows:
    case CopyKind::Gather:
      parallel_for(p.numel, kGrainSimple,
                   [&](int64_t begin, int64_t end) { strided_copy(p, x, y, begin, end); });
      return;
  }
}

void run_strided_copy(const exec::KernelArgs& args) {
  const auto& st = state_of<StridedCopyState>(args);
  if (st.plan.numel == 0) return;
  if (st.elem == 8) {
    run_strided_copy_typed(st, input_ptr<uint64_t>(args, 0), output_ptr<uint64_t>(args, 0));
  } else {
    run_strided_copy_typed(st, input_ptr<uint32_t>(args, 0), output_ptr<uint32_t>(args, 0));
  }
}

StridedCopyState strided_copy_state(const exec::KernelContext& ctx, const ir::StridedRead& r) {
  StridedCopyState st;
  st.elem = ir::dtype_size(ctx.inputs[0].dtype);
  try {
    st.plan = make_strided_plan(r.shape, {r.strides}, {r.offset});
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  const StridedPlan& p = st.plan;
  if (p.rank == 1 && p.inner_stride(0) == 1) {
    st.kind = CopyKind::Memcpy;
  } else if (p.inner_stride(0) == 1) {
    st.kind = CopyKind::Rows;
  } else if (p.rank >= 2 && p.stride(0, p.rank - 2) == 1) {
    st.kind = CopyKind::Tiles;
  } else {
    st.kind = CopyKind::Gather;
  }
  return st;
}

std::shared_ptr<const void> prepare_transpose(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::StridedRead r = or_fail(ctx, [&] {
    return ir::transpose_read(ctx.inputs[0].shape, ctx.node.attrs.get_ints("perm"));
  });
  return exec::make_state(strided_copy_state(ctx, r));
}

std::shared_ptr<const void> prepare_slice(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Attributes& at = ctx.node.attrs;
  const ir::StridedRead r = or_fail(ctx, [&] {
    return ir::slice_read(ctx.inputs[0].shape, ctx.outputs[0].shape, at.get_ints("starts"),
                          at.get_ints("axes"), at.get_ints("steps"));
  });
  return exec::make_state(strided_copy_state(ctx, r));
}

// ---- Concat --------------------------------------------------------------------------------

struct ConcatState {
  int64_t outer = 0;           // product of dims before the axis
  std::vector<size_t> chunk;   // bytes each input contributes per outer index
  std::vector<size_t> offset;  // where that chunk starts in an output row
  size_t row = 0;              // output bytes per outer index
  int64_t grain = 1;           // (outer, input) pairs per thread
};

std::shared_ptr<const void> prepare_concat(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::ConcatSplit split =
      or_fail(ctx, [&] { return ir::concat_split(ctx.node, ctx.inputs, ctx.outputs[0]); });
  ConcatState st;
  const size_t elem = ir::dtype_size(ctx.outputs[0].dtype);
  st.outer = split.outer;
  for (int64_t chunk : split.chunk) {
    st.offset.push_back(st.row);
    st.chunk.push_back(static_cast<size_t>(chunk) * elem);
    st.row += st.chunk.back();
  }
  const size_t avg = std::max<size_t>(1, st.row / ctx.inputs.size());
  st.grain = std::max<int64_t>(1, kGrainCopyBytes / static_cast<int64_t>(avg));
  return exec::make_state(std::move(st));
}

void run_concat(const exec::KernelArgs& args) {
  const auto& st = state_of<ConcatState>(args);
  const int64_t n = static_cast<int64_t>(st.chunk.size());
  auto* y = static_cast<std::byte*>(args.outputs[0]);
  parallel_for(st.outer * n, st.grain, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t o = u / n, i = u % n;
      const size_t bytes = st.chunk[i];
      if (bytes == 0) continue;
      const auto* src =
          static_cast<const std::byte*>(args.inputs[i]) + static_cast<size_t>(o) * bytes;
      std::memcpy(y + static_cast<size_t>(o) * st.row + st.offset[i], src, bytes);
    }
  });
}

// ---- Gather --------------------------------------------------------------------------------

// An index outside [-axis_dim, axis_dim) is an error naming the node, its indices input and the
// index: run() checks every index before the (parallel) copy, so the throw happens on the calling
// thread and nothing is half-written behind a zeroed row.
struct GatherState {
  int64_t outer = 0, axis_dim = 0, count = 0;  // count: number of indices
  size_t slice = 0;                            // bytes per gathered slice (inner dims)
  int64_t grain = 1;
  int axis = 0;
  std::string where;    // "node 'emb' (Gather)"
  std::string indices;  // the indices input's tensor name
};

std::shared_ptr<const void> prepare_gather(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  require_dtype(ctx, 1, ir::DType::i64);
  const ir::GatherSplit g = or_fail(
      ctx, [&] { return ir::gather_split(ctx.node, ctx.inputs[0].shape, ctx.inputs[1].shape); });
  GatherState st;
  st.outer = g.outer;
  st.axis_dim = g.axis_dim;
  st.count = g.count;
  st.slice = static_cast<size_t>(g.inner) * ir::dtype_size(ctx.inputs[0].dtype);
  st.grain =
      std::max<int64_t>(1, kGrainCopyBytes / static_cast<int64_t>(std::max<size_t>(st.slice, 1)));
  st.axis = g.axis;
  st.where = "node '" + ctx.node.name + "' (" + ctx.node.op + ")";
  st.indices = ctx.node.inputs.size() > 1 ? ctx.node.inputs[1] : "";
  return exec::make_state(st);
}

// Throws fusebox::Error for the first index outside [-axis_dim, axis_dim) (ONNX's valid range).
void check_gather_indices(const GatherState& st, const int64_t* idx) {
  for (int64_t i = 0; i < st.count; ++i) {
    if (idx[i] >= -st.axis_dim && idx[i] < st.axis_dim) continue;
    throw Error(st.where + ": input '" + st.indices + "' element " + std::to_string(i) +
                " is index " + std::to_string(idx[i]) + ", out of range for axis " +
                std::to_string(st.axis) + " of size " + std::to_string(st.axis_dim) + " (valid: " +
                std::to_string(-st.axis_dim) + ".." + std::to_string(st.axis_dim - 1) + ")");
  }
}

void run_gather(const exec::KernelArgs& args) {
  const auto& st = state_of<GatherState>(args);
  const int64_t* idx = input_ptr<int64_t>(args, 1);
  if (st.outer > 0) check_gather_indices(st, idx);
  if (st.slice == 0) return;
  const auto* x = static_cast<const std::byte*>(args.inputs[0]);
  auto* y = static_cast<std::byte*>(args.outputs[0]);
  parallel_for(st.outer * st.count, st.grain, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t o = u / st.count;
      int64_t j = idx[u % st.count];
      if (j < 0) j += st.axis_dim;
      std::memcpy(y + static_cast<size_t>(u) * st.slice,
                  x + static_cast<size_t>(o * st.axis_dim + j) * st.slice, st.slice);
    }
  });
}

}  // namespace

void add_layout_kernels(exec::KernelTable& table) {
  for (const char* op : {"Reshape", "Identity", "Flatten", "Squeeze", "Unsqueeze"})
    table.add(op, {prepare_view_copy, run_view_copy});
  table.add("Transpose", {prepare_transpose, run_strided_copy});
  table.add("Slice", {prepare_slice, run_strided_copy});
  table.add("Concat", {prepare_concat, run_concat});
  table.add("Gather", {prepare_gather, run_gather});
}

}  // namespace fusebox::cpu
