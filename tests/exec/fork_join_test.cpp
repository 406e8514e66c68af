// The measured fork/join cost the CPU kernels size their teams by (ops/cpu/parallel.h), in a
// program that does not fix it through FUSEBOX_FORK_JOIN_NS.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cstdlib>

#include "core/base/error.h"
#include "core/exec/session.h"
#include "core/models/builtin_models.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/parallel.h"
#include "tests/support/graph_eval.h"

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

// One Session at two thread counts (what fusebox_bench_threads compares): the same outputs, and
// a count below 1 refused.
TEST(SessionThreads, SetThreadsChangesTheRunsNotTheResults) {
  register_backend();
  ir::Graph g = models::build_model("mlp:batch=64", 1);
  exec::Session s(g, exec::SessionOptions{});
  const std::vector<ir::Tensor> inputs = testing::random_inputs(g, 2);
  const std::vector<ir::Tensor> one = s.run(inputs);
  s.set_threads(2);
  EXPECT_EQ(s.options().threads, 2);
  const std::vector<ir::Tensor> two = s.run(inputs);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i)
    for (int64_t j = 0; j < one[i].numel(); ++j)
      EXPECT_NEAR(one[i].data<float>()[j], two[i].data<float>()[j], 1e-4);
  EXPECT_THROW(s.set_threads(0), fusebox::Error);
  EXPECT_EQ(s.options().threads, 2);
}

}  // namespace
}  // namespace fusebox::cpu
