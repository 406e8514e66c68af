// Accuracy of the vectorizable float approximations in ops/cpu/math.h against the double
// precision C library over dense grids: these bound the error of every kernel that uses them.
#include "ops/cpu/math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace fusebox::cpu {
namespace {

struct Err {
  double abs = 0, rel = 0;
};

// Max errors of f against ref over n points in [lo, hi] (inputs rounded to float first).
Err max_error(const std::function<float(float)>& f, const std::function<double(double)>& ref,
              double lo, double hi, int n = 200001) {
  Err e;
  for (int i = 0; i < n; ++i) {
    const float x = static_cast<float>(lo + (hi - lo) * i / (n - 1));
    const double want = ref(x), got = f(x);
    const double d = std::abs(got - want);
    e.abs = std::max(e.abs, d);
    if (std::abs(want) > 1e-30) e.rel = std::max(e.rel, d / std::abs(want));
  }
  return e;
}

TEST(CpuMath, ExpRelativeError) {
  Err e = max_error(
      exp_f32, [](double x) { return std::exp(x); }, -87.0, 88.7);
  EXPECT_LT(e.rel, 3e-7);
}

TEST(CpuMath, ExpLimits) {
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_TRUE(std::isinf(exp_f32(89.0f)));
  EXPECT_TRUE(std::isinf(exp_f32(1000.0f)));
  EXPECT_EQ(exp_f32(-1000.0f), 0.0f);
  EXPECT_GT(exp_f32(88.72f), 3.3e38f);  // just below FLT_MAX, not inf
  EXPECT_FALSE(std::isinf(exp_f32(88.72f)));
  EXPECT_TRUE(std::isnan(exp_f32(NAN)));
}

TEST(CpuMath, ErfAbsoluteAndSmallArgumentError) {
  Err e = max_error(
      erf_f32, [](double x) { return std::erf(x); }, -6, 6);
  EXPECT_LT(e.abs, 5e-7);  // a few float ulps near |erf| = 1
  Err small = max_error(
      erf_f32, [](double x) { return std::erf(x); }, -1e-3, 1e-3);
  EXPECT_LT(small.rel, 1e-6);
  EXPECT_EQ(erf_f32(10.0f), 1.0f);
  EXPECT_EQ(erf_f32(-10.0f), -1.0f);
}

TEST(CpuMath, TanhError) {
  Err e = max_error(
      tanh_f32, [](double x) { return std::tanh(x); }, -12, 12);
  EXPECT_LT(e.abs, 3e-7);
  EXPECT_LT(e.rel, 1e-6);
  EXPECT_EQ(tanh_f32(INFINITY), 1.0f);
  EXPECT_EQ(tanh_f32(-INFINITY), -1.0f);
}

TEST(CpuMath, SigmoidAndGeluError) {
  Err s = max_error(
      sigmoid_f32, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -40, 40);
  EXPECT_LT(s.rel, 1e-6);
  Err g = max_error(
      gelu_erf_f32, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }, -10,
      10);
  EXPECT_LT(g.abs, 1e-6);
  Err t = max_error(
      gelu_tanh_f32,
      [](double x) {
        return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
      },
      -10, 10);
  EXPECT_LT(t.abs, 1e-6);
}

}  // namespace
}  // namespace fusebox::cpu
