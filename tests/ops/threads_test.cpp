// How kernels size their thread teams (ops/cpu/parallel.h), and the switch the other op tests
// rely on: this test program runs with FUSEBOX_FORK_JOIN_NS=0, so at 2 threads every loop with
// an item for each thread splits and the 2-thread checks in the other files run the threaded
// paths, whatever this machine's fork/join cost would decide.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

#include "ops/cpu/parallel.h"
#include "tests/ops/op_test_util.h"

namespace fusebox::cpu {
namespace {

// Before main, so before any kernel reads it.
const bool kEverySplit = setenv("FUSEBOX_FORK_JOIN_NS", "0", 1) == 0;

double one_us(int) { return 1000.0; }
double grows(int t) { return 1000.0 * t; }  // a bigger team costs more to fork and join

TEST(ThreadsFor, OneThreadUntilEachThreadGetsItsShareOfTheForkJoin) {
  // 2 threads at 1 us per fork/join pay from 2 * kMinShareOfForkJoin us of work on.
  const double two = 2 * kMinShareOfForkJoin;
  EXPECT_EQ(threads_for(0.0, 2, one_us), 1);
  EXPECT_EQ(threads_for(two * 0.99, 2, one_us), 1);
  EXPECT_EQ(threads_for(two, 2, one_us), 2);
  EXPECT_EQ(threads_for(1e6, 2, one_us), 2);
  EXPECT_EQ(threads_for(1e6, 1, one_us), 1);
}

TEST(ThreadsFor, TheLargestTeamThatPays) {
  EXPECT_EQ(threads_for(4 * kMinShareOfForkJoin, 8, one_us), 4);
  EXPECT_EQ(threads_for(3.5 * kMinShareOfForkJoin, 8, one_us), 3);
  // With a cost growing with the team: t threads need t * t * share us.
  EXPECT_EQ(threads_for(9 * kMinShareOfForkJoin, 8, grows), 3);
  EXPECT_EQ(threads_for(8.9 * kMinShareOfForkJoin, 8, grows), 2);
}

TEST(ForkJoinOverride, ParsesACostOrSaysUnset) {
  EXPECT_EQ(parse_fork_join_override(nullptr), -1.0);
  EXPECT_EQ(parse_fork_join_override(""), -1.0);
  EXPECT_EQ(parse_fork_join_override("2500"), 2500.0);
  EXPECT_EQ(parse_fork_join_override("0"), 0.0);
  EXPECT_EQ(parse_fork_join_override("-3"), -1.0);
  EXPECT_EQ(parse_fork_join_override("2us"), -1.0);
  EXPECT_TRUE(kEverySplit);
  EXPECT_EQ(fork_join_ns(2), 0.0);  // this program's setting
}

// The chunks parallel_for handed out, and on how many distinct threads.
struct Chunks {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<int> threads;
};

TEST(ParallelFor, CoversTheRangeOnceWithATeamNoLargerThanTheItems) {
  omp_set_num_threads(2);
  for (int64_t n : {1, 2, 3, 1000}) {
    Chunks c;
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    parallel_for(n, 1, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(c.mu);
      c.ranges.emplace_back(b, e);
      c.threads.insert(omp_get_thread_num());
      for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)]++;
    });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], 1) << "n " << n;
    EXPECT_EQ(c.ranges.size(), n == 1 ? 1u : 2u) << "n " << n;
  }
  omp_set_num_threads(1);
}

TEST(ParallelFor, ATeamOfOneInsideAParallelRegion) {
  omp_set_num_threads(2);
  std::atomic<int> calls{0};
#pragma omp parallel num_threads(2)
  parallel_for(1000, 1, [&](int64_t b, int64_t e) {
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 1000);
    calls++;
  });
  EXPECT_EQ(calls, 2);  // once per outer thread, each over the whole range
  omp_set_num_threads(1);
}

}  // namespace
}  // namespace fusebox::cpu
