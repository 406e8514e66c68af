// Attention(Q, K, V) = softmax(scale * Q K^T) V over the last two dims, per batch*head.
//
// For each batch-head b the Sq x Skv score matrix goes to its own slice of the planner-given
// scratch (the schema asks for batch * Sq * Skv floats): sgemm writes scale * Q K^T there (K is
// read transposed by BLAS, or as-is when the graph already holds K^T: k_transposed = 1), the
// rows are softmaxed in place, and a second sgemm writes S V into the output. Scores never
// leave the scratch region, so this is the unfused MatMul -> Softmax -> MatMul with two fewer
// arena tensors and no separate kernel launches.
//
// Threads: with at least as many batch-heads as threads, whole heads run in parallel (the
// OpenMP build of OpenBLAS runs single-threaded inside our parallel region, which suits these
// small matrices, and the scores stay in cache between the three steps). With fewer heads the
// steps run one after another over all heads: sgemm_many splits each sgemm into row blocks over
// the threads, and the softmax rows of all heads are split in one pass.
#include <omp.h>

#include <algorithm>
#include <string>

#include "ops/cpu/blas.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/math.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

namespace {

struct AttentionState {
  int64_t batch = 1, sq = 0, skv = 0, d = 0, dv = 0;
  float scale = 1.0f;
  bool k_transposed = false;
};

std::shared_ptr<const void> prepare_attention(const exec::KernelContext& ctx) {
  require_arity(ctx, 3, 1);
  for (size_t i = 0; i < 3; ++i) require_dtype(ctx, i, ir::DType::f32);
  const ir::Shape &q = ctx.inputs[0].shape, &k = ctx.inputs[1].shape, &v = ctx.inputs[2].shape;
  const size_t r = q.size();
  if (r < 2 || k.size() != r || v.size() != r) fail(ctx, "Q, K, V must have the same rank >= 2");
  AttentionState st;
  st.k_transposed = ctx.node.attrs.get_int("k_transposed", 0) != 0;
  st.scale = static_cast<float>(ctx.node.attrs.get_float("scale", 1.0));
  for (size_t i = 0; i + 2 < r; ++i) {
    if (q[i] != k[i] || q[i] != v[i]) fail(ctx, "Q, K, V leading dims differ");
    st.batch *= q[i];
  }
  st.sq = q[r - 2];
  st.d = q[r - 1];
  st.skv = st.k_transposed ? k[r - 1] : k[r - 2];
  const int64_t kd = st.k_transposed ? k[r - 2] : k[r - 1];
  if (kd != st.d) fail(ctx, "Q and K head sizes differ");
  if (v[r - 2] != st.skv) fail(ctx, "K and V sequence lengths differ");
  st.dv = v[r - 1];
  for (int64_t n : {st.sq, st.skv, st.d, st.dv})
    if (!fits_blas_int(n))
      fail(ctx, "dimension " + std::to_string(n) + " exceeds the BLAS int range");
  const size_t need = static_cast<size_t>(st.batch * st.sq * st.skv) * sizeof(float);
  if (ctx.scratch_bytes < need)
    fail(ctx, "needs " + std::to_string(need) + " scratch bytes for the scores, the plan gives " +
                  std::to_string(ctx.scratch_bytes));
  return exec::make_state(st);
}

GemmShape scores_shape(const AttentionState& st) {
  // S = scale * Q K^T: K is read transposed by BLAS unless the graph holds K^T already.
  return {false, !st.k_transposed, st.sq, st.skv,
          st.d,  st.scale,         st.d,  st.k_transposed ? st.skv : st.d,
          st.skv};
}
GemmShape output_shape(const AttentionState& st) {
  return {false, false, st.sq, st.dv, st.skv, 1.0f, st.skv, st.dv, st.dv};
}

// Softmax, in place, of score rows [begin, end) counted over all heads.
void softmax_rows(const AttentionState& st, float* scores, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    softmax_row(scores + i * st.skv, scores + i * st.skv, st.skv);
}

void run_attention(const exec::KernelArgs& args) {
  const auto& st = state_of<AttentionState>(args);
  if (st.batch * st.sq * st.dv == 0) return;  // empty output
  const float* q = input_ptr<float>(args, 0);
  const float* k = input_ptr<float>(args, 1);
  const float* v = input_ptr<float>(args, 2);
  float* scores = static_cast<float*>(args.scratch);
  float* out = output_ptr<float>(args, 0);
  const int64_t q_size = st.sq * st.d, k_size = st.skv * st.d, v_size = st.skv * st.dv;
  const int64_t s_size = st.sq * st.skv, o_size = st.sq * st.dv;
  const GemmShape sg = scores_shape(st), og = output_shape(st);
  auto q_of = [&](int64_t b) { return q + b * q_size; };
  auto k_of = [&](int64_t b) { return k + b * k_size; };
  auto v_of = [&](int64_t b) { return v + b * v_size; };
  auto s_of = [&](int64_t b) { return scores + b * s_size; };
  auto o_of = [&](int64_t b) { return out + b * o_size; };
  const int threads = omp_get_max_threads();
  if (threads > 1 && st.batch >= threads) {
    parallel_for(st.batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        sgemm(sg.trans_a, sg.trans_b, sg.m, sg.n, sg.k, sg.alpha, q_of(b), sg.lda, k_of(b), sg.ldb,
              0.0f, s_of(b), sg.ldc);
        softmax_rows(st, scores, b * st.sq, (b + 1) * st.sq);
        sgemm(false, false, og.m, og.n, og.k, 1.0f, s_of(b), og.lda, v_of(b), og.ldb, 0.0f, o_of(b),
              og.ldc);
      }
    });
    return;
  }
  sgemm_many(sg, st.batch, 0.0f, q_of, k_of, s_of);
  parallel_for(st.batch * st.sq, std::max<int64_t>(1, kGrainMath / std::max<int64_t>(st.skv, 1)),
               [&](int64_t begin, int64_t end) { softmax_rows(st, scores, begin, end); });
  sgemm_many(og, st.batch, 0.0f, s_of, v_of, o_of);
}

}  // namespace

void add_attention_kernels(exec::KernelTable& table) {
  table.add("Attention", {prepare_attention, run_attention});
}

}  // namespace fusebox::cpu
