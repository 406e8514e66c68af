// The ops added for the ONNX conformance count (issue 25) against double-precision references
// written here: unary math and activations, Mod's two sign rules, the new comparisons and Xor,
// LogSoftmax (every ISA level this CPU runs), ArgMin, Trilu and GatherElements (including its
// out-of-range error), ReduceProd, Hardmax and BitShift.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

struct UnaryCase {
  std::string op;
  ir::Attributes attrs;
  std::function<double(double)> ref;
  float lo, hi;
  double atol, rtol;
};

std::vector<UnaryCase> unary_cases() {
  const double selu_a = 1.67326319217681884765625, selu_g = 1.05070102214813232421875;
  return {
      {"Reciprocal", {}, [](double x) { return 1.0 / x; }, 0.1f, 5, 0, 1e-6},
      {"Floor", {}, [](double x) { return std::floor(x); }, -5, 5, 0, 0},
      {"Ceil", {}, [](double x) { return std::ceil(x); }, -5, 5, 0, 0},
      {"Round", {}, [](double x) { return x - std::floor(x) == 0.5 ? 2 * std::round(x / 2) : std::round(x); }, -5, 5, 0, 0},
      {"Sign", {}, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }, -2, 2, 0, 0},
      {"Log", {}, [](double x) { return std::log(x); }, 0.01f, 100, 1e-6, 1e-6},
      {"Sin", {}, [](double x) { return std::sin(x); }, -6, 6, 1e-6, 1e-6},
      {"Cos", {}, [](double x) { return std::cos(x); }, -6, 6, 1e-6, 1e-6},
      {"Tan", {}, [](double x) { return std::tan(x); }, -1.2f, 1.2f, 1e-6, 1e-6},
      {"Asin", {}, [](double x) { return std::asin(x); }, -1, 1, 1e-6, 1e-6},
      {"Acos", {}, [](double x) { return std::acos(x); }, -1, 1, 1e-6, 1e-6},
      {"Atan", {}, [](double x) { return std::atan(x); }, -10, 10, 1e-6, 1e-6},
      {"Sinh", {}, [](double x) { return std::sinh(x); }, -5, 5, 1e-6, 1e-6},
      {"Cosh", {}, [](double x) { return std::cosh(x); }, -5, 5, 1e-6, 1e-6},
      {"Asinh", {}, [](double x) { return std::asinh(x); }, -10, 10, 1e-6, 1e-6},
      {"Acosh", {}, [](double x) { return std::acosh(x); }, 1, 10, 1e-6, 1e-6},
      {"Atanh", {}, [](double x) { return std::atanh(x); }, -0.99f, 0.99f, 1e-6, 1e-6},
      {"Softplus", {}, [](double x) { return std::log1p(std::exp(x)); }, -30, 30, 1e-6, 1e-6},
      {"Softsign", {}, [](double x) { return x / (1 + std::abs(x)); }, -10, 10, 1e-7, 1e-6},
      {"Selu", {}, [=](double x) { return selu_g * (x > 0 ? x : selu_a * std::expm1(x)); }, -10, 5, 1e-6, 1e-6},
      {"Selu", attrs_of({{"alpha", 2.0}, {"gamma", 3.0}}),
       [](double x) { return 3.0 * (x > 0 ? x : 2.0 * std::expm1(x)); }, -10, 5, 1e-6, 1e-6},
      {"Celu", {}, [](double x) { return std::max(0.0, x) + std::min(0.0, std::expm1(x)); }, -10, 5, 1e-6, 1e-6},
      {"Celu", attrs_of({{"alpha", 2.0}}),
       [](double x) { return std::max(0.0, x) + std::min(0.0, 2.0 * std::expm1(x / 2.0)); }, -10, 5, 1e-6, 1e-6},
      {"ThresholdedRelu", {}, [](double x) { return x > 1.0 ? x : 0.0; }, -3, 3, 0, 0},
      {"ThresholdedRelu", attrs_of({{"alpha", -0.5}}), [](double x) { return x > -0.5 ? x : 0.0; }, -3, 3, 0, 0},
      {"Shrink", {}, [](double x) { return x < -0.5 ? x : (x > 0.5 ? x : 0.0); }, -3, 3, 0, 0},
      {"Shrink", attrs_of({{"bias", 1.5}, {"lambd", 1.0}}),
       [](double x) { return x < -1.0 ? x + 1.5 : (x > 1.0 ? x - 1.5 : 0.0); }, -3, 3, 1e-7, 1e-6},
  };
}

