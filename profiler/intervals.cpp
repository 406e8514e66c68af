#include "profiler/intervals.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "core/base/sorted.h"

namespace fusebox::profiler {

Intervals merged(Intervals iv) {
  sort_unless_sorted(iv.begin(), iv.end(), std::less<>());
  Intervals out;
  for (const Interval& x : iv) {
    if (x.second <= x.first) continue;
    if (!out.empty() && x.first <= out.back().second)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  return out;
}

int64_t length(const Intervals& merged_iv) {
  int64_t t = 0;
  for (const Interval& x : merged_iv) t += x.second - x.first;
  return t;
}

int64_t union_length(Intervals iv) {
  return length(merged(std::move(iv)));
}

int64_t intersection(const Intervals& a, const Intervals& b) {
  int64_t t = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t s = std::max(a[i].first, b[j].first), e = std::min(a[i].second, b[j].second);
    if (e > s) t += e - s;
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return t;
}

void CoverIndex::build() {
  iv_ = merged(std::move(iv_));
  prefix_.assign(iv_.size() + 1, 0);
  for (size_t i = 0; i < iv_.size(); ++i) prefix_[i + 1] = prefix_[i] + (iv_[i].second - iv_[i].first);
}

int64_t CoverIndex::upto(int64_t t) const {
  // The first interval starting at or after t; the one before may straddle t.
  const auto it = std::lower_bound(iv_.begin(), iv_.end(),
                                   Interval{t, std::numeric_limits<int64_t>::min()});
  const size_t k = static_cast<size_t>(it - iv_.begin());
  if (k == 0) return 0;
  return prefix_[k - 1] + (std::min(t, iv_[k - 1].second) - iv_[k - 1].first);
}

}  // namespace fusebox::profiler
