// MatMul, MatMulAdd and FusedBias{Relu,Gelu,Tanh,Sigmoid} on cuBLAS and cuBLASLt, with the CPU's
// semantics (ops/cpu/matmul.cpp): alpha * op(A) op(B) [+ C] [then the activation], batched with
// numpy broadcasting over the batch dims, a 1-D A as a [1, K] row and a 1-D B as a [K, 1] column.
// Operands are dense row-major tensors (the CPU kernel reads no other layout); transA/transB and
// alpha become cuBLAS's flags and scalar.
//
// Row-major to column-major: cuBLAS sees a row-major [m, n] matrix as a column-major [n, m] one,
// so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T: B is cuBLAS's first operand, A its
// second, with the same transpose flags and leading dims (the row lengths).
//
// Plans, made in prepare():
//  - the batch as ir::matmul_shape folds it (core/ir/matmul_shape.h, shared with the CPU):
//    [B, S, K] x [K, N] is one [B*S, K] x [K, N] GEMM; otherwise
//    the broadcast batch offsets are split into cublasGemmStridedBatchedEx calls
//    (split_gemm_batches: one call when each operand's matrices are evenly spaced, stride 0 for
//    a broadcast operand);
//  - with a bias (input 2) that is a row of N values and a single GEMM, a cuBLASLt matmul whose
//    epilogue adds it (BIAS), and for Relu also applies the activation (RELU_BIAS); both Gelus,
//    Tanh and Sigmoid follow as one pass of our kernel (cuBLASLt's GELU formula is undocumented). Its algorithm is chosen here by cuBLASLt's heuristic;
//  - otherwise (any broadcast C, batched GEMMs, no heuristic result): the cuBLAS GEMM, then one
//    pass out = act(out + broadcast(C)) (matmul_kernels.cu).
// FP32 compute by default (CUBLAS_COMPUTE_32F: no TF32), so results stay within float rounding of
// the CPU's; with precision=tf32 (the run's CompileOptions, read in prepare()) both the
// cuBLAS and the cuBLASLt path take CUBLAS_COMPUTE_32F_FAST_TF32 (host/gemm_precision.h).
#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/matmul_shape.h"
#include "core/ir/shape.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/host/tile_geometry.h"
#include "ops/cuda/matmul_kernels.h"
#include "ops/cuda/strided_host.h"

namespace fusebox::cuda {
namespace {

enum class Epilogue : uint8_t { None, Add, AddAct };

// What cuBLASLt was told in prepare(); freed with the state. Its matmul descriptor also carries
// the bias pointer, which is only known in run(): run() sets that one attribute (a host-side
// store into this node's own descriptor; no allocation, nothing queued on the stream).
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (our B), B (our A), C = D
  cublasLtMatmulHeuristicResult_t heuristic{};
  EpilogueAct after = EpilogueAct::kNone;  // the activation the epilogue could not apply
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

struct MatMulState {
  int m = 0, n = 0, k = 0;  // per GEMM; m covers the whole batch when folded
  cublasOperation_t op_a = CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  int lda = 1, ldb = 1;  // row lengths of A and B as stored; ldc = n
  float alpha = 1.0f;
  GemmBatches batches;  // offsets in elements; call c writes output matrices from c * per_call
  int64_t out_numel = 0;
  Epilogue epilogue = Epilogue::None;
  EpilogueAct act = EpilogueAct::kNone;
  StridedIndex bias_index;     // input 2 broadcast to the output
  bool bias_identity = false;  // input 2 is read in output order (nothing to broadcast)
  std::shared_ptr<LtPlan> lt;  // set when the bias row and activation fit a cuBLASLt epilogue
  std::string where;           // "node 'MatMul_3' (MatMul)", for a failed status
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};

// The cuBLASLt handle prepare() asks for heuristics with: prepare() gets no ExecContext, and a
// heuristic is a property of the device, not of the handle (the backend's own handle runs the
// matmul). Made once, on first use, and kept for the process (cuBLASLt handles are thread-safe).
cublasLtHandle_t heuristic_handle() {
  static const cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    return cublasLtCreate(&h) == CUBLAS_STATUS_SUCCESS ? h : nullptr;
  }();
  return handle;
}

// The backend's cuBLAS(Lt) workspace (cuda_backend.cpp); run() checks the chosen algorithm's need
// against what CudaShared really holds.
constexpr uint64_t kLtWorkspaceBytes = uint64_t{32} << 20;
// Pointer alignment the heuristic may assume; run() takes the cuBLAS path for anything less.
constexpr uint32_t kLtAlignment = 16;

// cuBLASLt's plan for one GEMM with the bias epilogue, or null when cuBLASLt offers no algorithm
// (the cuBLAS path then computes the same thing).
std::shared_ptr<LtPlan> make_lt_plan(const MatMulState& st) {
  cublasLtHandle_t handle = heuristic_handle();
  if (!handle) return nullptr;
  auto p = std::make_shared<LtPlan>();
  // Only ReLU goes into cuBLASLt's epilogue: its GELU's formula is not documented, so whether it
  // is the tanh form to float rounding is unverified until it runs on a GPU; every GELU, Tanh and
  // Sigmoid is applied by our own pass after the BIAS epilogue.
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  if (st.act == EpilogueAct::kRelu)
    epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  else
    p->after = st.act;
  const cudaDataType_t f32 = CUDA_R_32F;
  if (cublasLtMatmulDescCreate(&p->desc, st.compute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return nullptr;
  bool ok = cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &st.op_b, sizeof(st.op_b)) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &st.op_a, sizeof(st.op_a)) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &f32, sizeof(f32)) ==
                CUBLAS_STATUS_SUCCESS;
  // Stored (column-major) shapes: our B is [n x k] (op N) or [k x n] (op T) with ld = its row
  // length; our A is [k x m] or [m x k]; the output [n x m], ld n.
  const uint64_t bn = st.op_b == CUBLAS_OP_N ? st.n : st.k, bk = st.op_b == CUBLAS_OP_N ? st.k : st.n;
  const uint64_t ak = st.op_a == CUBLAS_OP_N ? st.k : st.m, am = st.op_a == CUBLAS_OP_N ? st.m : st.k;
  ok = ok && cublasLtMatrixLayoutCreate(&p->a, CUDA_R_32F, bn, bk, st.ldb) == CUBLAS_STATUS_SUCCESS &&
       cublasLtMatrixLayoutCreate(&p->b, CUDA_R_32F, ak, am, st.lda) == CUBLAS_STATUS_SUCCESS &&
       cublasLtMatrixLayoutCreate(&p->c, CUDA_R_32F, st.n, st.m, st.n) == CUBLAS_STATUS_SUCCESS;
  if (!ok) return nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return nullptr;
  const uint64_t workspace = kLtWorkspaceBytes;
  const uint32_t align = kLtAlignment;
  ok = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                            sizeof(workspace)) == CUBLAS_STATUS_SUCCESS;
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align)) == CUBLAS_STATUS_SUCCESS;
  int found = 0;
  ok = ok && cublasLtMatmulAlgoGetHeuristic(handle, p->desc, p->a, p->b, p->c, p->c, pref, 1, &p->heuristic, &found) ==
                 CUBLAS_STATUS_SUCCESS;
  cublasLtMatmulPreferenceDestroy(pref);
  if (!ok || found < 1 || p->heuristic.state != CUBLAS_STATUS_SUCCESS) return nullptr;
  return p;
}

