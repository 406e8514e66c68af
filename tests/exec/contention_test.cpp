// Two threads beside a busy process (ops/cpu/parallel.h, "Contention"): libgomp's workers spin at
// its barriers, so with another process busy on the cores the team needs, every fork/join waited
// for a scheduler tick and the stack model ran 14x slower at 2 threads than at 1. The teams now
// time themselves and step down to one thread while they lose. This program measures (it does not
// set FUSEBOX_FORK_JOIN_NS), and starts its busy processes itself.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "core/exec/session.h"
#include "core/models/builtin_models.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/parallel.h"
#include "tests/support/busy_processes.h"
#include "tests/support/graph_eval.h"

namespace fusebox::cpu {
namespace {

// Processes spinning on all the cores this one may use but one: a 2-thread team then needs a
// core another process is busy on.
using testing::BusyProcesses;

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Runner {
  explicit Runner(const std::string& model)
      : graph(models::build_model(model, 1)), session(graph, exec::SessionOptions{}) {
    inputs = testing::random_inputs(graph, 1);
    outputs = session.run(inputs);
    for (auto& t : inputs) in.push_back(t.bytes());
    for (auto& t : outputs) out.push_back(t.bytes());
  }
  // Median wall time of `calls` runs at `threads`, in ms.
  double median_ms(int threads, int calls) {
    session.set_threads(threads);
    std::vector<double> ms;
    for (int i = 0; i < calls; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      session.run_raw(in.data(), out.data());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(ms);
  }
  ir::Graph graph;
  exec::Session session;
  std::vector<ir::Tensor> inputs, outputs;
  std::vector<const void*> in;
  std::vector<void*> out;
};

// The ratio t2 / t1 of 2-thread to 1-thread run time: the median over interleaved rounds of the
// ratio of each round's medians.
double two_over_one(Runner& r, int rounds, int calls) {
  r.median_ms(1, 3);  // warm-up
  r.median_ms(2, 3);
  std::vector<double> ratios;
  for (int round = 0; round < rounds; ++round) {
    double t[3];
    const int first = round % 2 ? 2 : 1, second = 3 - first;
    t[first] = r.median_ms(first, calls);
    t[second] = r.median_ms(second, calls);
    ratios.push_back(t[2] / t[1]);
    std::printf("round %d: 1 thread %.2f ms, 2 threads %.2f ms, ratio %.3f\n", round, t[1], t[2],
                t[2] / t[1]);
  }
  return median(ratios);
}

TEST(Contention, TwoThreadsBesideABusyProcessAreNoSlowerThanOne) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A speed ratio measured through a sanitizer's instrumentation says nothing about the Release
  // kernels it is about, and its busy processes took both of CI's cores for 52 s. The Release
  // run measures it; the step-down logic's own tests below run everywhere.
  GTEST_SKIP() << "a timing test: measured by the Release build, not under a sanitizer";
#endif
  register_backend();
  reset_contention();
  Runner r("stack");
  // The fork/join cost is measured now, on idle cores (a desktop app measures it while its render
  // thread idles; measured beside the busy processes it would be a scheduler slice, and every op
  // would stay on one thread for that reason alone).
  r.median_ms(2, 3);
  const int cores = usable_cores();
  BusyProcesses busy(std::clamp(cores - 1, 1, 31));
  ASSERT_GT(busy.size(), 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let them start spinning
  // CTest runs another test beside this one, so a third process can take a core for a while:
  // measured again, up to three times, and every try is printed.
  double ratio = 0;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ratio = two_over_one(r, 9, 7);
    const ContentionStats stats = contention_stats();
    std::printf("try %d: %zu busy processes on %d cores: t2/t1 median %.3f; %lld windows, %lld step-downs\n",
                attempt, busy.size(), cores, ratio, static_cast<long long>(stats.windows),
                static_cast<long long>(stats.step_downs));
    if (ratio <= 1.2) break;
  }
  EXPECT_LE(ratio, 1.2);
  reset_contention();
}

TEST(Contention, ALostWindowStepsTeamsDownForABackOff) {
  reset_contention();
  omp_set_num_threads(2);
  const int64_t items[] = {100, 100};
  // A window of teams that took 0.55 of their work: kept.
  const int64_t healthy[] = {5'000'000, 5'000'000};
  detail::note_team(5'500'000, healthy, items, 2);
  detail::note_team(5'500'000, healthy, items, 2);
  EXPECT_EQ(contention_stats().windows, 1);
  EXPECT_EQ(contention_stats().step_downs, 0);
  EXPECT_FALSE(stepped_down());
  EXPECT_EQ(threads_for(1e6), 2);
  // A window of teams stalled on a busy core: one thread for a back-off.
  const int64_t stalled[] = {100'000, 100'000};
  detail::note_team(kContentionWindowNs, stalled, items, 2);
  EXPECT_EQ(contention_stats().step_downs, 1);
  EXPECT_TRUE(stepped_down());
  EXPECT_EQ(threads_for(1e6), 1);
  std::this_thread::sleep_for(std::chrono::nanoseconds(kStepDownMinNs + 20'000'000));
  EXPECT_FALSE(stepped_down());  // teams form again; the next window decides
  EXPECT_EQ(threads_for(1e6), 2);
  omp_set_num_threads(1);
  reset_contention();
}

TEST(Contention, ATeamRegionsWorkCountsWhatItsChunksWereWorth) {
  const int64_t even_busy[] = {1000, 1000}, even_items[] = {10, 10};
  EXPECT_EQ(team_work_ns(even_busy, even_items, 2), 2000);
  // Half the items, half the time: still the sum.
  const int64_t uneven_busy[] = {1000, 500}, uneven_items[] = {10, 5};
  EXPECT_EQ(team_work_ns(uneven_busy, uneven_items, 2), 1500);
  // A thread descheduled mid-chunk for a scheduler tick counts twice its items' worth, not the tick.
  const int64_t stalled_busy[] = {1000, 4'000'000}, stalled_items[] = {10, 10};
  EXPECT_EQ(team_work_ns(stalled_busy, stalled_items, 2), 3000);
  const int64_t idle_busy[] = {1000, 0}, idle_items[] = {10, 0};
  EXPECT_EQ(team_work_ns(idle_busy, idle_items, 2), 1000);
}

TEST(Contention, AWindowIsLostWhenTheTeamsTookNearlyTheWorkItself) {
  EXPECT_FALSE(window_lost(550, 1000));  // 2 threads, uncontended
  EXPECT_FALSE(window_lost(800, 1000));
  EXPECT_TRUE(window_lost(950, 1000));
  EXPECT_TRUE(window_lost(5000, 1000));  // stalled on a busy core
}

}  // namespace
}  // namespace fusebox::cpu
