// FUSEBOX_REQUIRE_CUDA=1 turns every device-test skip into a failure that names the reason
// (tests/cuda_device/require_cuda.h, tests/cuda_device/selftest.sh), and without it they still
// skip. Checked where the CUDA backend cannot run (here: no driver); on a GPU the device tests
// themselves run, so there is nothing to check and this says so.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "core/backend/plugin.h"

namespace {

#if defined(FUSEBOX_CUDA_DEVICE_TEST) && defined(FUSEBOX_CUDA_PLUGIN) && defined(FUSEBOX_CLI)
std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int s = pclose(p);
  *status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  return out;
}

// The plugin's reason, or "" where the backend runs.
std::string why_no_cuda() {
  const fusebox::exec::PluginProbe p = fusebox::exec::probe_backend_plugin(FUSEBOX_CUDA_PLUGIN);
  return p.available ? "" : p.reason;
}

TEST(RequireCuda, DeviceTestsFailNamingTheReasonInsteadOfSkipping) {
  const std::string why = why_no_cuda();
  if (why.empty()) GTEST_SKIP() << "the CUDA backend runs here: the device tests run instead of skipping";
  const std::string tests = std::string(FUSEBOX_CUDA_DEVICE_TEST) + " --gtest_filter=CudaDevice.*:CudaMatMul.*";
  int status = -1;
  std::string out = run(tests, &status);
  EXPECT_EQ(status, 0) << "without FUSEBOX_REQUIRE_CUDA the tests skip:\n" << out;
  EXPECT_NE(out.find("[  SKIPPED ]"), std::string::npos) << out;
  EXPECT_NE(out.find(why), std::string::npos) << "the skip names the reason:\n" << out;

  out = run("env FUSEBOX_REQUIRE_CUDA=1 " + tests, &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_EQ(out.find("[  SKIPPED ]"), std::string::npos) << "nothing skips:\n" << out;
  EXPECT_NE(out.find("[  FAILED  ]"), std::string::npos) << out;
  EXPECT_NE(out.find("FUSEBOX_REQUIRE_CUDA=1, and this needs the CUDA backend: no CUDA backend here: " + why),
            std::string::npos)
      << out;

  out = run("env FUSEBOX_REQUIRE_CUDA=0 " + tests, &status);
  EXPECT_EQ(status, 0) << "only the value 1 requires CUDA:\n" << out;
}

TEST(RequireCuda, TheSelfTestFailsInsteadOfSkipping) {
  const std::string why = why_no_cuda();
  if (why.empty()) GTEST_SKIP() << "the CUDA backend runs here: the self-test runs instead of skipping";
  const std::string cmd = std::string("sh ") + FUSEBOX_SOURCE_DIR + "/tests/cuda_device/selftest.sh " + FUSEBOX_CLI;
  int status = -1;
  std::string out = run(cmd, &status);
  // What CTest's SKIP_REGULAR_EXPRESSION for cuda_selftest matches.
  EXPECT_NE(out.find("backend 'cuda' is unavailable: " + why), std::string::npos) << out;
  out = run("env FUSEBOX_REQUIRE_CUDA=1 " + cmd, &status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_EQ(out.find("backend 'cuda' is unavailable"), std::string::npos) << "the skip pattern must not match:\n" << out;
  EXPECT_NE(out.find("FUSEBOX_REQUIRE_CUDA=1, and the CUDA backend cannot run: " + why), std::string::npos) << out;
}
#endif

}  // namespace
