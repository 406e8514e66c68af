// The conv family's kernels (conv_kernels.h). Each mirrors the CPU's loop in ops/cpu/conv.cpp on
// the same conv_params geometry, one thread per output element in a grid-stride loop; sums that
// the CPU keeps in double (BatchNorm's rsqrt, the average pools) are in double here too.
#include <cuda_runtime_api.h>

#include "ops/cuda/conv_kernels.h"
#include "ops/cuda/device_util.cuh"

namespace fusebox::cuda {
namespace {

// Output position p of a Window3 as its three coordinates.
__device__ __forceinline__ void unflatten(const Window3& w, int64_t p, int64_t* o) {
  o[2] = p % w.out[2];
  p /= w.out[2];
  o[1] = p % w.out[1];
  o[0] = p / w.out[1];
}

// Element (row, p) of one image's im2col; row = ci * kernel size + tap.
__global__ void im2col_kernel(const float* __restrict__ x, float* __restrict__ col, Window3 w,
                              int64_t total) {
  const int64_t positions = w.out_size(), ksize = w.kernel_size(), plane = w.in_size();
  for (int64_t i = first_index<int64_t>(); i < total; i += grid_stride<int64_t>()) {
    const int64_t p = i % positions, row = i / positions;
    const int64_t ci = row / ksize;
    int64_t tap = row % ksize;
    const int64_t j2 = tap % w.k[2];
    tap /= w.k[2];
    const int64_t j1 = tap % w.k[1], j0 = tap / w.k[1];
    int64_t o[3];
    unflatten(w, p, o);
    const int64_t i0 = o[0] * w.s[0] - w.pb[0] + j0 * w.dil[0];
    const int64_t i1 = o[1] * w.s[1] - w.pb[1] + j1 * w.dil[1];
    const int64_t i2 = o[2] * w.s[2] - w.pb[2] + j2 * w.dil[2];
    const bool inside =
        i0 >= 0 && i0 < w.in[0] && i1 >= 0 && i1 < w.in[1] && i2 >= 0 && i2 < w.in[2];
    col[i] = inside ? x[ci * plane + (i0 * w.in[1] + i1) * w.in[2] + i2] : 0.0f;
  }
}

__global__ void conv_epilogue_kernel(float* y, const float* __restrict__ bias, int64_t numel,
                                     int64_t channels, int64_t positions, ConvActParams act) {
  for (int64_t i = first_index<int64_t>(); i < numel; i += grid_stride<int64_t>()) {
    const float v = bias ? y[i] + bias[(i / positions) % channels] : y[i];
    y[i] = conv_activate(v, act);
  }
}

__global__ void depthwise_kernel(const float* __restrict__ x, const float* __restrict__ wt,
                                 const float* __restrict__ bias, float* __restrict__ y,
                                 ConvParams p, int64_t total) {
  const Window3& w = p.w;
  const int64_t positions = w.out_size(), ksize = w.kernel_size(), plane = w.in_size();
  for (int64_t i = first_index<int64_t>(); i < total; i += grid_stride<int64_t>()) {
    const int64_t pos = i % positions, nc = i / positions;
    const int64_t co = nc % p.c_out, n = nc / p.c_out;
    const float* xp = x + (n * p.c_in + co / p.c_out_per_group) * plane;
    const float* wp = wt + co * ksize;
    int64_t o[3];
    unflatten(w, pos, o);
    float acc = 0.0f;
    for (int64_t j0 = 0; j0 < w.k[0]; ++j0) {
      const int64_t i0 = o[0] * w.s[0] - w.pb[0] + j0 * w.dil[0];
      if (i0 < 0 || i0 >= w.in[0]) continue;
      for (int64_t j1 = 0; j1 < w.k[1]; ++j1) {
        const int64_t i1 = o[1] * w.s[1] - w.pb[1] + j1 * w.dil[1];
        if (i1 < 0 || i1 >= w.in[1]) continue;
        const float* row = xp + (i0 * w.in[1] + i1) * w.in[2];
        const float* wrow = wp + (j0 * w.k[1] + j1) * w.k[2];
        for (int64_t j2 = 0; j2 < w.k[2]; ++j2) {
          const int64_t i2 = o[2] * w.s[2] - w.pb[2] + j2 * w.dil[2];
          if (i2 >= 0 && i2 < w.in[2]) acc = fmaf(row[i2], wrow[j2], acc);
        }
      }
    }
    if (p.has_bias) acc += bias[co];
    y[i] = conv_activate(acc, p.act);
  }
}

__global__ void col2im_kernel(const float* __restrict__ col, const float* __restrict__ bias,
                              float* __restrict__ y, ConvTransposeParams p, int64_t total) {
  const Window3& w = p.w;
  const int64_t positions = w.out_size(), taps = w.kernel_size(), in_size = w.in_size();
  for (int64_t i = first_index<int64_t>(); i < total; i += grid_stride<int64_t>()) {
    const int64_t co = i / positions;
    int64_t o[3];
    unflatten(w, i % positions, o);
    float acc = bias ? bias[co] : 0.0f;
    const float* src = col + co * taps * in_size;
    for (int64_t k0 = 0; k0 < w.k[0]; ++k0) {
      const int64_t i0 = transpose_source(w, 0, o[0], k0);
      if (i0 < 0) continue;
      for (int64_t k1 = 0; k1 < w.k[1]; ++k1) {
        const int64_t i1 = transpose_source(w, 1, o[1], k1);
        if (i1 < 0) continue;
        for (int64_t k2 = 0; k2 < w.k[2]; ++k2) {
          const int64_t i2 = transpose_source(w, 2, o[2], k2);
          if (i2 < 0) continue;
          acc += src[((k0 * w.k[1] + k1) * w.k[2] + k2) * in_size + (i0 * w.in[1] + i1) * w.in[2] +
                     i2];
        }
      }
    }
    y[i] = acc;
  }
}

__global__ void batch_norm_kernel(const float* __restrict__ x, const float* __restrict__ scale,
                                  const float* __restrict__ shift, const float* __restrict__ mean,
                                  const float* __restrict__ var, float* __restrict__ y,
                                  BatchNormParams p) {
  for (int64_t i = first_index<int64_t>(); i < p.numel; i += grid_stride<int64_t>()) {
    const int64_t c = (i / p.spatial) % p.channels;
    const double inv = 1.0 / sqrt(static_cast<double>(var[c]) + p.epsilon);
    const float a = static_cast<float>(scale[c] * inv);
    const float s = static_cast<float>(shift[c] - mean[c] * scale[c] * inv);
    y[i] = x[i] * a + s;
  }
}

__global__ void pool_kernel(const float* __restrict__ x, float* __restrict__ y, PoolParams p,
                            int64_t total) {
  const Window3& w = p.w;
  const int64_t positions = w.out_size(), plane = w.in_size();
  for (int64_t i = first_index<int64_t>(); i < total; i += grid_stride<int64_t>()) {
    const float* xp = x + (i / positions) * plane;
    int64_t o[3];
    unflatten(w, i % positions, o);
    const Taps t0 = window_taps(w, 0, o[0]), t1 = window_taps(w, 1, o[1]),
               t2 = window_taps(w, 2, o[2]);
    float mx = -INFINITY;
    double sum = 0;
    for (int64_t j0 = t0.j0; j0 < t0.j1; ++j0) {
      const int64_t i0 = o[0] * w.s[0] - w.pb[0] + j0 * w.dil[0];
      for (int64_t j1 = t1.j0; j1 < t1.j1; ++j1) {
        const float* row = xp + (i0 * w.in[1] + o[1] * w.s[1] - w.pb[1] + j1 * w.dil[1]) * w.in[2];
        for (int64_t j2 = t2.j0; j2 < t2.j1; ++j2) {
          const float v = row[o[2] * w.s[2] - w.pb[2] + j2 * w.dil[2]];
          mx = mx < v ? v : mx;  // std::max(mx, v), as the CPU: a NaN tap is skipped
          sum += v;
        }
      }
    }
    if (p.max) {
      y[i] = mx;
    } else {
      const int64_t count = p.include_pad ? t0.padded * t1.padded * t2.padded
                                          : (t0.j1 - t0.j0) * (t1.j1 - t1.j0) * (t2.j1 - t2.j0);
      y[i] = count > 0 ? static_cast<float>(sum / static_cast<double>(count)) : 0.0f;
    }
  }
}

__device__ __forceinline__ double warp_sum_double(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max_like_cpu(float v) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = v < w ? w : v;
  }
  return v;
}

// One block per plane (row_geometry); each thread strides over the plane, then the warps combine
// through shared memory (one double per warp). The average sums in double, as the CPU.
__global__ void global_pool_kernel(const float* __restrict__ x, float* __restrict__ y,
                                   int64_t planes, int64_t size, bool max) {
  extern __shared__ double warps[];
  const int64_t plane = block_row();
  if (plane >= planes)
    return;  // the whole block leaves: no barrier is skipped by some threads only
  const float* xp = x + plane * size;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  if (max) {
    float mx = -INFINITY;
    for (int64_t i = threadIdx.x; i < size; i += blockDim.x) mx = mx < xp[i] ? xp[i] : mx;
    mx = warp_max_like_cpu(mx);
    if (lane == 0) warps[warp] = mx;
    __syncthreads();
    if (threadIdx.x == 0) {
      float m = -INFINITY;
      for (int k = 0; k < nwarps; ++k)
        m = m < static_cast<float>(warps[k]) ? static_cast<float>(warps[k]) : m;
      y[plane] = m;
    }
    return;
  }
  double sum = 0;
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) sum += xp[i];
  sum = warp_sum_double(sum);
  if (lane == 0) warps[warp] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0;
    for (int k = 0; k < nwarps; ++k) s += warps[k];
    y[plane] = size ? static_cast<float>(s / static_cast<double>(size)) : 0.0f;
  }
}

}  // namespace

