// Softmax, LayerNorm/SkipLayerNorm and ReduceMean kernels (normalization_kernels.h). Each block
// reduces one row: its threads stride over the row (thread t takes elements t, t + blockDim.x,
// ...), so a thread only ever reads back what it wrote itself, which makes in-place (x == y) safe.
#include <cuda_runtime_api.h>

#include "ops/cuda/device_util.cuh"
#include "ops/cuda/host/launch_geometry.h"
#include "ops/cuda/normalization_kernels.h"

namespace fusebox::cuda {
namespace {

// Numerically stable: the row max is subtracted before exp (as the CPU's softmax_row).
__global__ void softmax_kernel(const float* x, float* y, SoftmaxParams p) {
  extern __shared__ float warps[];
  const int64_t r = block_row();
  if (r >= p.outer * p.inner) return;
  const int64_t o = r / p.inner, j = r % p.inner;
  const int64_t base = o * p.n * p.inner + j, s = p.inner;
  float m = -INFINITY;
  for (int64_t a = threadIdx.x; a < p.n; a += blockDim.x) {
    const float v = x[base + a * s];
    m = v > m ? v : m;
  }
  m = block_max(m, warps);
  float sum = 0.0f;
  for (int64_t a = threadIdx.x; a < p.n; a += blockDim.x) {
    const float e = expf(x[base + a * s] - m);
    y[base + a * s] = e;
    sum += e;
  }
  const float inv = 1.0f / block_sum(sum, warps);
  for (int64_t a = threadIdx.x; a < p.n; a += blockDim.x) y[base + a * s] *= inv;
}

__global__ void layer_norm_kernel(const float* x, const float* skip, const float* scale, const float* bias, float* y,
                                  float* mean_out, float* inv_out, LayerNormParams p) {
  extern __shared__ float warps[];
  const int64_t r = block_row();
  if (r >= p.rows) return;
  const int64_t d = p.d;
  const float* xr = x + r * d;
  float* yr = y + r * d;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    float v = xr[i];
    if (skip) {
      v += skip[r * d + i];
      yr[i] = v;  // x + skip, normalized in place below (as the CPU does)
    }
    sum += v;
  }
  const float* src = skip ? yr : xr;
  const float mean = block_sum(sum, warps) / static_cast<float>(d);
  // Second pass over the deviations: no cancellation, unlike E[x^2] - E[x]^2.
  float sq = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float t = src[i] - mean;
    sq += t * t;
  }
  const float var = block_sum(sq, warps) / static_cast<float>(d);
  const float inv = 1.0f / sqrtf(var + p.epsilon);
  if (threadIdx.x == 0) {
    if (mean_out) mean_out[r] = mean;
    if (inv_out) inv_out[r] = inv;
  }
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float v = (src[i] - mean) * inv * scale[strided_offset(p.scale_index, i)];
    yr[i] = bias ? v + bias[strided_offset(p.bias_index, i)] : v;
  }
}

__global__ void reduce_mean_kernel(const float* x, float* y, ReduceMeanParams p) {
  extern __shared__ float warps[];
  const int64_t r = block_row();
  if (r >= p.out_numel) return;
  const float* base = x + strided_offset(p.kept, r);
  float sum = 0.0f;
  for (int64_t t = threadIdx.x; t < p.count; t += blockDim.x) sum += base[strided_offset(p.reduced, t)];
  sum = block_sum(sum, warps);
  // count == 0: 0 * inf = NaN, as the CPU (and numpy) give for the mean of nothing.
  if (threadIdx.x == 0) y[r] = sum * (1.0f / static_cast<float>(p.count));
}

}  // namespace

void launch_softmax(const float* x, float* y, const SoftmaxParams& p, cudaStream_t stream) {
  if (p.n == 0) return;
  const LaunchGeometry g = row_geometry(p.outer * p.inner, p.n);
  if (g.empty()) return;
  softmax_kernel<<<to_dim3(g.grid), to_dim3(g.block), g.shared_bytes, stream>>>(x, y, p);
}

void launch_layer_norm(const float* x, const float* skip, const float* scale, const float* bias, float* y,
                       float* mean_out, float* inv_std_out, const LayerNormParams& p, cudaStream_t stream) {
  // d == 0 still has rows whose mean and inv_std (NaN) are written: at least one column.
  const LaunchGeometry g = row_geometry(p.rows, p.d > 0 ? p.d : 1);
  if (g.empty()) return;
  layer_norm_kernel<<<to_dim3(g.grid), to_dim3(g.block), g.shared_bytes, stream>>>(x, skip, scale, bias, y, mean_out,
                                                                                   inv_std_out, p);
}

void launch_reduce_mean(const float* x, float* y, const ReduceMeanParams& p, cudaStream_t stream) {
  const LaunchGeometry g = row_geometry(p.out_numel, p.count > 0 ? p.count : 1);
  if (g.empty()) return;
  reduce_mean_kernel<<<to_dim3(g.grid), to_dim3(g.block), g.shared_bytes, stream>>>(x, y, p);
}

}  // namespace fusebox::cuda
