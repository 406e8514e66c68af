// Attention(Q, K, V) = softmax(scale * Q K^T) V per batch-head, flash-style: the Sq x Skv score
// matrix is never written out.
//
// Operands are strided views (core/ir/attention_layout.h), so Q, K and V can be three slices of
// one projection read in place, and the output can land directly in the [S, heads * Dv] layout
// the next projection reads: the head split and merge cost no copies.
//
// Per batch-head b:
//  1. K^T and V are packed into the planner-given scratch as GEMM panels (packed_gemm.h): each is
//     read once per call, then streamed from cache by every block of query rows.
//  2. For each block of up to kRows query rows, over chunks of up to kChunk keys:
//       S = scale * Q_blk K^T_chunk             (sgemm_panels into a block on the stack)
//       online softmax: running row max m and sum l; P = exp(S - m_new); rows of O already
//       accumulated are rescaled by exp(m_old - m_new)
//       O_blk (+)= P V_chunk                    (sgemm_panels straight into the output rows)
//     and finally O_blk /= l. With Skv <= kChunk (the common case) there is one chunk and no
//     rescaling: exactly softmax(S) V, with S living in a 14-row block in L1.
//
// Masks: an additive mask (input 3, any broadcast view) is added to S before the softmax. A
// causal node's block of rows [i0, i0 + rows) stops at key i0 + rows (rounded up to the 32-key
// panel the GEMM computes anyway): the key chunks and panels past the diagonal are never
// computed, and inside the last one the keys j > i are set to -inf before the softmax.
//
// Threads (a team sized by threads_for from the whole op's FLOPs): with at least as many
// batch-heads as threads, each thread takes whole heads (packs and computes them: one fork/join,
// K and V stay in that core's cache). With fewer, the packing runs first and the (head, row
// block) pairs are split over the threads.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/ir/attention_layout.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/math.h"
#include "ops/cpu/packed_gemm.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/vec_math.h"

