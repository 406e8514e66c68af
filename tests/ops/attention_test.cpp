// Attention against the unfused composition it replaces, in double: S = scale * Q K^T, row
// softmax, S V, per batch-head; with K given as is and pre-transposed (k_transposed = 1).
#include <algorithm>
#include <limits>

#include "ops/cpu/cpu_backend.h"
#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

// q [..., Sq, D], k [..., Skv, D] or [..., D, Skv], v [..., Skv, Dv].
std::vector<double> ref_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                                  bool kt) {
  const Shape& qs = q.shape();
  const size_t r = qs.size();
  const int64_t sq = qs[r - 2], d = qs[r - 1];
  const int64_t skv = kt ? k.shape()[r - 1] : k.shape()[r - 2], dv = v.shape()[r - 1];
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= qs[i];
  std::vector<double> out(static_cast<size_t>(batch * sq * dv), 0.0);
  std::vector<double> s(static_cast<size_t>(skv));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < sq; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < skv; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < d; ++p)
          acc += at(q, (b * sq + i) * d + p) * at(k, b * skv * d + (kt ? p * skv + j : j * d + p));
        s[j] = scale * acc;
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < skv; ++j) sum += (s[j] = std::exp(s[j] - mx));
      for (int64_t j = 0; j < skv; ++j)
        for (int64_t c = 0; c < dv; ++c)
          out[(b * sq + i) * dv + c] += s[j] / sum * at(v, (b * skv + j) * dv + c);
    }
  return out;
}

struct Case {
  Shape lead;  // batch / head dims
  int64_t sq, skv, d, dv;
  double scale;
};

TEST(Attention, MatchesMatMulSoftmaxMatMul) {
  std::mt19937 rng(51);
  const std::vector<Case> cases = {
      {{2, 3}, 5, 5, 8, 8, 0.35},
      {{2, 3}, 4, 9, 8, 6, 1.0},  // Sq != Skv, Dv != D
      {{1}, 7, 7, 16, 16, 0.25},  // one head: BLAS threads, split softmax rows
      {{}, 5, 3, 8, 4, 0.5},      // rank 2
      {{3}, 6, 1, 4, 4, 1.0},     // one key: all weight on it
      {{2, 4}, 64, 64, 32, 32, 0.17677669529},
      {{4}, 17, 129, 3, 5, 2.0},
      {{2}, 0, 4, 8, 8, 1.0},  // no queries
      {{2}, 3, 0, 8, 8, 1.0},  // no keys: zeros
  };
  for (const auto& c : cases) {
    for (bool kt : {false, true}) {
      auto with = [&](int64_t a, int64_t b) {
        Shape s = c.lead;
        s.push_back(a);
        s.push_back(b);
        return s;
      };
      Tensor q = random_f32(with(c.sq, c.d), rng, -1, 1);
      Tensor k = random_f32(kt ? with(c.d, c.skv) : with(c.skv, c.d), rng, -1, 1);
      Tensor v = random_f32(with(c.skv, c.dv), rng, -1, 1);
      ir::Attributes attrs = attrs_of({{"scale", c.scale}, {"k_transposed", int64_t{kt}}});
      for (int threads : {1, 2})
        expect_close(run1("Attention", {q, k, v}, attrs, threads), with(c.sq, c.dv),
                     ref_attention(q, k, v, c.scale, kt), 1e-5, 1e-5,
                     "Attention " + shape_str(q.shape()) + " k " + shape_str(k.shape()) +
                         (kt ? " kt" : "") + " threads " + std::to_string(threads));
    }
  }
}

TEST(Attention, DefaultScaleIsOne) {
  std::mt19937 rng(52);
  Tensor q = random_f32({2, 4, 8}, rng), k = random_f32({2, 6, 8}, rng),
         v = random_f32({2, 6, 3}, rng);
  expect_close(run1("Attention", {q, k, v}), {2, 4, 3}, ref_attention(q, k, v, 1.0, false), 1e-5,
               1e-5, "default");
}

TEST(Attention, PrepareNeedsScratch) {
  const std::vector<ir::TensorType> in = {
      {DType::f32, {2, 4, 8}}, {DType::f32, {2, 6, 8}}, {DType::f32, {2, 6, 3}}};
  const std::vector<ir::TensorType> out = {{DType::f32, {2, 4, 3}}};
  EXPECT_THROW(prepare_only("Attention", in, out, {}, 2 * 4 * 6 * 4 - 1), Error);
  EXPECT_NO_THROW(prepare_only("Attention", in, out, {}, 2 * 4 * 6 * 4));
}

// Every op with a schema has a CPU kernel (the CPU backend is the reference backend).
TEST(CpuKernels, EveryRegisteredOpHasAKernel) {
  for (const auto& op : ir::OpRegistry::instance().names())
    EXPECT_NE(cpu_backend().kernels().find(op), nullptr) << "no CPU kernel for " << op;
}

}  // namespace
}  // namespace fusebox::optest
