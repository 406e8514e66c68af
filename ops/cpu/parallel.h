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
//
// Contention. libgomp's workers spin at its barriers (GOMP_SPINCOUNT, read from the environment
// when libgomp loads, before any of our code runs: we cannot change it). When another process is
// busy on the cores the team needs, a spinning thread holds its core while the thread it waits for
// waits for a core: every fork/join then costs a scheduler tick (4-12 ms measured here, where the
// op is tens of us), and 2 threads ran the stack model 14x slower than 1. So every team region
// is timed (two clock reads per thread, ~50 ns against a >= 15 us region): its wall time against
// the work its threads did (what one thread would have taken). When, over a window of about
// kContentionWindowNs of team regions, the teams took longer than kLossRatio of that work, the
// cores are not ours: threads_for steps every team down to 1 for a back-off (100 ms, doubling to
// 1.6 s while the contention lasts), then lets teams form again, and the next window decides.
// Measured (fusebox_bench_threads --busy 1, 2-core Zen 3): t2/t1 was 10x (stack), 13x
// (transformer), 16x (mlp batch 64) without the step-down and 1.0x with it. FUSEBOX_STEP_DOWN=0
// turns it off (to see the collapse). Not covered: OpenBLAS called outside our regions with a
// thread count above 1 forks its own teams, which are neither timed nor stepped down.
//
// Worker recording (Backend::record_workers). While a profiler records, every region notes each
// thread's busy span (its chunk, on CLOCK_MONOTONIC_RAW) in that thread's own preallocated log:
// no lock, no allocation, two clock reads per thread. A loop that runs inline (a team of one, a
// step-down, the one-thread GEMM path) is noted too, as worker 0 alone, so the tracks show what
// really ran. Loops inside a region (nested) are part of the outer region's span. When no one
// records, a region pays one relaxed flag read.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/backend/worker_activity.h"

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
// it to reach the threaded paths); it also turns off the contention step-down below, so a fixed
// cost decides every team.
double fork_join_ns(int threads);

// The team size that pays off for `work_us` microseconds of one-thread work, at most `threads`:
// the largest t with work / t >= kMinShareOfForkJoin * fork_join(t), else 1.
int threads_for(double work_us, int threads, double (*fork_join)(int) = fork_join_ns);

// FUSEBOX_FORK_JOIN_NS's text as a cost in ns: a number >= 0, else -1 (unset or unreadable).
double parse_fork_join_override(const char* text);

// Contention detection (see the top of this file). A window closes once its team regions took
// this long in all; the teams step down when their wall time exceeded kLossRatio of the work
// their threads did (uncontended 2-thread teams take 0.5-0.6 of it; a team stalled on a busy
// core takes several times it).
inline constexpr int64_t kContentionWindowNs = 10'000'000;
inline constexpr double kLossRatio = 0.9;
inline constexpr int64_t kStepDownMinNs = 100'000'000, kStepDownMaxNs = 1'600'000'000;

namespace detail {
// True while teams are stepped down to one thread; read on every threads_for call.
extern std::atomic<bool> g_stepped_down;
// Whether the step-down still holds (false once its back-off is over: teams form again).
bool stepped_down_now();
// Whether regions are timed at all (not under FUSEBOX_FORK_JOIN_NS or FUSEBOX_STEP_DOWN=0).
bool timing_teams();
// One team region: its wall time and its threads' (busy ns, items) pairs.
void note_team(int64_t wall_ns, const int64_t* busy_ns, const int64_t* items, int threads);
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
inline constexpr int kTimedTeam = 64;  // larger teams are not timed

// Worker recording: how many callers record (a region reads it once); the raw clock; the
// calling thread's kernel id (cached); appending a span to the calling thread's log (dropped and
// counted when the log is full).
extern std::atomic<int> g_recording_workers;
inline bool recording_workers() { return g_recording_workers.load(std::memory_order_relaxed) > 0; }
int64_t raw_now_ns();
int32_t os_tid();
void note_worker(const exec::WorkerSpan& span);
}  // namespace detail

// Starts (true) or stops (false) noting worker spans; calls nest (recording lasts while any caller
// still records). Starting also gives the calling thread's pool threads their logs, outside any
// recorded run.
void record_workers(bool on);
// Every thread's noted spans (in no particular order), and forgets them; `dropped` (if given)
// gets how many did not fit since the last call. Call it when the recorded runs are over.
std::vector<exec::WorkerSpan> take_worker_spans(int64_t* dropped = nullptr);
// Spans each thread's log holds before it drops.
inline constexpr size_t kWorkerLogCapacity = 1 << 15;

