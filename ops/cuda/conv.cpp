// Conv, ConvTranspose, BatchNorm and the pools (MaxPool, AveragePool, GlobalAveragePool,
// GlobalMaxPool) with the CPU's semantics (ops/cpu/conv.cpp): the same reading of attributes and
// shapes (core/ir/conv_params.h), the same fused activations, the same pooling borders.
//
// Conv: prepare() picks the path and the GEMM plan (host/conv_geometry.h, unit-tested without a
// GPU). kIm2col writes one image's im2col into the planned scratch, then one strided-batched cuBLAS
// GEMM over its groups; kPointwise reads the input in place; kDepthwise is a direct kernel with the
// bias and activation fused. After the GEMMs one element-wise pass adds the bias and applies the
// activation. Row-major Y[M, P] = W[M, K] X[K, P] is cuBLAS's column-major Y^T = X^T W^T: X is
// cuBLAS's first operand (ld P), W its second (ld K), as matmul.cpp does for its operands. The
// GEMMs compute in fp32, or TF32 with precision=tf32, like the MatMul family.
//
// ConvTranspose: per image, one strided-batched GEMM over the groups writes col = W^T X into the
// planned scratch, then col2im gathers each output from the taps that reach it, over the bias (a
// gather, not the CPU's scatter: no atomics, and the same tap order, so the same sums).
#include <cublas_v2.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "core/ir/conv_params.h"
#include "core/ir/shape.h"
#include "ops/cuda/conv_kernels.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/host/conv_geometry.h"
#include "ops/cuda/host/launch_geometry.h"

namespace fusebox::cuda {
namespace {

// ---- Conv ----------------------------------------------------------------------------------

struct ConvState {
  ConvParams p;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  std::string where;  // "node 'Conv_3' (Conv)", for a failed cuBLAS status
};

ir::ConvShape conv_shape_of(const exec::KernelContext& ctx) {
  return or_fail(ctx, [&] {
    return ir::conv_shape(ctx.node, ctx.inputs[0].shape, ctx.inputs[1].shape,
                          ctx.inputs.size() > 2 ? &ctx.inputs[2].shape : nullptr);
  });
}

size_t conv_scratch(const exec::KernelContext& ctx) {
  if (ctx.inputs.size() < 2) return 0;  // prepare() names the missing input
  return conv_scratch_bytes_cuda(conv_shape_of(ctx));
}

std::shared_ptr<const void> prepare_conv(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) require_dtype(ctx, i, ir::DType::f32);
  const ir::ConvShape c = conv_shape_of(ctx);
  if (c.output_shape() != ctx.outputs[0].shape)
    fail(ctx, "output " + ir::shape_str(ctx.outputs[0].shape) + " is not the convolution's " +
                  ir::shape_str(c.output_shape()));
  ConvState st;
  st.where = "node '" + ctx.node.name + "' (" + ctx.node.op + ")";
  ConvParams& p = st.p;
  p.plan = or_fail(ctx, [&] { return conv_gemm_plan(c); });
  p.w = or_fail(ctx, [&] { return window3(c.g, "Conv"); });
  p.batch = c.g.batch;
  p.c_in = c.c_in;
  p.c_out = c.c_out;
  p.c_in_per_group = c.c_in_per_group;
  p.c_out_per_group = c.c_out_per_group;
  p.has_bias = c.has_bias;
  p.act = conv_act_params(or_fail(ctx, [&] { return ir::conv_activation(ctx.node); }));
  const size_t need = static_cast<size_t>(p.plan.scratch_floats) * sizeof(float);
  if (ctx.scratch_bytes < need)
    fail(ctx, "needs " + std::to_string(need) + " scratch bytes for its im2col, the plan gives " +
                  std::to_string(ctx.scratch_bytes) +
                  " (plan it with the cuda backend's memory rules)");
  st.compute = gemm_compute_of(ctx);
  return exec::make_state(std::move(st));
}

void run_conv(const exec::KernelArgs& args) {
  const auto& st = state_of<ConvState>(args);
  const ConvParams& p = st.p;
  const ConvGemmPlan& g = p.plan;
  const float* x = input_ptr<float>(args, 0);
  const float* w = input_ptr<float>(args, 1);
  const float* bias = p.has_bias ? input_ptr<float>(args, 2) : nullptr;
  float* y = output_ptr<float>(args, 0);
  cudaStream_t stream = stream_of(args);
  const int sms = shared_of(args).sm_count;
  const int64_t out_numel = p.batch * p.c_out * g.n;
  if (out_numel == 0) return;
  if (g.path == ConvPath::kDepthwise) {
    launch_depthwise_conv(x, w, bias, y, p, sms, stream);
    return;
  }
  if (g.k == 0) {  // no input channels: an empty sum, then the bias
    (void)cudaMemsetAsync(y, 0, static_cast<size_t>(out_numel) * sizeof(float), stream);
  } else {
    float* col = static_cast<float*>(args.scratch);
    const int64_t image = p.c_in * p.w.in_size();
    const float alpha = 1.0f, beta = 0.0f;
    for (int64_t call = 0; call < g.calls; ++call) {
      const float* a = x + call * g.x_call;
      if (g.path == ConvPath::kIm2col) {
        launch_im2col(x + call * image, col, p.w, p.c_in, sms, stream);
        a = col;
      }
      const cublasStatus_t s = cublasGemmStridedBatchedEx(
          blas_of(args), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.n), static_cast<int>(g.m),
          static_cast<int>(g.k), &alpha, a, CUDA_R_32F, static_cast<int>(g.n), g.x_batch, w,
          CUDA_R_32F, static_cast<int>(g.k), g.w_batch, &beta, y + call * g.y_call, CUDA_R_32F,
          static_cast<int>(g.n), g.y_batch, static_cast<int>(g.batch), st.compute,
          CUBLAS_GEMM_DEFAULT);
      if (s != CUBLAS_STATUS_SUCCESS) {
        keep_status(args, s, st.where, "cublasGemmStridedBatchedEx");
        return;
      }
    }
  }
  launch_conv_epilogue(y, bias, out_numel, p.c_out, g.n, p.act, sms, stream);
}

