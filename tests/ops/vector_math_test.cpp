// The vector math of every Isa this CPU runs (vec_math-inl.h: exp, Gelu in both forms, tanh,
// sigmoid, ReLU, reached through exp_span / gemm_act_span, the entry points the kernels use)
// against double-precision std:: references over a dense sweep, against the scalar definitions
// of math.h (same polynomials: a few ulp apart, see close_ulps), and on the edge cases: NaN, +-inf, +-0,
// the exp cut-offs (ln FLT_MIN, overflow at 89), huge arguments. Spans of odd lengths exercise
// the masked tails.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "ops/cpu/isa.h"
#include "ops/cpu/math.h"
#include "ops/cpu/vector_math.h"

namespace fusebox::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using SpanFn = std::function<void(const float*, float*, int64_t)>;

struct Fn {
  const char* name;
  GemmAct act;                              // kNone: exp
  float (*scalar)(float);                   // math.h
  std::function<double(double)> reference;  // double precision
  double lo, hi;                            // sweep
  double rel, abs;                          // tolerance against the reference: rel |want| + abs
};

std::vector<Fn> functions() {
  const double pi = 3.14159265358979323846;
  return {
      {"exp", GemmAct::kNone, exp_f32, [](double x) { return std::exp(x); }, -87.0, 88.7, 3e-7,
       0},
      {"gelu", GemmAct::kGelu, gelu_erf_f32,
       [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }, -10, 10, 1e-6,
       1e-6},
      {"gelu_tanh", GemmAct::kGeluTanh, gelu_tanh_f32,
       [pi](double x) {
         return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
       },
       // From -14: the vector forms' e^-|z| underflows gradually over x in [-12, -9.4].
       -14, 10, 1e-6, 1e-6},
      {"tanh", GemmAct::kTanh, tanh_f32, [](double x) { return std::tanh(x); }, -12, 12, 1e-6,
       0},
      {"sigmoid", GemmAct::kSigmoid, sigmoid_f32,
       [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -40, 40, 1e-6, 0},
      {"relu", GemmAct::kRelu, relu_f32, [](double x) { return x < 0 ? 0.0 : x; }, -5, 5, 0, 0},
  };
}

void apply(Isa isa, const Fn& f, const std::vector<float>& x, std::vector<float>& y) {
  y.assign(x.size(), kNaN);
  if (f.act == GemmAct::kNone)
    exp_span(isa, x.data(), y.data(), static_cast<int64_t>(x.size()));
  else
    gemm_act_span(isa, f.act, x.data(), y.data(), static_cast<int64_t>(x.size()));
}

// Two floats agree when both are NaN, or equal, or within `ulps` units in the last place, or
// 1e-4 apart relatively: where a function's value is tiny next to its argument (Gelu far left:
// exp of a large argument), the few-ulp difference of FMA-contracted polynomials is amplified.
bool close_ulps(float a, float b, int ulps) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;
  if (std::isinf(a) || std::isinf(b)) return false;
  const double scale = std::max(std::abs(a), std::abs(b));
  const double ulp = std::max(std::ldexp(1.0, std::ilogb(scale) - 23),
                              static_cast<double>(std::numeric_limits<float>::min()));
  const double d = std::abs(static_cast<double>(a) - b);
  return d <= ulps * ulp || d <= 1e-4 * std::abs(static_cast<double>(b));
}

class VectorMathTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!cpu_runs(GetParam())) GTEST_SKIP() << "this CPU does not run " << isa_name(GetParam());
  }
};

TEST_P(VectorMathTest, SweepMatchesReferenceAndScalar) {
  const Isa isa = GetParam();
  for (const Fn& f : functions()) {
    SCOPED_TRACE(f.name);
    const int n = 200003;  // odd: the last vector is masked
    std::vector<float> x(n), y;
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(f.lo + (f.hi - f.lo) * i / (n - 1));
    apply(isa, f, x, y);
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      const double want = f.reference(x[i]);
      const double tol = f.rel * std::abs(want) + f.abs;
      if (!(std::abs(y[i] - want) <= tol) && bad++ < 5)
        ADD_FAILURE() << f.name << "(" << x[i] << ") = " << y[i] << ", want " << want;
      const float scalar = f.scalar(x[i]);
      if (!close_ulps(y[i], scalar, 4) && bad++ < 5)
        ADD_FAILURE() << f.name << "(" << x[i] << ") = " << y[i] << ", scalar " << scalar;
    }
  }
}

