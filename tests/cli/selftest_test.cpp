// fusebox selftest as a user meets it: on the CPU every kernel op and every builtin model has a
// passing row and the exit code is 0; an op without a case is a failing row and exit 1; an
// unavailable backend is exit 2 with its one sentence; an unknown one is exit 2 with a hint.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <sys/wait.h>

#include "core/models/builtin_models.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/cli/cli_runner.h"

namespace {

using Result = fusebox::test::CliResult;
using fusebox::test::run_cli;

std::vector<std::string> cpu_kernel_ops() {
  auto backend = fusebox::cpu::make_backend();
  return backend->kernels().names();
}

TEST(Selftest, CpuPassesWithARowForEveryKernelOpAndEveryBuiltinModel) {
  Result r = run_cli("selftest --backend cpu --json", /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["failed"], 0);
  std::map<std::string, int> op_rows, model_rows, capture_rows, trace_rows, tf32_rows;
  for (const auto& row : j["rows"]) {
    for (const char* key : {"kind", "name", "case", "status", "max_abs", "max_rel", "rtol", "atol", "detail"})
      EXPECT_TRUE(row.contains(key)) << key << " in " << row.dump();
    const std::string kind = row["kind"], name = row["name"];
    if (kind == "op") {
      ++op_rows[name];
      EXPECT_EQ(row["status"], "pass") << row.dump();
      EXPECT_TRUE(row["max_abs"].is_number()) << row.dump();
    } else if (kind == "model") {
      ++model_rows[name];
      EXPECT_EQ(row["status"], "pass") << row.dump();
      EXPECT_LE(row["max_abs"].get<double>(), 1e-3) << row.dump();
      // Timed on the target and on the CPU: here both are the CPU.
      ASSERT_TRUE(row.contains("latency_us") && row.contains("cpu_latency_us")) << row.dump();
      EXPECT_GT(row["latency_us"].get<double>(), 0) << row.dump();
      EXPECT_GT(row["cpu_latency_us"].get<double>(), 0) << row.dump();
    } else if (kind == "trace") {
      ++trace_rows[name];
      EXPECT_EQ(row["status"], "n/a") << row.dump();
      EXPECT_EQ(row["detail"].get<std::string>().rfind(
                    "not applicable: backend 'cpu' recorded no device activity (CPU (", 0),
                0u)
          << row.dump();
    } else if (kind == "capture") {
      ++capture_rows[name];
      EXPECT_EQ(row["status"], "n/a") << row.dump();
      EXPECT_EQ(row["detail"], "not applicable: backend 'cpu' cannot capture a run (it has no graph capture)");
    } else if (kind == "tf32") {
      ++tf32_rows[name];
      EXPECT_EQ(row["status"], "n/a") << row.dump();
      EXPECT_EQ(row["detail"], "not applicable: backend 'cpu' has no TF32 math (it computes in fp32)");
    } else {
      ADD_FAILURE() << "unexpected row kind " << kind;
    }
  }
  const std::vector<std::string> ops = cpu_kernel_ops();
  EXPECT_EQ(op_rows.size(), ops.size()) << "one op name per kernel of the CPU's table, no others";
  for (const std::string& op : ops) EXPECT_GE(op_rows[op], 1) << op << " has no row";
  const std::vector<std::string> models = fusebox::models::builtin_model_names();
  EXPECT_EQ(model_rows.size(), models.size());
  for (const std::string& m : models) {
    EXPECT_EQ(model_rows[m], 1) << m;
    EXPECT_EQ(capture_rows[m], 1) << m;
    EXPECT_EQ(trace_rows[m], 1) << m;
    EXPECT_EQ(tf32_rows[m], 1) << m;
  }
  int passed = 0;
  for (const auto& row : j["rows"]) passed += row["status"] == "pass";
  EXPECT_EQ(j["passed"], passed);
}

TEST(Selftest, TheTextTableHasARowPerOpAndATotal) {
  Result r = run_cli("selftest");  // --backend cpu is the default
  ASSERT_EQ(r.code, 0) << r.out;
  for (const std::string& op : cpu_kernel_ops())
    EXPECT_NE(r.out.find("\nop       " + op + " "), std::string::npos) << op << "\n" << r.out;
  for (const std::string& m : fusebox::models::builtin_model_names())
    EXPECT_NE(r.out.find("\nmodel    " + m + " "), std::string::npos) << m << "\n" << r.out;
  EXPECT_NE(r.out.find(" 0 failed, 9 not applicable\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" us here, "), std::string::npos) << "model rows carry both latencies\n" << r.out;
}

// An op the backend has a kernel for but the command has no case for (simulated by the hidden
// --without-case) is a failing row saying so, and the command exits 1.
TEST(Selftest, AnOpWithoutACaseIsAFailingRow) {
  Result r = run_cli("selftest --json --without-case Softmax --without-case Gelu", /*with_stderr=*/false);
  EXPECT_EQ(r.code, 1) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["failed"], 2);
  int found = 0;
  for (const auto& row : j["rows"]) {
    if (row["name"] == "Softmax" || row["name"] == "Gelu") {
      ++found;
      EXPECT_EQ(row["status"], "FAIL");
      EXPECT_EQ(row["detail"].get<std::string>().rfind("no self-test case: add one for " +
                                                           row["name"].get<std::string>(), 0),
                0u)
          << row.dump();
      EXPECT_TRUE(row["max_abs"].is_null());
    } else if (row["kind"] != "capture" && row["kind"] != "trace" && row["kind"] != "tf32") {  // n/a on the CPU
      EXPECT_EQ(row["status"], "pass") << row.dump();
    }
  }
  EXPECT_EQ(found, 2) << "one row per op without a case, even for an op with two cases";
  Result text = run_cli("selftest --without-case Softmax");
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.out.find("FAIL"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1 failed"), std::string::npos) << text.out;
}

// The comparison's failing side: at zero tolerance a model row whose outputs differ at all fails,
// naming how many elements differ and the first one, and one that matches bit for bit passes.
// Which models differ depends on the kernels' path (on some, the fused and unfused kernels round
// alike), but the transformers always do: the fused Attention's online softmax divides once at
// the end where the unfused graph divides each probability.
TEST(Selftest, AMismatchBeyondTheToleranceIsAFailingRowAndExit1) {
  Result r = run_cli("selftest --json --rtol 0 --atol 0", /*with_stderr=*/false);
  EXPECT_EQ(r.code, 1) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  int failed = 0, model_rows = 0, model_fails = 0;
  for (const auto& row : j["rows"]) {
    failed += row["status"] == "FAIL";
    EXPECT_EQ(row["rtol"], 0.0) << row.dump();
    if (row["kind"] != "model") continue;
    ++model_rows;
    const double max_abs = row["max_abs"].get<double>();
    EXPECT_LT(max_abs, 1e-3) << row.dump();
    if (max_abs == 0.0) {
      EXPECT_EQ(row["status"], "pass") << row.dump();
      continue;
    }
    ++model_fails;
    EXPECT_EQ(row["status"], "FAIL") << row.dump();
    EXPECT_NE(row["detail"].get<std::string>().find(" elements differ; first: output 0 element "), std::string::npos)
        << row.dump();
  }
  EXPECT_GE(model_fails, 1) << r.out;
  EXPECT_EQ(model_rows, static_cast<int>(fusebox::models::builtin_model_names().size()));
  EXPECT_EQ(j["failed"], failed);
  Result bad = run_cli("selftest --rtol -1");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--rtol: expected a number >= 0, got \"-1\""), std::string::npos) << bad.out;
}

TEST(Selftest, AnUnknownBackendIsExit2WithAHint) {
  Result r = run_cli("selftest --backend nope");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "fusebox: error: --backend: unknown backend 'nope' (valid: cpu, cuda)\n");
  Result near = run_cli("selftest --backend cpuu");
  EXPECT_EQ(near.code, 2) << near.out;
  EXPECT_NE(near.out.find("unknown backend 'cpuu' (did you mean 'cpu'?)"), std::string::npos) << near.out;
}

#ifdef FUSEBOX_CUDA_PLUGIN
bool driver_present() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}
#endif

TEST(Selftest, CudaWithoutADriverIsExit2WithTheReason) {
#ifndef FUSEBOX_CUDA_PLUGIN
  GTEST_SKIP() << "the CUDA plugin is not built here (no CUDA toolkit)";
#else
  if (driver_present()) GTEST_SKIP() << "an NVIDIA driver is installed here: the no-driver sentence cannot be seen";
  Result r = run_cli("selftest --backend cuda");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "fusebox: error: backend 'cuda' is unavailable: no NVIDIA driver: libcuda.so.1 was not found (the "
                   "CUDA toolkit alone is not enough; install the NVIDIA driver)\n");
#endif
}

}  // namespace