// ---- ConvTranspose -------------------------------------------------------------------------

struct ConvTransposeState {
  ConvTransposeParams p;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  std::string where;
};

ir::ConvTransposeShape conv_transpose_shape_of(const exec::KernelContext& ctx) {
  return or_fail(ctx, [&] {
    return ir::conv_transpose_shape(ctx.node, ctx.inputs[0].shape, ctx.inputs[1].shape,
                                    ctx.inputs.size() > 2 ? &ctx.inputs[2].shape : nullptr);
  });
}

size_t conv_transpose_scratch(const exec::KernelContext& ctx) {
  if (ctx.inputs.size() < 2) return 0;  // prepare() names the missing input
  const ir::ConvTransposeShape c = conv_transpose_shape_of(ctx);
  return or_fail(ctx, [&] { return conv_transpose_scratch_bytes_cuda(c); });
}

std::shared_ptr<const void> prepare_conv_transpose(const exec::KernelContext& ctx) {
  require_arity(ctx, 2, 1);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) require_dtype(ctx, i, ir::DType::f32);
  const ir::ConvTransposeShape c = conv_transpose_shape_of(ctx);
  if (c.output_shape() != ctx.outputs[0].shape)
    fail(ctx, "output " + ir::shape_str(ctx.outputs[0].shape) +
                  " is not the transposed convolution's " + ir::shape_str(c.output_shape()));
  ConvTransposeState st;
  st.where = "node '" + ctx.node.name + "' (" + ctx.node.op + ")";
  st.p = or_fail(ctx, [&] { return conv_transpose_params(c); });
  const size_t need = static_cast<size_t>(st.p.scratch_floats) * sizeof(float);
  if (ctx.scratch_bytes < need)
    fail(ctx,
         "needs " + std::to_string(need) + " scratch bytes for its col matrix, the plan gives " +
             std::to_string(ctx.scratch_bytes) + " (plan it with the cuda backend's memory rules)");
  st.compute = gemm_compute_of(ctx);
  return exec::make_state(std::move(st));
}

void run_conv_transpose(const exec::KernelArgs& args) {
  const auto& st = state_of<ConvTransposeState>(args);
  const ConvTransposeParams& p = st.p;
  const float* x = input_ptr<float>(args, 0);
  const float* w = input_ptr<float>(args, 1);
  const float* bias = p.has_bias ? input_ptr<float>(args, 2) : nullptr;
  float* y = output_ptr<float>(args, 0);
  float* col = static_cast<float*>(args.scratch);
  cudaStream_t stream = stream_of(args);
  const int sms = shared_of(args).sm_count;
  const int64_t in_size = p.w.in_size(), out_image = p.c_out * p.w.out_size();
  if (out_image == 0) return;
  const float alpha = 1.0f, beta = 0.0f;
  for (int64_t n = 0; n < p.batch; ++n) {
    if (p.scratch_floats == 0 || p.c_in_per_group == 0) {
      // No input positions or channels: nothing reaches an output but its bias.
      if (p.scratch_floats)
        (void)cudaMemsetAsync(col, 0, static_cast<size_t>(p.scratch_floats) * sizeof(float),
                              stream);
    } else {
      // Row-major col[g] [rows, P_in] = W[g]^T X[g] is column-major col^T = X^T W: X as cuBLAS's
      // first operand (ld P_in), W [C_in/group, rows] its second, transposed (ld rows).
      const cublasStatus_t s = cublasGemmStridedBatchedEx(
          blas_of(args), CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(in_size),
          static_cast<int>(p.rows), static_cast<int>(p.c_in_per_group), &alpha,
          x + n * p.c_in * in_size, CUDA_R_32F, static_cast<int>(in_size),
          p.c_in_per_group * in_size, w, CUDA_R_32F, static_cast<int>(p.rows),
          p.c_in_per_group * p.rows, &beta, col, CUDA_R_32F, static_cast<int>(in_size),
          p.rows * in_size, static_cast<int>(p.group), st.compute, CUBLAS_GEMM_DEFAULT);
      if (s != CUBLAS_STATUS_SUCCESS) {
        keep_status(args, s, st.where, "cublasGemmStridedBatchedEx");
        return;
      }
    }
    launch_col2im(col, bias, y + n * out_image, p, sms, stream);
  }
}