TEST(ConformanceOps, UnaryMatchDoubleReference) {
  std::mt19937 rng(25);
  for (const auto& c : unary_cases()) {
    for (const Shape& s : {Shape{}, Shape{17}, Shape{3, 129}, Shape{0, 5}, Shape{300, 200}}) {
      Tensor x = random_f32(s, rng, c.lo, c.hi);
      std::vector<double> want(static_cast<size_t>(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i) want[i] = c.ref(at(x, i));
      for (int threads : {1, 2})
        expect_close(run1(c.op, {x}, c.attrs, threads), s, want, c.atol, c.rtol,
                     c.op + " " + c.attrs.to_string() + " " + shape_str(s));
    }
  }
}

TEST(ConformanceOps, UnarySpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = f32_tensor({8}, {0.5f, 1.5f, 2.5f, -2.5f, -0.0f, inf, -inf, nan});
  // Round halves go to the even neighbour; Sign keeps 0 and NaN.
  expect_close(run1("Round", {x}), {8}, {0, 2, 2, -2, 0, INFINITY, -INFINITY, NAN}, 0, 0, "Round");
  expect_close(run1("Sign", {x}), {8}, {1, 1, 1, -1, 0, 1, -1, NAN}, 0, 0, "Sign");
  expect_close(run1("Reciprocal", {x}), {8}, {2, 1 / 1.5, 0.4, -0.4, -INFINITY, 0, 0, NAN}, 0, 1e-7, "Reciprocal");
  expect_close(run1("Softplus", {x}), {8},
               {std::log1p(std::exp(0.5)), std::log1p(std::exp(1.5)), std::log1p(std::exp(2.5)),
                std::log1p(std::exp(-2.5)), std::log(2.0), INFINITY, 0, NAN},
               1e-7, 1e-6, "Softplus");
  Tensor isnan = run1("IsNaN", {x});
  Tensor isinf = run1("IsInf", {x});
  Tensor pos = run1("IsInf", {x}, attrs_of({{"detect_negative", int64_t{0}}}));
  Tensor neg = run1("IsInf", {x}, attrs_of({{"detect_positive", int64_t{0}}}));
  ASSERT_EQ(isnan.dtype(), DType::i64);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(isnan.data<int64_t>()[i], i == 7 ? 1 : 0) << i;
    EXPECT_EQ(isinf.data<int64_t>()[i], (i == 5 || i == 6) ? 1 : 0) << i;
    EXPECT_EQ(pos.data<int64_t>()[i], i == 5 ? 1 : 0) << i;
    EXPECT_EQ(neg.data<int64_t>()[i], i == 6 ? 1 : 0) << i;
  }
  Tensor s = run1("Sign", {i64_tensor({4}, {-7, 0, 3, std::numeric_limits<int64_t>::min()})});
  EXPECT_EQ(s.data<int64_t>()[0], -1);
  EXPECT_EQ(s.data<int64_t>()[1], 0);
  EXPECT_EQ(s.data<int64_t>()[2], 1);
  EXPECT_EQ(s.data<int64_t>()[3], -1);
}