bool fits_int(int64_t v) {
  return v >= 0 && v <= INT_MAX;
}

MatMulState prepare_matmul(const exec::KernelContext& ctx, Epilogue epilogue, EpilogueAct act) {
  const size_t inputs = epilogue == Epilogue::None ? 2 : 3;
  require_arity(ctx, inputs, 1);
  for (size_t i = 0; i < inputs; ++i) require_dtype(ctx, i, ir::DType::f32);
  const bool gelu_tanh = act == EpilogueAct::kGeluErf && or_fail(ctx, [&] { return ir::fused_gelu_tanh(ctx.node); });
  const ir::MatMulShape ms =
      or_fail(ctx, [&] { return ir::matmul_shape(ctx.node, ctx.inputs[0].shape, ctx.inputs[1].shape); });
  MatMulState st;
  st.where = "node '" + ctx.node.name + "' (" + ctx.node.op + ")";
  st.epilogue = epilogue;
  st.act = gelu_tanh ? EpilogueAct::kGeluTanh : act;
  st.op_a = ms.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  st.op_b = ms.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  st.alpha = static_cast<float>(ms.alpha);
  st.compute = gemm_compute_of(ctx);
  st.out_numel = ms.out_numel();
  if (st.out_numel != ir::numel(ctx.outputs[0].shape))
    fail(ctx, "output " + ir::shape_str(ctx.outputs[0].shape) + " does not match the product");
  st.batches = split_gemm_batches(ms.a_offsets, ms.b_offsets);
  const int64_t gemm_m = ms.gemm_m, n = ms.n, ka = ms.k;
  // cuBLAS wants leading dims >= 1 even where nothing is read (k == 0).
  const int64_t lda = std::max<int64_t>(ms.lda, 1), ldb = std::max<int64_t>(ms.ldb, 1);
  for (int64_t v : {gemm_m, n, ka, lda, ldb, st.batches.per_call})
    if (!fits_int(v)) fail(ctx, "matrix dimension " + std::to_string(v) + " exceeds cuBLAS's int range");
  st.m = static_cast<int>(gemm_m);
  st.n = static_cast<int>(n);
  st.k = static_cast<int>(ka);
  st.lda = static_cast<int>(lda);
  st.ldb = static_cast<int>(ldb);

  if (epilogue != Epilogue::None) {
    const ir::Shape& c = ctx.inputs[2].shape;
    st.bias_index = broadcast_index(ctx, c, ctx.outputs[0].shape);
    st.bias_identity = st.bias_index.dense;
    const bool bias_row = !c.empty() && c.back() == n && ir::numel(c) == n;
    if (bias_row && st.batches.calls() == 1 && st.batches.per_call == 1 && st.k > 0 && st.out_numel > 0)
      st.lt = make_lt_plan(st);
  }
  return st;
}

