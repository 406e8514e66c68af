// The CUDA backend's layout ops: Transpose, Slice, Concat, Gather, and the view ops (Reshape,
// Identity, Flatten, Squeeze, Unsqueeze) for callers that do not alias them. The same ops,
// attributes and edge cases as the CPU's (ops/cpu/layout.cpp); the device code is in
// layout_kernels.cu.
//
// Transpose and Slice are strided reads of the input into a contiguous output, collapsed as on
// the CPU (strided_walk.h), and run by the same three cases: one contiguous run (a device copy),
// the last two collapsed dims swapped (32 x 32 shared-memory tiles), anything else (one thread
// per output element). Their parameters come from layout_params.h, which the host test of the
// kernels' index arithmetic (tests/cuda/layout_index_test.cpp) shares.
#include <algorithm>
#include <memory>
#include <string>

#include "core/ir/layout_params.h"
#include "core/ir/shape.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/host/gather_fault.h"
#include "ops/cuda/layout_kernels.h"
#include "ops/cuda/layout_params.h"
#include "ops/cuda/strided_walk.h"  // kIndex32Limit

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

std::shared_ptr<const void> prepare_transpose(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  StridedCopyParams p{};
  try {
    p = make_transpose(ctx.inputs[0].shape, ctx.inputs[0].dtype, ctx.node.attrs.get_ints("perm"));
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  return exec::make_state(p);
}

std::shared_ptr<const void> prepare_slice(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  StridedCopyParams p{};
  try {
    p = make_slice(ctx.inputs[0].shape, ctx.outputs[0].shape, ctx.inputs[0].dtype, ctx.node.attrs.get_ints("starts"),
                   ctx.node.attrs.get_ints("axes"), ctx.node.attrs.get_ints("steps"));
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  return exec::make_state(p);
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
  if (!out.empty() && ctx.inputs.size() > static_cast<size_t>(kConcatMaxInputs))
    fail(ctx, std::to_string(ctx.inputs.size()) + " inputs; the CUDA kernel takes at most " +
                  std::to_string(kConcatMaxInputs));
  const ir::ConcatSplit split = or_fail(ctx, [&] { return ir::concat_split(ctx.node, ctx.inputs, ctx.outputs[0]); });
  auto p = std::make_shared<ConcatParams>();
  p->count = static_cast<int32_t>(ctx.inputs.size());
  p->elem_bytes = static_cast<int32_t>(ir::dtype_size(ctx.outputs[0].dtype));
  p->outer = split.outer;
  p->row = split.row;
  std::copy(split.chunk.begin(), split.chunk.end(), p->chunk);
  p->index32 = ir::numel(out) <= kIndex32Limit;
  return std::static_pointer_cast<const void>(std::shared_ptr<const ConcatParams>(std::move(p)));
}

void run_concat(const exec::KernelArgs& args) {
  const auto& p = state_of<ConcatParams>(args);
  const cudaStream_t stream = stream_of(args);
  const int sm_count = shared_of(args).sm_count;
  ConcatBatch proto{};
  proto.elem_bytes = p.elem_bytes;
  proto.index32 = p.index32;
  proto.outer = p.outer;
  proto.row = p.row;
  void* y = args.outputs[0];
  for_each_concat_batch(proto, p.count, p.chunk, args.inputs,
                        [&](const ConcatBatch& b) { launch_concat_batch(b, y, stream, sm_count); });
}

// ---- Gather --------------------------------------------------------------------------------

// The prepared parameters and the site that names this node when an index is out of range.
struct GatherState {
  GatherParams params{};
  uint32_t site = 0;
  GatherState() = default;
  GatherState(const GatherState&) = delete;
  GatherState& operator=(const GatherState&) = delete;
  ~GatherState() {
    if (site) GatherSites::instance().remove(site);
  }
};

void run_gather(const exec::KernelArgs& args) {
  const auto& st = state_of<GatherState>(args);
  GatherParams p = st.params;
  p.fault = shared_of(args).gather_fault;  // the backend's fault record, read at synchronize
  launch_gather(p, args.inputs[0], input_ptr<int64_t>(args, 1), args.outputs[0], stream_of(args),
                shared_of(args).sm_count);
}

std::shared_ptr<const void> prepare_gather(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  require_dtype(ctx, 1, ir::DType::i64);
  const ir::Shape& x = ctx.inputs[0].shape;
  const ir::GatherSplit g = or_fail(ctx, [&] { return ir::gather_split(ctx.node, x, ctx.inputs[1].shape); });
  auto st = std::make_shared<GatherState>();
  GatherParams& p = st->params;
  p.elem_bytes = static_cast<int32_t>(ir::dtype_size(ctx.inputs[0].dtype));
  p.outer = g.outer;
  p.axis_dim = g.axis_dim;
  p.count = g.count;
  p.slice = g.inner;
  p.index32 = ir::numel(x) <= kIndex32Limit && ir::numel(ctx.outputs[0].shape) <= kIndex32Limit;
  GatherSite site;
  site.where = "node '" + ctx.node.name + "' (" + ctx.node.op + ")";
  site.indices = ctx.node.inputs.size() > 1 ? ctx.node.inputs[1] : "";
  site.axis = g.axis;
  site.axis_dim = g.axis_dim;
  st->site = GatherSites::instance().add(std::move(site));
  p.site = st->site;
  return st;
}

}  // namespace

void add_layout_kernels(exec::KernelTable& k) {
  for (const char* op : {"Reshape", "Identity", "Flatten", "Squeeze", "Unsqueeze"})
    k.add(op, exec::KernelDef{prepare_view_copy, run_view_copy});
  k.add("Transpose", exec::KernelDef{prepare_transpose, run_strided_copy});
  k.add("Slice", exec::KernelDef{prepare_slice, run_strided_copy});
  k.add("Concat", exec::KernelDef{prepare_concat, run_concat});
  k.add("Gather", exec::KernelDef{prepare_gather, run_gather});
}

}  // namespace fusebox::cuda