namespace fusebox::cpu {

namespace {

// Query rows per block: one row block of the GEMM micro-kernel (AVX-512: 14; AVX2: 12, two of
// its 6-row blocks).
constexpr int64_t kRows = 14;
constexpr int64_t kChunk = 256;  // keys per softmax chunk (a multiple of the 32-column panels)

struct AttentionState {
  int64_t batch = 1, sq = 0, skv = 0, d = 0, dv = 0;
  float scale = 1.0f;
  // Per batch-head element offsets of each operand, and the row / column strides inside one
  // head (K as [Skv, D]).
  std::vector<int64_t> q_off, k_off, v_off, o_off;
  int64_t q_rs = 0, q_cs = 0, k_rs = 0, k_cs = 0, v_rs = 0, v_cs = 0, o_rs = 0;
  bool causal = false;
  bool has_mask = false;
  std::vector<int64_t> m_off;  // the additive mask's per-head offsets and strides
  int64_t m_rs = 0, m_cs = 0;
  size_t k_panel_floats = 0, v_panel_floats = 0;  // scratch per head
  Isa isa = Isa::kPortable;  // kernel_isa at prepare: the packing, GEMM and softmax path
  int64_t block_rows = kRows;  // query rows per block for that path (<= kRows)
};

std::shared_ptr<const void> prepare_attention(const exec::KernelContext& ctx) {
  if (ctx.inputs.size() != 3 && ctx.inputs.size() != 4)
    fail(ctx, "takes 3 inputs (Q, K, V) and an optional mask, got " +
                  std::to_string(ctx.inputs.size()));
  require_arity(ctx, ctx.inputs.size(), 1);
  const ir::AttentionLayout a =
      or_fail(ctx, [&] { return ir::attention_layout(ctx.node, ctx.inputs); });
  AttentionState st;
  st.batch = a.batch;
  st.sq = a.sq;
  st.skv = a.skv;
  st.d = a.d;
  st.dv = a.dv;
  st.scale = static_cast<float>(a.scale);
  st.q_off = a.q.leading_offsets(a.lead.size());
  st.k_off = a.k.leading_offsets(a.lead.size());
  st.v_off = a.v.leading_offsets(a.lead.size());
  st.o_off = a.out.leading_offsets(a.lead.size());
  const size_t r = a.lead.size();
  st.q_rs = a.q.strides[r];
  st.q_cs = a.q.strides[r + 1];
  st.k_rs = a.k.strides[r];
  st.k_cs = a.k.strides[r + 1];
  st.v_rs = a.v.strides[r];
  st.v_cs = a.v.strides[r + 1];
  st.o_rs = a.out.strides[r];
  st.causal = a.causal;
  if (a.mask) {
    st.has_mask = true;
    st.m_off = a.mask->leading_offsets(r);
    st.m_rs = a.mask->strides[r];
    st.m_cs = a.mask->strides[r + 1];
  }
  st.isa = kernel_isa(ctx);
  st.block_rows = st.isa == Isa::kAvx2 ? 12 : kRows;
  st.k_panel_floats = packed_b_floats(st.isa, st.d, st.skv);
  st.v_panel_floats = packed_b_floats(st.isa, st.skv, st.dv);
  const size_t need =
      static_cast<size_t>(st.batch) * (st.k_panel_floats + st.v_panel_floats) * sizeof(float);
  if (ctx.scratch_bytes < need)
    fail(ctx, "needs " + std::to_string(need) +
                  " scratch bytes for packed K and V, the plan gives " +
                  std::to_string(ctx.scratch_bytes));
  return exec::make_state(std::move(st));
}

struct Packed {
  PanelsView kt, v;  // K^T: D x Skv; V: Skv x Dv
};

// Head b's packed K^T and V in the scratch.
float* k_panels(const AttentionState& st, float* scratch, int64_t b) {
  return scratch + static_cast<size_t>(b) * (st.k_panel_floats + st.v_panel_floats);
}
float* v_panels(const AttentionState& st, float* scratch, int64_t b) {
  return k_panels(st, scratch, b) + st.k_panel_floats;
}

Packed pack_head(const AttentionState& st, const float* k, const float* v, float* scratch,
                 int64_t b) {
  // K^T[p][j] = K[j][p]: row stride (along D) k_cs, column stride (along keys) k_rs.
  return {pack_b_into(st.isa, k_panels(st, scratch, b), k + st.k_off[b], st.d, st.skv, st.k_cs,
                      st.k_rs),
          pack_b_into(st.isa, v_panels(st, scratch, b), v + st.v_off[b], st.skv, st.dv, st.v_rs,
                      st.v_cs)};
}

// The same views once pack_head has run (possibly on another thread).
Packed packed_head(const AttentionState& st, float* scratch, int64_t b) {
  return {panels_view(st.isa, k_panels(st, scratch, b), st.d, st.skv),
          panels_view(st.isa, v_panels(st, scratch, b), st.skv, st.dv)};
}

// One chunk of the online softmax over `rows` score rows of `kc` floats (ld apart): folds the
// chunk's maxima into row_max, writes P = exp(S - row_max) over S, adds its sums to row_sum, and
// returns in correction[i] the factor rows accumulated so far must be scaled by, exp(old max -
// new max) (1 for the first chunk). The portable level's; the vector levels run the same steps
// written once over Highway (vec_math-inl.h: SoftmaxChunk), with tree reductions where GCC's
// vectorised loops here end each row in a serial horizontal add.
void softmax_chunk(float* s, int64_t rows, int64_t kc, int64_t ld, float* row_max, float* row_sum,
                   float* correction) {
  for (int64_t i = 0; i < rows; ++i) {
    float* srow = s + i * ld;
    float m = row_max[i];
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < kc; ++j) m = srow[j] > m ? srow[j] : m;
    // Every key so far masked (-inf): exp against 0 instead of -inf, which gives P = 0, not NaN.
    const float shift = m == -std::numeric_limits<float>::infinity() ? 0.0f : m;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < kc; ++j) {
      const float e = exp_f32(srow[j] - shift);
      srow[j] = e;
      sum += e;
    }
    correction[i] = row_sum[i] == 0.0f ? 1.0f : exp_f32(row_max[i] - m);
    row_sum[i] = row_sum[i] * correction[i] + sum;
    row_max[i] = m;
  }
}

// Adds the mask to score rows [i0, i0 + rows) x keys [c0, c0 + kc) of head b (s: ld apart), and
// for causal attention sets the keys past each row's diagonal to -inf.
void mask_scores(const AttentionState& st, const float* mask, float* s, int64_t ld, int64_t b,
                 int64_t i0, int64_t rows, int64_t c0, int64_t kc) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < rows; ++i) {
    float* srow = s + i * ld;
    if (mask) {
      const float* mrow = mask + st.m_off[b] + (i0 + i) * st.m_rs + c0 * st.m_cs;
      if (st.m_cs == 1) {
#pragma omp simd
        for (int64_t j = 0; j < kc; ++j) srow[j] += mrow[j];
      } else {
        for (int64_t j = 0; j < kc; ++j) srow[j] += mrow[j * st.m_cs];
      }
    }
    if (st.causal)  // key c0 + j is visible to query i0 + i when c0 + j <= i0 + i
      for (int64_t j = std::max<int64_t>(0, i0 + i + 1 - c0); j < kc; ++j) srow[j] = kNegInf;
  }
}

