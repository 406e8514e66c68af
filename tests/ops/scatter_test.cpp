// ScatterND and ScatterElements against a reference written from ONNX's definitions (double
// precision, updates applied in index order), over ranks, tuple lengths, axes, negative and
// duplicate indices, every reduction and both dtypes; and the errors for bad shapes and indices.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

const std::vector<std::string> kReductions{"none", "add", "mul", "max", "min"};

double combine(const std::string& r, double old, double update) {
  if (r == "add") return old + update;
  if (r == "mul") return old * update;
  if (r == "max") return std::max(old, update);
  if (r == "min") return std::min(old, update);
  return update;
}

Tensor make_data(DType dtype, const Shape& shape, std::mt19937& rng) {
  return dtype == DType::f32 ? random_f32(shape, rng) : random_i64(shape, rng, -9, 9);
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = at(t, i);
  return v;
}

// ONNX's ScatterND: output[indices[t]] = f(output[indices[t]], updates[t]) for t in order.
std::vector<double> scatter_nd_ref(const Tensor& data, const Tensor& idx, const Tensor& upd, const std::string& r) {
  std::vector<double> out = as_doubles(data);
  const Shape& ds = data.shape();
  const int64_t k = idx.shape().back();
  int64_t slice = 1;
  for (size_t d = static_cast<size_t>(k); d < ds.size(); ++d) slice *= ds[d];
  const int64_t tuples = idx.numel() / k;
  for (int64_t t = 0; t < tuples; ++t) {
    std::vector<int64_t> coord(ds.size(), 0);
    for (int64_t d = 0; d < k; ++d) {
      int64_t v = idx.data<int64_t>()[t * k + d];
      coord[static_cast<size_t>(d)] = v < 0 ? v + ds[static_cast<size_t>(d)] : v;
    }
    const int64_t base = ravel(coord, ds);
    for (int64_t j = 0; j < slice; ++j) {
      double& o = out[static_cast<size_t>(base + j)];
      o = combine(r, o, at(upd, t * slice + j));
    }
  }
  return out;
}

// ONNX's ScatterElements: output[u with u[axis] = indices[u]] = f(.., updates[u]) for u in order.
std::vector<double> scatter_elements_ref(const Tensor& data, const Tensor& idx, const Tensor& upd, int axis,
                                         const std::string& r) {
  std::vector<double> out = as_doubles(data);
  for (int64_t u = 0; u < idx.numel(); ++u) {
    std::vector<int64_t> coord = unravel(u, idx.shape());
    int64_t v = idx.data<int64_t>()[u];
    coord[static_cast<size_t>(axis)] = v < 0 ? v + data.shape()[static_cast<size_t>(axis)] : v;
    double& o = out[static_cast<size_t>(ravel(coord, data.shape()))];
    o = combine(r, o, at(upd, u));
  }
  return out;
}

struct NdCase {
  Shape data, indices;  // indices' last dim is k
  bool duplicates = false;
};

// Random indices in [-dim, dim); without duplicates, distinct tuples (reduction none leaves
// duplicates undefined in ONNX).
Tensor nd_indices(const Shape& data, const Shape& shape, bool duplicates, std::mt19937& rng) {
  const int64_t k = shape.back();
  Tensor idx(DType::i64, shape);
  const int64_t tuples = idx.numel() / k;
  std::vector<std::vector<int64_t>> seen;
  for (int64_t t = 0; t < tuples; ++t) {
    std::vector<int64_t> tuple;
    for (int attempt = 0;; ++attempt) {
      tuple.clear();
      for (int64_t d = 0; d < k; ++d) {
        const int64_t n = data[static_cast<size_t>(d)];
        tuple.push_back(std::uniform_int_distribution<int64_t>(-n, n - 1)(rng));
      }
      std::vector<int64_t> canon = tuple;
      for (int64_t d = 0; d < k; ++d)
        if (canon[static_cast<size_t>(d)] < 0) canon[static_cast<size_t>(d)] += data[static_cast<size_t>(d)];
      if (duplicates || std::find(seen.begin(), seen.end(), canon) == seen.end()) {
        seen.push_back(canon);
        break;
      }
      if (attempt > 1000) {
        ADD_FAILURE() << "no distinct tuple left";
        break;
      }
    }
    std::copy(tuple.begin(), tuple.end(), idx.data<int64_t>() + t * k);
  }
  return idx;
}

TEST(ScatterND, MatchesTheReferenceForEveryReductionRankAndTupleLength) {
  std::mt19937 rng(7);
  const std::vector<NdCase> cases{
      {{8}, {4, 1}},                  // elements of a vector
      {{4, 4, 4}, {2, 1}},            // whole matrices (ONNX's example 2)
      {{5, 6}, {3, 2}},               // single elements of a matrix
      {{3, 4, 5, 2}, {2, 3, 2}},      // [2,3] tuples of 2, slices of 10
      {{2, 3, 4}, {2, 2, 3}},         // tuples as long as the rank
      {{10, 7}, {9, 1}, true},        // rows, with duplicates when reducing
      {{2, 12, 16, 8}, {2, 12, 1, 3}, true},  // a KV-cache write: one position per batch and head
  };
  for (const DType dtype : {DType::f32, DType::i64})
    for (const auto& c : cases)
      for (const auto& r : kReductions) {
        const bool dup = c.duplicates && r != "none";
        Tensor data = make_data(dtype, c.data, rng);
        Tensor idx = nd_indices(c.data, c.indices, dup, rng);
        Shape us(c.indices.begin(), c.indices.end() - 1);
        us.insert(us.end(), c.data.begin() + c.indices.back(), c.data.end());
        Tensor upd = make_data(dtype, us, rng);
        const std::string what = std::string(dtype_name(dtype)) + " data " + shape_str(c.data) + " indices " +
                                 shape_str(c.indices) + " reduction " + r;
        Tensor y = run1("ScatterND", {data, idx, upd}, attrs_of({{"reduction", r}}));
        expect_close(y, c.data, scatter_nd_ref(data, idx, upd, r), 1e-6, 1e-6, what);
      }
}