// Calls fn(0, n) on the calling thread: a loop that runs inline. Noted as worker 0 of a team of
// one while recording (not inside a region: that region's span covers it).
template <typename Fn>
void run_inline(int64_t n, Fn&& fn) {
  if (n <= 0) return;
  if (!detail::recording_workers() || omp_in_parallel()) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t start = detail::raw_now_ns();
  fn(int64_t{0}, n);
  const int32_t tid = detail::os_tid();
  detail::note_worker({start, detail::raw_now_ns(), n, tid, tid, 0, 1});
}

// Whether contention has stepped teams down to one thread right now.
inline bool stepped_down() {
  return detail::g_stepped_down.load(std::memory_order_relaxed) && detail::stepped_down_now();
}

// What the contention detector has seen since the process started (for tests and benchmarks).
struct ContentionStats {
  int64_t windows = 0;     // windows closed
  int64_t step_downs = 0;  // windows that stepped teams down
};
ContentionStats contention_stats();
// Forgets what the detector has seen and ends any step-down (tests).
void reset_contention();

// Judges one window's totals: should the teams step down? (wall > kLossRatio * work.)
bool window_lost(int64_t wall_ns, int64_t work_ns);

// The one-thread work a team region did, from its threads' busy times and item counts: the sum of
// the busy times, each capped at twice its items' worth at the fastest thread's rate per item (a
// thread descheduled in the middle of its chunk counts what the chunk was worth, not the wait;
// items may cost up to twice as much as each other).
int64_t team_work_ns(const int64_t* busy_ns, const int64_t* items, int threads);

// The team for work_us of work at the calling thread's thread count (omp_get_max_threads);
// 1 inside a parallel region, and 1 while contention has stepped teams down.
inline int threads_for(double work_us) {
  if (omp_in_parallel()) return 1;
  const int threads = omp_get_max_threads();
  if (threads <= 1 || stepped_down()) return 1;
  return threads_for(work_us, threads);
}

// Calls fn(begin, end) on disjoint chunks covering [0, n) over exactly min(team, n) threads: for
// callers that sized the team themselves (from threads_for and their own shape of the work).
template <typename Fn>
void parallel_for_team(int64_t n, int team, Fn&& fn) {
  if (n <= 0) return;
  const int nt = static_cast<int>(std::min<int64_t>(n, team));
  if (nt <= 1 || omp_in_parallel()) {
    run_inline(n, fn);
    return;
  }
  const int64_t chunk = (n + nt - 1) / nt;
  if (detail::recording_workers()) {
    // Recorded: each thread's busy span on the raw clock (also timing the team, when timed).
    int64_t busy[detail::kTimedTeam], items[detail::kTimedTeam];
    const bool timed = nt <= detail::kTimedTeam && detail::timing_teams();
    const int32_t caller = detail::os_tid();
    int got = nt;
    const int64_t fork = detail::raw_now_ns();
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num();
      const int team_size = omp_get_num_threads();
      if (t == 0) got = team_size;
      const int64_t b = std::min<int64_t>(n, t * chunk), e = std::min<int64_t>(n, b + chunk);
      const int64_t start = detail::raw_now_ns();
      if (b < e) fn(b, e);
      const int64_t end = detail::raw_now_ns();
      if (b < e) detail::note_worker({start, end, e - b, detail::os_tid(), caller, t, team_size});
      if (t < detail::kTimedTeam) {
        busy[t] = end - start;
        items[t] = e - b;
      }
    }
    if (timed) detail::note_team(detail::raw_now_ns() - fork, busy, items, std::min(got, nt));
    return;
  }
  if (nt > detail::kTimedTeam || !detail::timing_teams()) {
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num();
      const int64_t b = std::min<int64_t>(n, t * chunk), e = std::min<int64_t>(n, b + chunk);
      if (b < e) fn(b, e);
    }
    return;
  }
  // Timed: each thread's busy time and items, and the region's wall time (contention detection).
  int64_t busy[detail::kTimedTeam], items[detail::kTimedTeam];
  int got = nt;
  const int64_t fork = detail::now_ns();
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    if (t == 0) got = omp_get_num_threads();
    const int64_t b = std::min<int64_t>(n, t * chunk), e = std::min<int64_t>(n, b + chunk);
    const int64_t start = detail::now_ns();
    if (b < e) fn(b, e);
    busy[t] = detail::now_ns() - start;
    items[t] = e - b;
  }
  detail::note_team(detail::now_ns() - fork, busy, items, std::min(got, nt));
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