// Rows [i0, i0 + rows) of head b.
void attend_block(const AttentionState& st, const Packed& p, const float* q, const float* mask,
                  float* out, int64_t b, int64_t i0, int64_t rows) {
  alignas(64) float s[kRows * kChunk];
  float row_max[kRows], row_sum[kRows], correction[kRows];
  std::fill(row_max, row_max + rows, -std::numeric_limits<float>::infinity());
  std::fill(row_sum, row_sum + rows, 0.0f);
  const float* qb = q + st.q_off[b] + i0 * st.q_rs;
  float* ob = out + st.o_off[b] + i0 * st.o_rs;
  // Causal: the keys this block sees, rounded up to a whole 32-key panel (cols() takes whole
  // panels); the keys past the diagonal inside it are masked below.
  const int64_t keys =
      st.causal ? std::min(st.skv, (std::min(st.skv, i0 + rows) + 31) / 32 * 32) : st.skv;
  for (int64_t c0 = 0; c0 < keys; c0 += kChunk) {
    const int64_t kc = std::min(kChunk, keys - c0);
    sgemm_panels(rows, st.scale, qb, st.q_rs, st.q_cs, p.kt.cols(c0, kc), 0.0f, s, kChunk);
    if (mask || st.causal) mask_scores(st, mask, s, kChunk, b, i0, rows, c0, kc);
    switch (st.isa) {
      case Isa::kAvx512:
        N_AVX3::SoftmaxChunk(s, rows, kc, kChunk, row_max, row_sum, correction);
        break;
      case Isa::kAvx2:
        N_AVX2::SoftmaxChunk(s, rows, kc, kChunk, row_max, row_sum, correction);
        break;
      case Isa::kPortable:
        softmax_chunk(s, rows, kc, kChunk, row_max, row_sum, correction);
        break;
    }
    if (c0 > 0) {  // earlier chunks were weighted against a smaller max: rescale them
      for (int64_t i = 0; i < rows; ++i) {
        if (correction[i] == 1.0f) continue;
        float* orow = ob + i * st.o_rs;
        for (int64_t c = 0; c < st.dv; ++c) orow[c] *= correction[i];
      }
    }
    sgemm_panels(rows, 1.0f, s, kChunk, 1, p.v.rows(c0, kc), c0 == 0 ? 0.0f : 1.0f, ob, st.o_rs);
  }
  for (int64_t i = 0; i < rows; ++i) {
    const float inv = 1.0f / row_sum[i];
    float* orow = ob + i * st.o_rs;
    for (int64_t c = 0; c < st.dv; ++c) orow[c] *= inv;
  }
}

// Query rows of a head in blocks of nearly equal size, at most st.block_rows each.
int64_t row_blocks(const AttentionState& st) {
  return (st.sq + st.block_rows - 1) / st.block_rows;
}
void block_range(const AttentionState& st, int64_t blk, int64_t* i0, int64_t* rows) {
  const int64_t sq = st.sq;
  const int64_t blocks = row_blocks(st);
  *i0 = sq * blk / blocks;
  *rows = sq * (blk + 1) / blocks - *i0;
}

void attend_head(const AttentionState& st, const Packed& p, const float* q, const float* mask,
                 float* out, int64_t b) {
  for (int64_t blk = 0; blk < row_blocks(st); ++blk) {
    int64_t i0, rows;
    block_range(st, blk, &i0, &rows);
    attend_block(st, p, q, mask, out, b, i0, rows);
  }
}

void zero_output(const AttentionState& st, float* out) {
  for (int64_t b = 0; b < st.batch; ++b)
    for (int64_t i = 0; i < st.sq; ++i) std::fill_n(out + st.o_off[b] + i * st.o_rs, st.dv, 0.0f);
}

void run_attention(const exec::KernelArgs& args) {
  const auto& st = state_of<AttentionState>(args);
  if (st.batch * st.sq * st.dv == 0) return;  // empty output
  float* out = output_ptr<float>(args, 0);
  if (st.skv == 0) {  // nothing to attend to: an empty sum
    zero_output(st, out);
    return;
  }
  const float* q = input_ptr<float>(args, 0);
  const float* k = input_ptr<float>(args, 1);
  const float* v = input_ptr<float>(args, 2);
  const float* mask = st.has_mask ? input_ptr<float>(args, 3) : nullptr;
  float* scratch = static_cast<float*>(args.scratch);
  const int64_t blocks = row_blocks(st);
  const double block_flops = 2.0 * static_cast<double>(std::min(st.block_rows, st.sq)) *
                             static_cast<double>(st.skv) * static_cast<double>(st.d + st.dv);
  const int threads =
      threads_for(static_cast<double>(st.batch * blocks) * block_flops / kGemmFlopsPerUs);
  if (st.batch >= threads) {
    parallel_for_team(st.batch, threads, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b)
        attend_head(st, pack_head(st, k, v, scratch, b), q, mask, out, b);
    });
    return;
  }
  parallel_for_team(st.batch, threads, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) pack_head(st, k, v, scratch, b);
  });
  parallel_for_team(st.batch * blocks, threads, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / blocks;
      int64_t i0, rows;
      block_range(st, t % blocks, &i0, &rows);
      attend_block(st, packed_head(st, scratch, b), q, mask, out, b, i0, rows);
    }
  });
}

}  // namespace

void add_attention_kernels(exec::KernelTable& table) {
  table.add("Attention", {prepare_attention, run_attention});
}

}  // namespace fusebox::cpu
