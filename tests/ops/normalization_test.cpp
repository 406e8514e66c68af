// Softmax, LayerNorm and ReduceMean against double-precision reference loops over arbitrary
// axes (last, middle, first), odd and empty sizes, and inputs that stress numerics. LayerNorm and
// SkipLayerNorm run on every Isa level this CPU runs (their rows have AVX2 / AVX-512 paths).
#include <algorithm>
#include <limits>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

// [outer, n, inner] view of `shape` around `axis`.
void split(const Shape& shape, int axis, int64_t* outer, int64_t* n, int64_t* inner) {
  *outer = *n = *inner = 1;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    (d < axis ? *outer : d == axis ? *n : *inner) *= shape[d];
}

std::vector<double> ref_softmax(const Tensor& x, int axis) {
  int64_t outer, n, inner;
  split(x.shape(), axis, &outer, &n, &inner);
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < inner; ++c) {
      auto idx = [&](int64_t a) { return (o * n + a) * inner + c; };
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t a = 0; a < n; ++a) mx = std::max(mx, at(x, idx(a)));
      for (int64_t a = 0; a < n; ++a) sum += std::exp(at(x, idx(a)) - mx);
      for (int64_t a = 0; a < n; ++a) y[idx(a)] = std::exp(at(x, idx(a)) - mx) / sum;
    }
  return y;
}

TEST(Softmax, AnyAxis) {
  std::mt19937 rng(31);
  const std::vector<std::pair<Shape, int>> cases = {
      {{5}, -1},         {{1}, 0},           {{3, 17}, 1},     {{3, 17}, 0},     {{2, 3, 4, 5}, 1},
      {{2, 3, 4, 5}, 2}, {{2, 3, 4, 5}, -1}, {{2, 300, 7}, 1}, {{2, 5, 600}, 1}, {{4, 0}, 0},
      {{0, 4}, 1},       {{64, 1024}, -1},   {{7, 129}, -1},   {{3, 1, 5}, 1},   {{200, 3, 40}, 1},
  };
  for (const auto& [shape, axis] : cases) {
    Tensor x = random_f32(shape, rng, -8, 8);
    const int norm = axis < 0 ? axis + static_cast<int>(shape.size()) : axis;
    for (int threads : {1, 2})
      expect_close(run1("Softmax", {x}, attrs_of({{"axis", int64_t{axis}}}), threads), shape,
                   ref_softmax(x, norm), 1e-6, 1e-5,
                   "Softmax " + shape_str(shape) + " axis " + std::to_string(axis));
  }
}

TEST(Softmax, ScalarAndDefaultAxis) {
  expect_close(run1("Softmax", {f32_tensor({}, {3.0f})}), {}, {1.0}, 0, 0, "scalar");
  std::mt19937 rng(32);
  Tensor x = random_f32({4, 9}, rng);
  expect_close(run1("Softmax", {x}), {4, 9}, ref_softmax(x, 1), 1e-6, 1e-5, "default axis");
}

TEST(Softmax, LargeAndMaskedScores) {
  // Values far beyond exp's range and additive masks: max-subtraction keeps them finite.
  std::mt19937 rng(33);
  Tensor x = random_f32({6, 50}, rng, -200, 200);
  for (int64_t i = 0; i < x.numel(); i += 3) x.data<float>()[i] = -1e9f;
  expect_close(run1("Softmax", {x}), x.shape(), ref_softmax(x, 1), 1e-6, 1e-5, "rows");
  expect_close(run1("Softmax", {x}, attrs_of({{"axis", int64_t{0}}})), x.shape(), ref_softmax(x, 0),
               1e-6, 1e-5, "columns");
}

// ---- LayerNorm -----------------------------------------------------------------------------

struct LnRef {
  std::vector<double> y, mean, inv_std;
};

