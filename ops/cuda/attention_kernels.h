#pragma once
// Launcher for Attention (attention_kernels.cu): softmax(scale * Q K^T + mask) V, flash-style:
// a block per (batch-head, tile of query rows), K/V tiles in shared memory, online softmax; no
// scratch. C++17, no core headers.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ops/cuda/host/tile_geometry.h"
#include "ops/cuda/strided_index.h"

namespace fusebox::cuda {

// Every operand is a strided view: batch-head b's matrix starts at <x>_offset + offset(<x>_lead, b)
// and element (row, col) is <x>_rs * row + <x>_cs * col from there. K is [Skv, D] (k_transposed
// already folded into its strides); the mask is [Sq, Skv] per head (broadcast dims at stride 0).
struct AttentionParams {
  int64_t batch = 1, sq = 0, skv = 0, d = 0, dv = 0;
  float scale = 1.0f;
  bool causal = false;
  StridedIndex q_lead, k_lead, v_lead, o_lead, m_lead;
  int64_t q_offset = 0, k_offset = 0, v_offset = 0, o_offset = 0;
  int64_t q_rs = 0, q_cs = 0, k_rs = 0, k_cs = 0, v_rs = 0, v_cs = 0, o_rs = 0, o_cs = 0, m_rs = 0, m_cs = 0;
  // attention_tiles (host/tile_geometry.h): query rows per block, keys per tile, blocks, bytes.
  int rows = 4, keys = 16;
  int64_t blocks = 0;
  size_t shared_bytes = 0;
};

// Lets the kernel take shared_bytes of dynamic shared memory (past 48 KiB a kernel must opt in).
// Called from prepare(), never while a stream is being captured.
cudaError_t allow_attention_shared(size_t shared_bytes);

// mask may be null (no input 3).
void launch_attention(const float* q, const float* k, const float* v, const float* mask, float* out,
                      const AttentionParams& p, cudaStream_t stream);

}  // namespace fusebox::cuda
