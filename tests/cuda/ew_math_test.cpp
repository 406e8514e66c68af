// The CUDA element-wise math (ops/cuda/ew_math.cuh), compiled for the host, against the CPU's
// definitions (ops/cpu/ew_ops.h, ops/cpu/math.h): the same formulas and edge cases (Relu keeps
// NaN, Exp flushes below FLT_MIN to 0, the Gelu forms, i64 wrap-around and division without
// traps, saturating f32 -> i64). On the host the transcendental calls are the C library's, not
// CUDA's, so this checks the formulas; cuda_kernels_test.cpp checks the device's (needs a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/ew_ops.h"
#include "ops/cpu/math.h"
#include "ops/cuda/ew_math.cuh"

namespace fc = fusebox::cuda;
namespace fp = fusebox::cpu;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> samples() {
  std::vector<float> v = {0.0f, -0.0f, kNaN, kInf, -kInf, -90.0f, -87.4f, -87.3f, 88.0f, 1e-30f, -1e30f, 1e30f,
                          0.624f, 0.626f, -0.626f, 20.0f, -20.0f, 3.0f, -3.0f};
  for (float x = -8.0f; x <= 8.0f; x += 0.0625f) v.push_back(x);
  return v;
}

void expect_close(float got, float want, float x, const char* what, float rtol = 4e-6f, float atol = 1e-7f) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << "(" << x << ") = " << got << ", the CPU has NaN";
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what << "(" << x << ")";
  } else {
    // Zeros compare by value: the CPU's tanh polynomial returns +0 for -0 where tanhf keeps -0,
    // and its erf reaches -1 exactly sooner than erff, so Gelu(-5.4) is -0 there and -1.6e-7
    // here (the exact value is -2.1e-7).
    EXPECT_NEAR(got, want, atol + rtol * std::abs(want)) << what << "(" << x << ")";
  }
}

TEST(EwMath, UnaryMatchesTheCpu) {
  for (float x : samples()) {
    expect_close(fc::ew_relu(x), fp::ReluF{}(x), x, "Relu");
    expect_close(fc::ew_neg(x), fp::NegF{}(x), x, "Neg");
    expect_close(fc::ew_sqrt(x), std::sqrt(x), x, "Sqrt");
    expect_close(fc::ew_exp(x), fp::ExpF{}(x), x, "Exp");
    expect_close(fc::ew_erf(x), fp::ErfF{}(x), x, "Erf", 4e-6f, 3e-7f);
    expect_close(fc::ew_tanh(x), fp::TanhF{}(x), x, "Tanh");
    expect_close(fc::ew_sigmoid(x), fp::SigmoidF{}(x), x, "Sigmoid");
    expect_close(fc::ew_gelu_erf(x), fp::GeluErfF{}(x), x, "Gelu", 4e-6f, 3e-6f);
    expect_close(fc::ew_gelu_tanh(x), fp::GeluTanhF{}(x), x, "GeluTanh");
  }
}

TEST(EwMath, BinaryF32MatchesTheCpu) {
  const std::vector<float> v = {0.0f, -0.0f, 1.5f, -2.0f, 3.0f, kInf, -kInf, kNaN, 1e-20f, 7.0f};
  for (float a : v)
    for (float b : v) {
      expect_close(fc::ew_add(a, b), fp::AddOp{}(a, b), a, "Add");
      expect_close(fc::ew_sub(a, b), fp::SubOp{}(a, b), a, "Sub");
      expect_close(fc::ew_mul(a, b), fp::MulOp{}(a, b), a, "Mul");
      expect_close(fc::ew_div(a, b), fp::DivOp{}(a, b), a, "Div");
      expect_close(fc::ew_pow(a, b), fp::PowOp{}(a, b), a, "Pow");
    }
}

TEST(EwMath, I64WrapsAndDividesLikeTheCpu) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> v = {0, 1, -1, 2, -2, 7, -7, lo, hi, lo + 1, hi - 1, 1000000007};
  for (int64_t a : v) {
    EXPECT_EQ(fc::ew_neg(a), fp::NegF{}(a)) << a;
    for (int64_t b : v) {
      EXPECT_EQ(fc::ew_add(a, b), fp::AddOp{}(a, b)) << a << " + " << b;
      EXPECT_EQ(fc::ew_sub(a, b), fp::SubOp{}(a, b)) << a << " - " << b;
      EXPECT_EQ(fc::ew_mul(a, b), fp::MulOp{}(a, b)) << a << " * " << b;
      EXPECT_EQ(fc::ew_div(a, b), fp::DivOp{}(a, b)) << a << " / " << b;
    }
  }
}

TEST(EwMath, CastF32ToI64Saturates) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(fc::ew_f32_to_i64(1.9f), 1);
  EXPECT_EQ(fc::ew_f32_to_i64(-1.9f), -1);
  EXPECT_EQ(fc::ew_f32_to_i64(kNaN), 0);
  EXPECT_EQ(fc::ew_f32_to_i64(kInf), hi);
  EXPECT_EQ(fc::ew_f32_to_i64(-kInf), lo);
  EXPECT_EQ(fc::ew_f32_to_i64(9.3e18f), hi);
  EXPECT_EQ(fc::ew_f32_to_i64(-9.223372036854775808e18f), lo);  // -2^63 is exact
  EXPECT_EQ(fc::ew_f32_to_i64(-1e19f), lo);
  EXPECT_EQ(fc::ew_f32_to_i64(16777216.0f), 16777216);
}

}  // namespace