LnRef ref_layer_norm(const Tensor& x, const Tensor& scale, const Tensor* bias, int axis,
                     double eps) {
  const Shape& s = x.shape();
  const Shape norm(s.begin() + axis, s.end());
  const int64_t d = ir::numel(norm), rows = x.numel() / std::max<int64_t>(d, 1);
  LnRef r;
  r.y.resize(static_cast<size_t>(x.numel()));
  for (int64_t row = 0; row < rows; ++row) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i) mean += at(x, row * d + i);
    mean /= static_cast<double>(d);
    for (int64_t i = 0; i < d; ++i)
      var += (at(x, row * d + i) - mean) * (at(x, row * d + i) - mean);
    var /= static_cast<double>(d);
    const double inv = 1.0 / std::sqrt(var + eps);
    r.mean.push_back(mean);
    r.inv_std.push_back(inv);
    for (int64_t i = 0; i < d; ++i) {
      double v = (at(x, row * d + i) - mean) * inv * at(scale, bcast_index(scale.shape(), norm, i));
      if (bias) v += at(*bias, bcast_index(bias->shape(), norm, i));
      r.y[row * d + i] = v;
    }
  }
  return r;
}

struct LnCase {
  Shape x;
  int axis;
  Shape scale;
  Shape bias;  // empty vector with has_bias false: no bias input
  bool has_bias = true;
  float offset = 0;  // added to x: a large mean stresses the variance computation
};

TEST(LayerNorm, MatchesDoubleReference) {
  std::mt19937 rng(34);
  const std::vector<LnCase> cases = {
      {{4, 256}, -1, {256}, {256}},
      {{17, 512}, 1, {512}, {512}},
      {{3, 1024}, -1, {1024}, {1024}},
      {{2, 7, 768}, -1, {768}, {768}, true, 1000.0f},
      {{5, 384}, -1, {384}, {}, false},
      {{2, 3, 64}, 1, {3, 64}, {3, 64}},
      {{2, 3, 64}, 1, {64}, {1, 64}},  // scale broadcast within the normalized block
      {{2, 3, 64}, 1, {3, 1}, {}, true},
      {{2, 3, 64}, 0, {3, 64}, {64}},
      {{6, 1}, -1, {1}, {1}},
      {{512, 256}, -1, {256}, {256}},  // threaded
      {{0, 32}, -1, {32}, {32}},
      {{9}, 0, {9}, {}},
      // Row lengths around the vector widths (8, 16) and the unrolled steps (16, 32): masked
      // tails of every length, with and without a large offset.
      {{3, 37}, -1, {37}, {37}},
      {{4, 15}, -1, {15}, {15}, true, 500.0f},
      {{2, 33}, -1, {33}, {}, false},
      {{3, 100}, -1, {100}, {100}, true, -2000.0f},
      {{2, 7}, -1, {7}, {7}},
  };
  for (cpu::Isa isa : runnable_isas())
  for (const auto& c : cases) {
    SCOPED_TRACE(cpu::isa_name(isa));
    ScopedIsa scoped(isa);
    std::vector<Tensor> in = {random_f32(c.x, rng, -3, 3), random_f32(c.scale, rng, 0.5f, 1.5f)};
    for (int64_t i = 0; i < in[0].numel(); ++i) in[0].data<float>()[i] += c.offset;
    const bool bias = c.has_bias && !c.bias.empty();
    if (bias) in.push_back(random_f32(c.bias, rng, -1, 1));
    const int axis = c.axis < 0 ? c.axis + static_cast<int>(c.x.size()) : c.axis;
    LnRef r = ref_layer_norm(in[0], in[1], bias ? &in[2] : nullptr, axis, 1e-5);
    for (int threads : {1, 2}) {
      std::vector<Tensor> out =
          run_op("LayerNorm", in, attrs_of({{"axis", int64_t{c.axis}}}), threads, 3);
      const std::string what = "LayerNorm " + shape_str(c.x) + " axis " + std::to_string(c.axis) +
                               " scale " + shape_str(c.scale) + " threads " +
                               std::to_string(threads);
      // Relative to the normalized magnitude (~1): the large-offset case loses the offset's
      // float rounding in x itself, which the reference sees too.
      expect_close(out[0], c.x, r.y, 1e-5, 1e-5, what);
      Shape stat = c.x;
      for (size_t d = static_cast<size_t>(axis); d < stat.size(); ++d) stat[d] = 1;
      expect_close(out[1], stat, r.mean, 1e-5, 1e-6, what + " mean");
      expect_close(out[2], stat, r.inv_std, 1e-5, 1e-5, what + " inv_std");
    }
  }
}

