#pragma once
// parallel_for over the backend's one OpenMP pool, and how many threads a piece of work is worth.
//
// A fork/join is not free: waking the team, handing out the chunks and waiting for the last
// thread costs about 3 us on the 2-core machines we have seen with spinning workers, and about
// 20 us with OMP_WAIT_POLICY=passive (measured by fork_join_ns). Work split over t threads takes
// work / t + fork_join(t), so splitting a loop only pays when each thread's share is well above
// the fork/join cost. Callers say how much work a loop is (in items, with a grain: the items that
// take about a microsecond on one core); threads_for picks the largest team for which every
// thread gets at least kMinShareOfForkJoin fork/joins' worth of it. Small models therefore run
// their small ops inline at any thread count, and 2 threads are never slower than 1 for them.
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace fusebox::cpu {

// Each thread of a team must get at least this many fork/join costs of work. The fork/join is
// not the whole price of a split: the next op reads what the other core wrote (its cache lines
// move), and a team finishes with its slowest thread. Measured on the 2-core machine
// (fusebox_bench_threads, fork/join 2.9 us): at 3, the transformer export (ops of 10-20 us) ran
// 9% slower at 2 threads than at 1; at 6 no model is slower and the large ones keep their
// speed-up (stack 0.64x, transformer 0.60x, mlp batch 64 0.57x of their 1-thread time).
inline constexpr double kMinShareOfForkJoin = 6;

// The cost of one fork/join of a `threads`-thread team on the calling thread's pool, in ns: the
// lowest of five bursts' 25th percentiles of back-to-back empty parallel regions (a process busy
// on the other core during one burst inflates only that one), measured once per process and team
// size on first use (at most ~25 ms), and again (at most once a second) while it is above
// 200 us, a wait for a busy core rather than a fork/join. FUSEBOX_FORK_JOIN_NS=<ns> in the
// environment fixes it instead (0 splits every loop that has an item for each thread: tests use
// it to reach the threaded paths).
double fork_join_ns(int threads);

// The team size that pays off for `work_us` microseconds of one-thread work, at most `threads`:
// the largest t with work / t >= kMinShareOfForkJoin * fork_join(t), else 1.
int threads_for(double work_us, int threads, double (*fork_join)(int) = fork_join_ns);

// FUSEBOX_FORK_JOIN_NS's text as a cost in ns: a number >= 0, else -1 (unset or unreadable).
double parse_fork_join_override(const char* text);

// The team for work_us of work at the calling thread's thread count (omp_get_max_threads);
// 1 inside a parallel region.
inline int threads_for(double work_us) {
  if (omp_in_parallel()) return 1;
  const int threads = omp_get_max_threads();
  return threads <= 1 ? 1 : threads_for(work_us, threads);
}

// Calls fn(begin, end) on disjoint chunks covering [0, n) over exactly min(team, n) threads: for
// callers that sized the team themselves (from threads_for and their own shape of the work).
template <typename Fn>
void parallel_for_team(int64_t n, int team, Fn&& fn) {
  if (n <= 0) return;
  const int nt = static_cast<int>(std::min<int64_t>(n, team));
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

// Calls fn(begin, end) on disjoint chunks covering [0, n). `grain` is the number of items that
// take about a microsecond on one core; the team is sized by threads_for, and never exceeds n.
template <typename Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  const int64_t team =
      std::min<int64_t>(n, threads_for(static_cast<double>(n) / std::max<int64_t>(1, grain)));
  parallel_for_team(n, static_cast<int>(team), fn);
}

}  // namespace fusebox::cpu