bool aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kLtAlignment == 0;
}

// The GEMMs (cuBLAS) into out with the given beta; k == 0 handled by the caller. A failed status
// is kept for the backend's next synchronize (keep_status), and the remaining calls are skipped.
void run_gemms(const exec::KernelArgs& args, const MatMulState& st, const float* a, const float* b, float* out,
               float beta) {
  const GemmBatches& g = st.batches;
  const int64_t mn = static_cast<int64_t>(st.m) * st.n;
  for (size_t c = 0; c < g.calls(); ++c) {
    const cublasStatus_t s = cublasGemmStridedBatchedEx(
        blas_of(args), st.op_b, st.op_a, st.n, st.m, st.k, &st.alpha, b + g.b_base[c], CUDA_R_32F, st.ldb, g.b_stride,
        a + g.a_base[c], CUDA_R_32F, st.lda, g.a_stride, &beta, out + static_cast<int64_t>(c) * g.per_call * mn,
        CUDA_R_32F, st.n, mn, static_cast<int>(g.per_call), st.compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) {
      keep_status(args, s, st.where, "cublasGemmStridedBatchedEx");
      return;
    }
  }
}

void run_matmul(const exec::KernelArgs& args) {
  const auto& st = state_of<MatMulState>(args);
  if (st.out_numel == 0) return;
  const float* a = input_ptr<float>(args, 0);
  const float* b = input_ptr<float>(args, 1);
  float* out = output_ptr<float>(args, 0);
  cudaStream_t stream = stream_of(args);
  const CudaShared& shared = shared_of(args);
  const int sms = shared.sm_count;
  if (st.epilogue == Epilogue::None) {
    if (st.k == 0)  // an empty sum
      (void)cudaMemsetAsync(out, 0, static_cast<size_t>(st.out_numel) * sizeof(float), stream);
    else
      run_gemms(args, st, a, b, out, 0.0f);
    return;
  }
  const float* bias = input_ptr<float>(args, 2);
  const EpilogueAct act = st.epilogue == Epilogue::Add ? EpilogueAct::kNone : st.act;
  // cuBLASLt with the bias (and activation) in its epilogue, unless the planner put the bias in
  // the output's place (the GEMM would overwrite it before reading it) or a pointer is less
  // aligned than the heuristic assumed.
  if (st.lt && bias != out && aligned(a) && aligned(b) && aligned(out) && aligned(bias) &&
      st.lt->heuristic.workspaceSize <= shared.workspace_bytes) {
    const LtPlan& p = *st.lt;
    cublasStatus_t s = cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
    if (s != CUBLAS_STATUS_SUCCESS) {
      keep_status(args, s, st.where, "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
      return;
    }
    const float beta = 0.0f;
    s = cublasLtMatmul(shared.lt, p.desc, &st.alpha, b, p.a, a, p.b, &beta, out, p.c, out, p.c, &p.heuristic.algo,
                       shared.workspace, shared.workspace_bytes, stream);
    if (s != CUBLAS_STATUS_SUCCESS) {
      keep_status(args, s, st.where, "cublasLtMatmul");
      return;
    }
    if (p.after != EpilogueAct::kNone)
      launch_bias_activation(out, nullptr, st.bias_index, st.out_numel, p.after, sms, stream);
    return;
  }
  if (bias == out) {
    // C already in the output's place: write its broadcast there if it needs one, then
    // out = alpha AB + out, then the activation in place.
    if (!st.bias_identity) launch_broadcast_copy(bias, st.bias_index, out, st.out_numel, sms, stream);
    if (st.k > 0) run_gemms(args, st, a, b, out, 1.0f);
    if (act != EpilogueAct::kNone) launch_bias_activation(out, nullptr, st.bias_index, st.out_numel, act, sms, stream);
    return;
  }
  if (st.k == 0)
    (void)cudaMemsetAsync(out, 0, static_cast<size_t>(st.out_numel) * sizeof(float), stream);
  else
    run_gemms(args, st, a, b, out, 0.0f);
  launch_bias_activation(out, bias, st.bias_index, st.out_numel, act, sms, stream);
}

exec::KernelDef matmul_kernel(Epilogue epilogue, EpilogueAct act = EpilogueAct::kNone) {
  return {
      [epilogue, act](const exec::KernelContext& ctx) { return exec::make_state(prepare_matmul(ctx, epilogue, act)); },
      run_matmul};
}

}  // namespace

void add_matmul_kernels(exec::KernelTable& k) {
  k.add("MatMul", matmul_kernel(Epilogue::None));
  k.add("MatMulAdd", matmul_kernel(Epilogue::Add));
  k.add("FusedBiasRelu", matmul_kernel(Epilogue::AddAct, EpilogueAct::kRelu));
  k.add("FusedBiasGelu", matmul_kernel(Epilogue::AddAct, EpilogueAct::kGeluErf));
  k.add("FusedBiasTanh", matmul_kernel(Epilogue::AddAct, EpilogueAct::kTanh));
  k.add("FusedBiasSigmoid", matmul_kernel(Epilogue::AddAct, EpilogueAct::kSigmoid));
}

}  // namespace fusebox::cuda