TEST(LayerNorm, EpsilonAndSingleOutput) {
  for (cpu::Isa isa : runnable_isas()) {
  SCOPED_TRACE(cpu::isa_name(isa));
  ScopedIsa scoped(isa);
  std::mt19937 rng(35);
  Tensor x = random_f32({3, 40}, rng, -0.01f, 0.01f);  // variance comparable to epsilon
  Tensor g = random_f32({40}, rng), b = random_f32({40}, rng);
  LnRef r = ref_layer_norm(x, g, &b, 1, 1e-3);
  expect_close(run1("LayerNorm", {x, g, b}, attrs_of({{"epsilon", 1e-3}})), x.shape(), r.y, 1e-5,
               1e-5, "eps");
  LnRef r5 = ref_layer_norm(x, g, &b, 1, 1e-5);
  expect_close(run1("LayerNorm", {x, g, b}), x.shape(), r5.y, 1e-5, 1e-5, "default eps");
  }
}

// SkipLayerNorm(x, skip, scale, bias) against the reference LayerNorm of x + skip, summed in
// double by the test, on every level this CPU runs.
TEST(SkipLayerNorm, IsLayerNormOfTheSum) {
  std::mt19937 rng(36);
  for (cpu::Isa isa : runnable_isas())
  for (const Shape& shape : {Shape{4, 256}, Shape{1, 128, 256}, Shape{512, 64}, Shape{3, 1},
                             Shape{5, 45}, Shape{2, 7}, Shape{3, 17}, Shape{2, 768}}) {
    SCOPED_TRACE(cpu::isa_name(isa));
    ScopedIsa scoped(isa);
    const int64_t d = shape.back();
    Tensor x = random_f32(shape, rng, -3, 3), skip = random_f32(shape, rng, -3, 3);
    Tensor g = random_f32({d}, rng, 0.5f, 1.5f), b = random_f32({d}, rng, -1, 1);
    Tensor sum(DType::f32, shape);
    std::vector<double> sum_d(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) sum_d[i] = at(x, i) + at(skip, i);
    // The reference normalizes the double sum; the float tensor is only its carrier.
    for (int64_t i = 0; i < x.numel(); ++i) sum.data<float>()[i] = static_cast<float>(sum_d[i]);
    const int axis = static_cast<int>(shape.size()) - 1;
    LnRef with_bias = ref_layer_norm(sum, g, &b, axis, 1e-5);
    LnRef no_bias = ref_layer_norm(sum, g, nullptr, axis, 1e-5);
    for (int threads : {1, 2}) {
      const std::string what = "SkipLayerNorm " + shape_str(shape) + " threads " +
                               std::to_string(threads);
      expect_close(run1("SkipLayerNorm", {x, skip, g, b}, {}, threads), shape, with_bias.y, 1e-5,
                   1e-5, what);
      expect_close(run1("SkipLayerNorm", {x, skip, g}, {}, threads), shape, no_bias.y, 1e-5, 1e-5,
                   what + " no bias");
    }
  }
  std::mt19937 r2(37);
  // x and skip must have one shape: the schema refuses to broadcast.
  EXPECT_THROW(run1("SkipLayerNorm", {random_f32({2, 8}, r2), random_f32({1, 8}, r2),
                                      random_f32({8}, r2)}),
               Error);
}

// ---- ReduceMean ----------------------------------------------------------------------------