void launch_im2col(const float* x, float* col, const Window3& w, int64_t c_in, int sm_count,
                   cudaStream_t stream) {
  const int64_t total = c_in * w.kernel_size() * w.out_size();
  dim3 grid, block;
  if (!ew_grid(total, sm_count, &grid, &block)) return;
  im2col_kernel<<<grid, block, 0, stream>>>(x, col, w, total);
}

void launch_conv_epilogue(float* y, const float* bias, int64_t numel, int64_t channels,
                          int64_t positions, const ConvActParams& act, int sm_count,
                          cudaStream_t stream) {
  if (!bias && act.kind == ConvAct::kNone) return;
  dim3 grid, block;
  if (positions < 1 || channels < 1 || !ew_grid(numel, sm_count, &grid, &block)) return;
  conv_epilogue_kernel<<<grid, block, 0, stream>>>(y, bias, numel, channels, positions, act);
}

void launch_depthwise_conv(const float* x, const float* w, const float* bias, float* y,
                           const ConvParams& p, int sm_count, cudaStream_t stream) {
  const int64_t total = p.batch * p.c_out * p.w.out_size();
  dim3 grid, block;
  if (!ew_grid(total, sm_count, &grid, &block)) return;
  depthwise_kernel<<<grid, block, 0, stream>>>(x, w, bias, y, p, total);
}