// ONNX's Mod examples worked by hand: fmod = 0 takes the divisor's sign (Python), fmod = 1 the
// dividend's (C). Dividing by 0 gives 0 for integers instead of trapping, as does INT64_MIN % -1.
TEST(ConformanceOps, ModSignRules) {
  Tensor a = i64_tensor({6}, {-4, 7, 5, 4, -7, 8});
  Tensor b = i64_tensor({6}, {2, -3, 8, -2, 3, 5});
  Tensor py = run1("Mod", {a, b}, attrs_of({{"fmod", int64_t{0}}}));
  Tensor c = run1("Mod", {a, b}, attrs_of({{"fmod", int64_t{1}}}));
  const std::vector<int64_t> want_py = {0, -2, 5, 0, 2, 3}, want_c = {0, 1, 5, 0, -1, 3};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(py.data<int64_t>()[i], want_py[i]) << i;
    EXPECT_EQ(c.data<int64_t>()[i], want_c[i]) << i;
  }
  const int64_t mn = std::numeric_limits<int64_t>::min();
  Tensor edge = run1("Mod", {i64_tensor({3}, {5, mn, -9}), i64_tensor({3}, {0, -1, 4})}, attrs_of({{"fmod", int64_t{0}}}));
  EXPECT_EQ(edge.data<int64_t>()[0], 0);
  EXPECT_EQ(edge.data<int64_t>()[1], 0);
  EXPECT_EQ(edge.data<int64_t>()[2], 3);
  std::mt19937 rng(7);
  Tensor x = random_f32({5, 33}, rng, -10, 10), y = random_f32({33}, rng, 0.5f, 3);
  std::vector<double> want(165);
  for (int64_t i = 0; i < 165; ++i) want[i] = std::fmod(at(x, i), at(y, i % 33));
  expect_close(run1("Mod", {x, y}, attrs_of({{"fmod", int64_t{1}}})), {5, 33}, want, 1e-6, 1e-6, "Mod f32");
  EXPECT_THROW(run1("Mod", {x, y}, attrs_of({{"fmod", int64_t{0}}})), Error);  // floats need fmod 1
}

TEST(ConformanceOps, ComparisonsAndXorBroadcast) {
  Tensor a = f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32_tensor({3}, {2, 2, 7});
  Tensor ge = run1("GreaterOrEqual", {a, b}), le = run1("LessOrEqual", {a, b});
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(ge.data<int64_t>()[i], at(a, i) >= at(b, i % 3) ? 1 : 0) << i;
    EXPECT_EQ(le.data<int64_t>()[i], at(a, i) <= at(b, i % 3) ? 1 : 0) << i;
  }
  Tensor x = i64_tensor({2, 2}, {0, 1, 0, 1}), y = i64_tensor({2, 1}, {0, 1});
  Tensor z = run1("Xor", {x, y});
  const std::vector<int64_t> want = {0, 1, 1, 0};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(z.data<int64_t>()[i], want[i]) << i;
}

TEST(ConformanceOps, LogSoftmaxEveryAxisAndIsa) {
  std::mt19937 rng(11);
  const Shape s = {3, 37, 300};
  Tensor x = random_f32(s, rng, -20, 20);
  for (cpu::Isa isa : runnable_isas()) {
    ScopedIsa scoped(isa);
    for (int64_t axis : {0, 1, 2, -1}) {
      const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < a; ++d) outer *= s[d];
      for (int d = a + 1; d < 3; ++d) inner *= s[d];
      const int64_t n = s[a];
      std::vector<double> want(static_cast<size_t>(x.numel()));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          double m = -INFINITY, sum = 0;
          for (int64_t k = 0; k < n; ++k) m = std::max(m, at(x, (o * n + k) * inner + i));
          for (int64_t k = 0; k < n; ++k) sum += std::exp(at(x, (o * n + k) * inner + i) - m);
          for (int64_t k = 0; k < n; ++k) {
            const int64_t j = (o * n + k) * inner + i;
            want[j] = at(x, j) - m - std::log(sum);
          }
        }
      for (int threads : {1, 2})
        expect_close(run1("LogSoftmax", {x}, attrs_of({{"axis", axis}}), threads), s, want, 1e-5, 1e-5,
                     "LogSoftmax axis " + std::to_string(axis) + " isa " + cpu::isa_name(isa));
    }
  }
}