std::vector<double> ref_reduce_mean(const Tensor& x, const std::vector<int64_t>& axes, bool keep,
                                    Shape* out) {
  const Shape& s = x.shape();
  std::vector<bool> red(s.size(), axes.empty());
  for (int64_t a : axes) red[a < 0 ? a + static_cast<int64_t>(s.size()) : a] = true;
  Shape full;  // output shape with kept 1s
  out->clear();
  for (size_t d = 0; d < s.size(); ++d) {
    full.push_back(red[d] ? 1 : s[d]);
    if (!red[d])
      out->push_back(s[d]);
    else if (keep)
      out->push_back(1);
  }
  std::vector<double> sum(static_cast<size_t>(ir::numel(full)), 0.0);
  int64_t count = 1;
  for (size_t d = 0; d < s.size(); ++d)
    if (red[d]) count *= s[d];
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    for (size_t d = 0; d < s.size(); ++d)
      if (red[d]) idx[d] = 0;
    sum[static_cast<size_t>(ravel(idx, full))] += at(x, i);
  }
  for (auto& v : sum)
    v = count == 0 ? std::numeric_limits<double>::quiet_NaN() : v / static_cast<double>(count);
  return sum;
}

TEST(ReduceMean, AnyAxes) {
  std::mt19937 rng(36);
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
  };
  const std::vector<Case> cases = {
      {{3, 4}, {1}},
      {{3, 4}, {0}},
      {{3, 4}, {}},
      {{2, 3, 4}, {0, 2}},
      {{2, 3, 4, 5}, {1, 3}},
      {{2, 3, 4, 5}, {0, 2}},
      {{2, 3, 4}, {-1}},
      {{5, 1, 7}, {1}},
      {{5, 1, 7}, {0, 1}},
      {{2, 600, 300}, {1}},
      {{300, 400}, {1}},
      {{17, 3, 129}, {0, 2}},
      {{0, 3}, {0}},
      {{3, 0}, {1}},
      {{0, 3}, {1}},
      {{}, {}},
      {{2, 3, 4, 5}, {0, 1, 2, 3}},
      {{4, 5, 6}, {1, 2}},
      {{1, 1, 1}, {1}},
  };
  for (const auto& c : cases) {
    Tensor x = random_f32(c.x, rng, -2, 2);
    for (bool keep : {true, false}) {
      Shape out;
      std::vector<double> want = ref_reduce_mean(x, c.axes, keep, &out);
      ir::Attributes attrs = attrs_of({{"keepdims", int64_t{keep}}});
      if (!c.axes.empty()) attrs.set("axes", c.axes);
      for (int threads : {1, 2}) {
        std::string axes;
        for (int64_t a : c.axes) axes += std::to_string(a) + " ";
        expect_close(run1("ReduceMean", {x}, attrs, threads), out, want, 1e-6, 1e-5,
                     "ReduceMean " + shape_str(c.x) + " axes " + axes + (keep ? "keep" : "drop"));
      }
    }
  }
}

