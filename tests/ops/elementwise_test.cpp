// Element-wise kernels against double-precision reference loops: broadcasting corner cases,
// every unary function over wide ranges and special values, i64 arithmetic, Cast and Where.
#include <cmath>
#include <functional>
#include <limits>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

using BinaryRef = std::function<double(double, double)>;

// Shape pairs covering: same shape, scalars on either side, bias-like trailing broadcast, size-1
// dims on both sides, rank mismatch, odd sizes, empty dims, and one size large enough to thread.
const std::vector<std::pair<Shape, Shape>> kBroadcastCases = {
    {{}, {}},
    {{7}, {}},
    {{}, {7}},
    {{1}, {5}},
    {{3, 4}, {3, 4}},
    {{64, 256}, {256}},
    {{256}, {64, 256}},
    {{5, 1}, {1, 6}},
    {{129, 17}, {129, 1}},
    {{2, 3, 1, 5}, {3, 4, 1}},
    {{17, 1, 129}, {17, 3, 1}},
    {{2, 1, 3}, {4, 1}},
    {{1, 1, 1}, {3}},
    {{0, 3}, {1, 3}},
    {{1}, {0}},
    {{300, 1000}, {1000}},
    {{200, 300}, {200, 300}},
    {{150, 1, 300}, {1, 2, 1}},
    // One short row repeated down the output (a channels-last scale or bias), either side, a row
    // length that divides the kernel's run and one that does not, threads' chunks off the rows.
    {{2, 7, 9, 16}, {1, 1, 1, 16}},
    {{1, 1, 5}, {40, 3, 5}},
    {{1001, 24}, {24}},
    {{3, 64}, {1, 64}},
    {{5000, 48}, {48}},
};

Shape out_shape(const Shape& a, const Shape& b) {
  return ir::broadcast_shapes(a, b);
}

std::vector<double> ref_binary(const Tensor& a, const Tensor& b, const BinaryRef& f) {
  Shape out = out_shape(a.shape(), b.shape());
  std::vector<double> r(static_cast<size_t>(ir::numel(out)));
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i)
    r[i] = f(at(a, bcast_index(a.shape(), out, i)), at(b, bcast_index(b.shape(), out, i)));
  return r;
}

void check_binary_f32(const std::string& op, const BinaryRef& f, float lo_a, float hi_a, float lo_b,
                      float hi_b, double atol = 1e-6, double rtol = 1e-6) {
  std::mt19937 rng(42);
  for (const auto& [sa, sb] : kBroadcastCases) {
    Tensor a = random_f32(sa, rng, lo_a, hi_a), b = random_f32(sb, rng, lo_b, hi_b);
    for (int threads : {1, 2}) {
      Tensor y = run1(op, {a, b}, {}, threads);
      expect_close(
          y, out_shape(sa, sb), ref_binary(a, b, f), atol, rtol,
          op + " " + shape_str(sa) + " " + shape_str(sb) + " threads " + std::to_string(threads));
    }
  }
}

TEST(ElementwiseBinary, AddF32) {
  check_binary_f32("Add", std::plus<double>(), -2, 2, -2, 2);
}
TEST(ElementwiseBinary, SubF32) {
  check_binary_f32("Sub", std::minus<double>(), -2, 2, -2, 2);
}
TEST(ElementwiseBinary, MulF32) {
  check_binary_f32("Mul", std::multiplies<double>(), -2, 2, -2, 2);
}
TEST(ElementwiseBinary, DivF32) {
  // Divisors in [0.5, 2]: away from 0 so float rounding of the inputs does not blow up.
  check_binary_f32("Div", std::divides<double>(), -2, 2, 0.5f, 2);
}
TEST(ElementwiseBinary, PowF32) {
  check_binary_f32(
      "Pow", [](double a, double b) { return std::pow(a, b); }, 0.1f, 3, -2, 2, 1e-6, 2e-6);
}

