// profiler/stats: percentiles and the Mann-Whitney U test against values worked out by hand.
#include "profiler/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace fusebox::profiler {
namespace {

// U by its definition: over every pair, 1 when a's value is larger, 1/2 on a tie.
double brute_force_u(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a)
    for (double y : b) u += x > y ? 1.0 : x == y ? 0.5 : 0.0;
  return u;
}

TEST(Stats, PercentileInterpolatesBetweenRanks) {
  const std::vector<double> s = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(s, 0.5), 2.5);  // the mean of the middle two
  EXPECT_DOUBLE_EQ(percentile(s, 0.1), 1.3);  // position 0.3 between 1 and 2
  EXPECT_DOUBLE_EQ(percentile(s, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(percentile(s, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(s, 1), 4);
  EXPECT_DOUBLE_EQ(percentile({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0);
}

TEST(Stats, MannWhitneySeparatedSamples) {
  // a = {1,2,3}, b = {4,5,6}: no a beats a b, U_a = 0, U_b = 9. Mean 9/2, variance
  // 3*3/12 * 7 = 5.25; z = (0 - 4.5 + 0.5) / sqrt(5.25) = -1.7457; p = erfc(1.7457 / sqrt 2).
  const MannWhitney m = mann_whitney({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(m.u_a, 0);
  EXPECT_DOUBLE_EQ(m.u_b, 9);
  EXPECT_NEAR(m.z, -4 / std::sqrt(5.25), 1e-12);
  EXPECT_NEAR(m.p_value, 0.0808556, 1e-6);
  const MannWhitney r = mann_whitney({4, 5, 6}, {1, 2, 3});  // the same test, sides swapped
  EXPECT_DOUBLE_EQ(r.u_a, 9);
  EXPECT_NEAR(r.z, -m.z, 1e-12);
  EXPECT_NEAR(r.p_value, m.p_value, 1e-12);
}

TEST(Stats, MannWhitneyWithTies) {
  // a = {1,2,2,3}, b = {2,3,4,5}. Pooled ranks: 1 -> 1; the three 2s share (2+3+4)/3 = 3; the two
  // 3s share 5.5; 4 -> 7; 5 -> 8. Rank sum of a = 1 + 3 + 3 + 5.5 = 12.5, U_a = 12.5 - 4*5/2 = 2.5.
  // Ties: (27 - 3) + (8 - 2) = 30, so the variance is 16/12 * (9 - 30/56) = 11.2857; the mean
  // is 8, z = (2.5 - 8 + 0.5) / sqrt(11.2857) = -1.48835, p = erfc(1.48835 / sqrt 2) = 0.136658.
  const std::vector<double> a = {1, 2, 2, 3}, b = {2, 3, 4, 5};
  const MannWhitney m = mann_whitney(a, b);
  EXPECT_DOUBLE_EQ(m.u_a, 2.5);
  EXPECT_DOUBLE_EQ(m.u_a, brute_force_u(a, b));
  EXPECT_NEAR(m.z, -5 / std::sqrt(16.0 / 12 * (9 - 30.0 / 56)), 1e-12);
  EXPECT_NEAR(m.p_value, 0.1366582, 1e-6);
}

TEST(Stats, MannWhitneyUMatchesThePairCountOnRandomSamples) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> value(0, 20);  // small range: many ties
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> a(5 + trial), b(3 + 2 * trial);
    for (double& x : a) x = value(gen);
    for (double& y : b) y = value(gen);
    const MannWhitney m = mann_whitney(a, b);
    EXPECT_DOUBLE_EQ(m.u_a, brute_force_u(a, b)) << trial;
    EXPECT_DOUBLE_EQ(m.u_a + m.u_b, static_cast<double>(a.size() * b.size())) << trial;
    EXPECT_GT(m.p_value, 0);
    EXPECT_LE(m.p_value, 1);
  }
}

TEST(Stats, MannWhitneyHasNoEvidenceWithoutVariationOrSamples) {
  EXPECT_EQ(mann_whitney({3, 3, 3}, {3, 3}).p_value, 1);
  EXPECT_EQ(mann_whitney({}, {1, 2}).p_value, 1);
  EXPECT_EQ(mann_whitney({1, 2}, {1, 2}).p_value, 1);  // identical: the correction takes z to 0
}

}  // namespace
}  // namespace fusebox::profiler
