#pragma once
// Launchers for Softmax, LayerNorm/SkipLayerNorm and ReduceMean (normalization_kernels.cu): one
// block per reduced row (row_geometry), warp-shuffle reductions in float. C++17, no core headers.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ops/cuda/strided_index.h"

namespace fusebox::cuda {

// Softmax over the middle dim of [outer, n, inner]: row r is o = r / inner, j = r % inner, its
// elements at o * n * inner + j + a * inner (a < n).
struct SoftmaxParams {
  int64_t outer = 1, n = 1, inner = 1;
};
void launch_softmax(const float* x, float* y, const SoftmaxParams& p, cudaStream_t stream);

// LayerNorm over rows of d: y = (x [+ skip] - mean) * inv_std * scale [+ bias], inv_std =
// 1 / sqrt(var + epsilon) (biased variance, two passes). scale and bias are read at their
// StridedIndex offsets of the element's position in the row (broadcast over the normalized dims).
// skip, bias, mean_out, inv_std_out may be null.
struct LayerNormParams {
  int64_t rows = 0, d = 0;
  float epsilon = 1e-5f;
  StridedIndex scale_index, bias_index;
};
void launch_layer_norm(const float* x, const float* skip, const float* scale, const float* bias, float* y,
                       float* mean_out, float* inv_std_out, const LayerNormParams& p, cudaStream_t stream);

// ReduceMean: output element r averages the `count` elements at kept(r) + reduced(t), t < count.
struct ReduceMeanParams {
  int64_t out_numel = 0, count = 0;
  StridedIndex kept, reduced;
};
void launch_reduce_mean(const float* x, float* y, const ReduceMeanParams& p, cudaStream_t stream);

}  // namespace fusebox::cuda
