// Ops that move data without arithmetic: Transpose, Concat, Slice, Gather, Expand, Tile, Pad,
// Trilu, GatherElements,
// and the view ops
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

// Expand: x broadcast to the output, a strided read with stride 0 along broadcast dims.
std::shared_ptr<const void> prepare_expand(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& out = ctx.outputs[0].shape;
  ir::StridedRead r;
  r.shape = out;
  r.strides = or_fail(ctx, [&] { return ir::broadcast_strides(ctx.inputs[0].shape, out); });
  return exec::make_state(strided_copy_state(ctx, r));
}

// Tile: the output [r0*d0, r1*d1, ..] read as [r0, d0, r1, d1, ..] in row-major order, with
// stride 0 along each repeat dim and x's strides along its own.
std::shared_ptr<const void> prepare_tile(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& x = ctx.inputs[0].shape;
  const std::vector<int64_t> rep = ctx.node.attrs.get_ints("repeats");
  if (rep.size() != x.size()) fail(ctx, "repeats has one entry per dim of x");
  ir::StridedRead r;
  int64_t stride = 1;
  r.shape.assign(2 * x.size(), 1);
  r.strides.assign(2 * x.size(), 0);
  for (size_t d = x.size(); d-- > 0;) {
    r.shape[2 * d] = rep[d];
    r.shape[2 * d + 1] = x[d];
    r.strides[2 * d + 1] = stride;
    stride *= x[d];
  }
  return exec::make_state(strided_copy_state(ctx, r));
}

// ---- Pad -----------------------------------------------------------------------------------

// Pad walks the output row by row (rows along the last dim). Each output index maps, per dim,
// to an input index or to "outside" (constant mode); edge clamps, reflect mirrors without
// repeating the border. Outer dims are resolved once per row; the last dim is a contiguous
// copy between two runs of padding (edge and reflect fill those element by element).
enum class PadMode : uint8_t { kConstant, kReflect, kEdge };

struct PadState {
  ir::Shape x, out;
  std::vector<int64_t> begin;  // pads at the start of each dim (negative: cropped)
  PadMode mode = PadMode::kConstant;
  size_t elem = 4;
  bool has_value = false;  // input 1 holds the constant; else 0
};

// Input index for output index o along a dim of size n with `b` leading pads; -1 for outside.
inline int64_t pad_source(int64_t o, int64_t b, int64_t n, PadMode mode) {
  int64_t i = o - b;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return i < 0 ? 0 : n - 1;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - i;
    }
  }
  return -1;
}

template <typename T>
void run_pad_typed(const PadState& st, const T* x, T value, T* y) {
  const size_t rank = st.out.size();
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  const int64_t cols = st.out[rank - 1], n = st.x[rank - 1], b = st.begin[rank - 1];
  const int64_t rows = cols == 0 ? 0 : ir::numel(st.out) / cols;
  parallel_for(rows, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(cols, 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      T* dst = y + row * cols;
      // The input row feeding this output row, or none (constant padding along an outer dim).
      int64_t src = 0, rem = row, stride = n;
      bool outside = false;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t i = pad_source(rem % st.out[d], st.begin[d], st.x[d], st.mode);
        rem /= st.out[d];
        if (i < 0) outside = true;
        src += i * stride;
        stride *= st.x[d];
      }
      if (outside) {
        for (int64_t c = 0; c < cols; ++c) dst[c] = value;
        continue;
      }
      const T* xrow = x + src;
      const int64_t lo = std::clamp<int64_t>(b, 0, cols), hi = std::clamp<int64_t>(b + n, 0, cols);
      for (int64_t c = 0; c < lo; ++c) {
        const int64_t i = pad_source(c, b, n, st.mode);
        dst[c] = i < 0 ? value : xrow[i];
      }
      if (hi > lo) std::memcpy(dst + lo, xrow + (lo - b), static_cast<size_t>(hi - lo) * sizeof(T));
      for (int64_t c = std::max(hi, lo); c < cols; ++c) {
        const int64_t i = pad_source(c, b, n, st.mode);
        dst[c] = i < 0 ? value : xrow[i];
      }
    }
  });
}

