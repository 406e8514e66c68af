// The CUDA backend's layout ops: Transpose, Slice, Concat, Gather, and the view ops (Reshape,
// Identity, Flatten, Squeeze, Unsqueeze) for callers that do not alias them. The same ops,
// attributes and edge cases as the CPU's (ops/cpu/layout.cpp); the device code is in
// layout_kernels.cu.
//
// Transpose and Slice are strided reads of the input into a contiguous output, collapsed as on
// the CPU (strided_walk.h), and run by the same three cases: one contiguous run (a device copy),
// the last two collapsed dims swapped (32 x 32 shared-memory tiles), anything else (one thread
// per output element).
#include <algorithm>
#include <string>
#include <vector>

#include "core/ir/shape.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/layout_kernels.h"
#include "ops/cuda/strided_walk.h"

namespace fusebox::cuda {

namespace {

// ---- views ---------------------------------------------------------------------------------

struct CopyParams {
  size_t bytes = 0;
};

// Executors alias view ops and never call this; the eager fallback may, with its own output.
void run_view_copy(const exec::KernelArgs& args) {
  launch_copy(args.inputs[0], args.outputs[0], state_of<CopyParams>(args).bytes, stream_of(args));
}

std::shared_ptr<const void> prepare_view_copy(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  if (ctx.outputs[0].nbytes() != ctx.inputs[0].nbytes()) fail(ctx, "view changes the byte size");
  return exec::make_state(CopyParams{ctx.inputs[0].nbytes()});
}

// ---- strided copies: Transpose and Slice ---------------------------------------------------

void run_strided_copy(const exec::KernelArgs& args) {
  launch_strided_copy(state_of<StridedCopyParams>(args), args.inputs[0], args.outputs[0], stream_of(args),
                      shared_of(args).sm_count);
}

StridedCopyParams strided_copy_params(const exec::KernelContext& ctx, const ir::Shape& out,
                                      const std::vector<int64_t>& strides, int64_t base) {
  StridedCopyParams p{};
  p.elem_bytes = static_cast<int32_t>(ir::dtype_size(ctx.inputs[0].dtype));
  p.numel = ir::numel(out);
  p.base = base;
  p.index32 = p.numel <= kIndex32Limit && ir::numel(ctx.inputs[0].shape) <= kIndex32Limit;
  const CollapsedWalk w = collapse_walk(out, {strides});
  if (w.dims.size() > static_cast<size_t>(kLayoutMaxDims))
    fail(ctx, "the strided copy needs " + std::to_string(w.dims.size()) + " dims after collapsing " +
                  ir::shape_str(out) + "; the CUDA kernel supports at most " + std::to_string(kLayoutMaxDims));
  p.rank = static_cast<int32_t>(w.dims.size());
  for (int d = 0; d < p.rank; ++d) {
    p.dims[d] = w.dims[static_cast<size_t>(d)];
    p.strides[d] = w.strides[0][static_cast<size_t>(d)];
  }
  const int r = p.rank;
  if (r == 1 && p.strides[0] == 1) {
    p.kind = CopyKind::Memcpy;
  } else if (p.strides[r - 1] == 1) {
    p.kind = CopyKind::Gather;  // the CPU's row copies: reads along the innermost dim coalesce
  } else if (r >= 2 && p.strides[r - 2] == 1) {
    p.kind = CopyKind::Tiles;
  } else {
    p.kind = CopyKind::Gather;
  }
  return p;
}

std::shared_ptr<const void> prepare_transpose(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& x = ctx.inputs[0].shape;
  std::vector<int64_t> perm = ctx.node.attrs.get_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < x.size(); ++i) perm.push_back(static_cast<int64_t>(x.size() - 1 - i));
  if (perm.size() != x.size()) fail(ctx, "perm does not match the input rank");
  const std::vector<int64_t> in_strides = ir::strides_of(x);
  ir::Shape out;
  std::vector<int64_t> strides;
  std::vector<bool> seen(x.size(), false);
  for (int64_t p : perm) {
    int ax = 0;
    try {
      ax = ir::normalize_axis(p, x.size(), "Transpose");
    } catch (const Error& e) {
      fail(ctx, e.what());
    }
    if (seen[ax]) fail(ctx, "perm is not a permutation");
    seen[ax] = true;
    out.push_back(x[ax]);
    strides.push_back(in_strides[ax]);
  }
  return exec::make_state(strided_copy_params(ctx, out, strides, 0));
}

// The first index read along each sliced axis and the step, with the schema's clamping (ONNX
// rules); the output shape (and so each count) comes from the schema.
std::shared_ptr<const void> prepare_slice(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& x = ctx.inputs[0].shape;
  const ir::Shape& out = ctx.outputs[0].shape;
  auto starts = ctx.node.attrs.get_ints("starts");
  auto axes = ctx.node.attrs.get_ints("axes");
  auto steps = ctx.node.attrs.get_ints("steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size() || out.size() != x.size())
    fail(ctx, "starts/axes/steps differ in length");
  const std::vector<int64_t> in_strides = ir::strides_of(x);
  std::vector<int64_t> start(x.size(), 0), step(x.size(), 1);
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int ax = 0;
    try {
      ax = ir::normalize_axis(axes[i], x.size(), "Slice");
    } catch (const Error& e) {
      fail(ctx, e.what());
    }
    if (seen[ax]) fail(ctx, "axis " + std::to_string(axes[i]) + " is sliced twice");
    seen[ax] = true;
    if (steps[i] == 0) fail(ctx, "step 0");
    const int64_t dim = x[ax];
    if (out[ax] == 0 || dim == 0) continue;  // nothing is read along this axis
    int64_t b = starts[i];
    if (b < 0) b += dim;
    b = steps[i] > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
    start[ax] = b;
    step[ax] = steps[i];
  }
  int64_t base = 0;
  std::vector<int64_t> strides(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    base += start[d] * in_strides[d];
    strides[d] = step[d] * in_strides[d];
  }
  return exec::make_state(strided_copy_params(ctx, out, strides, base));
}

// ---- Concat --------------------------------------------------------------------------------

// Per input, the elements it contributes per outer index; run() groups the non-empty ones into
// launches of kConcatBatch inputs (the input pointers are only known there).
struct ConcatParams {
  int32_t count = 0;
  int32_t elem_bytes = 4;
  bool index32 = false;
  int64_t outer = 0;  // product of dims before the axis
  int64_t row = 0;    // output elements per outer index
  int64_t chunk[kConcatMaxInputs] = {};
};

std::shared_ptr<const void> prepare_concat(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const ir::Shape& out = ctx.outputs[0].shape;
  if (out.empty()) fail(ctx, "cannot concat scalars");
  if (ctx.inputs.size() > static_cast<size_t>(kConcatMaxInputs))
    fail(ctx, std::to_string(ctx.inputs.size()) + " inputs; the CUDA kernel takes at most " +
                  std::to_string(kConcatMaxInputs));
  int axis = 0;
  try {
    axis = ir::normalize_axis(ctx.node.attrs.get_int("axis", 0), out.size(), "Concat");
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  auto p = std::make_shared<ConcatParams>();
  p->count = static_cast<int32_t>(ctx.inputs.size());
  p->elem_bytes = static_cast<int32_t>(ir::dtype_size(ctx.outputs[0].dtype));
  p->outer = ir::numel(ir::Shape(out.begin(), out.begin() + axis));
  const int64_t inner = ir::numel(ir::Shape(out.begin() + axis + 1, out.end()));
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const auto& t = ctx.inputs[i];
    if (t.dtype != ctx.outputs[0].dtype || t.shape.size() != out.size()) fail(ctx, "inputs differ in dtype or rank");
    p->chunk[i] = t.shape[axis] * inner;
    p->row += p->chunk[i];
  }
  p->index32 = ir::numel(out) <= kIndex32Limit;
  return std::static_pointer_cast<const void>(std::shared_ptr<const ConcatParams>(std::move(p)));
}

void run_concat(const exec::KernelArgs& args) {
  const auto& p = state_of<ConcatParams>(args);
  const cudaStream_t stream = stream_of(args);
  const int sm_count = shared_of(args).sm_count;
  ConcatBatch b{};
  b.elem_bytes = p.elem_bytes;
  b.index32 = p.index32;
  b.outer = p.outer;
  b.row = p.row;
  int64_t offset = 0;  // where the next input's chunk starts in an output row
  for (int32_t i = 0; i < p.count; ++i) {
    const int64_t chunk = p.chunk[i];
    if (chunk > 0) {
      if (b.count == 0) {
        b.out_offset = offset;
        b.begin[0] = 0;
      }
      b.src[b.count] = args.inputs[i];
      b.begin[b.count + 1] = b.begin[b.count] + chunk;
      ++b.count;
      if (b.count == kConcatBatch) {
        launch_concat_batch(b, args.outputs[0], stream, sm_count);
        b.count = 0;
      }
    }
    offset += chunk;
  }
  if (b.count > 0) launch_concat_batch(b, args.outputs[0], stream, sm_count);
}

// ---- Gather --------------------------------------------------------------------------------

void run_gather(const exec::KernelArgs& args) {
  launch_gather(state_of<GatherParams>(args), args.inputs[0], input_ptr<int64_t>(args, 1), args.outputs[0],
                stream_of(args), shared_of(args).sm_count);
}

std::shared_ptr<const void> prepare_gather(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  require_dtype(ctx, 1, ir::DType::i64);
  const ir::Shape& x = ctx.inputs[0].shape;
  if (x.empty()) fail(ctx, "data must have rank >= 1");
  int axis = 0;
  try {
    axis = ir::normalize_axis(ctx.node.attrs.get_int("axis", 0), x.size(), "Gather");
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  GatherParams p{};
  p.elem_bytes = static_cast<int32_t>(ir::dtype_size(ctx.inputs[0].dtype));
  p.outer = ir::numel(ir::Shape(x.begin(), x.begin() + axis));
  p.axis_dim = x[axis];
  p.count = ir::numel(ctx.inputs[1].shape);
  p.slice = ir::numel(ir::Shape(x.begin() + axis + 1, x.end()));
  p.index32 = ir::numel(x) <= kIndex32Limit && ir::numel(ctx.outputs[0].shape) <= kIndex32Limit;
  return exec::make_state(p);
}

}  // namespace

void add_layout_kernels(CudaKernels& k) {
  for (const char* op : {"Reshape", "Identity", "Flatten", "Squeeze", "Unsqueeze"})
    k.add(op, exec::KernelDef{prepare_view_copy, run_view_copy});
  k.add("Transpose", exec::KernelDef{prepare_transpose, run_strided_copy});
  k.add("Slice", exec::KernelDef{prepare_slice, run_strided_copy});
  k.add("Concat", exec::KernelDef{prepare_concat, run_concat});
  k.add("Gather", exec::KernelDef{prepare_gather, run_gather});
}

}  // namespace fusebox::cuda
