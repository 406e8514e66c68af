#include "core/ir/matmul_shape.h"

#include <string>
#include <utility>

#include "core/base/error.h"
#include "core/ir/strided_view.h"

namespace fusebox::ir {

namespace {

// Offsets (in elements) of each broadcast batch matrix of an operand with batch dims `own`
// inside the output batch `batch`, for matrices of `matrix_size` elements.
std::vector<int64_t> batch_offsets(const Shape& own, const Shape& batch, int64_t matrix_size) {
  std::vector<int64_t> strides = broadcast_strides(own, batch);
  for (int64_t& s : strides) s *= matrix_size;
  return StridedView{batch, strides, 0}.leading_offsets(batch.size());
}

}  // namespace

MatMulShape matmul_shape(const Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) throw Error("inputs must have rank >= 1");
  Shape as = a, bs = b;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);

  MatMulShape s;
  s.trans_a = node.attrs.get_int("transA", 0) != 0;
  s.trans_b = node.attrs.get_int("transB", 0) != 0;
  s.alpha = node.attrs.get_float("alpha", 1.0);
  const int64_t a_rows = as[as.size() - 2], a_cols = as.back();
  const int64_t b_rows = bs[bs.size() - 2], b_cols = bs.back();
  s.m = s.trans_a ? a_cols : a_rows;
  s.n = s.trans_b ? b_rows : b_cols;
  s.k = s.trans_a ? a_rows : a_cols;
  const int64_t kb = s.trans_b ? b_cols : b_rows;
  if (s.k != kb)
    throw Error("inner dimensions differ: " + std::to_string(s.k) + " vs " + std::to_string(kb));
  s.lda = a_cols;
  s.ldb = b_cols;
  s.a_batch = Shape(as.begin(), as.end() - 2);
  s.b_batch = Shape(bs.begin(), bs.end() - 2);
  s.batch = broadcast_shapes(s.a_batch, s.b_batch);
  s.count = numel(s.batch);
  s.out = s.batch;
  if (!a_vec) s.out.push_back(s.m);
  if (!b_vec) s.out.push_back(s.n);

  const bool fold = !s.trans_a && numel(s.b_batch) == 1 && numel(s.a_batch) == s.count;
  if (fold || s.count <= 1) {
    s.gemm_m = fold ? s.count * s.m : s.m;
    s.a_offsets = {0};
    s.b_offsets = {0};
  } else {
    s.gemm_m = s.m;
    s.a_offsets = batch_offsets(s.a_batch, s.batch, a_rows * a_cols);
    s.b_offsets = batch_offsets(s.b_batch, s.batch, b_rows * b_cols);
  }
  return s;
}

bool fused_gelu_tanh(const Node& node) {
  const std::string approx = node.attrs.get_string("approximate", "none");
  if (approx != "none" && approx != "tanh")
    throw Error("approximate='" + approx + "': expected 'none' or 'tanh'");
  return approx == "tanh";
}

}  // namespace fusebox::ir
