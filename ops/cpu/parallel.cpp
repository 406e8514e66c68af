#include "ops/cpu/parallel.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace fusebox::cpu {

namespace {

constexpr int kMaxTeam = 256;  // bind_threads' limit
// Above this a "fork/join" was a wait for a core (passive OpenMP threads wake in ~20 us).
constexpr double kImplausibleNs = 200e3;

double fork_join_override() {
  static const double value = parse_fork_join_override(std::getenv("FUSEBOX_FORK_JOIN_NS"));
  return value;
}

double measure_fork_join_ns(int threads) {
  using clock = std::chrono::steady_clock;
  std::atomic<int> sink{0};
  auto region = [&] {
#pragma omp parallel num_threads(threads)
    { sink.fetch_add(1, std::memory_order_relaxed); }
  };
  for (int i = 0; i < 50; ++i) region();  // start the team, let it settle into its wait policy
  // Five bursts of up to 61 back-to-back fork/joins, 1 ms apart, each at most ~4 ms long (on a
  // loaded machine one fork/join can take a scheduler slice, and the measurement must not take
  // seconds). Each burst's 25th percentile is what a fork/join cost while the other threads'
  // cores were free; another process busy on those cores for a whole burst inflates that burst
  // only, so the cost is the lowest of the five.
  constexpr int kBursts = 5, kSamples = 61;
  constexpr double kBurstBudgetNs = 4e6;
  double best = 0;
  std::vector<double> ns;
  ns.reserve(kSamples);
  for (int burst = 0; burst < kBursts; ++burst) {
    if (burst > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    region();  // wake the team after the pause; not timed
    ns.clear();
    double spent = 0;
    while (ns.size() < kSamples && (spent < kBurstBudgetNs || ns.size() < 5)) {
      const auto t0 = clock::now();
      region();
      ns.push_back(std::chrono::duration<double, std::nano>(clock::now() - t0).count());
      spent += ns.back();
    }
    const size_t q = ns.size() / 4;
    std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(q), ns.end());
    best = burst == 0 ? ns[q] : std::min(best, ns[q]);
  }
  return best;
}

}  // namespace

double parse_fork_join_override(const char* text) {
  if (!text || !*text) return -1.0;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return (end && *end == '\0' && v >= 0 && v < 1e12) ? v : -1.0;
}

double fork_join_ns(int threads) {
  if (threads <= 1) return 0.0;
  if (const double fixed = fork_join_override(); fixed >= 0) return fixed;
  threads = std::min(threads, kMaxTeam);
  struct Measured {
    std::atomic<double> ns{0};         // 0: not measured yet
    std::atomic<int64_t> at_ms{0};     // when, on the steady clock
    std::atomic<uint32_t> asked{0};    // calls since, counted only while the figure is implausible
  };
  static std::array<Measured, kMaxTeam + 1> cache;
  static std::mutex mu;
  Measured& m = cache[threads];
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  double v = m.ns.load(std::memory_order_acquire);
  // A cost of a scheduler slice says the cores were busy with other processes when it was
  // measured, not what a fork/join costs: such a figure is measured again, at most once a second.
  // The clock is read only every 4096th call (every loop of every op asks: a clock read each
  // time would double the cost of a tiny op).
  if (v > 0 && v < kImplausibleNs) return v;
  if (v > 0 && (m.asked.fetch_add(1, std::memory_order_relaxed) % 4096 != 0 ||
                now_ms() - m.at_ms.load() < 1000))
    return v;
  std::lock_guard<std::mutex> lock(mu);
  const double again = m.ns.load(std::memory_order_relaxed);
  if (again > 0 && again != v) return again;  // another thread measured meanwhile
  v = std::max(1.0, measure_fork_join_ns(threads));
  m.at_ms.store(now_ms());
  m.ns.store(v, std::memory_order_release);
  return v;
}

// Contention detection (parallel.h). One state for the process: a busy core is busy for every
// calling thread's pool.
namespace detail {

std::atomic<bool> g_stepped_down{false};

namespace {

struct Contention {
  std::atomic<int64_t> wall_ns{0}, work_ns{0};  // the open window's totals
  std::atomic<int64_t> until_ns{0};             // end of the current step-down
  std::atomic<int64_t> backoff_ns{kStepDownMinNs};
  std::atomic<int64_t> windows{0}, step_downs{0};
  std::mutex mu;  // closing a window
};

Contention& contention() {
  static Contention c;
  return c;
}

bool step_down_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("FUSEBOX_STEP_DOWN");
    return !(v && std::string_view(v) == "0");
  }();
  return enabled;
}

}  // namespace

bool timing_teams() {
  static const bool timing = step_down_enabled() && fork_join_override() < 0;
  return timing;
}

bool stepped_down_now() {
  Contention& c = contention();
  if (now_ns() < c.until_ns.load(std::memory_order_relaxed)) return true;
  // The back-off is over: teams form again, and the next window says whether they still lose.
  g_stepped_down.store(false, std::memory_order_relaxed);
  return false;
}