TEST(ConformanceOps, ArgMinFirstOrLastAndNaN) {
  Tensor x = f32_tensor({2, 4}, {3, 1, 1, 2, 5, NAN, -1, NAN});
  Tensor first = run1("ArgMin", {x}, attrs_of({{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}));
  Tensor last = run1("ArgMin", {x}, attrs_of({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}));
  ASSERT_EQ(first.shape(), (Shape{2}));
  ASSERT_EQ(last.shape(), (Shape{2, 1}));
  EXPECT_EQ(first.data<int64_t>()[0], 1);
  EXPECT_EQ(last.data<int64_t>()[0], 2);
  EXPECT_EQ(first.data<int64_t>()[1], 1);  // NaN counts as the minimum, as numpy's argmin
  std::mt19937 rng(4);
  Tensor r = random_i64({5, 7, 3}, rng, -3, 3);
  Tensor y = run1("ArgMin", {r}, attrs_of({{"axis", int64_t{1}}}));
  for (int64_t o = 0; o < 5; ++o)
    for (int64_t i = 0; i < 3; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < 7; ++k)
        if (at(r, (o * 7 + k) * 3 + i) < at(r, (o * 7 + best) * 3 + i)) best = k;
      EXPECT_EQ(y.data<int64_t>()[o * 3 + i], best) << o << " " << i;
    }
}

TEST(ConformanceOps, TriluUpperAndLowerForEveryK) {
  std::mt19937 rng(9);
  for (DType dt : {DType::f32, DType::i64}) {
    Tensor x = dt == DType::f32 ? random_f32({2, 4, 6}, rng) : random_i64({2, 4, 6}, rng, -9, 9);
    for (int64_t upper : {0, 1})
      for (int64_t k : {-7, -2, -1, 0, 1, 3, 6}) {
        Tensor y = run1("Trilu", {x}, attrs_of({{"upper", upper}, {"k", k}}));
        std::vector<double> want(48);
        for (int64_t u = 0; u < 48; ++u) {
          const int64_t i = (u / 6) % 4, j = u % 6;
          const bool keep = upper ? j - i >= k : j - i <= k;
          want[u] = keep ? at(x, u) : 0.0;
        }
        expect_close(y, {2, 4, 6}, want, 0, 0, "Trilu upper " + std::to_string(upper) + " k " + std::to_string(k));
      }
  }
}

TEST(ConformanceOps, GatherElementsNegativeIndicesAndErrors) {
  std::mt19937 rng(13);
  Tensor x = random_f32({3, 4, 5}, rng);
  for (int64_t axis : {0, 1, 2, -1}) {
    const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
    const Shape is = {3, 2, 5};
    const int64_t dim = x.shape()[a];
    Tensor idx = random_i64(is, rng, -dim, dim - 1);
    Tensor y = run1("GatherElements", {x, idx}, attrs_of({{"axis", axis}}));
    std::vector<double> want(30);
    for (int64_t u = 0; u < 30; ++u) {
      int64_t c[3] = {u / 10, (u / 5) % 2, u % 5};
      int64_t v = idx.data<int64_t>()[u];
      c[a] = v < 0 ? v + dim : v;
      want[u] = at(x, (c[0] * 4 + c[1]) * 5 + c[2]);
    }
    expect_close(y, is, want, 0, 0, "GatherElements axis " + std::to_string(axis));
  }
  Tensor bad = i64_tensor({1, 1, 1}, {4});
  try {
    run1("GatherElements", {x, bad}, attrs_of({{"axis", int64_t{1}}}));
    ADD_FAILURE() << "an out-of-range index ran";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("test_GatherElements"), std::string::npos) << m;
    EXPECT_NE(m.find("index 4, out of range for axis 1 of size 4"), std::string::npos) << m;
  }
  EXPECT_THROW(run1("GatherElements", {x, i64_tensor({3}, {0, 1, 2})}), Error);  // rank differs
}