TEST(ElementwiseBinary, PowConstantExponents) {
  // Exponents 2 and 3 take a multiply fast path; negative bases must work for them.
  std::mt19937 rng(1);
  for (float e : {2.0f, 3.0f, 0.5f, -1.0f}) {
    for (const Shape& s : {Shape{}, Shape{17}, Shape{64, 129}}) {
      Tensor a = random_f32(s, rng, e == 0.5f ? 0.0f : -3.0f, 3.0f);
      Tensor b = f32_tensor({}, {e});
      std::vector<double> want(static_cast<size_t>(a.numel()));
      for (int64_t i = 0; i < a.numel(); ++i) want[i] = std::pow(at(a, i), static_cast<double>(e));
      expect_close(run1("Pow", {a, b}), s, want, 1e-6, 2e-6, "Pow exponent " + std::to_string(e));
    }
  }
}

TEST(ElementwiseBinary, SpecialValuesPropagate) {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = f32_tensor({4}, {1.0f, inf, nan, -inf});
  Tensor b = f32_tensor({4}, {0.0f, 1.0f, 1.0f, inf});
  expect_close(run1("Div", {a, b}), {4}, {INFINITY, INFINITY, NAN, NAN}, 0, 0, "Div");
  expect_close(run1("Add", {a, b}), {4}, {1.0, INFINITY, NAN, NAN}, 0, 0, "Add");
}

TEST(ElementwiseBinary, I64Arithmetic) {
  std::mt19937 rng(7);
  const std::vector<std::pair<std::string, std::function<int64_t(int64_t, int64_t)>>> ops = {
      {"Add", [](int64_t a, int64_t b) { return a + b; }},
      {"Sub", [](int64_t a, int64_t b) { return a - b; }},
      {"Mul", [](int64_t a, int64_t b) { return a * b; }},
      // Reference truncating division computed in double (exact for these magnitudes).
      {"Div",
       [](int64_t a, int64_t b) {
         return static_cast<int64_t>(std::trunc(static_cast<double>(a) / b));
       }},
  };
  for (const auto& [op, f] : ops) {
    for (const auto& [sa, sb] : kBroadcastCases) {
      Tensor a = random_i64(sa, rng, -1000, 1000), b = random_i64(sb, rng, 1, 50);
      // Negative divisors too.
      for (int64_t i = 0; i < b.numel(); i += 2) b.data<int64_t>()[i] = -b.data<int64_t>()[i];
      Shape out = out_shape(sa, sb);
      Tensor y = run1(op, {a, b}, {}, 2);
      ASSERT_EQ(y.dtype(), DType::i64);
      ASSERT_EQ(y.shape(), out);
      int bad = 0;
      for (int64_t i = 0; i < y.numel(); ++i) {
        int64_t va = a.data<int64_t>()[bcast_index(sa, out, i)],
                vb = b.data<int64_t>()[bcast_index(sb, out, i)];
        if (y.data<int64_t>()[i] != f(va, vb) && bad++ < 3)
          ADD_FAILURE() << op << " " << va << ", " << vb << ": got " << y.data<int64_t>()[i];
      }
    }
  }
}

TEST(ElementwiseBinary, I64DivEdgeCasesDoNotTrap) {
  const int64_t mn = std::numeric_limits<int64_t>::min();
  Tensor a = i64_tensor({5}, {7, -7, 7, mn, 5});
  Tensor b = i64_tensor({5}, {2, 2, -2, -1, 0});
  Tensor y = run1("Div", {a, b});
  const std::vector<int64_t> want = {3, -3, -3, mn,
                                     0};  // truncation; INT64_MIN / -1 wraps; x / 0 = 0
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(y.data<int64_t>()[i], want[i]) << i;
}

// ---- unary ---------------------------------------------------------------------------------

struct UnaryCase {
  std::string op;
  ir::Attributes attrs;
  std::function<double(double)> ref;
  float lo, hi;
  double atol, rtol;
};

double gelu_erf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