// ReduceSum/Max/Min against double loops over the same axis cases as ReduceMean (the shared
// split) for f32 and i64, including empty reductions (0, -inf, +inf).
TEST(ReduceSumMaxMin, AnyAxesAndDtypes) {
  std::mt19937 rng(37);
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{3, 4}, {1}},          {{3, 4}, {0}},         {{3, 4}, {}},          {{2, 3, 4}, {0, 2}},
      {{2, 3, 4, 5}, {1, 3}}, {{2, 3, 4}, {-1}},     {{5, 1, 7}, {1}},      {{2, 600, 300}, {1}},
      {{300, 400}, {1}},      {{17, 3, 129}, {0, 2}}, {{0, 3}, {0}},        {{3, 0}, {1}},
      {{}, {}},               {{4, 5, 6}, {1, 2}},   {{1, 1, 1}, {1}},
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin"}) {
    const std::string o = op;
    for (DType dt : {DType::f32, DType::i64}) {
      for (const auto& [xs, axes] : cases) {
        Tensor x = dt == DType::f32 ? random_f32(xs, rng, -2, 2) : random_i64(xs, rng, -1000, 1000);
        std::vector<bool> red(xs.size(), axes.empty());
        for (int64_t a : axes) red[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(xs.size()) : a)] = true;
        for (bool keep : {true, false}) {
          Shape out;
          for (size_t d = 0; d < xs.size(); ++d)
            if (!red[d]) out.push_back(xs[d]);
            else if (keep) out.push_back(1);
          double init = o == "ReduceSum" ? 0.0 : o == "ReduceMax" ? -inf : inf;
          if (dt == DType::i64 && o == "ReduceMax") init = static_cast<double>(std::numeric_limits<int64_t>::min());
          if (dt == DType::i64 && o == "ReduceMin") init = static_cast<double>(std::numeric_limits<int64_t>::max());
          std::vector<double> want(static_cast<size_t>(ir::numel(out)), init);
          for (int64_t i = 0; i < x.numel(); ++i) {
            std::vector<int64_t> idx = unravel(i, xs), oi;
            for (size_t d = 0; d < xs.size(); ++d)
              if (!red[d]) oi.push_back(idx[d]);
              else if (keep) oi.push_back(0);
            double& w = want[static_cast<size_t>(ravel(oi, out))];
            const double v = at(x, i);
            w = o == "ReduceSum" ? w + v : o == "ReduceMax" ? std::max(w, v) : std::min(w, v);
          }
          ir::Attributes attrs = attrs_of({{"keepdims", int64_t{keep}}});
          if (!axes.empty()) attrs.set("axes", axes);
          for (int threads : {1, 2}) {
            Tensor y = run1(op, {x}, attrs, threads);
            EXPECT_EQ(y.dtype(), dt);
            expect_close(y, out, want, 1e-5, 1e-6,
                         o + " " + ir::dtype_name(dt) + " " + shape_str(xs) + (keep ? " keep" : " drop"));
          }
        }
      }
    }
  }
  // NaN wins in Max and Min, as numpy's.
  Tensor n = f32_tensor({2, 2}, {1.0f, NAN, 3.0f, 2.0f});
  expect_close(run1("ReduceMax", {n}, attrs_of({{"axes", std::vector<int64_t>{1}}})), {2, 1}, {NAN, 3.0}, 0, 0, "NaN");
  expect_close(run1("ReduceMin", {n}, attrs_of({{"axes", std::vector<int64_t>{1}}})), {2, 1}, {NAN, 2.0}, 0, 0, "NaN");
}

TEST(ArgMax, AxisKeepdimsAndTies) {
  std::mt19937 rng(38);
  for (const Shape& xs : {Shape{7}, Shape{3, 4}, Shape{2, 3, 5}, Shape{4, 1, 300}, Shape{0, 3}}) {
    for (DType dt : {DType::f32, DType::i64}) {
      // Few distinct values, so ties are common.
      Tensor x = random_i64(xs, rng, 0, 3);
      if (dt == DType::f32) {
        Tensor f(DType::f32, xs);
        for (int64_t i = 0; i < x.numel(); ++i) f.data<float>()[i] = static_cast<float>(x.data<int64_t>()[i]) - 1.5f;
        x = f;
      }
      for (int axis = -static_cast<int>(xs.size()); axis < static_cast<int>(xs.size()); ++axis) {
        const size_t ax = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(xs.size()) : axis);
        if (xs[ax] == 0) continue;
        for (bool keep : {true, false})
          for (bool last : {false, true}) {
            Shape out;
            for (size_t d = 0; d < xs.size(); ++d)
              if (d != ax) out.push_back(xs[d]);
              else if (keep) out.push_back(1);
            std::vector<double> best(static_cast<size_t>(ir::numel(out)), -1), bestv(best.size(), -1e300);
            for (int64_t i = 0; i < x.numel(); ++i) {
              std::vector<int64_t> idx = unravel(i, xs), oi;
              for (size_t d = 0; d < xs.size(); ++d)
                if (d != ax) oi.push_back(idx[d]);
                else if (keep) oi.push_back(0);
              const size_t o = static_cast<size_t>(ravel(oi, out));
              const double v = at(x, i);
              if (v > bestv[o] || (last && v == bestv[o])) {
                bestv[o] = v;
                best[o] = static_cast<double>(idx[ax]);
              }
            }
            ir::Attributes a = attrs_of({{"axis", int64_t{axis}}, {"keepdims", int64_t{keep}},
                                         {"select_last_index", int64_t{last}}});
            Tensor y = run1("ArgMax", {x}, a);
            EXPECT_EQ(y.dtype(), DType::i64);
            expect_equal(y, out, best, "ArgMax " + shape_str(xs) + " axis " + std::to_string(axis));
          }
      }
    }
  }
  EXPECT_THROW(run1("ArgMax", {Tensor(DType::f32, {3, 0})}, attrs_of({{"axis", int64_t{1}}})), Error);
}