TEST(ConformanceOps, ReduceProdOverAxes) {
  std::mt19937 rng(21);
  Tensor x = random_f32({3, 4, 5}, rng, 0.5f, 1.5f);
  for (int64_t axis : {0, 1, 2}) {
    Tensor y = run1("ReduceProd", {x}, attrs_of({{"axes", std::vector<int64_t>{axis}}, {"keepdims", int64_t{0}}}));
    const int64_t dims[3] = {3, 4, 5};
    std::vector<double> want;
    Shape out;
    for (int d = 0; d < 3; ++d)
      if (d != axis) out.push_back(dims[d]);
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b) {
        double p = 1;
        for (int64_t k = 0; k < dims[axis]; ++k) {
          int64_t c[3];
          int o = 0;
          for (int d = 0; d < 3; ++d) c[d] = d == axis ? k : (o++ == 0 ? a : b);
          p *= at(x, (c[0] * 4 + c[1]) * 5 + c[2]);
        }
        want.push_back(p);
      }
    expect_close(y, out, want, 1e-6, 1e-6, "ReduceProd axis " + std::to_string(axis));
  }
  Tensor i = run1("ReduceProd", {i64_tensor({2, 3}, {1, -2, 3, 4, 5, -6})}, attrs_of({{"axes", std::vector<int64_t>{1}}}));
  EXPECT_EQ(i.data<int64_t>()[0], -6);
  EXPECT_EQ(i.data<int64_t>()[1], -120);
}

TEST(ConformanceOps, HardmaxMarksTheFirstMaximum) {
  Tensor x = f32_tensor({2, 3}, {1, 3, 3, 2, -1, 0});
  expect_close(run1("Hardmax", {x}, attrs_of({{"axis", int64_t{-1}}})), {2, 3}, {0, 1, 0, 1, 0, 0}, 0, 0, "axis -1");
  expect_close(run1("Hardmax", {x}, attrs_of({{"axis", int64_t{0}}})), {2, 3}, {0, 1, 1, 1, 0, 0}, 0, 0, "axis 0");
  std::mt19937 rng(17);
  Tensor r = random_f32({4, 6, 5}, rng);
  Tensor y = run1("Hardmax", {r}, attrs_of({{"axis", int64_t{1}}}), 2);
  std::vector<double> want(120, 0.0);
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t i = 0; i < 5; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < 6; ++k)
        if (at(r, (o * 6 + k) * 5 + i) > at(r, (o * 6 + best) * 5 + i)) best = k;
      want[(o * 6 + best) * 5 + i] = 1.0;
    }
  expect_close(y, {4, 6, 5}, want, 0, 0, "axis 1");
}

TEST(ConformanceOps, BitShiftBothWaysAndWideShifts) {
  Tensor a = i64_tensor({5}, {16, 4, 1, 255, 1});
  Tensor b = i64_tensor({5}, {1, 2, 3, 4, 64});
  Tensor l = run1("BitShift", {a, b}, attrs_of({{"direction", std::string("LEFT")}}));
  Tensor r = run1("BitShift", {a, b}, attrs_of({{"direction", std::string("RIGHT")}}));
  const std::vector<int64_t> want_l = {32, 16, 8, 4080, 0}, want_r = {8, 1, 0, 15, 0};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(l.data<int64_t>()[i], want_l[i]) << i;
    EXPECT_EQ(r.data<int64_t>()[i], want_r[i]) << i;
  }
  EXPECT_THROW(run1("BitShift", {a, b}, attrs_of({{"direction", std::string("UP")}})), Error);
}

}  // namespace
}  // namespace fusebox::optest
