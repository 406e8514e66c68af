// What the CUDA backend raises at synchronize for work that could not throw where it failed
// (ops/cuda/host/first_failure.h): the first failure, how many followed, once.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "ops/cuda/host/first_failure.h"

using namespace fusebox;
using namespace fusebox::cuda;

namespace {

std::string raised(FirstFailure& f) {
  try {
    f.raise_if_any();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FirstFailure, RaisesTheFirstOnceAndCountsTheRest) {
  FirstFailure f;
  EXPECT_FALSE(f.any());
  EXPECT_EQ(raised(f), "") << "nothing to raise";
  f.record(status_failure("node 'MatMul_3' (MatMul)", "cublasGemmStridedBatchedEx", "CUBLAS_STATUS_EXECUTION_FAILED",
                          "the GPU program failed to execute"));
  f.record("node 'Add_4' (Add): something that followed");
  f.record("and another");
  EXPECT_TRUE(f.any());
  EXPECT_EQ(raised(f),
            "node 'MatMul_3' (MatMul): cublasGemmStridedBatchedEx returned CUBLAS_STATUS_EXECUTION_FAILED (the GPU "
            "program failed to execute) (and 2 later failures)");
  EXPECT_FALSE(f.any());
  EXPECT_EQ(raised(f), "") << "raised once, then forgotten";
  f.record("the next run's failure");
  f.record("one more");
  EXPECT_EQ(raised(f), "the next run's failure (and 1 later failure)");
}

TEST(FirstFailure, KeepsOneFirstAcrossThreads) {
  FirstFailure f;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&f, t] {
      for (int i = 0; i < 100; ++i) f.record("failure " + std::to_string(t));
    });
  for (auto& t : threads) t.join();
  const std::string m = raised(f);
  EXPECT_EQ(m.rfind("failure ", 0), 0u) << m;
  EXPECT_NE(m.find("(and 799 later failures)"), std::string::npos) << m;
}

}  // namespace
