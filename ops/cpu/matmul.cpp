// MatMul, MatMulAdd and FusedBias{Relu,Gelu,Tanh,Sigmoid} over cblas_sgemm and packed_sgemm.
//
// prepare() maps ir::matmul_shape (core/ir/matmul_shape.h, shared with the CUDA kernel) onto a list
// of sgemm calls: m, n, k, leading dims and one (A offset, B offset) pair per batch matrix, with
// broadcast batch dims resolved to repeated offsets. When A's batch dims are all real, B is a plain
// matrix and A is not transposed, the batch is folded into M: [B, S, K] x [K, N] is one [B*S, K] x
// [K, N] sgemm, the shape BLAS is fastest at. A 1-D A is a [1, K] row, a 1-D B a [K, 1] column
// (ONNX); the output simply omits that dim, its bytes are the same.
//
// Weights: when B is a weight (known at prepare time) and not batched, it is packed once into
// the panels of packed_sgemm (packed_gemm.h: the AVX-512 or AVX2 micro-kernel of the kernel's Isa,
// fixed in prepare; no per-call repacking) and every call multiplies against the packed copy. The
// portable Isa keeps B where it is and calls OpenBLAS, and so does the setting gemm=blas at every
// level (CompileOptions::gemm: what packing and the epilogue buy, measured at one level). Activations x activations (attention) stay
// on OpenBLAS. With a packed weight and a bias row ([N]: broadcast over rows), the bias and the
// activation are the GEMM's epilogue, applied in registers before each tile is stored: no pass over
// the output before (writing the bias) or after (the activation).
//
// Threads: sgemm_many (blas.h) runs the sgemms on our threads, whole matrices per thread when
// there are at least as many as threads, else row (or column) blocks of each, with OpenBLAS
// single-threaded inside our parallel region (its own threaded driver allocates per call).

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/ir/matmul_shape.h"
#include "core/ir/shape.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/math.h"
#include "ops/cpu/packed_gemm.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/strided.h"

