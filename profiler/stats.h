#pragma once
// Small statistics over timing samples, written out by hand so each step can be checked:
//  - percentile: linear interpolation between the closest ranks (numpy's default), so p50 is
//    the usual median (the mean of the middle two for an even count);
//  - the Mann-Whitney U test of two independent sample sets: two-sided, by the normal
//    approximation with the tie correction and a continuity correction of 1/2 (as scipy's
//    mannwhitneyu(method="asymptotic")). It asks whether a value drawn from one side tends to be
//    larger than one drawn from the other, without assuming either side is normal, which timings
//    on a shared machine are not (a long right tail).
#include <vector>

namespace fusebox::profiler {

// The q-quantile (q in [0, 1]) of `sorted` (ascending); 0 when empty.
double percentile_sorted(const std::vector<double>& sorted, double q);
double percentile(std::vector<double> samples, double q);

struct MannWhitney {
  double u_a = 0;      // pairs (x from a, y from b) with x > y, a tie counting 1/2
  double u_b = 0;      // n_a * n_b - u_a
  double z = 0;        // (u_a - n_a n_b / 2, moved 1/2 toward 0) / sigma; 0 when sigma is 0
  double p_value = 1;  // two-sided; 1 when either side is empty or every value is equal
};
MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace fusebox::profiler
