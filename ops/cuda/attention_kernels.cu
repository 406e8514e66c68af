// The Attention kernel (attention_kernels.h). Block = one query row i of one batch-head b; its
// threads walk the keys in chunks of blockDim.x:
//   1. thread t scores key c0 + t: scale * (q_i . k_j) + mask[i][j] (q_i is staged in shared memory);
//   2. online softmax, as the CPU's softmax_chunk: the running max m and sum l are updated with the
//      chunk's block-wide max and sum, p_j = exp(s_j - m) goes to shared memory, and the
//      accumulated output is rescaled by exp(m_old - m_new);
//   3. each thread owns output columns t, t + blockDim.x, ... and adds sum_j p_j v_j[c].
// The output is acc / l. A causal row i stops at key i: later keys are never scored. A row whose
// keys are all -inf gives 0 / 0 = NaN, as the CPU and PyTorch do; Skv == 0 gives zeros (the CPU's
// empty sum).
#include <cuda_runtime_api.h>

#include "ops/cuda/attention_kernels.h"
#include "ops/cuda/device_util.cuh"
#include "ops/cuda/host/launch_geometry.h"

namespace fusebox::cuda {
namespace {

__global__ void attention_kernel(const float* q, const float* k, const float* v, const float* mask, float* out,
                                 AttentionParams p) {
  extern __shared__ float shared[];
  float* qs = shared;            // [d]: the query row
  float* ps = qs + p.d;          // [blockDim.x]: the chunk's probabilities
  float* acc = ps + blockDim.x;  // [dv]: the output row so far
  float* warps = acc + p.dv;     // one float per warp, for the reductions
  const int64_t r = block_row();
  if (r >= p.batch * p.sq) return;
  const int64_t b = r / p.sq, i = r % p.sq;
  const int tid = threadIdx.x, nt = blockDim.x;

  const float* qrow = q + p.q_offset + strided_offset(p.q_lead, b) + i * p.q_rs;
  for (int64_t c = tid; c < p.d; c += nt) qs[c] = qrow[c * p.q_cs];
  for (int64_t c = tid; c < p.dv; c += nt) acc[c] = 0.0f;
  __syncthreads();
  const float* kb = k + p.k_offset + strided_offset(p.k_lead, b);
  const float* vb = v + p.v_offset + strided_offset(p.v_lead, b);
  const float* mrow = mask ? mask + strided_offset(p.m_lead, b) + i * p.m_rs : nullptr;
  const int64_t keys = p.causal ? (p.skv < i + 1 ? p.skv : i + 1) : p.skv;

  float row_max = -INFINITY, row_sum = 0.0f;
  for (int64_t c0 = 0; c0 < keys; c0 += nt) {
    const int64_t kc = keys - c0 < nt ? keys - c0 : nt;
    float s = -INFINITY;
    if (tid < kc) {
      const int64_t j = c0 + tid;
      const float* krow = kb + j * p.k_rs;
      float dot = 0.0f;
      for (int64_t c = 0; c < p.d; ++c) dot += qs[c] * krow[c * p.k_cs];
      s = p.scale * dot;
      if (mrow) s += mrow[j * p.m_cs];
    }
    const float chunk_max = block_max(s, warps);
    const float m = chunk_max > row_max ? chunk_max : row_max;
    // Every key so far masked (-inf): exp against 0 instead of -inf, which gives p = 0, not NaN.
    const float shift = m == -INFINITY ? 0.0f : m;
    const float e = tid < kc ? expf(s - shift) : 0.0f;
    ps[tid] = e;
    const float chunk_sum = block_sum(e, warps);  // its barriers also publish ps
    const float correction = row_sum == 0.0f ? 1.0f : expf(row_max - m);
    row_sum = row_sum * correction + chunk_sum;
    row_max = m;
    for (int64_t c = tid; c < p.dv; c += nt) {
      const float* vcol = vb + c0 * p.v_rs + c * p.v_cs;
      float a = acc[c] * correction;
      for (int64_t j = 0; j < kc; ++j) a += ps[j] * vcol[j * p.v_rs];
      acc[c] = a;
    }
    __syncthreads();  // ps is rewritten by the next chunk
  }
  const float inv = p.skv == 0 ? 0.0f : 1.0f / row_sum;
  float* orow = out + p.o_offset + strided_offset(p.o_lead, b) + i * p.o_rs;
  for (int64_t c = tid; c < p.dv; c += nt) orow[c * p.o_cs] = acc[c] * inv;
}

}  // namespace

void launch_attention(const float* q, const float* k, const float* v, const float* mask, float* out,
                      const AttentionParams& p, cudaStream_t stream) {
  if (p.dv == 0) return;
  const LaunchGeometry g = row_geometry(p.batch * p.sq, p.threads);  // prepare() checked it fits
  if (g.empty()) return;
  attention_kernel<<<to_dim3(g.grid), dim3(static_cast<unsigned>(p.threads)), p.shared_bytes, stream>>>(q, k, v, mask,
                                                                                                        out, p);
}

}  // namespace fusebox::cuda