TEST(ScatterElements, MatchesTheReferenceForEveryReductionAndAxis) {
  std::mt19937 rng(11);
  struct Case {
    Shape data, indices;
    int64_t axis;
  };
  const std::vector<Case> cases{
      {{5}, {3}, 0},
      {{3, 4}, {2, 4}, 0},
      {{3, 4}, {3, 2}, 1},
      {{3, 4}, {2, 3}, -1},  // indices narrower than data off the axis too
      {{2, 3, 5}, {2, 3, 9}, 2},  // more updates than the axis holds: duplicates
      {{4, 3, 2}, {6, 2, 2}, 0},
  };
  for (const DType dtype : {DType::f32, DType::i64})
    for (const auto& c : cases)
      for (const auto& r : kReductions) {
        Tensor data = make_data(dtype, c.data, rng);
        const int axis = static_cast<int>(c.axis < 0 ? c.axis + static_cast<int64_t>(c.data.size()) : c.axis);
        const int64_t n = c.data[static_cast<size_t>(axis)];
        Tensor idx(DType::i64, c.indices);
        // Without a reduction, distinct indices along each axis line (a rotation of 0..n-1, odd
        // positions counted from the end) where the line fits; a reduction takes any, duplicates
        // included.
        const bool distinct = r == "none" && c.indices[static_cast<size_t>(axis)] <= n;
        const int64_t shift = std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
        for (int64_t u = 0; u < idx.numel(); ++u) {
          const int64_t pos = unravel(u, c.indices)[static_cast<size_t>(axis)];
          idx.data<int64_t>()[u] = distinct ? (pos + shift) % n - (pos % 2 ? n : 0)
                                            : std::uniform_int_distribution<int64_t>(-n, n - 1)(rng);
        }
        Tensor upd = make_data(dtype, c.indices, rng);
        const std::string what = std::string(dtype_name(dtype)) + " data " + shape_str(c.data) + " indices " +
                                 shape_str(c.indices) + " axis " + std::to_string(c.axis) + " reduction " + r;
        Tensor y = run1("ScatterElements", {data, idx, upd}, attrs_of({{"axis", c.axis}, {"reduction", r}}));
        expect_close(y, c.data, scatter_elements_ref(data, idx, upd, axis, r), 1e-6, 1e-6, what);
      }
}

TEST(ScatterND, ALargeCopyAtTwoThreadsMatchesOneThread) {
  std::mt19937 rng(3);
  Tensor data = random_f32({64, 4096}, rng);
  Tensor idx = i64_tensor({3, 1}, {5, -1, 40});
  Tensor upd = random_f32({3, 4096}, rng);
  Tensor y = run_op("ScatterND", {data, idx, upd}, attrs_of({{"reduction", std::string("add")}}), 2)[0];
  expect_close(y, {64, 4096}, scatter_nd_ref(data, idx, upd, "add"), 1e-6, 1e-6);
}

TEST(Scatter, AnIndexOutOfRangeIsRefusedNamingTheElementAndTheDim) {
  std::mt19937 rng(5);
  Tensor data = random_f32({4, 3}, rng);
  try {
    run1("ScatterND", {data, i64_tensor({2, 2}, {1, 2, 3, 3}), random_f32({2}, rng)});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("element 3 is index 3, out of range for dim 1 of size 3"), std::string::npos)
        << e.what();
  }
  try {
    run1("ScatterElements", {data, i64_tensor({1, 3}, {0, -5, 1}), random_f32({1, 3}, rng)});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("element 1 is index -5, out of range for dim 0 of size 4 (valid: -4..3)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Scatter, BadShapesAndReductionsAreRefusedByTheSchema) {
  std::mt19937 rng(9);
  Tensor data = random_f32({4, 3}, rng);
  auto message = [&](const std::string& op, const std::vector<Tensor>& in, const ir::Attributes& attrs) {
    try {
      run1(op, in, attrs);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("ScatterND", {data, i64_tensor({2, 1}, {0, 1}), random_f32({2, 4}, rng)}, {})
                .find("updates [2,4] must be [2,3]"),
            std::string::npos);
  EXPECT_NE(message("ScatterND", {data, i64_tensor({1, 3}, {0, 0, 0}), random_f32({1}, rng)}, {})
                .find("each index tuple must have 1..2 entries"),
            std::string::npos);
  EXPECT_NE(message("ScatterElements", {data, i64_tensor({1, 3}, {0, 0, 0}), random_f32({3}, rng)}, {})
                .find("must have the shape of indices [1,3]"),
            std::string::npos);
  EXPECT_NE(message("ScatterElements", {data, i64_tensor({1, 3}, {0, 0, 0}), random_f32({1, 3}, rng)},
                    attrs_of({{"reduction", std::string("mean")}}))
                .find("attribute reduction is 'mean'"),
            std::string::npos);
  EXPECT_NE(message("ScatterND", {data, i64_tensor({1, 1}, {0}), random_i64({1, 3}, rng, 0, 2)}, {})
                .find("input 2 is i64 and input 0 f32, but ScatterND takes one dtype for both"),
            std::string::npos);
}

}  // namespace
}  // namespace fusebox::optest