void launch_col2im(const float* col, const float* bias, float* y, const ConvTransposeParams& p,
                   int sm_count, cudaStream_t stream) {
  const int64_t total = p.c_out * p.w.out_size();
  dim3 grid, block;
  if (!ew_grid(total, sm_count, &grid, &block)) return;
  col2im_kernel<<<grid, block, 0, stream>>>(col, bias, y, p, total);
}

void launch_batch_norm(const float* x, const float* scale, const float* shift, const float* mean,
                       const float* var, float* y, const BatchNormParams& p, int sm_count,
                       cudaStream_t stream) {
  dim3 grid, block;
  if (p.spatial < 1 || p.channels < 1 || !ew_grid(p.numel, sm_count, &grid, &block)) return;
  batch_norm_kernel<<<grid, block, 0, stream>>>(x, scale, shift, mean, var, y, p);
}

void launch_pool(const float* x, float* y, const PoolParams& p, int sm_count, cudaStream_t stream) {
  const int64_t total = p.planes * p.w.out_size();
  dim3 grid, block;
  if (!ew_grid(total, sm_count, &grid, &block)) return;
  pool_kernel<<<grid, block, 0, stream>>>(x, y, p, total);
}

void launch_global_pool(const float* x, float* y, int64_t planes, int64_t size, bool max,
                        cudaStream_t stream) {
  // An empty plane still writes its output (-inf or 0, as the CPU): at least one thread per row.
  const LaunchGeometry g = row_geometry(planes, size > 0 ? size : 1);
  if (g.empty()) return;
  const size_t shared = static_cast<size_t>(g.block.x / kWarpSize) * sizeof(double);
  global_pool_kernel<<<to_dim3(g.grid), to_dim3(g.block), shared, stream>>>(x, y, planes, size,
                                                                            max);
}

}  // namespace fusebox::cuda
