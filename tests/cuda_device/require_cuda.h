#pragma once
// What a device test does where the CUDA backend cannot run: skip with the reason, or, with
// FUSEBOX_REQUIRE_CUDA=1 in the environment (tools/gpu-check.sh sets it), fail with it, so that a
// GPU machine with a broken install shows red instead of "Skipped".
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace fusebox::device_test {

inline bool cuda_required() {
  const char* v = std::getenv("FUSEBOX_REQUIRE_CUDA");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace fusebox::device_test

// Ends the test: fails under FUSEBOX_REQUIRE_CUDA=1, skips otherwise, naming `why` either way.
#define FUSEBOX_SKIP_OR_FAIL(why)                                                                   \
  do {                                                                                              \
    if (::fusebox::device_test::cuda_required())                                                    \
      GTEST_FAIL() << "FUSEBOX_REQUIRE_CUDA=1, and this needs the CUDA backend: " << (why);         \
    GTEST_SKIP() << (why);                                                                          \
  } while (0)
