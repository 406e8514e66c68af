#pragma once
// How a MatMul-family node (MatMul, MatMulAdd, FusedBias*) multiplies: one reading of its
// attributes and operand shapes, shared by the op schema (shape inference, FLOPs) and every
// backend's kernel, which only maps it onto its own GEMM calls (ops/cpu/matmul.cpp: sgemm;
// ops/cuda/matmul.cpp: cuBLAS).
//
// alpha * op(A) op(B), op = transpose when transA/transB is 1, over the last two dims; the
// leading (batch) dims broadcast numpy-style. A 1-D A is a [1, K] row and a 1-D B a [K, 1]
// column, with that dim dropped from the output (ONNX).
//
// The batch as GEMMs: when every A matrix is distinct (no broadcast), not transposed, laid out
// back to back and multiplied by one B, the batch folds into M: [B, S, K] x [K, N] is one
// [B*S, K] x [K, N] GEMM, the shape BLAS is fastest at. Otherwise there is one GEMM per batch
// matrix, broadcast operands at repeated offsets.
#include <cstdint>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

struct MatMulShape {
  bool trans_a = false, trans_b = false;
  double alpha = 1.0;
  int64_t m = 0, n = 0, k = 0;  // one product: op(A) is [m, k], op(B) is [k, n]
  int64_t lda = 0, ldb = 0;     // row lengths of A and B as stored (their last dims)
  Shape a_batch, b_batch;       // the operands' own batch dims
  Shape batch;                  // broadcast batch dims
  Shape out;                    // the output shape
  int64_t count = 0;            // numel(batch): output matrices

  // The GEMMs: each is [gemm_m, k] x [k, n] (gemm_m = count * m when the batch folds), the
  // i-th reading A at a_offsets[i] and B at b_offsets[i] (elements) and writing output matrix i
  // (at i * gemm_m * n). One GEMM at offsets 0 when folded or when count <= 1.
  int64_t gemm_m = 0;
  std::vector<int64_t> a_offsets, b_offsets;

  int64_t out_numel() const { return count * m * n; }
  double flops() const { return 2.0 * static_cast<double>(count) * m * n * k; }
};

// Reads transA, transB and alpha of `node` against operand shapes a and b. Throws
// fusebox::Error when a shape has rank 0, the inner dims differ or the batches do not broadcast.
MatMulShape matmul_shape(const Node& node, const Shape& a, const Shape& b);

// FusedBiasGelu's form: false for approximate='none' (erf, the default), true for 'tanh'.
// Throws fusebox::Error for anything else.
bool fused_gelu_tanh(const Node& node);

}  // namespace fusebox::ir
