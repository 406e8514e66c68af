// The measured fork/join cost the CPU kernels size their teams by (ops/cpu/parallel.h), in a
// program that does not fix it through FUSEBOX_FORK_JOIN_NS.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cstdlib>

#include "ops/cpu/parallel.h"

namespace fusebox::cpu {
namespace {

TEST(ForkJoin, MeasuredOnceAndPlausible) {
  ASSERT_EQ(std::getenv("FUSEBOX_FORK_JOIN_NS"), nullptr) << "this test measures; unset the override";
  const double ns = fork_join_ns(2);
  // No upper bound: on a loaded machine (ctest -j) one fork/join can wait a scheduler slice.
  EXPECT_GT(ns, 0.0);
  EXPECT_EQ(fork_join_ns(2), ns);  // measured once per team size
  EXPECT_EQ(fork_join_ns(1), 0.0);
}

int chunks_at_two_threads(int64_t n, int64_t grain) {
  omp_set_num_threads(2);
  std::atomic<int> chunks{0};
  parallel_for(n, grain, [&](int64_t, int64_t) { chunks++; });
  omp_set_num_threads(1);
  return chunks;
}

TEST(ForkJoin, SmallWorkStaysOnTheCallingThreadLargeWorkSplits) {
  const double share_us = kMinShareOfForkJoin * fork_join_ns(2) / 1000.0;
  // Less than the second thread's share of the fork/join: inline, in one chunk.
  EXPECT_EQ(chunks_at_two_threads(static_cast<int64_t>(share_us), 1), 1);
  // Work worth far more than any fork/join (1000 s of it): both threads.
  EXPECT_EQ(chunks_at_two_threads(1'000'000'000, 1), 2);
}

}  // namespace
}  // namespace fusebox::cpu
