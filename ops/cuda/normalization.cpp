// Softmax, LayerNorm, SkipLayerNorm and ReduceMean with the CPU's semantics
// (ops/cpu/normalization.cpp): the same attributes (axis, epsilon, axes), the same shape checks,
// scale/bias broadcast over the normalized dims, LayerNorm's optional mean and inv_std outputs.
// prepare() reduces the shapes to what one block per row needs (normalization_kernels.h); sums
// are in float with tree reductions (the CPU sums in double).
#include <stdexcept>
#include <string>
#include <vector>

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
  const ir::Shape& x = ctx.inputs[0].shape;
  SoftmaxParams p;
  if (!x.empty()) {  // a scalar is one row of one element
    int axis = 0;
    try {
      axis = ir::normalize_axis(ctx.node.attrs.get_int("axis", -1), x.size(), "Softmax");
    } catch (const Error& e) {
      fail(ctx, e.what());
    }
    for (int d = 0; d < static_cast<int>(x.size()); ++d) (d < axis ? p.outer : d == axis ? p.n : p.inner) *= x[d];
  }
  check_rows(ctx, p.outer * p.inner, p.n);
  return exec::make_state(p);
}

void run_softmax(const exec::KernelArgs& args) {
  launch_softmax(input_ptr<float>(args, 0), output_ptr<float>(args, 0), state_of<SoftmaxParams>(args), stream_of(args));
}

// ---- LayerNorm -----------------------------------------------------------------------------

struct LayerNormState {
  LayerNormParams p;
  int first_param = 1;  // input index of scale (2 with a skip input)
  bool skip = false, has_bias = false;
  bool write_mean = false, write_inv_std = false;
};

LayerNormState layer_norm_state(const exec::KernelContext& ctx, int first_param) {
  require_arity(ctx, static_cast<size_t>(first_param) + 1, 1);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) require_dtype(ctx, i, ir::DType::f32);
  const ir::Shape& x = ctx.inputs[0].shape;
  if (x.empty()) fail(ctx, "input must have rank >= 1");
  LayerNormState st;
  st.first_param = first_param;
  int axis = 0;
  try {
    axis = ir::normalize_axis(ctx.node.attrs.get_int("axis", -1), x.size(), ctx.node.op);
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  const ir::Shape norm(x.begin() + axis, x.end());
  st.p.d = ir::numel(norm);
  st.p.rows = ir::numel(ir::Shape(x.begin(), x.begin() + axis));
  st.p.epsilon = static_cast<float>(ctx.node.attrs.get_float("epsilon", 1e-5));
  st.has_bias = ctx.inputs.size() > static_cast<size_t>(first_param) + 1;
  st.p.scale_index = broadcast_index(ctx, ctx.inputs[first_param].shape, norm);
  if (st.has_bias) st.p.bias_index = broadcast_index(ctx, ctx.inputs[first_param + 1].shape, norm);
  // Optional outputs: present when the node names them (an empty name is an omitted output).
  auto named = [&](size_t i) { return ctx.node.outputs.size() > i && !ctx.node.outputs[i].empty(); };
  st.write_mean = named(1);
  st.write_inv_std = named(2);
  if ((st.write_mean && ctx.outputs.size() < 2) || (st.write_inv_std && ctx.outputs.size() < 3))
    fail(ctx, "names an optional output that has no type");
  check_rows(ctx, st.p.rows, st.p.d);
  return st;
}

std::shared_ptr<const void> prepare_layer_norm(const exec::KernelContext& ctx) {
  return exec::make_state(layer_norm_state(ctx, 1));
}

std::shared_ptr<const void> prepare_skip_layer_norm(const exec::KernelContext& ctx) {
  LayerNormState st = layer_norm_state(ctx, 2);
  if (ctx.inputs[1].shape != ctx.inputs[0].shape)
    fail(ctx,
         "x " + ir::shape_str(ctx.inputs[0].shape) + " and skip " + ir::shape_str(ctx.inputs[1].shape) + " differ");
  st.skip = true;
  return exec::make_state(st);
}

void run_layer_norm(const exec::KernelArgs& args) {
  const auto& st = state_of<LayerNormState>(args);
  launch_layer_norm(input_ptr<float>(args, 0), st.skip ? input_ptr<float>(args, 1) : nullptr,
                    input_ptr<float>(args, st.first_param),
                    st.has_bias ? input_ptr<float>(args, st.first_param + 1) : nullptr, output_ptr<float>(args, 0),
                    st.write_mean ? output_ptr<float>(args, 1) : nullptr,
                    st.write_inv_std ? output_ptr<float>(args, 2) : nullptr, st.p, stream_of(args));
}

// ---- ReduceMean ----------------------------------------------------------------------------

std::shared_ptr<const void> prepare_reduce_mean(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  const ir::Shape& x = ctx.inputs[0].shape;
  const std::vector<int64_t> axes = ctx.node.attrs.get_ints("axes");
  std::vector<bool> reduce(x.size(), axes.empty());
  try {
    for (int64_t a : axes) reduce[ir::normalize_axis(a, x.size(), "ReduceMean")] = true;
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  ReduceMeanParams p;
  p.out_numel = ir::numel(ctx.outputs[0].shape);
  p.count = 1;
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
  const std::vector<int64_t> strides = ir::strides_of(x);
  for (size_t d = 0; d < x.size(); ++d) {
    (reduce[d] ? reduced_dims : kept_dims).push_back(x[d]);
    (reduce[d] ? reduced_strides : kept_strides).push_back(strides[d]);
    if (reduce[d]) p.count *= x[d];
  }
  if (ir::numel(kept_dims) != p.out_numel)
    fail(ctx,
         "output " + ir::shape_str(ctx.outputs[0].shape) + " does not hold the kept dims " + ir::shape_str(kept_dims));
  p.kept = strided_index(ctx, kept_dims, kept_strides);
  p.reduced = strided_index(ctx, reduced_dims, reduced_strides);
  check_rows(ctx, p.out_numel, p.count);
  return exec::make_state(p);
}

void run_reduce_mean(const exec::KernelArgs& args) {
  launch_reduce_mean(input_ptr<float>(args, 0), output_ptr<float>(args, 0), state_of<ReduceMeanParams>(args),
                     stream_of(args));
}

}  // namespace

void add_normalization_kernels(CudaKernels& k) {
  k.add("Softmax", {prepare_softmax, run_softmax});
  k.add("LayerNorm", {prepare_layer_norm, run_layer_norm});
  k.add("SkipLayerNorm", {prepare_skip_layer_norm, run_layer_norm});
  k.add("ReduceMean", {prepare_reduce_mean, run_reduce_mean});
}

}  // namespace fusebox::cuda
