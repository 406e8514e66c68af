#pragma once
// parallel_for over the backend's one OpenMP pool. Small loops run inline: a fork/join costs
// about a microsecond, more than a tiny element-wise op, so work below `min_per_thread` items
// per thread stays on the calling thread.
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace fusebox::cpu {

// Calls fn(begin, end) on disjoint chunks covering [0, n).
template <typename Fn>
void parallel_for(int64_t n, int64_t min_per_thread, Fn&& fn) {
  if (n <= 0) return;
  int threads = omp_get_max_threads();
  int64_t useful = std::max<int64_t>(1, n / std::max<int64_t>(1, min_per_thread));
  int nt = static_cast<int>(std::min<int64_t>(threads, useful));
  if (nt <= 1 || omp_in_parallel()) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    int t = omp_get_thread_num();
    int64_t chunk = (n + nt - 1) / nt;
    int64_t b = std::min<int64_t>(n, t * chunk), e = std::min<int64_t>(n, b + chunk);
    if (b < e) fn(b, e);
  }
}

}  // namespace fusebox::cpu