std::vector<UnaryCase> unary_cases() {
  return {
      {"Relu", {}, [](double x) { return x < 0 ? 0.0 : x; }, -5, 5, 0, 0},
      {"Neg", {}, [](double x) { return -x; }, -5, 5, 0, 0},
      {"Tanh", {}, [](double x) { return std::tanh(x); }, -12, 12, 1e-6, 1e-6},
      {"Sigmoid", {}, sigmoid, -30, 30, 1e-6, 1e-6},
      {"Exp", {}, [](double x) { return std::exp(x); }, -80, 80, 0, 2e-6},
      {"Erf", {}, [](double x) { return std::erf(x); }, -5, 5, 1e-6, 1e-6},
      {"Sqrt", {}, [](double x) { return std::sqrt(x); }, 0, 100, 0, 1e-6},
      {"Gelu", {}, gelu_erf, -8, 8, 1e-6, 1e-6},
      {"Gelu", attrs_of({{"approximate", std::string("none")}}), gelu_erf, -8, 8, 1e-6, 1e-6},
      {"Gelu", attrs_of({{"approximate", std::string("tanh")}}), gelu_tanh, -8, 8, 1e-6, 1e-6},
      {"Abs", {}, [](double x) { return std::fabs(x); }, -5, 5, 0, 0},
      {"HardSwish", {}, [](double x) { return x * std::min(1.0, std::max(0.0, x / 6 + 0.5)) /* NaN and -inf give NaN, as x * 0 */; }, -8, 8, 1e-6, 1e-6},
      {"LeakyRelu", {}, [](double x) { return x >= 0 ? x : 0.01 * x; }, -5, 5, 1e-7, 1e-6},
      {"LeakyRelu", attrs_of({{"alpha", 0.3}}), [](double x) { return x >= 0 ? x : 0.3 * x; }, -5, 5, 1e-7, 1e-6},
      {"Elu", {}, [](double x) { return x >= 0 ? x : std::expm1(x); }, -20, 5, 1e-6, 1e-6},
      {"Elu", attrs_of({{"alpha", 2.5}}), [](double x) { return x >= 0 ? x : 2.5 * std::expm1(x); }, -20, 5, 1e-6, 1e-6},
      {"HardSigmoid", {}, [](double x) { return x != x ? x : std::min(1.0, std::max(0.0, 0.2 * x + 0.5)); }, -5, 5, 1e-7, 1e-6},
      {"HardSigmoid", attrs_of({{"alpha", 0.5}, {"beta", 0.25}}),
       [](double x) { return x != x ? x : std::min(1.0, std::max(0.0, 0.5 * x + 0.25)); }, -5, 5, 1e-7, 1e-6},
      {"Clip", attrs_of({{"min", -1.0}, {"max", 2.0}}), [](double x) { return x != x ? x : std::min(2.0, std::max(-1.0, x)); }, -5, 5, 0, 0},
      {"Clip", attrs_of({{"max", 0.5}}), [](double x) { return x != x ? x : std::min(0.5, x); }, -5, 5, 0, 0},
      {"Clip", attrs_of({{"min", 0.0}}), [](double x) { return x != x ? x : std::max(0.0, x); }, -5, 5, 0, 0},
      {"Clip", {}, [](double x) { return x; }, -5, 5, 0, 0},
  };
}