// CumSum against a double-precision running sum, over ranks, every axis (negative too), and
// exclusive and reverse; i64 exactly, wrapping at the top of its range.
TEST(CumSum, EveryAxisExclusiveAndReverseMatchDoubleLoops) {
  std::mt19937 rng(41);
  for (const Shape& xs : {Shape{9}, Shape{3, 5}, Shape{2, 3, 17}, Shape{4, 1, 300}, Shape{0, 3}, Shape{2, 0}}) {
    for (DType dt : {DType::f32, DType::i64}) {
      const Tensor x = dt == DType::f32 ? random_f32(xs, rng) : random_i64(xs, rng, -1000, 1000);
      for (int axis = -static_cast<int>(xs.size()); axis < static_cast<int>(xs.size()); ++axis) {
        const size_t ax = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(xs.size()) : axis);
        for (bool exclusive : {false, true})
          for (bool reverse : {false, true}) {
            std::vector<double> want(static_cast<size_t>(x.numel()));
            for (int64_t i = 0; i < x.numel(); ++i) {
              const std::vector<int64_t> idx = unravel(i, xs);
              double sum = 0;
              for (int64_t k = 0; k < xs[ax]; ++k) {
                const bool before = reverse ? k > idx[ax] : k < idx[ax];
                if (!before && !(k == idx[ax] && !exclusive)) continue;
                std::vector<int64_t> j = idx;
                j[ax] = k;
                sum += at(x, ravel(j, xs));
              }
              want[static_cast<size_t>(i)] = sum;
            }
            const Tensor y = run1("CumSum", {x}, attrs_of({{"axis", int64_t{axis}}, {"exclusive", int64_t{exclusive}},
                                                          {"reverse", int64_t{reverse}}}));
            const std::string what = "CumSum " + shape_str(xs) + " " + dtype_name(dt) + " axis " +
                                     std::to_string(axis) + (exclusive ? " exclusive" : "") +
                                     (reverse ? " reverse" : "");
            ASSERT_EQ(y.dtype(), dt) << what;
            if (dt == DType::i64) expect_equal(y, xs, want, what);
            else expect_close(y, xs, want, 1e-6, 1e-6, what);
          }
      }
    }
  }
  // i64 wraps, as every i64 sum here does (no undefined behaviour on overflow).
  Tensor big(DType::i64, {2});
  big.data<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  big.data<int64_t>()[1] = 1;
  EXPECT_EQ(run1("CumSum", {big}, {}).data<int64_t>()[1], std::numeric_limits<int64_t>::min());
  EXPECT_THROW(run1("CumSum", {random_f32({3, 4}, rng)}, attrs_of({{"axis", int64_t{2}}})), Error);
}

TEST(NormalizationPrepare, RejectsBadInputs) {
  EXPECT_THROW(prepare_only("Softmax", {{DType::i64, {3}}}, {{DType::i64, {3}}}), Error);
  EXPECT_THROW(prepare_only("Softmax", {{DType::f32, {3}}}, {{DType::f32, {3}}},
                            attrs_of({{"axis", int64_t{2}}})),
               Error);
  EXPECT_THROW(
      prepare_only("LayerNorm", {{DType::f32, {2, 8}}, {DType::f32, {3}}}, {{DType::f32, {2, 8}}}),
      Error);
  EXPECT_THROW(prepare_only("ReduceMean", {{DType::f32, {2, 8}}}, {{DType::f32, {2, 1}}},
                            attrs_of({{"axes", std::vector<int64_t>{5}}})),
               Error);
}

}  // namespace
}  // namespace fusebox::optest