void run_pad(const exec::KernelArgs& args) {
  const auto& st = state_of<PadState>(args);
  if (ir::numel(st.out) == 0) return;
  if (st.elem == 8) {
    const uint64_t v = st.has_value ? input_ptr<uint64_t>(args, 1)[0] : 0;
    run_pad_typed(st, input_ptr<uint64_t>(args, 0), v, output_ptr<uint64_t>(args, 0));
  } else {
    const uint32_t v = st.has_value ? input_ptr<uint32_t>(args, 1)[0] : 0;  // 0u is 0.0f
    run_pad_typed(st, input_ptr<uint32_t>(args, 0), v, output_ptr<uint32_t>(args, 0));
  }
}

std::shared_ptr<const void> prepare_pad(const exec::KernelContext& ctx) {
  if (ctx.inputs.empty() || ctx.inputs.size() > 2 || ctx.outputs.size() != 1)
    fail(ctx, "expects x and an optional constant value, and one output");
  PadState st;
  st.x = ctx.inputs[0].shape;
  st.out = ctx.outputs[0].shape;
  st.elem = ir::dtype_size(ctx.inputs[0].dtype);
  st.has_value = ctx.inputs.size() == 2;
  const std::vector<int64_t> pads = ctx.node.attrs.get_ints("pads");
  if (pads.size() != 2 * st.x.size()) fail(ctx, "pads needs a begin and an end per dim");
  st.begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(st.x.size()));
  const std::string mode = ctx.node.attrs.get_string("mode", "constant");
  if (mode == "constant") st.mode = PadMode::kConstant;
  else if (mode == "reflect") st.mode = PadMode::kReflect;
  else if (mode == "edge") st.mode = PadMode::kEdge;
  else fail(ctx, "mode must be constant, reflect or edge, got '" + mode + "'");
  for (size_t d = 0; d < st.x.size(); ++d)
    if (st.x[d] == 0 && st.out[d] > 0 && st.mode != PadMode::kConstant)
      fail(ctx, mode + " padding of an empty dim");
  return exec::make_state(std::move(st));
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

// ---- Trilu ---------------------------------------------------------------------------------

// Trilu keeps element (i, j) of each matrix when j - i >= k (upper) or j - i <= k (lower).
struct TriluState {
  int64_t batch = 0, rows = 0, cols = 0, k = 0;
  bool upper = true;
  size_t elem = 4;
};

std::shared_ptr<const void> prepare_trilu(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& x = ctx.inputs[0].shape;
  if (x.size() < 2) fail(ctx, "input must have rank >= 2");
  TriluState st;
  st.rows = x[x.size() - 2];
  st.cols = x[x.size() - 1];
  st.batch = ir::numel(ir::Shape(x.begin(), x.end() - 2));
  st.k = ctx.node.attrs.get_int("k", 0);
  st.upper = ctx.node.attrs.get_int("upper", 1) != 0;
  st.elem = ir::dtype_size(ctx.inputs[0].dtype);
  return exec::make_state(st);
}

template <typename T>
void trilu_impl(const TriluState& st, const T* x, T* y) {
  parallel_for(st.batch * st.rows, std::max<int64_t>(1, kGrainSimple / std::max<int64_t>(st.cols, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   const int64_t i = r % st.rows;
                   const T* xr = x + r * st.cols;
                   T* yr = y + r * st.cols;
                   for (int64_t j = 0; j < st.cols; ++j) {
                     // j - i compared in i64: k may be any value the model gives
                     const bool keep = st.upper ? j - i >= st.k : j - i <= st.k;
                     yr[j] = keep ? xr[j] : T{0};
                   }
                 }
               });
}

void run_trilu(const exec::KernelArgs& args) {
  const auto& st = state_of<TriluState>(args);
  if (st.batch * st.rows * st.cols == 0) return;
  if (st.elem == 4) trilu_impl(st, input_ptr<uint32_t>(args, 0), output_ptr<uint32_t>(args, 0));
  else trilu_impl(st, input_ptr<uint64_t>(args, 0), output_ptr<uint64_t>(args, 0));
}

// ---- GatherElements ------------------------------------------------------------------------

