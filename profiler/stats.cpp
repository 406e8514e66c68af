#include "profiler/stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fusebox::profiler {

double percentile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(s.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return percentile_sorted(samples, q);
}

namespace {

// The rank sum of side a in the pooled samples (ties get their average rank), and the tie term
// sum(t^3 - t) over groups of t equal values.
std::pair<double, double> rank_sum_and_ties(const std::vector<double>& a,
                                            const std::vector<double>& b) {
  std::vector<std::pair<double, bool>> pooled;  // (value, from a)
  for (double x : a) pooled.emplace_back(x, true);
  for (double y : b) pooled.emplace_back(y, false);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum = 0, ties = 0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double rank = 0.5 * static_cast<double>(i + 1 + j);  // mean of ranks i+1 .. j
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum += rank;
    ties += t * t * t - t;
    i = j;
  }
  return {rank_sum, ties};
}

}  // namespace

MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitney m;
  if (a.empty() || b.empty()) return m;
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size()), n = na + nb;
  const auto [rank_sum, ties] = rank_sum_and_ties(a, b);
  m.u_a = rank_sum - na * (na + 1) / 2;
  m.u_b = na * nb - m.u_a;
  const double variance = na * nb / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (variance <= 0) return m;
  const double off = m.u_a - na * nb / 2;
  const double corrected = off > 0 ? std::max(0.0, off - 0.5) : std::min(0.0, off + 0.5);
  m.z = corrected / std::sqrt(variance);
  m.p_value = std::min(1.0, std::erfc(std::fabs(m.z) / std::sqrt(2.0)));
  return m;
}

}  // namespace fusebox::profiler
