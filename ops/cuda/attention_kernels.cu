// The Attention kernel (attention_kernels.h), flash-style. A block takes `rows` query rows of one
// batch-head (host/tile_geometry.h: attention_tiles) and walks the keys in tiles of `keys`:
//   1. the tile's K and V rows are staged in shared memory, once for all the block's rows (the
//      old kernel read them again for every query row);
//   2. every thread scores (row, key) pairs: scale * (q_i . k_j) + mask[i][j]; a key past the
//      end, or past i for a causal row, scores -inf (exp gives exactly 0, so it counts as if it
//      were never scored);
//   3. one warp per row: online softmax, as the CPU's softmax_chunk: the running max m and sum l
//      are updated with the tile's max and sum, the scores become p_j = exp(s_j - m), and the row's
//      rescale factor exp(m_old - m_new) is kept for step 4;
//   4. every thread owns (row, column) slots of the output accumulator: acc = acc * rescale +
//      sum_j p_j v_j[c].
// The output is acc / l. A row whose keys are all -inf gives 0 / 0 = NaN, as the CPU and PyTorch
// do; Skv == 0 gives zeros (the CPU's empty sum). Tiles past the block's last causal key are
// skipped. Any number of keys works: the last tile is partial.
#include <cuda_runtime_api.h>

#include "ops/cuda/attention_kernels.h"
#include "ops/cuda/device_util.cuh"
#include "ops/cuda/host/launch_geometry.h"
#include "ops/cuda/host/tile_geometry.h"

