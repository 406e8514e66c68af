// Softmax, LayerNorm, SkipLayerNorm and ReduceMean with the CPU's semantics
// (ops/cpu/normalization.cpp): the same attributes (axis, epsilon, axes), the same shape checks,
// scale/bias broadcast over the normalized dims, LayerNorm's optional mean and inv_std outputs.
// prepare() reduces the shapes to what one block per row needs (normalization_kernels.h); sums
// are in float with tree reductions (the CPU sums in double).
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ir/normalization_params.h"
#include "core/ir/shape.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/host/launch_geometry.h"
#include "ops/cuda/normalization_kernels.h"
#include "ops/cuda/strided_host.h"

namespace fusebox::cuda {
namespace {

// row_geometry refuses grids past CUDA's limits by throwing; ask it here so run() never does.
void check_rows(const exec::KernelContext& ctx, int64_t rows, int64_t cols) {
  try {
    (void)row_geometry(rows, cols > 0 ? cols : 1);
  } catch (const std::invalid_argument& e) {
    fail(ctx, e.what());
  }
}

// ---- Softmax -------------------------------------------------------------------------------

std::shared_ptr<const void> prepare_softmax(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  const ir::AxisSplit split = or_fail(ctx, [&] { return ir::softmax_split(ctx.node, ctx.inputs[0].shape); });
  SoftmaxParams p;
  p.outer = split.outer;
  p.n = split.n;
  p.inner = split.inner;
  check_rows(ctx, p.outer * p.inner, p.n);
  return exec::make_state(p);
}

void run_softmax(const exec::KernelArgs& args) {
  launch_softmax(input_ptr<float>(args, 0), output_ptr<float>(args, 0), state_of<SoftmaxParams>(args), stream_of(args));
}

// ---- LayerNorm -----------------------------------------------------------------------------

struct LayerNormState {
  LayerNormParams p;
  ir::LayerNormSplit split;  // which inputs and outputs the node has
};

LayerNormState layer_norm_state(const exec::KernelContext& ctx, int first_param) {
  require_arity(ctx, static_cast<size_t>(first_param) + 1, 1);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) require_dtype(ctx, i, ir::DType::f32);
  LayerNormState st;
  st.split = or_fail(ctx, [&] { return ir::layer_norm_split(ctx.node, ctx.inputs, first_param); });
  const ir::LayerNormSplit& ln = st.split;
  st.p.d = ln.d;
  st.p.rows = ln.rows;
  st.p.epsilon = static_cast<float>(ln.epsilon);
  st.p.scale_index = broadcast_index(ctx, ctx.inputs[first_param].shape, ln.norm);
  if (ln.has_bias) st.p.bias_index = broadcast_index(ctx, ctx.inputs[first_param + 1].shape, ln.norm);
  if ((ln.write_mean && ctx.outputs.size() < 2) || (ln.write_inv_std && ctx.outputs.size() < 3))
    fail(ctx, "names an optional output that has no type");
  check_rows(ctx, st.p.rows, st.p.d);
  return st;
}

std::shared_ptr<const void> prepare_layer_norm(const exec::KernelContext& ctx) {
  return exec::make_state(layer_norm_state(ctx, 1));
}

// SkipLayerNorm: scale after x and skip; layer_norm_split checks that skip is x's shape.
std::shared_ptr<const void> prepare_skip_layer_norm(const exec::KernelContext& ctx) {
  return exec::make_state(layer_norm_state(ctx, 2));
}

void run_layer_norm(const exec::KernelArgs& args) {
  const auto& st = state_of<LayerNormState>(args);
  const ir::LayerNormSplit& ln = st.split;
  launch_layer_norm(input_ptr<float>(args, 0), ln.first_param == 2 ? input_ptr<float>(args, 1) : nullptr,
                    input_ptr<float>(args, ln.first_param),
                    ln.has_bias ? input_ptr<float>(args, ln.first_param + 1) : nullptr, output_ptr<float>(args, 0),
                    ln.write_mean ? output_ptr<float>(args, 1) : nullptr,
                    ln.write_inv_std ? output_ptr<float>(args, 2) : nullptr, st.p, stream_of(args));
}

// ---- ReduceMean ----------------------------------------------------------------------------

std::shared_ptr<const void> prepare_reduce_mean(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  const ir::Shape& x = ctx.inputs[0].shape;
  const ir::ReduceSplit split = or_fail(ctx, [&] { return ir::reduce_mean_split(ctx.node, x); });
  ReduceMeanParams p;
  p.out_numel = ir::numel(ctx.outputs[0].shape);
  p.count = split.count;
  const ir::Shape& kept_dims = split.kept_dims;
  if (ir::numel(kept_dims) != p.out_numel)
    fail(ctx,
         "output " + ir::shape_str(ctx.outputs[0].shape) + " does not hold the kept dims " + ir::shape_str(kept_dims));
  p.kept = strided_index(ctx, kept_dims, split.kept_strides);
  p.reduced = strided_index(ctx, split.reduced_dims, split.reduced_strides);
  check_rows(ctx, p.out_numel, p.count);
  return exec::make_state(p);
}

void run_reduce_mean(const exec::KernelArgs& args) {
  launch_reduce_mean(input_ptr<float>(args, 0), output_ptr<float>(args, 0), state_of<ReduceMeanParams>(args),
                     stream_of(args));
}

}  // namespace

void add_normalization_kernels(exec::KernelTable& k) {
  k.add("Softmax", {prepare_softmax, run_softmax});
  k.add("LayerNorm", {prepare_layer_norm, run_layer_norm});
  k.add("SkipLayerNorm", {prepare_skip_layer_norm, run_layer_norm});
  k.add("ReduceMean", {prepare_reduce_mean, run_reduce_mean});
}

}  // namespace fusebox::cuda
