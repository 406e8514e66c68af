// ir::matmul_shape against hand-computed cases: the dims, the output shape, how the batch folds
// into M or splits into one GEMM per matrix (offsets worked out by hand), and the errors.
#include "core/ir/matmul_shape.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"

namespace fusebox::ir {
namespace {

using Ints = std::vector<int64_t>;

Node matmul(int64_t trans_a = 0, int64_t trans_b = 0, double alpha = 1.0) {
  Node n;
  n.name = "mm";
  n.op = "MatMul";
  n.attrs.set("transA", trans_a);
  n.attrs.set("transB", trans_b);
  n.attrs.set("alpha", alpha);
  return n;
}

std::string ints(const Ints& v) {
  return shape_str(v);
}

// The dims of a product in one line, to compare with the hand-computed one.
std::string dims(const MatMulShape& s) {
  return std::string(s.trans_a ? "A^T " : "") + (s.trans_b ? "B^T " : "") + "m " +
         std::to_string(s.m) + " n " + std::to_string(s.n) + " k " + std::to_string(s.k) + " lda " +
         std::to_string(s.lda) + " ldb " + std::to_string(s.ldb) + " out " + shape_str(s.out);
}

TEST(MatMulShape, PlainMatrices) {
  const MatMulShape s = matmul_shape(matmul(0, 0, 0.5), {3, 4}, {4, 5});
  EXPECT_EQ(dims(s), "m 3 n 5 k 4 lda 4 ldb 5 out [3,5]");
  EXPECT_DOUBLE_EQ(s.alpha, 0.5);
  EXPECT_EQ(s.count, 1);
  EXPECT_EQ(s.gemm_m, 3);
  EXPECT_EQ(ints(s.a_offsets) + ints(s.b_offsets), "[0][0]");
  EXPECT_EQ(s.out_numel(), 15);
  EXPECT_DOUBLE_EQ(s.flops(), 2.0 * 3 * 5 * 4);
}

TEST(MatMulShape, TransposedOperandsKeepTheirStoredRowLengths) {
  // A stored [4, 3] read as [3, 4]; B stored [5, 4] read as [4, 5].
  EXPECT_EQ(dims(matmul_shape(matmul(1, 1), {4, 3}, {5, 4})),
            "A^T B^T m 3 n 5 k 4 lda 3 ldb 4 out [3,5]");
}

TEST(MatMulShape, VectorsDropTheirDimFromTheOutput) {
  const MatMulShape row = matmul_shape(matmul(), {4}, {4, 5});  // [1, 4] x [4, 5]
  EXPECT_EQ(row.m, 1);
  EXPECT_EQ(row.out, (Shape{5}));
  const MatMulShape col = matmul_shape(matmul(), {2, 3, 4}, {4});  // [2, 3, 4] x [4, 1]
  EXPECT_EQ(col.n, 1);
  EXPECT_EQ(col.out, (Shape{2, 3}));
  EXPECT_EQ(col.gemm_m, 6);  // folded: one [6, 4] x [4, 1]
}

TEST(MatMulShape, BatchOfDistinctAMatricesTimesOneBFoldsIntoM) {
  const MatMulShape s = matmul_shape(matmul(), {2, 3, 8, 4}, {4, 5});
  EXPECT_EQ(s.batch, (Shape{2, 3}));
  EXPECT_EQ(s.count, 6);
  EXPECT_EQ(s.out, (Shape{2, 3, 8, 5}));
  EXPECT_EQ(s.gemm_m, 48);
  EXPECT_EQ(ints(s.a_offsets) + ints(s.b_offsets), "[0][0]");
  EXPECT_EQ(s.out_numel(), 2 * 3 * 8 * 5);
}

TEST(MatMulShape, TransposedABatchDoesNotFold) {
  // A's matrices are [4, 3] stored, read transposed: rows of op(A) are not back to back.
  const MatMulShape s = matmul_shape(matmul(1, 0), {2, 4, 3}, {4, 5});
  EXPECT_EQ(s.gemm_m, 3);
  EXPECT_EQ(s.a_offsets, (Ints{0, 12}));
  EXPECT_EQ(s.b_offsets, (Ints{0, 0}));
}

TEST(MatMulShape, BroadcastBatchesRepeatOffsets) {
  // A [2, 1, 3, 4] and B [3, 4, 5]: batch [2, 3]; A's matrix (i, 0) for every j, B's j for every i.
  const MatMulShape s = matmul_shape(matmul(), {2, 1, 3, 4}, {3, 4, 5});
  EXPECT_EQ(s.batch, (Shape{2, 3}));
  EXPECT_EQ(s.out, (Shape{2, 3, 3, 5}));
  EXPECT_EQ(s.gemm_m, 3);
  EXPECT_EQ(s.a_offsets, (Ints{0, 0, 0, 12, 12, 12}));
  EXPECT_EQ(s.b_offsets, (Ints{0, 20, 40, 0, 20, 40}));
}

TEST(MatMulShape, BatchedBothSidesOneGemmPerMatrix) {
  const MatMulShape s = matmul_shape(matmul(0, 1), {2, 3, 4}, {2, 5, 4});  // attention's Q K^T
  EXPECT_EQ(s.gemm_m, 3);
  EXPECT_EQ(s.n, 5);
  EXPECT_EQ(s.a_offsets, (Ints{0, 12}));
  EXPECT_EQ(s.b_offsets, (Ints{0, 20}));
}

TEST(MatMulShape, Errors) {
  auto message = [](const Shape& a, const Shape& b) {
    try {
      matmul_shape(matmul(), a, b);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({3, 4}, {5, 6}), "inner dimensions differ: 4 vs 5");
  EXPECT_EQ(message({}, {4, 5}), "inputs must have rank >= 1");
  EXPECT_NE(message({2, 3, 4}, {3, 4, 5}), "no error");  // batches 2 and 3 do not broadcast
}

TEST(MatMulShape, FusedGeluForm) {
  Node n = matmul();
  EXPECT_FALSE(fused_gelu_tanh(n));
  n.attrs.set("approximate", std::string("tanh"));
  EXPECT_TRUE(fused_gelu_tanh(n));
  n.attrs.set("approximate", std::string("fast"));
  EXPECT_THROW(fused_gelu_tanh(n), Error);
}

}  // namespace
}  // namespace fusebox::ir