TEST(ElementwiseUnary, MatchesDoubleReference) {
  std::mt19937 rng(3);
  for (const auto& c : unary_cases()) {
    for (const Shape& s :
         {Shape{}, Shape{1}, Shape{17}, Shape{3, 129}, Shape{0, 5}, Shape{400, 300}}) {
      Tensor x = random_f32(s, rng, c.lo, c.hi);
      std::vector<double> want(static_cast<size_t>(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i) want[i] = c.ref(at(x, i));
      for (int threads : {1, 2})
        expect_close(run1(c.op, {x}, c.attrs, threads), s, want, c.atol, c.rtol,
                     c.op + " " + c.attrs.to_string() + " " + shape_str(s) + " threads " +
                         std::to_string(threads));
    }
  }
}

TEST(ElementwiseUnary, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {0.0f,    -0.0f,  1e-30f, -1e-30f, 1e-4f, 88.5f, 100.0f,
                                 -100.0f, -88.0f, 1e30f,  -1e30f,  inf,   -inf,  nan};
  Tensor x = f32_tensor({static_cast<int64_t>(xs.size())}, xs);
  for (const auto& c : unary_cases()) {
    if (c.op == "Sqrt") continue;  // checked below with its own domain
    std::vector<double> want;
    for (float v : xs) {
      double w = c.ref(v);
      // Gelu(-inf) is -inf * 0 = NaN in the reference formula too, as in PyTorch.
      want.push_back(w);
    }
    // Results that overflow float (exp(100)) are inf in float.
    for (auto& w : want)
      if (std::abs(w) > std::numeric_limits<float>::max()) w = w > 0 ? INFINITY : -INFINITY;
    expect_close(run1(c.op, {x}, c.attrs), x.shape(), want, 1e-6, 2e-6,
                 c.op + " " + c.attrs.to_string());
  }
  Tensor s = f32_tensor({5}, {0.0f, 4.0f, inf, -1.0f, nan});
  expect_close(run1("Sqrt", {s}), {5}, {0.0, 2.0, INFINITY, NAN, NAN}, 0, 0, "Sqrt");
}

TEST(ElementwiseUnary, NegI64) {
  const int64_t mn = std::numeric_limits<int64_t>::min();
  Tensor x = i64_tensor({4}, {3, -5, 0, mn});
  Tensor y = run1("Neg", {x});
  ASSERT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.data<int64_t>()[0], -3);
  EXPECT_EQ(y.data<int64_t>()[1], 5);
  EXPECT_EQ(y.data<int64_t>()[2], 0);
  EXPECT_EQ(y.data<int64_t>()[3], mn);  // wraps instead of overflowing
}

// ---- Cast, Where ---------------------------------------------------------------------------

TEST(ElementwiseCast, F32ToI64TruncatesAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = f32_tensor({8}, {2.7f, -2.7f, 0.5f, -0.5f, 1e30f, -1e30f, nan, 123456.0f});
  Tensor y = run1("Cast", {x}, attrs_of({{"to", std::string("i64")}}));
  ASSERT_EQ(y.dtype(), DType::i64);
  const std::vector<int64_t> want = {
      2, -2,    0, 0, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
      0, 123456};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y.data<int64_t>()[i], want[i]) << i;
}

TEST(ElementwiseCast, I64ToF32AndSameType) {
  std::mt19937 rng(5);
  Tensor x = random_i64({3, 129}, rng, -100000, 100000);
  std::vector<double> want(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) want[i] = static_cast<double>(x.data<int64_t>()[i]);
  expect_close(run1("Cast", {x}, attrs_of({{"to", std::string("f32")}})), x.shape(), want, 0, 0,
               "i64->f32");
  expect_close(run1("Cast", {x}, attrs_of({{"to", std::string("i64")}})), x.shape(), want, 0, 0,
               "i64->i64");
  Tensor f = random_f32({0, 4}, rng);
  expect_close(run1("Cast", {f}, attrs_of({{"to", std::string("f32")}})), f.shape(), {}, 0, 0,
               "empty");
}

TEST(ElementwiseWhere, BroadcastsAllThree) {
  std::mt19937 rng(9);
  const std::vector<std::vector<Shape>> cases = {
      {{3, 4}, {3, 4}, {3, 4}},
      {{3, 1}, {1, 4}, {3, 4}},
      {{}, {5}, {1}},
      {{2, 1, 3}, {4, 1}, {3}},
      {{5}, {}, {}},
      {{0, 2}, {2}, {1}},
      {{200, 300}, {300}, {200, 1}},
  };
  for (DType dt : {DType::f32, DType::i64}) {
    for (const auto& s : cases) {
      Tensor c = random_i64(s[0], rng, 0, 1);
      Tensor a = dt == DType::f32 ? random_f32(s[1], rng) : random_i64(s[1], rng, -50, 50);
      Tensor b = dt == DType::f32 ? random_f32(s[2], rng) : random_i64(s[2], rng, -50, 50);
      Shape out = out_shape(out_shape(s[0], s[1]), s[2]);
      std::vector<double> want(static_cast<size_t>(ir::numel(out)));
      for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i)
        want[i] = at(c, bcast_index(s[0], out, i)) != 0 ? at(a, bcast_index(s[1], out, i))
                                                        : at(b, bcast_index(s[2], out, i));
      for (int threads : {1, 2}) {
        Tensor y = run1("Where", {c, a, b}, {}, threads);
        EXPECT_EQ(y.dtype(), dt);
        expect_equal(y, out, want, "Where " + shape_str(s[0]) + shape_str(s[1]) + shape_str(s[2]));
      }
    }
  }
}