void note_team(int64_t wall_ns, const int64_t* busy_ns, const int64_t* items, int threads) {
  Contention& c = contention();
  const int64_t work = team_work_ns(busy_ns, items, threads);
  const int64_t wall = c.wall_ns.fetch_add(wall_ns, std::memory_order_relaxed) + wall_ns;
  c.work_ns.fetch_add(work, std::memory_order_relaxed);
  if (wall < kContentionWindowNs) return;
  std::lock_guard<std::mutex> lock(c.mu);
  const int64_t w = c.wall_ns.exchange(0, std::memory_order_relaxed);
  const int64_t k = c.work_ns.exchange(0, std::memory_order_relaxed);
  if (w < kContentionWindowNs) {  // another thread closed this window meanwhile
    c.wall_ns.fetch_add(w, std::memory_order_relaxed);
    c.work_ns.fetch_add(k, std::memory_order_relaxed);
    return;
  }
  c.windows.fetch_add(1, std::memory_order_relaxed);
  if (!window_lost(w, k)) {
    c.backoff_ns.store(kStepDownMinNs, std::memory_order_relaxed);
    return;
  }
  const int64_t backoff = c.backoff_ns.load(std::memory_order_relaxed);
  c.backoff_ns.store(std::min(backoff * 2, kStepDownMaxNs), std::memory_order_relaxed);
  c.until_ns.store(now_ns() + backoff, std::memory_order_relaxed);
  c.step_downs.fetch_add(1, std::memory_order_relaxed);
  g_stepped_down.store(true, std::memory_order_relaxed);
}

}  // namespace detail

// Worker recording (parallel.h). Each thread appends to its own log, which only it writes; the
// logs are registered once per thread (under a lock, when recording starts or on a thread's first
// recorded region) and live for the process, so take_worker_spans can read a log whose thread
// has ended.
namespace detail {

std::atomic<int> g_recording_workers{0};

namespace {

struct WorkerLog {
  std::unique_ptr<exec::WorkerSpan[]> spans{new exec::WorkerSpan[kWorkerLogCapacity]};
  std::atomic<size_t> size{0};
  std::atomic<int64_t> dropped{0};
};

struct WorkerLogs {
  std::mutex mu;
  std::vector<std::unique_ptr<WorkerLog>> logs;
};

WorkerLogs& worker_logs() {
  static WorkerLogs* logs = new WorkerLogs;  // never destroyed: pool threads may outlive statics
  return *logs;
}

WorkerLog& this_thread_log() {
  thread_local WorkerLog* log = [] {
    WorkerLogs& all = worker_logs();
    std::lock_guard<std::mutex> lock(all.mu);
    all.logs.push_back(std::make_unique<WorkerLog>());
    return all.logs.back().get();
  }();
  return *log;
}

}  // namespace

int64_t raw_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int32_t os_tid() {
  thread_local const int32_t tid = static_cast<int32_t>(syscall(SYS_gettid));
  return tid;
}

void note_worker(const exec::WorkerSpan& span) {
  WorkerLog& log = this_thread_log();
  const size_t i = log.size.load(std::memory_order_relaxed);
  if (i >= kWorkerLogCapacity) {
    log.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  log.spans[i] = span;
  log.size.store(i + 1, std::memory_order_release);
}

}  // namespace detail

void record_workers(bool on) {
  // FUSEBOX_RECORD_WORKERS=0 turns worker recording off (to measure what it costs a recorded run).
  static const bool enabled = [] {
    const char* v = std::getenv("FUSEBOX_RECORD_WORKERS");
    return !(v && std::string_view(v) == "0");
  }();
  if (!enabled) return;
  if (!on) {
    detail::g_recording_workers.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  // Every thread of the calling thread's pool gets its log now, not inside a recorded run.
  if (!omp_in_parallel()) {
#pragma omp parallel num_threads(omp_get_max_threads())
    {
      (void)detail::this_thread_log();
      (void)detail::os_tid();
    }
  }
  detail::g_recording_workers.fetch_add(1, std::memory_order_relaxed);
}

std::vector<exec::WorkerSpan> take_worker_spans(int64_t* dropped) {
  std::vector<exec::WorkerSpan> out;
  int64_t lost = 0;
  detail::WorkerLogs& all = detail::worker_logs();
  std::lock_guard<std::mutex> lock(all.mu);
  for (const auto& log : all.logs) {
    const size_t n = log->size.load(std::memory_order_acquire);
    out.insert(out.end(), log->spans.get(), log->spans.get() + n);
    log->size.store(0, std::memory_order_relaxed);
    lost += log->dropped.exchange(0, std::memory_order_relaxed);
  }
  if (dropped) *dropped = lost;
  return out;
}

ContentionStats contention_stats() {
  detail::Contention& c = detail::contention();
  return {c.windows.load(std::memory_order_relaxed), c.step_downs.load(std::memory_order_relaxed)};
}

void reset_contention() {
  detail::Contention& c = detail::contention();
  std::lock_guard<std::mutex> lock(c.mu);
  c.wall_ns = 0;
  c.work_ns = 0;
  c.until_ns = 0;
  c.backoff_ns = kStepDownMinNs;
  c.windows = 0;
  c.step_downs = 0;
  detail::g_stepped_down = false;
}

bool window_lost(int64_t wall_ns, int64_t work_ns) {
  return static_cast<double>(wall_ns) > kLossRatio * static_cast<double>(work_ns);
}

int64_t team_work_ns(const int64_t* busy_ns, const int64_t* items, int threads) {
  double rate = -1;  // the fastest thread's ns per item
  for (int t = 0; t < threads; ++t)
    if (items[t] > 0) {
      const double r = static_cast<double>(busy_ns[t]) / static_cast<double>(items[t]);
      if (rate < 0 || r < rate) rate = r;
    }
  if (rate < 0) return 0;
  double work = 0;
  for (int t = 0; t < threads; ++t)
    if (items[t] > 0)
      work += std::min(static_cast<double>(busy_ns[t]), 2.0 * rate * static_cast<double>(items[t]));
  return static_cast<int64_t>(work);
}

int threads_for(double work_us, int threads, double (*fork_join)(int)) {
  for (int t = threads; t > 1; --t)
    if (work_us * 1000.0 / t >= kMinShareOfForkJoin * fork_join(t)) return t;
  return 1;
}

}  // namespace fusebox::cpu