namespace fusebox::cpu {

namespace {

enum class Epilogue : uint8_t {
  None,    // MatMul
  Add,     // MatMulAdd: C is written into the output first, then sgemm with beta = 1
  AddAct,  // FusedBias<Act>: in the packed GEMM's epilogue when it can; else, for Relu, sgemm
           // then one pass out = relu(out + bias); for the others as MatMulAdd, then one pass
           // out = act(out)
};

struct MatMulState {
  int64_t m = 0, n = 0, k = 0;  // per sgemm; m covers the whole batch when folded
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f;
  int64_t lda = 0, ldb = 0;                   // ldc = n: output matrices are dense
  std::vector<int64_t> a_offsets, b_offsets;  // one per sgemm; output offset is i * m * n
  int64_t out_numel = 0;
  Epilogue epilogue = Epilogue::None;
  GemmAct act = GemmAct::kNone;             // AddAct's activation
  StridedPlan bias_plan;                    // input 2 broadcast to the output (operand 0)
  std::shared_ptr<const PackedB> packed_b;  // set when B is a plain weight matrix
  bool bias_in_gemm = false;  // packed_b and C is a bias row: the GEMM epilogue adds it
  Isa isa = Isa::kPortable;   // kernel_isa at prepare: the GEMM path and the activation pass
};

MatMulState prepare_matmul(const exec::KernelContext& ctx, Epilogue epilogue, GemmAct act) {
  size_t inputs = epilogue == Epilogue::None ? 2 : 3;
  require_arity(ctx, inputs, 1);
  for (size_t i = 0; i < inputs; ++i) require_dtype(ctx, i, ir::DType::f32);
  MatMulState st;
  st.epilogue = epilogue;
  st.act = act;
  if (act == GemmAct::kGelu && or_fail(ctx, [&] { return ir::fused_gelu_tanh(ctx.node); }))
    st.act = GemmAct::kGeluTanh;
  ir::MatMulShape ms = or_fail(
      ctx, [&] { return ir::matmul_shape(ctx.node, ctx.inputs[0].shape, ctx.inputs[1].shape); });
  st.trans_a = ms.trans_a;
  st.trans_b = ms.trans_b;
  st.alpha = static_cast<float>(ms.alpha);
  st.m = ms.gemm_m;
  st.n = ms.n;
  st.k = ms.k;
  st.lda = ms.lda;
  st.ldb = ms.ldb;
  st.a_offsets = std::move(ms.a_offsets);
  st.b_offsets = std::move(ms.b_offsets);
  st.out_numel = ms.out_numel();
  if (st.out_numel != ir::numel(ctx.outputs[0].shape))
    fail(ctx, "output " + ir::shape_str(ctx.outputs[0].shape) + " does not match the product");
  for (int64_t v : {st.m, st.n, st.k, st.lda, st.ldb})
    if (!fits_blas_int(v))
      fail(ctx, "matrix dimension " + std::to_string(v) + " exceeds the BLAS int range");
  const ir::Tensor* weight_b =
      ctx.constants && ctx.constants->size() > 1 ? (*ctx.constants)[1] : nullptr;
  st.isa = kernel_isa(ctx);
  const bool blas = ctx.options && ctx.options->gemm == "blas";
  if (weight_b && ir::numel(ms.b_batch) == 1 && st.isa != Isa::kPortable && !blas)
    st.packed_b = std::make_shared<const PackedB>(
        PackedB::pack(st.isa, weight_b->data<float>(), st.k, st.n, st.trans_b));

  if (epilogue != Epilogue::None) {
    st.bias_plan = or_fail(
        ctx, [&] { return make_broadcast_plan({ctx.inputs[2].shape}, ctx.outputs[0].shape); });
    const ir::Shape& c = ctx.inputs[2].shape;
    st.bias_in_gemm = st.packed_b && !c.empty() && c.back() == st.n && ir::numel(c) == st.n;
  }
  return st;
}

void run_gemms(const MatMulState& st, const float* a, const float* b, float* out, float beta,
               const GemmEpilogue& ep = {}) {
  const GemmShape g{st.trans_a, st.trans_b, st.m, st.n, st.k, st.alpha, st.lda, st.ldb, st.n};
  const int64_t mn = st.m * st.n;
  if (st.packed_b) {  // B is a weight packed at prepare time; packed_sgemm threads itself
    for (size_t i = 0; i < st.a_offsets.size(); ++i)
      packed_sgemm(st.m, st.alpha, a + st.a_offsets[i], st.lda, st.trans_a, *st.packed_b, beta,
                   out + static_cast<int64_t>(i) * mn, st.n, ep);
    return;
  }
  sgemm_many(
      g, static_cast<int64_t>(st.a_offsets.size()), beta,
      [&](int64_t i) { return a + st.a_offsets[i]; },
      [&](int64_t i) { return b + st.b_offsets[i]; }, [&](int64_t i) { return out + i * mn; });
}

// out = broadcast(bias): the starting value for sgemm with beta = 1.
void write_bias(const StridedPlan& plan, const float* bias, float* out) {
  if (bias == out && plan.contiguous(0)) return;  // the planner put C in place: already there
  parallel_for(plan.numel, kGrainSimple,
               [&](int64_t begin, int64_t end) { strided_copy(plan, bias, out, begin, end); });
}

// out = relu(out + broadcast(bias)) in one pass over the output.
void add_bias_relu(const StridedPlan& plan, const float* bias, float* out) {
  const int64_t s = plan.inner_stride(0);
  parallel_for(plan.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for_each_segment(plan, begin, end, [&](int64_t o, const int64_t* off, int64_t len) {
      float* y = out + o;
      const float* c = bias + off[0];
      if (s == 1) {
        for (int64_t i = 0; i < len; ++i) y[i] = relu_f32(y[i] + c[i]);
      } else {
        const float v = c[0];  // stride 0: one bias value for the whole run
        for (int64_t i = 0; i < len; ++i) y[i] = relu_f32(y[i] + v);
      }
    });
  });
}

// out[i] = act(out[i]): the activation after a GEMM that could not take it as its epilogue.
void activate_in_place(Isa isa, GemmAct act, float* out, int64_t n) {
  parallel_for(n, act == GemmAct::kRelu ? kGrainSimple : kGrainMath, [&](int64_t begin, int64_t end) {
    gemm_act_span(isa, act, out + begin, out + begin, end - begin);
  });
}

void run_matmul(const exec::KernelArgs& args) {
  const auto& st = state_of<MatMulState>(args);
  if (st.out_numel == 0) return;
  const float* a = input_ptr<float>(args, 0);
  const float* b = input_ptr<float>(args, 1);
  float* out = output_ptr<float>(args, 0);
  if (st.epilogue == Epilogue::None) {
    run_gemms(st, a, b, out, 0.0f);
    return;
  }
  const float* bias = input_ptr<float>(args, 2);
  // The bias in the GEMM's epilogue, unless the planner put it in the output's place (the first
  // K block would overwrite it before the last one adds it).
  if (st.bias_in_gemm && bias != out) {
    run_gemms(st, a, b, out, 0.0f, {bias, st.act});
    return;
  }
  switch (st.epilogue) {
    case Epilogue::None:
      break;
    case Epilogue::Add:
      write_bias(st.bias_plan, bias, out);
      run_gemms(st, a, b, out, 1.0f);
      break;
    case Epilogue::AddAct:
      if (st.act == GemmAct::kRelu && bias != out) {
        run_gemms(st, a, b, out, 0.0f);
        add_bias_relu(st.bias_plan, bias, out);
        break;
      }
      // (A bias aliased in place must be written first: sgemm with beta = 0 would overwrite it
      // before it is read.)
      write_bias(st.bias_plan, bias, out);
      run_gemms(st, a, b, out, 1.0f);
      if (st.act != GemmAct::kNone) activate_in_place(st.isa, st.act, out, st.out_numel);
      break;
  }
}

exec::KernelDef matmul_kernel(Epilogue epilogue, GemmAct act = GemmAct::kNone) {
  return {[epilogue, act](const exec::KernelContext& ctx) {
            return exec::make_state(prepare_matmul(ctx, epilogue, act));
          },
          run_matmul};
}

}  // namespace

void add_matmul_kernels(exec::KernelTable& table) {
  table.add("MatMul", matmul_kernel(Epilogue::None));
  table.add("MatMulAdd", matmul_kernel(Epilogue::Add));
  table.add("FusedBiasRelu", matmul_kernel(Epilogue::AddAct, GemmAct::kRelu));
  table.add("FusedBiasGelu", matmul_kernel(Epilogue::AddAct, GemmAct::kGelu));
  table.add("FusedBiasTanh", matmul_kernel(Epilogue::AddAct, GemmAct::kTanh));
  table.add("FusedBiasSigmoid", matmul_kernel(Epilogue::AddAct, GemmAct::kSigmoid));
}

}  // namespace fusebox::cpu