TEST(ElementwiseUnary, I64AbsClipNot) {
  const int64_t mn = std::numeric_limits<int64_t>::min();
  Tensor x = i64_tensor({6}, {3, -5, 0, 7, -128, mn});
  expect_equal(run1("Abs", {x}), {6}, {3, 5, 0, 7, 128, static_cast<double>(mn)}, "Abs i64");
  expect_equal(run1("Clip", {x}, attrs_of({{"min", -10.0}, {"max", 5.0}})), {6}, {3, -5, 0, 5, -10, -10},
               "Clip i64");
  expect_equal(run1("Clip", {x}, attrs_of({{"max", 1.0}})), {6}, {1, -5, 0, 1, -128, static_cast<double>(mn)},
               "Clip i64 max only");
  Tensor b = i64_tensor({4}, {0, 1, 0, 1});
  Tensor y = run1("Not", {b});
  EXPECT_EQ(y.dtype(), DType::i64);
  expect_equal(y, {4}, {1, 0, 1, 0}, "Not");
}

TEST(ElementwiseBinary, MaxMinPReluBroadcast) {
  check_binary_f32("Max", [](double a, double b) { return std::max(a, b); }, -2, 2, -2, 2, 0, 0);
  check_binary_f32("Min", [](double a, double b) { return std::min(a, b); }, -2, 2, -2, 2, 0, 0);
  // PRelu: the slope broadcasts to x (unidirectional); every case where b's shape fits in a's.
  std::mt19937 rng(5);
  for (const auto& [sx, ss] : std::vector<std::pair<Shape, Shape>>{
           {{3, 4}, {3, 4}}, {{2, 3, 5}, {5}}, {{2, 3, 5}, {3, 1}}, {{7}, {}}, {{300, 1000}, {1000}}}) {
    Tensor x = random_f32(sx, rng), slope = random_f32(ss, rng, 0.0f, 1.0f);
    auto want = ref_binary(x, slope, [](double a, double k) { return a >= 0 ? a : k * a; });
    for (int threads : {1, 2})
      expect_close(run1("PRelu", {x, slope}, {}, threads), sx, want, 1e-7, 1e-6, "PRelu " + shape_str(ss));
  }
  // Max / Min carry NaN from either operand (as numpy); i64 compares exactly.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = f32_tensor({3}, {nan, 1.0f, 2.0f}), b = f32_tensor({3}, {1.0f, nan, 3.0f});
  expect_close(run1("Max", {a, b}), {3}, {NAN, NAN, 3.0}, 0, 0, "Max NaN");
  expect_close(run1("Min", {a, b}), {3}, {NAN, NAN, 2.0}, 0, 0, "Min NaN");
  Tensor ia = i64_tensor({3}, {std::numeric_limits<int64_t>::max(), -4, 9}), ib = i64_tensor({1}, {-3});
  expect_equal(run1("Max", {ia, ib}), {3}, {static_cast<double>(std::numeric_limits<int64_t>::max()), -3, 9},
               "Max i64");
  expect_equal(run1("Min", {ia, ib}), {3}, {-3, -4, -3}, "Min i64");
}

