// The CUDA backend's element-wise ops: binary arithmetic with numpy broadcasting (f32, and i64
// for Add/Sub/Mul/Div), unary math, Gelu (approximate = none | tanh), Cast and Where. The same
// ops, dtypes and attributes as the CPU's (ops/cpu/elementwise.cpp); the device code is in
// elementwise_kernels.cu.
//
// prepare() turns the node into a POD parameter struct: for broadcasting ops the collapsed walk
// of the output with one dim mask per operand (strided_walk.h), where the CPU builds a
// StridedPlan from the same shapes; run() only launches.
#include <string>
#include <vector>

#include "core/ir/shape.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/elementwise_kernels.h"
#include "ops/cuda/strided_walk.h"

namespace fusebox::cuda {

namespace {

EwDType ew_dtype(ir::DType t) { return t == ir::DType::f32 ? EwDType::F32 : EwDType::I64; }

// Whether every tensor of the node is small enough for 32-bit indexing.
bool fits_index32(const exec::KernelContext& ctx) {
  for (const auto* list : {&ctx.inputs, &ctx.outputs})
    for (const auto& t : *list)
      if (ir::numel(t.shape) > kIndex32Limit) return false;
  return true;
}

// The inputs broadcast to output 0, as kernel parameters; fails naming the node when they do
// not broadcast or need more than kEwMaxDims dims after collapsing.
EwBroadcast broadcast_params(const exec::KernelContext& ctx) {
  std::vector<ir::Shape> shapes;
  for (const auto& t : ctx.inputs) shapes.push_back(t.shape);
  BroadcastWalk w;
  try {
    w = make_broadcast_walk(shapes, ctx.outputs[0].shape, kEwMaxDims);
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  EwBroadcast b{};
  b.rank = static_cast<int32_t>(w.dims.size());
  for (size_t d = 0; d < w.dims.size(); ++d) b.dims[d] = w.dims[d];
  for (size_t k = 0; k < w.masks.size() && k < static_cast<size_t>(kEwMaxOperands); ++k) b.mask[k] = w.masks[k];
  return b;
}

// ---- binary --------------------------------------------------------------------------------

void run_binary(const exec::KernelArgs& args) {
  launch_ew_binary(state_of<EwBinaryParams>(args), args.inputs[0], args.inputs[1], args.outputs[0], stream_of(args),
                   shared_of(args).sm_count);
}

exec::KernelDef binary_kernel(EwBinaryOp op, bool allow_i64) {
  auto prepare = [op, allow_i64](const exec::KernelContext& ctx) {
    require_arity(ctx, 2, 1);
    const ir::DType dt = ctx.inputs[0].dtype;
    if (ctx.inputs[1].dtype != dt) fail(ctx, "inputs have different dtypes");
    if (dt == ir::DType::i64 && !allow_i64) fail(ctx, std::string("no kernel for ") + ir::dtype_name(dt) + " inputs");
    EwBinaryParams p{};
    p.op = op;
    p.dtype = ew_dtype(dt);
    p.numel = ir::numel(ctx.outputs[0].shape);
    p.index32 = fits_index32(ctx);
    p.walk = broadcast_params(ctx);
    p.b_constant = p.walk.mask[1] == 0;
    return exec::make_state(p);
  };
  return {prepare, run_binary};
}

// ---- unary ---------------------------------------------------------------------------------

void run_unary(const exec::KernelArgs& args) {
  launch_ew_unary(state_of<EwUnaryParams>(args), args.inputs[0], args.outputs[0], stream_of(args),
                  shared_of(args).sm_count);
}

EwUnaryParams unary_params(const exec::KernelContext& ctx, EwUnaryOp op) {
  require_arity(ctx, 1, 1);
  EwUnaryParams p{};
  p.op = op;
  p.dtype = ew_dtype(ctx.inputs[0].dtype);
  p.numel = ir::numel(ctx.inputs[0].shape);
  p.index32 = fits_index32(ctx);
  return p;
}

// f32 only, except Neg, which also takes i64 (as on the CPU).
exec::KernelDef unary_kernel(EwUnaryOp op) {
  auto prepare = [op](const exec::KernelContext& ctx) {
    EwUnaryParams p = unary_params(ctx, op);
    const ir::DType dt = ctx.inputs[0].dtype;
    if (dt == ir::DType::i64 && op != EwUnaryOp::Neg)
      fail(ctx, std::string("no kernel for ") + ir::dtype_name(dt) + " input");
    return exec::make_state(p);
  };
  return {prepare, run_unary};
}

exec::KernelDef gelu_kernel() {
  auto prepare = [](const exec::KernelContext& ctx) {
    EwUnaryParams p = unary_params(ctx, EwUnaryOp::GeluErf);
    require_dtype(ctx, 0, ir::DType::f32);
    const std::string mode = ctx.node.attrs.get_string("approximate", "none");
    if (mode == "none") {
      p.op = EwUnaryOp::GeluErf;
    } else if (mode == "tanh") {
      p.op = EwUnaryOp::GeluTanh;
    } else {
      fail(ctx, "approximate must be 'none' or 'tanh', got '" + mode + "'");
    }
    return exec::make_state(p);
  };
  return {prepare, run_unary};
}

// ---- Cast ----------------------------------------------------------------------------------

void run_cast(const exec::KernelArgs& args) {
  launch_ew_cast(state_of<EwCastParams>(args), args.inputs[0], args.outputs[0], stream_of(args),
                 shared_of(args).sm_count);
}

// The target type is the output's (the schema made it from the `to` attribute), as on the CPU.
std::shared_ptr<const void> prepare_cast(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  EwCastParams p{};
  p.from = ew_dtype(ctx.inputs[0].dtype);
  p.to = ew_dtype(ctx.outputs[0].dtype);
  p.numel = ir::numel(ctx.inputs[0].shape);
  p.index32 = fits_index32(ctx);
  return exec::make_state(p);
}

// ---- Where ---------------------------------------------------------------------------------

void run_where(const exec::KernelArgs& args) {
  launch_ew_where(state_of<EwWhereParams>(args), args.inputs[0], args.inputs[1], args.inputs[2], args.outputs[0],
                  stream_of(args), shared_of(args).sm_count);
}

std::shared_ptr<const void> prepare_where(const exec::KernelContext& ctx) {
  require_arity(ctx, 3, 1);
  require_dtype(ctx, 0, ir::DType::i64);
  const ir::DType dt = ctx.inputs[1].dtype;
  if (ctx.inputs[2].dtype != dt) fail(ctx, "branches have different dtypes");
  EwWhereParams p{};
  p.dtype = ew_dtype(dt);
  p.numel = ir::numel(ctx.outputs[0].shape);
  p.index32 = fits_index32(ctx);
  p.walk = broadcast_params(ctx);
  return exec::make_state(p);
}

}  // namespace

void add_elementwise_kernels(exec::KernelTable& k) {
  k.add("Add", binary_kernel(EwBinaryOp::Add, true));
  k.add("Sub", binary_kernel(EwBinaryOp::Sub, true));
  k.add("Mul", binary_kernel(EwBinaryOp::Mul, true));
  k.add("Div", binary_kernel(EwBinaryOp::Div, true));
  k.add("Pow", binary_kernel(EwBinaryOp::Pow, false));

  k.add("Relu", unary_kernel(EwUnaryOp::Relu));
  k.add("Tanh", unary_kernel(EwUnaryOp::Tanh));
  k.add("Sigmoid", unary_kernel(EwUnaryOp::Sigmoid));
  k.add("Exp", unary_kernel(EwUnaryOp::Exp));
  k.add("Erf", unary_kernel(EwUnaryOp::Erf));
  k.add("Sqrt", unary_kernel(EwUnaryOp::Sqrt));
  k.add("Neg", unary_kernel(EwUnaryOp::Neg));
  k.add("Gelu", gelu_kernel());
  k.add("Cast", exec::KernelDef{prepare_cast, run_cast});
  k.add("Where", exec::KernelDef{prepare_where, run_where});
}

}  // namespace fusebox::cuda