TEST_P(VectorMathTest, EdgeCasesAsScalar) {
  const Isa isa = GetParam();
  const std::vector<float> x = {kNaN,     -kNaN,   kInf,      -kInf,         0.0f,   -0.0f,
                                1e-30f,   -1e-30f, 88.72f,    89.0f,         1000.0f, -1000.0f,
                                -87.33f,  -87.34f, -87.4f,    -100.0f,       0.625f, -0.625f,
                                0.62499f, 1e30f,   -1e30f,    3.4e38f,       -3.4e38f, 4.0f,
                                -4.0f,    5.657f,  -5.657f,   1e-45f /* denormal */,
                                // Gelu (tanh form) far left: its tail x e^-|z| underflowing
                                -9.4f,    -9.6f,   -9.8f,     -10.5f,        -11.0f, -12.5f,
                                -20.0f,   -1e5f};
  for (const Fn& f : functions()) {
    SCOPED_TRACE(f.name);
    std::vector<float> y;
    apply(isa, f, x, y);
    for (size_t i = 0; i < x.size(); ++i) {
      const float scalar = f.scalar(x[i]);
      EXPECT_TRUE(close_ulps(y[i], scalar, 4))
          << f.name << "(" << x[i] << ") = " << y[i] << ", scalar " << scalar;
    }
  }
  // The properties the kernels rely on, spelled out.
  std::vector<float> y;
  const Fn exp_fn = functions()[0];
  apply(isa, exp_fn, {kNaN, kInf, -kInf, 89.0f, -1000.0f, -87.4f, 0.0f, 88.72f}, y);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], kInf);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_EQ(y[3], kInf);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_EQ(y[5], 0.0f);  // below ln(FLT_MIN): 0, no denormals
  EXPECT_EQ(y[6], 1.0f);
  EXPECT_GT(y[7], 3.3e38f);
  EXPECT_FALSE(std::isinf(y[7]));
  // Gelu, tanh form: exactly -0 far left (no tail of t below FLT_MIN leaks into x t), NaN for
  // -inf (-inf * 0) and NaN, +inf for +inf, as gelu_tanh_f32.
  const Fn gelu_tanh_fn = functions()[2];
  apply(isa, gelu_tanh_fn, {-1000.0f, -1e30f, -3.4e38f, -kInf, kInf, kNaN, 0.0f, -30.0f}, y);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(y[i], 0.0f) << i;
    EXPECT_TRUE(std::signbit(y[i])) << i;
  }
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], kInf);
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_EQ(y[6], 0.0f);
  EXPECT_LE(std::abs(y[7]), 1e-37f);
  const Fn relu_fn = functions()[5];
  apply(isa, relu_fn, {kNaN, -1.0f, 2.0f, -kInf}, y);
  EXPECT_TRUE(std::isnan(y[0]));  // max(x, 0) would give 0
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 2.0f);
  EXPECT_EQ(y[3], 0.0f);
}

// Every length up to a few vectors, in place, so every tail mask is used and nothing past n is
// written.
TEST_P(VectorMathTest, TailsAndInPlace) {
  const Isa isa = GetParam();
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> buf(static_cast<size_t>(n) + 8, 123.0f);
    for (int64_t i = 0; i < n; ++i) buf[i] = 0.1f * static_cast<float>(i) - 2.0f;
    const std::vector<float> x(buf.begin(), buf.begin() + n);
    gemm_act_span(isa, GemmAct::kTanh, buf.data(), buf.data(), n);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(buf[i], std::tanh(static_cast<double>(x[i])), 1e-6) << n << " " << i;
    for (size_t i = static_cast<size_t>(n); i < buf.size(); ++i) EXPECT_EQ(buf[i], 123.0f);
    exp_span(isa, buf.data(), buf.data(), n);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(buf[i], std::exp(std::tanh(static_cast<double>(x[i]))), 1e-5) << n << " " << i;
    for (size_t i = static_cast<size_t>(n); i < buf.size(); ++i) EXPECT_EQ(buf[i], 123.0f);
  }
}

// Clip, HardSigmoid and HardSwish against double-precision definitions with ONNX's comparisons
// (a NaN compares false: Clip keeps it, HardSigmoid's clamp passes it on), every length up to a
// few vectors with NaN and infinities among the values, nothing past n written.
TEST_P(VectorMathTest, ClampingActivationsMatchTheirDefinitions) {
  const Isa isa = GetParam();
  const auto clamp = [](double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); };
  const struct {
    ClampAct act;
    float a, b;
    std::function<double(double)> reference;
  } cases[] = {
      {ClampAct::kClip, -0.5f, 1.25f, [&](double x) { return clamp(x, -0.5, 1.25); }},
      {ClampAct::kHardSigmoid, 0.2f, 0.5f, [&](double x) { return clamp(0.2 * x + 0.5, 0, 1); }},
      {ClampAct::kHardSwish, 1.0f / 6.0f, 0.5f, [&](double x) { return x * clamp(x / 6 + 0.5, 0, 1); }},
  };
  for (const auto& c : cases)
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<float> buf(static_cast<size_t>(n) + 8, 123.0f);
      for (int64_t i = 0; i < n; ++i) buf[i] = 0.37f * static_cast<float>(i) - 7.0f;
      if (n > 3) buf[3] = kNaN;
      if (n > 17) buf[17] = kInf;
      if (n > 30) buf[30] = -kInf;
      const std::vector<float> x(buf.begin(), buf.begin() + n);
      clamp_act_span(isa, c.act, c.a, c.b, buf.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double want = c.reference(static_cast<double>(x[i]));
        if (std::isnan(want) || std::isinf(want))
          EXPECT_TRUE(std::isnan(want) ? std::isnan(buf[i]) : buf[i] == want)
              << static_cast<int>(c.act) << " n " << n << " x " << x[i] << " got " << buf[i];
        else
          EXPECT_NEAR(buf[i], want, 1e-6) << static_cast<int>(c.act) << " n " << n << " x " << x[i];
      }
      for (size_t i = static_cast<size_t>(n); i < buf.size(); ++i) EXPECT_EQ(buf[i], 123.0f);
    }
}

INSTANTIATE_TEST_SUITE_P(Isas, VectorMathTest,
                         ::testing::Values(Isa::kAvx512, Isa::kAvx2, Isa::kPortable),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace fusebox::cpu
