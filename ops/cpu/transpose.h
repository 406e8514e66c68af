#pragma once
// The 8 x 8 block transpose that the conv's result tiles (conv.cpp), the GEMM's k-major A blocks
// and its transposed B panels (packed_gemm.cpp) are copied with, written once over Highway in
// transpose.cpp and compiled for AVX2 and AVX-512 (AVX3).
//
// dst[c * dst_ld + r] = scale * src[r * src_ld + c] for the whole 8 x 8 blocks: r < rows / 8 * 8
// and c < cols / 8 * 8. The rows and columns past them are the caller's (each copies its edges
// with its own fill).
#include <cstdint>

#include "ops/cpu/isa.h"

namespace fusebox::cpu {

namespace N_AVX3 {
void TransposeBlocks8(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float scale,
                      float* dst, int64_t dst_ld);
}
namespace N_AVX2 {
void TransposeBlocks8(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float scale,
                      float* dst, int64_t dst_ld);
}

// At a vector level (isa kAvx2 or kAvx512).
inline void transpose_blocks8(Isa isa, const float* src, int64_t src_ld, int64_t rows, int64_t cols,
                              float scale, float* dst, int64_t dst_ld) {
  if (isa == Isa::kAvx512)
    N_AVX3::TransposeBlocks8(src, src_ld, rows, cols, scale, dst, dst_ld);
  else
    N_AVX2::TransposeBlocks8(src, src_ld, rows, cols, scale, dst, dst_ld);
}

}  // namespace fusebox::cpu