TEST(ElementwiseBinary, ComparisonsAndLogicGiveI64ZeroOne) {
  // Small integer values (as f32 and i64), so that equal pairs are common.
  std::mt19937 rng(13);
  const std::vector<std::pair<std::string, BinaryRef>> preds = {
      {"Equal", [](double a, double b) { return a == b ? 1.0 : 0.0; }},
      {"Less", [](double a, double b) { return a < b ? 1.0 : 0.0; }},
      {"Greater", [](double a, double b) { return a > b ? 1.0 : 0.0; }},
      {"And", [](double a, double b) { return a != 0 && b != 0 ? 1.0 : 0.0; }},
      {"Or", [](double a, double b) { return a != 0 || b != 0 ? 1.0 : 0.0; }},
  };
  for (const auto& [op, ref] : preds) {
    const bool logic = op == "And" || op == "Or";
    for (DType dt : {DType::f32, DType::i64}) {
      if (logic && dt == DType::f32) continue;
      for (const auto& [sa, sb] : kBroadcastCases) {
        Tensor ia = random_i64(sa, rng, logic ? 0 : -2, logic ? 1 : 2);
        Tensor ib = random_i64(sb, rng, logic ? 0 : -2, logic ? 1 : 2);
        Tensor a = ia, b = ib;
        if (dt == DType::f32) {
          a = Tensor(DType::f32, sa);
          b = Tensor(DType::f32, sb);
          for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = static_cast<float>(ia.data<int64_t>()[i]);
          for (int64_t i = 0; i < b.numel(); ++i) b.data<float>()[i] = static_cast<float>(ib.data<int64_t>()[i]);
        }
        for (int threads : {1, 2}) {
          Tensor y = run1(op, {a, b}, {}, threads);
          ASSERT_EQ(y.dtype(), DType::i64) << op;
          expect_equal(y, out_shape(sa, sb), ref_binary(a, b, ref),
                       op + " " + ir::dtype_name(dt) + " " + shape_str(sa) + " " + shape_str(sb));
        }
      }
    }
  }
  // NaN compares unequal to everything, itself included.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = f32_tensor({3}, {nan, nan, 1.0f}), b = f32_tensor({3}, {nan, 1.0f, nan});
  for (const char* op : {"Equal", "Less", "Greater"}) expect_equal(run1(op, {a, b}), {3}, {0, 0, 0}, op);
}

TEST(ElementwiseSchema, RejectsBadTypesAndShapes) {
  auto infer = [](const std::string& op, const std::vector<ir::TensorType>& in, const ir::Attributes& a = {}) {
    ir::Node n = make_node(op, in.size(), 1, a);
    return ir::infer_node(n, in);
  };
  EXPECT_THROW(infer("And", {{DType::f32, {3}}, {DType::f32, {3}}}), Error);
  EXPECT_THROW(infer("Not", {{DType::f32, {3}}}), Error);
  EXPECT_THROW(infer("Equal", {{DType::f32, {3}}, {DType::i64, {3}}}), Error);
  EXPECT_THROW(infer("PRelu", {{DType::f32, {3}}, {DType::f32, {2, 3}}}), Error);  // slope larger than x
  EXPECT_THROW(infer("LeakyRelu", {{DType::f32, {3}}}, attrs_of({{"alpha", NAN}})), Error);
  EXPECT_THROW(infer("Clip", {{DType::f32, {3}}}, attrs_of({{"min", NAN}})), Error);
  EXPECT_EQ(infer("Less", {{DType::f32, {2, 1}}, {DType::f32, {3}}})[0].dtype, DType::i64);
  EXPECT_EQ(infer("Less", {{DType::f32, {2, 1}}, {DType::f32, {3}}})[0].shape, (Shape{2, 3}));
}

TEST(ElementwisePrepare, RejectsBadDtypes) {
  EXPECT_THROW(prepare_only("And", {{DType::f32, {3}}, {DType::f32, {3}}}, {{DType::i64, {3}}}), Error);
  EXPECT_THROW(prepare_only("HardSwish", {{DType::i64, {3}}}, {{DType::i64, {3}}}), Error);
  EXPECT_THROW(prepare_only("Elu", {{DType::i64, {3}}}, {{DType::i64, {3}}}), Error);
  // Types given directly to prepare (the schema would reject them earlier).
  EXPECT_THROW(prepare_only("Pow", {{DType::i64, {3}}, {DType::i64, {3}}}, {{DType::i64, {3}}}),
               Error);
  EXPECT_THROW(prepare_only("Add", {{DType::f32, {3}}, {DType::i64, {3}}}, {{DType::f32, {3}}}),
               Error);
  EXPECT_THROW(prepare_only("Tanh", {{DType::i64, {3}}}, {{DType::i64, {3}}}), Error);
  EXPECT_THROW(prepare_only("Where", {{DType::f32, {3}}, {DType::f32, {3}}, {DType::f32, {3}}},
                            {{DType::f32, {3}}}),
               Error);
  EXPECT_THROW(prepare_only("Gelu", {{DType::f32, {3}}}, {{DType::f32, {3}}},
                            attrs_of({{"approximate", std::string("fast")}})),
               Error);
}