namespace fusebox::cuda {
namespace {

__global__ void __launch_bounds__(kAttentionThreads)
    attention_kernel(const float* q, const float* k, const float* v, const float* mask, float* out,
                     const __grid_constant__ AttentionParams p) {
  extern __shared__ float shared[];
  const int rows = p.rows, keys = p.keys;
  const int64_t d = p.d, dv = p.dv, kld = d + 1;
  float* qs = shared;                  // [rows][d]
  float* ks = qs + rows * d;           // [keys][d + 1]
  float* vs = ks + keys * kld;         // [keys][dv]
  float* ss = vs + keys * dv;          // [rows][keys]: scores, then probabilities
  float* acc = ss + rows * keys;       // [rows][dv]
  float* row_max = acc + rows * dv;    // [rows]
  float* row_sum = row_max + rows;     // [rows]
  float* rescale = row_sum + rows;     // [rows]

  const int64_t tiles_per_head = (p.sq + rows - 1) / rows;
  const int64_t blk = block_row();
  if (blk >= p.batch * tiles_per_head) return;
  const int64_t b = blk / tiles_per_head, i0 = (blk % tiles_per_head) * rows;
  const int tid = threadIdx.x, nt = blockDim.x, lane = tid & 31, warp = tid >> 5, nwarps = nt >> 5;

  const float* qb = q + p.q_offset + strided_offset(p.q_lead, b);
  const float* kb = k + p.k_offset + strided_offset(p.k_lead, b);
  const float* vb = v + p.v_offset + strided_offset(p.v_lead, b);
  const float* mb = mask ? mask + strided_offset(p.m_lead, b) : nullptr;

  for (int64_t e = tid; e < rows * d; e += nt) {
    const int64_t r = e / d, c = e % d, i = i0 + r;
    qs[e] = i < p.sq ? qb[i * p.q_rs + c * p.q_cs] : 0.0f;
  }
  for (int64_t e = tid; e < rows * dv; e += nt) acc[e] = 0.0f;
  for (int r = tid; r < rows; r += nt) {
    row_max[r] = -INFINITY;
    row_sum[r] = 0.0f;
  }
  // Keys any row of this block reads: a causal row i reads keys 0..i.
  const int64_t last_row = (i0 + rows < p.sq ? i0 + rows : p.sq) - 1;
  const int64_t block_keys = p.causal ? (p.skv < last_row + 1 ? p.skv : last_row + 1) : p.skv;

  for (int64_t j0 = 0; j0 < block_keys; j0 += keys) {
    __syncthreads();  // the previous tile's K, V and probabilities are no longer read
    for (int64_t e = tid; e < keys * d; e += nt) {
      const int64_t jj = e / d, c = e % d, j = j0 + jj;
      ks[jj * kld + c] = j < p.skv ? kb[j * p.k_rs + c * p.k_cs] : 0.0f;
    }
    for (int64_t e = tid; e < keys * dv; e += nt) {
      const int64_t jj = e / dv, c = e % dv, j = j0 + jj;
      vs[e] = j < p.skv ? vb[j * p.v_rs + c * p.v_cs] : 0.0f;
    }
    __syncthreads();
    // 2. Scores; consecutive threads take consecutive keys of a row (K rows padded: no bank
    // conflicts; the Q row is one broadcast).
    for (int e = tid; e < rows * keys; e += nt) {
      const int r = e / keys, jj = e % keys;
      const int64_t i = i0 + r, j = j0 + jj;
      const int64_t limit = i >= p.sq ? 0 : p.causal ? (p.skv < i + 1 ? p.skv : i + 1) : p.skv;
      float s = -INFINITY;
      if (j < limit) {
        const float* qr = qs + r * d;
        const float* kr = ks + jj * kld;
        float dot = 0.0f;
        for (int64_t c = 0; c < d; ++c) dot += qr[c] * kr[c];
        s = p.scale * dot;
        if (mb) s += mb[i * p.m_rs + j * p.m_cs];
      }
      ss[e] = s;
    }
    __syncthreads();
    // 3. Online softmax, one warp per row.
    for (int r = warp; r < rows; r += nwarps) {
      float* sr = ss + r * keys;
      float mx = -INFINITY;
      for (int jj = lane; jj < keys; jj += 32) {
        const float s = sr[jj];
        mx = (s > mx || s != s) ? s : mx;  // a NaN score wins, as in warp_max
      }
      mx = warp_max(mx);
      const float m_old = row_max[r], l_old = row_sum[r];
      const float m = (mx > m_old || mx != mx) ? mx : m_old;
      // Every key so far masked (-inf): exp against 0 instead of -inf, which gives p = 0, not NaN.
      const float shift = m == -INFINITY ? 0.0f : m;
      float sum = 0.0f;
      for (int jj = lane; jj < keys; jj += 32) {
        const float e = expf(sr[jj] - shift);
        sr[jj] = e;
        sum += e;
      }
      sum = warp_sum(sum);
      const float correction = l_old == 0.0f ? 1.0f : expf(m_old - m);
      __syncwarp();
      if (lane == 0) {
        row_sum[r] = l_old * correction + sum;
        row_max[r] = m;
        rescale[r] = correction;
      }
    }
    __syncthreads();
    // 4. The accumulator; consecutive threads take consecutive output columns.
    const int64_t kc = p.skv - j0 < keys ? p.skv - j0 : keys;
    for (int64_t e = tid; e < rows * dv; e += nt) {
      const int64_t r = e / dv, c = e % dv;
      const float* pr = ss + r * keys;
      float a = acc[e] * rescale[r];
      for (int64_t jj = 0; jj < kc; ++jj) a += pr[jj] * vs[jj * dv + c];
      acc[e] = a;
    }
  }
  __syncthreads();
  float* ob = out + p.o_offset + strided_offset(p.o_lead, b);
  for (int64_t e = tid; e < rows * dv; e += nt) {
    const int64_t r = e / dv, c = e % dv, i = i0 + r;
    if (i >= p.sq) continue;
    const float inv = p.skv == 0 ? 0.0f : 1.0f / row_sum[r];
    ob[i * p.o_rs + c * p.o_cs] = acc[e] * inv;
  }
}

}  // namespace

cudaError_t allow_attention_shared(size_t shared_bytes) {
  return cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(shared_bytes));
}

void launch_attention(const float* q, const float* k, const float* v, const float* mask, float* out,
                      const AttentionParams& p, cudaStream_t stream) {
  if (p.dv == 0 || p.blocks == 0) return;
  const LaunchGeometry g = row_geometry(p.blocks, kAttentionThreads);  // prepare() checked it fits
  if (g.empty()) return;
  attention_kernel<<<to_dim3(g.grid), dim3(kAttentionThreads), p.shared_bytes, stream>>>(q, k, v, mask, out, p);
}

}  // namespace fusebox::cuda