// Output element u (indices' shape) reads data at u's coordinates with the axis coordinate
// replaced by indices[u]. Indices are checked before the copy, as Gather's, so an out-of-range
// one is an error naming the node on the calling thread.
struct GatherElementsState {
  ir::Shape idx_shape;
  std::vector<int64_t> x_strides;  // data's row-major strides
  int axis = 0;
  int64_t axis_dim = 0, count = 0;
  size_t elem = 4;
  std::string where, indices;
};

std::shared_ptr<const void> prepare_gather_elements(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  require_dtype(ctx, 1, ir::DType::i64);
  const ir::Shape& x = ctx.inputs[0].shape;
  GatherElementsState st;
  st.idx_shape = ctx.inputs[1].shape;
  if (x.empty() || st.idx_shape.size() != x.size()) fail(ctx, "indices and data must have the same rank >= 1");
  st.axis = or_fail(ctx, [&] {
    return ir::normalize_axis(ctx.node.attrs.get_int("axis", 0), x.size(), "GatherElements axis");
  });
  st.x_strides.assign(x.size(), 1);
  for (size_t d = x.size(); d-- > 1;) st.x_strides[d - 1] = st.x_strides[d] * x[d];
  st.axis_dim = x[st.axis];
  st.count = ir::numel(st.idx_shape);
  st.elem = ir::dtype_size(ctx.inputs[0].dtype);
  st.where = "node '" + ctx.node.name + "' (" + ctx.node.op + ")";
  st.indices = ctx.node.inputs.size() > 1 ? ctx.node.inputs[1] : "";
  return exec::make_state(std::move(st));
}

template <typename T>
void gather_elements_impl(const GatherElementsState& st, const T* x, const int64_t* idx, T* y) {
  const int rank = static_cast<int>(st.idx_shape.size());
  parallel_for(st.count, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      int64_t rest = u, off = 0;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t c = rest % st.idx_shape[d];
        rest /= st.idx_shape[d];
        int64_t v = c;
        if (d == st.axis) {
          v = idx[u];
          if (v < 0) v += st.axis_dim;
        }
        off += v * st.x_strides[d];
      }
      y[u] = x[off];
    }
  });
}

void run_gather_elements(const exec::KernelArgs& args) {
  const auto& st = state_of<GatherElementsState>(args);
  const int64_t* idx = input_ptr<int64_t>(args, 1);
  for (int64_t i = 0; i < st.count; ++i) {
    if (idx[i] >= -st.axis_dim && idx[i] < st.axis_dim) continue;
    throw Error(st.where + ": input '" + st.indices + "' element " + std::to_string(i) + " is index " +
                std::to_string(idx[i]) + ", out of range for axis " + std::to_string(st.axis) + " of size " +
                std::to_string(st.axis_dim) + " (valid: " + std::to_string(-st.axis_dim) + ".." +
                std::to_string(st.axis_dim - 1) + ")");
  }
  if (st.count == 0) return;
  if (st.elem == 4)
    gather_elements_impl(st, input_ptr<uint32_t>(args, 0), idx, output_ptr<uint32_t>(args, 0));
  else
    gather_elements_impl(st, input_ptr<uint64_t>(args, 0), idx, output_ptr<uint64_t>(args, 0));
}

}  // namespace

void add_layout_kernels(exec::KernelTable& table) {
  for (const char* op : {"Reshape", "Identity", "Flatten", "Squeeze", "Unsqueeze"})
    table.add(op, {prepare_view_copy, run_view_copy});
  table.add("Transpose", {prepare_transpose, run_strided_copy});
  table.add("Slice", {prepare_slice, run_strided_copy});
  table.add("Concat", {prepare_concat, run_concat});
  table.add("Gather", {prepare_gather, run_gather});
  table.add("Expand", {prepare_expand, run_strided_copy});
  table.add("Tile", {prepare_tile, run_strided_copy});
  table.add("Pad", {prepare_pad, run_pad});
  table.add("Trilu", {prepare_trilu, run_trilu});
  table.add("GatherElements", {prepare_gather_elements, run_gather_elements});
}

}  // namespace fusebox::cpu