// The schema's declared dtypes (op_schema.h: OpSchema::types) are what the CPU kernels take, no
// more and no fewer: for every element-wise op and every assignment of f32 and i64 to its
// inputs, the schema accepts the node exactly when the kernel prepares it.
TEST(ElementwiseSchema, DeclaresTheDtypesItsKernelsTake) {
  int accepted = 0, refused = 0;
  for (const auto& [name, schema] : ir::OpRegistry::instance().items()) {
    if (schema.kind != ir::OpKind::Elementwise && name != "Gelu") continue;
    const ir::Attributes attrs = attrs_of({{"direction", std::string("LEFT")}, {"fmod", int64_t{1}},
                                           {"to", std::string("f32")}});
    const size_t n = static_cast<size_t>(schema.min_inputs);
    for (unsigned mask = 0; mask < (1u << n); ++mask) {
      std::vector<ir::TensorType> in;
      std::vector<DType> dtypes;
      for (size_t i = 0; i < n; ++i) {
        dtypes.push_back((mask >> i) & 1u ? DType::i64 : DType::f32);
        in.push_back({dtypes.back(), {4}});
      }
      const std::string why = ir::type_mismatch(name, schema.types, dtypes);
      ir::Node node = make_node(name, n, 1, attrs);
      std::string combo = name + "(";
      for (DType d : dtypes) combo += std::string(ir::dtype_name(d)) + " ";
      combo += ")";
      if (why.empty()) {
        ++accepted;
        const std::vector<ir::TensorType> out = ir::infer_node(node, in);
        EXPECT_NO_THROW(prepare_only(name, in, out, attrs)) << combo << ": the schema takes it, the kernel not";
      } else {
        ++refused;
        EXPECT_THROW(ir::infer_node(node, in), Error) << combo;
        EXPECT_THROW(prepare_only(name, in, {{dtypes[n > 1 ? 1 : 0], {4}}}, attrs), Error)
            << combo << ": the kernel takes it, the schema not (" << why << ")";
      }
    }
  }
  EXPECT_GT(accepted, 60);
  EXPECT_GT(refused, 60);
}

// The refusal names the node, the input and what the op takes there.
TEST(ElementwiseSchema, ADtypeTheOpDoesNotTakeIsRefusedByName) {
  auto why = [](const std::string& op, const std::vector<ir::TensorType>& in) -> std::string {
    try {
      ir::infer_node(make_node(op, in.size(), 1, {}), in);
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(why("Tanh", {{DType::i64, {3}}}), "node 'test_Tanh' (Tanh): input 0 is i64, but Tanh takes f32 there");
  EXPECT_EQ(why("Add", {{DType::f32, {3}}, {DType::i64, {3}}}),
            "node 'test_Add' (Add): input 1 is i64 and input 0 f32, but Add takes one dtype for both");
  EXPECT_EQ(why("Where", {{DType::f32, {3}}, {DType::f32, {3}}, {DType::f32, {3}}}),
            "node 'test_Where' (Where): input 0 is f32, but Where takes i64 there");
  // The last letter repeats: Concat's third input shares the first's dtype.
  EXPECT_EQ(why("Concat", {{DType::i64, {3}}, {DType::i64, {3}}, {DType::f32, {3}}}),
            "node 'test_Concat' (Concat): input 2 is f32 and input 0 i64, but Concat takes one dtype for both");
  EXPECT_EQ(why("Gather", {{DType::f32, {3}}, {DType::f32, {1}}}),
            "node 'test_Gather' (Gather): input 1 is f32, but Gather takes i64 there");
  EXPECT_EQ(why("Add", {{DType::i64, {3}}, {DType::i64, {3}}}), "accepted");
}

}  // namespace
}  // namespace fusebox::optest