// ---- BatchNorm -----------------------------------------------------------------------------

std::shared_ptr<const void> prepare_batch_norm(const exec::KernelContext& ctx) {
  require_arity(ctx, 5, 1);
  for (size_t i = 0; i < 5; ++i) require_dtype(ctx, i, ir::DType::f32);
  const ir::BatchNormShape b = or_fail(ctx, [&] {
    return ir::batch_norm_shape(
        ctx.node, ctx.inputs[0].shape,
        {ctx.inputs[1].shape, ctx.inputs[2].shape, ctx.inputs[3].shape, ctx.inputs[4].shape});
  });
  BatchNormParams p;
  p.channels = b.channels;
  p.spatial = b.spatial;
  p.numel = b.batch * b.channels * b.spatial;
  p.epsilon = b.epsilon;
  return exec::make_state(p);
}

void run_batch_norm(const exec::KernelArgs& args) {
  launch_batch_norm(input_ptr<float>(args, 0), input_ptr<float>(args, 1), input_ptr<float>(args, 2),
                    input_ptr<float>(args, 3), input_ptr<float>(args, 4),
                    output_ptr<float>(args, 0), state_of<BatchNormParams>(args),
                    shared_of(args).sm_count, stream_of(args));
}

// ---- Pools ---------------------------------------------------------------------------------

std::shared_ptr<const void> prepare_pool(const exec::KernelContext& ctx, bool max) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  if (ctx.outputs.size() > 1) fail(ctx, "the Indices output is not supported");
  const char* op = max ? "MaxPool" : "AveragePool";
  const ir::WindowGeometry g =
      or_fail(ctx, [&] { return ir::pool_geometry(ctx.node, ctx.inputs[0].shape, op); });
  PoolParams p;
  p.w = or_fail(ctx, [&] { return window3(g, op); });
  p.planes = g.batch * g.channels;
  p.max = max;
  p.include_pad = ctx.node.attrs.get_int("count_include_pad", 0) != 0;
  return exec::make_state(p);
}

void run_pool(const exec::KernelArgs& args) {
  launch_pool(input_ptr<float>(args, 0), output_ptr<float>(args, 0), state_of<PoolParams>(args),
              shared_of(args).sm_count, stream_of(args));
}

struct GlobalPoolState {
  int64_t planes = 0, size = 0;
  bool max = true;
};

std::shared_ptr<const void> prepare_global_pool(const exec::KernelContext& ctx, bool max) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  const ir::Shape& x = ctx.inputs[0].shape;
  if (x.size() < 3) fail(ctx, "input " + ir::shape_str(x) + " must be [N, C, spatial...]");
  GlobalPoolState st;
  st.max = max;
  st.planes = x[0] * x[1];
  st.size = st.planes ? ir::numel(x) / st.planes : 0;
  // row_geometry refuses more planes than one launch holds by throwing; ask it here so run() never
  // does.
  try {
    (void)row_geometry(st.planes, st.size > 0 ? st.size : 1);
  } catch (const std::invalid_argument& e) {
    fail(ctx, e.what());
  }
  return exec::make_state(st);
}

void run_global_pool(const exec::KernelArgs& args) {
  const auto& st = state_of<GlobalPoolState>(args);
  launch_global_pool(input_ptr<float>(args, 0), output_ptr<float>(args, 0), st.planes, st.size,
                     st.max, stream_of(args));
}

}  // namespace

void add_conv_kernels(exec::KernelTable& k) {
  k.add("Conv", {prepare_conv, run_conv, conv_scratch});
  k.add("ConvTranspose", {prepare_conv_transpose, run_conv_transpose, conv_transpose_scratch});
  k.add("BatchNorm", {prepare_batch_norm, run_batch_norm});
  k.add("MaxPool",
        {[](const exec::KernelContext& ctx) { return prepare_pool(ctx, true); }, run_pool});
  k.add("AveragePool",
        {[](const exec::KernelContext& ctx) { return prepare_pool(ctx, false); }, run_pool});
  k.add("GlobalMaxPool",
        {[](const exec::KernelContext& ctx) { return prepare_global_pool(ctx, true); },
         run_global_pool});
  k.add("GlobalAveragePool",
        {[](const exec::KernelContext& ctx) { return prepare_global_pool(ctx, false); },
         run_global_pool});
}

}  // namespace fusebox::cuda
