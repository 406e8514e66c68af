#pragma once
// Launchers for the conv family's own kernels (conv_kernels.cu): im2col and the bias/activation
// epilogue around Conv's cuBLAS GEMMs, the direct depthwise Conv, BatchNorm, the windowed pools and
// the global pools. Grid-stride loops shaped by elementwise_geometry, one block per plane for the
// global pools (row_geometry). C++17, no core headers; the parameters are conv_types.h's.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "ops/cuda/conv_types.h"

namespace fusebox::cuda {

// One image x [C_in, spatial...] -> col [C_in * kernel size, P]: row (ci, kernel tap), column the
// output position, 0 where the tap reads padding.
void launch_im2col(const float* x, float* col, const Window3& w, int64_t c_in, int sm_count,
                   cudaStream_t stream);

// y [N, C, P] = act(y + bias[c]); bias may be null. Nothing is launched when there is neither.
void launch_conv_epilogue(float* y, const float* bias, int64_t numel, int64_t channels,
                          int64_t positions, const ConvActParams& act, int sm_count,
                          cudaStream_t stream);

// A Conv with one input channel per group: y[n, co, o] = act(bias[co] + sum over taps of
// x[n, co / c_out_per_group, tap] * w[co, tap]).
void launch_depthwise_conv(const float* x, const float* w, const float* bias, float* y,
                           const ConvParams& p, int sm_count, cudaStream_t stream);

// One image's ConvTranspose output y [C_out, out spatial] = bias[co] + the col [C_out * taps, P_in]
// entries of the taps that reach each output (transpose_source), summed in tap order as the CPU.
void launch_col2im(const float* col, const float* bias, float* y, const ConvTransposeParams& p,
                   int sm_count, cudaStream_t stream);

// y = x * a[c] + s[c], a = scale / sqrt(var + epsilon), s = B - mean * a (a, s in double, as the
// CPU).
void launch_batch_norm(const float* x, const float* scale, const float* shift, const float* mean,
                       const float* var, float* y, const BatchNormParams& p, int sm_count,
                       cudaStream_t stream);

// MaxPool / AveragePool over `planes` planes of w.in, one thread per output.
void launch_pool(const float* x, float* y, const PoolParams& p, int sm_count, cudaStream_t stream);

// GlobalMaxPool / GlobalAveragePool: one block per plane of `size` values.
void launch_global_pool(const float* x, float* y, int64_t planes, int64_t size, bool max,
                        cudaStream_t stream);

}  // namespace fusebox::cuda
