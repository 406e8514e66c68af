#include <gtest/gtest.h>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "profiler/exporters.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;

TEST(ChromeTrace, RealRecordingPassesStrictChecker) {
  for (const char* passes : {"none", "all"}) {
    Recording r = ptest::record("transformer:seq=16,d=32,heads=2,ffn=64", passes, 3);
    nlohmann::json j = chrome_trace(r);
    auto problems = ptest::check_chrome_trace(j);
    EXPECT_TRUE(problems.empty()) << passes << ": " << (problems.empty() ? "" : problems.front());
    size_t ops = 0, counters = 0, annotations = 0;
    for (const auto& e : j["traceEvents"]) {
      if (e["ph"] == "X" && e["cat"] == "cpu_op") ++ops;
      if (e["ph"] == "X" && e["cat"] == "user_annotation") ++annotations;
      if (e["ph"] == "C") ++counters;
    }
    EXPECT_GT(ops, 0u);
    EXPECT_EQ(annotations + ops, r.spans.size());  // runs and stages are annotations
    EXPECT_GE(annotations, 3u + 4u);
    EXPECT_EQ(counters, r.counters.size());
  }
}

TEST(ChromeTrace, CheckerCatchesBadTraces) {
  nlohmann::json j = {{"traceEvents",
                       {{{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"tid", 0}, {"ts", 0}, {"args", {{"name", "p"}}}},
                        {{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 1}, {"ts", 0}, {"args", {{"name", "t"}}}},
                        {{"ph", "X"}, {"cat", "user_annotation"}, {"name", "a"}, {"pid", 1}, {"tid", 1}, {"ts", 0}, {"dur", 10}},
                        {{"ph", "X"}, {"cat", "user_annotation"}, {"name", "b"}, {"pid", 1}, {"tid", 1}, {"ts", 5}, {"dur", 10}}}}};
  EXPECT_FALSE(ptest::check_chrome_trace(j).empty());
  j["traceEvents"][3]["dur"] = 5;
  EXPECT_TRUE(ptest::check_chrome_trace(j).empty());
  j["traceEvents"].push_back({{"ph", "s"}, {"cat", "ac2g"}, {"id", 7}, {"name", "ac2g"}, {"pid", 1}, {"tid", 1}, {"ts", 1}});
  EXPECT_FALSE(ptest::check_chrome_trace(j).empty());  // unpaired flow
}

TEST(ChromeTrace, DeviceActivityGoesToDeviceTracksWithFlows) {
  Recording r = ptest::record("mlp:dims=16-8-4", "none", 1);
  const Span* op = nullptr;
  for (const Span& s : r.spans)
    if (s.kind == SpanKind::Op) { op = &s; break; }
  ASSERT_NE(op, nullptr);
  int64_t t = op->start_ns;
  int64_t len = std::max<int64_t>(op->end_ns - op->start_ns, 4);
  auto act = [&](exec::ActivityKind k, const char* name, int64_t s, int64_t e, int32_t stream, uint32_t corr) {
    exec::DeviceActivity a;
    a.kind = k;
    a.name = name;
    a.start_ns = s;
    a.end_ns = e;
    a.device = 0;
    a.stream = stream;
    a.correlation_id = corr;
    a.thread_id = static_cast<uint32_t>(op->tid);
    a.grid[0] = 4; a.block[0] = 128;
    a.bytes = 4096;
    return a;
  };
  // Runtime calls inside the op range on the host thread; kernels and a copy later on the GPU.
  r.device.push_back(act(exec::ActivityKind::Runtime, "cudaLaunchKernel", t, t + len / 4, 0, 1));
  r.device.push_back(act(exec::ActivityKind::Runtime, "cudaMemcpyAsync", t + len / 2, t + 3 * len / 4, 0, 2));
  r.device.push_back(act(exec::ActivityKind::Kernel, "gemm_kernel", t + len, t + 2 * len, 7, 1));
  r.device.push_back(act(exec::ActivityKind::Memcpy, "DtoH", t + 2 * len, t + 3 * len, 7, 2));
  r.device.push_back(act(exec::ActivityKind::Kernel, "orphan_kernel", t + 3 * len, t + 4 * len, 8, 0));
  nlohmann::json j = chrome_trace(r);
  auto problems = ptest::check_chrome_trace(j);
  EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems.front());
  size_t flows = 0, kernels = 0, copies = 0, runtime = 0;
  bool stream_named = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "s" || e["ph"] == "f") ++flows;
    if (e["ph"] == "X" && e["cat"] == "kernel") {
      ++kernels;
      EXPECT_EQ(e["pid"], 0);
      EXPECT_TRUE(e["tid"] == 7 || e["tid"] == 8);
    }
    if (e["ph"] == "X" && e["cat"] == "gpu_memcpy") ++copies;
    if (e["ph"] == "X" && e["cat"] == "cuda_runtime") {
      ++runtime;
      EXPECT_EQ(e["pid"], r.pid);
    }
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0 && e["tid"] == 7) stream_named = true;
  }
  EXPECT_EQ(flows, 4u);
  EXPECT_EQ(kernels, 2u);
  EXPECT_EQ(copies, 1u);
  EXPECT_EQ(runtime, 2u);
  EXPECT_TRUE(stream_named);
}

TEST(AtomicExport, ExistingFileReplacedOnlyOnSuccess) {
  std::string dir = ptest::temp_dir("atomic");
  std::string path = dir + "/trace.json";
  write_file_atomically(path, std::string("previous"));
  Recording bad = ptest::record("mlp:dims=16-8-4", "none", 1);
  bad.spans.back().end_ns = bad.spans.back().start_ns - 1;  // invalid: the export must refuse
  EXPECT_THROW(write_chrome_trace(bad, path), Error);
  EXPECT_THROW(write_nvtxt(bad, dir + "/trace.json"), Error);
  EXPECT_THROW(write_nsys_sqlite(bad, dir + "/trace.json"), Error);
  EXPECT_EQ(read_file(path), "previous");
  EXPECT_THROW(write_chrome_trace(ptest::record("mlp:dims=16-8-4", "none", 1), dir + "/no/such/dir/t.json"), Error);
  Recording good = ptest::record("mlp:dims=16-8-4", "none", 1);
  write_chrome_trace(good, path);
  EXPECT_NE(read_file(path), "previous");
  // No temporary files left behind.
  auto listing = ptest::run_command("ls -A " + dir);
  EXPECT_EQ(listing.output, "trace.json\n");
}
