// import_kineto: real PyTorch profiler traces (A100, two kineto layouts), our own export read
// back byte for byte, and the files it must refuse.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "profiler/counters.h"
#include "profiler/exporters.h"
#include "profiler/trace_import.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;
using exec::ActivityKind;

namespace {

std::string trace(const std::string& name) {
  return std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/" + name;
}

size_t count(const Recording& r, ActivityKind kind) {
  return static_cast<size_t>(
      std::count_if(r.device.begin(), r.device.end(),
                    [&](const exec::DeviceActivity& a) { return a.kind == kind; }));
}

size_t count(const Recording& r, SpanKind kind) {
  return static_cast<size_t>(
      std::count_if(r.spans.begin(), r.spans.end(), [&](const Span& s) { return s.kind == kind; }));
}

int64_t total_ns(const Recording& r, ActivityKind kind) {
  int64_t t = 0;
  for (const exec::DeviceActivity& a : r.device)
    if (a.kind == kind) t += a.end_ns - a.start_ns;
  return t;
}

// The message import_kineto throws for `path`, "" when it does not throw.
std::string import_error(const std::string& path) {
  return ptest::error_of([&] { import_kineto(path); });
}

// The warning line that mentions `what`, "" when none does.
std::string warning_about(const ImportReport& report, const std::string& what) {
  for (const std::string& w : report.warnings)
    if (w.find(what) != std::string::npos) return w;
  return "";
}

// A one-thread trace of the given X events (plus its process and thread names).
std::string write_trace(const std::string& dir, const std::string& name, nlohmann::json events) {
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", 10},
                    {"tid", 0},
                    {"ts", 0},
                    {"args", {{"name", "python"}}}});
  events.push_back({{"ph", "M"},
                    {"name", "thread_name"},
                    {"pid", 10},
                    {"tid", 11},
                    {"ts", 0},
                    {"args", {{"name", "main"}}}});
  std::string path = dir + "/" + name;
  write_file_atomically(path, nlohmann::json{{"traceEvents", events}}.dump());
  return path;
}

nlohmann::json op(const std::string& name, nlohmann::json ts, nlohmann::json dur) {
  nlohmann::json e = {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 10}, {"tid", 11}};
  if (!ts.is_null()) e["ts"] = ts;
  if (!dur.is_null()) e["dur"] = dur;
  return e;
}

}  // namespace

// ---- real traces
// ---------------------------------------------------------------------------------

TEST(ImportKineto, AlexNetTraceCountsMatchAnIndependentReading) {
  ImportReport report;
  const std::string path = trace("kineto_a100_alexnet.json.gz");
  Recording r = import_kineto(path, &report);
  EXPECT_EQ(check_recording(r), "");
  EXPECT_EQ(r.source, "kineto");
  EXPECT_EQ(r.model, path);
  EXPECT_EQ(r.origin_ns, 0);
  // python3 -c "import gzip,json,sys,collections as C; e=[x for x in
  // json.load(gzip.open(sys.argv[1]))
  //   ['traceEvents'] if x.get('ph')=='X']; print(C.Counter(x['cat'] for x in e),
  //   sum(x['dur']*1000 for x in e if x['cat']=='kernel'))"
  //   tests/data/traces/kineto_a100_alexnet.json.gz
  // -> user_annotation 8, cpu_op 359, cuda_runtime 361, gpu_memcpy 16, cuda_sync 41, kernel 79,
  //    gpu_memset 3, Trace 1; kernel time 10692000 ns
  EXPECT_EQ(count(r, ActivityKind::Kernel), 79u);
  EXPECT_EQ(count(r, ActivityKind::Memcpy), 16u);
  EXPECT_EQ(count(r, ActivityKind::Memset), 3u);
  EXPECT_EQ(count(r, ActivityKind::Runtime), 361u);
  EXPECT_EQ(count(r, ActivityKind::Sync), 41u);
  EXPECT_EQ(count(r, SpanKind::Op), 359u);
  EXPECT_EQ(count(r, SpanKind::Range), 8u);
  EXPECT_EQ(total_ns(r, ActivityKind::Kernel), 10692000);
  // ... sum(x['dur']*1000 for x in e if x['cat']=='gpu_memcpy'), sum(x['args']['bytes'] for x in e
  //   if x['cat']=='gpu_memcpy') -> 55503000 244403360
  EXPECT_EQ(total_ns(r, ActivityKind::Memcpy), 55503000);
  uint64_t copied = 0;
  for (const auto& a : r.device)
    if (a.kind == ActivityKind::Memcpy) {
      copied += a.bytes;
      EXPECT_EQ(a.name, "Memcpy HtoD (Pageable -> Device)");
      EXPECT_EQ(a.copy_kind, 1);  // HtoD
      EXPECT_EQ(a.src_kind, exec::kMemoryKindPageable);
      EXPECT_EQ(a.dst_kind, 3);  // device
    }
  EXPECT_EQ(copied, 244403360u);
  // Spans and activity in start order; the Trace envelope and the 2 instant events skipped.
  EXPECT_TRUE(std::is_sorted(r.device.begin(), r.device.end(),
                             [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; }));
  EXPECT_EQ(report.format, "kineto");
  EXPECT_EQ(report.skipped, 3u);
  EXPECT_NE(warning_about(report, "'Trace'"), "");
  EXPECT_NE(warning_about(report, "phase 'i'"), "");
}

TEST(ImportKineto, AlexNetTimesAreExactNanosecondsOfTheFile) {
  Recording r = import_kineto(trace("kineto_a100_alexnet.json.gz"));
  // The first memcpy: "ts": 1695835572943613, "dur": 12 (epoch microseconds; times 1000 exceeds
  // a double's exact integers, the import must not round).
  auto copy = std::find_if(r.device.begin(), r.device.end(),
                           [](const auto& a) { return a.kind == ActivityKind::Memcpy; });
  ASSERT_NE(copy, r.device.end());
  EXPECT_EQ(copy->start_ns, 1695835572943613000);
  EXPECT_EQ(copy->end_ns, 1695835572943625000);
  EXPECT_EQ(copy->device, 0);
  EXPECT_EQ(copy->stream, 7);
  EXPECT_EQ(copy->correlation_id, 14u);
}

TEST(ImportKineto, EveryAlexNetKernelIsCorrelatedToARuntimeCall) {
  Recording r = import_kineto(trace("kineto_a100_alexnet.json.gz"));
  // python3 -c "...; rt={x['args']['correlation'] for x in e if x['cat']=='cuda_runtime'};
  //   print(all(x['args']['correlation'] in rt for x in e if x['cat']=='kernel'))" -> True
  std::map<uint32_t, const exec::DeviceActivity*> launches;
  for (const auto& a : r.device)
    if (a.kind == ActivityKind::Runtime) launches[a.correlation_id] = &a;
  size_t kernels = 0;
  for (const auto& a : r.device) {
    if (a.kind != ActivityKind::Kernel) continue;
    ++kernels;
    ASSERT_NE(a.correlation_id, 0u) << a.name;
    auto it = launches.find(a.correlation_id);
    ASSERT_NE(it, launches.end()) << a.name;
    EXPECT_LE(it->second->start_ns, a.start_ns) << a.name;  // launched before it ran
    EXPECT_EQ(it->second->thread_id, 2869224u);
    EXPECT_GT(a.grid[0], 0);
    EXPECT_GT(a.block[0], 0);
    EXPECT_GT(a.registers, 0);
  }
  EXPECT_EQ(kernels, 79u);
}

TEST(ImportKineto, AlexNetHostProcessThreadsAndSyncsAreRead) {
  Recording r = import_kineto(trace("kineto_a100_alexnet.json.gz"));
  EXPECT_EQ(r.pid, 2869224);
  EXPECT_EQ(r.main_tid, 2869224);
  ASSERT_EQ(r.thread_names.size(), 1u);  // named twice in the file, once here
  EXPECT_EQ(r.thread_names[0].second, "thread 2869224 (python3.10)");
  // ... sum(1 for x in e if x['cat']=='cuda_sync' and x['args']['stream']==4294967295) -> 5
  size_t context_syncs = 0, stream_syncs = 0;
  for (const auto& a : r.device) {
    if (a.kind != ActivityKind::Sync) continue;
    if (a.stream == -1) {
      ++context_syncs;
      EXPECT_EQ(a.name, "Context Sync");
    }
    stream_syncs += a.name == "Stream Sync";
  }
  EXPECT_EQ(context_syncs, 5u);
  EXPECT_EQ(stream_syncs, 16u);
  // Depth by nesting: the outermost annotation holds everything on the thread.
  EXPECT_EQ(r.spans.front().name, "[param|cuda]");
  EXPECT_EQ(r.spans.front().depth, 0);
  EXPECT_GT(std::max_element(r.spans.begin(), r.spans.end(),
                             [](const Span& a, const Span& b) { return a.depth < b.depth; })
                ->depth,
            1);
}

TEST(ImportKineto, AlexNetGpusAreReadFromDeviceProperties) {
  Recording r = import_kineto(trace("kineto_a100_alexnet.json.gz"));
  // python3 -c "...; print(len(j['deviceProperties']), [(d['id'],d['numSms'],d['totalGlobalMem'])
  //   for d in j['deviceProperties']][:2])" -> 8 [(0, 108, 42297524224), (1, 108, 42297524224)]
  ASSERT_EQ(r.gpus.size(), 8u);
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    EXPECT_EQ(r.gpus[i].device, static_cast<int32_t>(i));
    EXPECT_EQ(r.gpus[i].name, "NVIDIA A100-PG509-200");
    EXPECT_EQ(r.gpus[i].sm_count, 108);
    EXPECT_EQ(r.gpus[i].compute_major, 8);
    EXPECT_EQ(r.gpus[i].compute_minor, 0);
    EXPECT_EQ(r.gpus[i].memory_bytes, 42297524224u);
  }
}

TEST(ImportKineto, CuptiProfilerTraceHasRuntimeCallsAndOpsButNoKernels) {
  ImportReport report;
  Recording r = import_kineto(trace("kineto_a100_cupti_profiler.json.gz"), &report);
  EXPECT_EQ(check_recording(r), "");
  // python3 -c "(the one-liner above)" tests/data/traces/kineto_a100_cupti_profiler.json.gz
  // -> user_annotation 8, cpu_op 375, cuda_runtime 1862, cuda_profiler_range 77, Trace 2;
  //    sum(x['dur']*1000 for x in e if x['cat']=='cuda_runtime') -> 8194022000
  EXPECT_EQ(count(r, ActivityKind::Runtime), 1862u);
  EXPECT_EQ(total_ns(r, ActivityKind::Runtime), 8194022000);
  EXPECT_EQ(count(r, ActivityKind::Kernel), 0u);
  EXPECT_EQ(count(r, ActivityKind::Memcpy) + count(r, ActivityKind::Memset) +
                count(r, ActivityKind::Sync),
            0u);
  EXPECT_EQ(count(r, SpanKind::Op), 375u);
  EXPECT_EQ(count(r, SpanKind::Range), 8u);
  EXPECT_EQ(r.gpus.size(), 8u);
  // The range profiler's kernel replays are counted, not imported.
  std::string w = warning_about(report, "cuda_profiler_range");
  EXPECT_EQ(w.rfind("77 events", 0), 0u) << w;
  EXPECT_EQ(warning_about(report, "'Trace'").rfind("2 events", 0), 0u);
}

TEST(ImportKineto, OlderLayoutReadsKernelAndRuntimeCategories) {
  Recording r = import_kineto(trace("kineto_inference_small.json.gz"));
  EXPECT_EQ(check_recording(r), "");
  // python3 -c "(the one-liner above, with cat 'Kernel')"
  // tests/data/traces/kineto_inference_small.json.gz
  // -> Kernel 4, Runtime 8, Trace 1; kernel time 30000 ns; kernel correlations
  //    [538860, 538873, 538885, 538890]
  EXPECT_EQ(count(r, ActivityKind::Kernel), 4u);
  EXPECT_EQ(count(r, ActivityKind::Runtime), 8u);
  EXPECT_EQ(total_ns(r, ActivityKind::Kernel), 30000);
  EXPECT_TRUE(r.spans.empty());
  EXPECT_TRUE(r.gpus.empty());  // no deviceProperties in this layout
  EXPECT_EQ(r.pid, 1010370);
  EXPECT_EQ(r.main_tid, 1010370);  // no host spans: the thread of the runtime calls
  std::vector<uint32_t> corr;
  for (const auto& a : r.device)
    if (a.kind == ActivityKind::Kernel) corr.push_back(a.correlation_id);
  EXPECT_EQ(corr, (std::vector<uint32_t>{538860, 538873, 538885, 538890}));
}

TEST(ImportKineto, OlderLayoutCorrelatesThroughItsFlowsWhenKernelsLackTheArg) {
  // The same file with "correlation" taken off the kernels: the async_gpu flows (s on the
  // cudaLaunchKernel, f on the kernel, same id) must give the same ids.
  auto unzipped = ptest::run_command("zcat " + trace("kineto_inference_small.json.gz"));
  ASSERT_EQ(unzipped.status, 0) << unzipped.output;
  nlohmann::json j = nlohmann::json::parse(unzipped.output);
  size_t stripped = 0;
  for (auto& e : j["traceEvents"])
    if (e.value("cat", "") == "Kernel") stripped += e["args"].erase("correlation");
  ASSERT_EQ(stripped, 4u);
  std::string path = ptest::temp_dir("kineto-flows") + "/no_correlation.json";
  write_file_atomically(path, j.dump());
  ImportReport report;
  Recording r = import_kineto(path, &report);
  std::vector<uint32_t> corr;
  for (const auto& a : r.device)
    if (a.kind == ActivityKind::Kernel) corr.push_back(a.correlation_id);
  EXPECT_EQ(corr, (std::vector<uint32_t>{538860, 538873, 538885, 538890}));
  EXPECT_EQ(warning_about(report, "correlation 0"), "");
  // Without the flows too, nothing ties them: correlation 0, counted.
  nlohmann::json events = nlohmann::json::array();
  for (auto& e : j["traceEvents"])
    if (e.value("cat", "") != "async_gpu") events.push_back(e);
  j["traceEvents"] = events;
  write_file_atomically(path, j.dump());
  r = import_kineto(path, &report);
  for (const auto& a : r.device)
    if (a.kind == ActivityKind::Kernel) {
      EXPECT_EQ(a.correlation_id, 0u);
    }
  EXPECT_EQ(warning_about(report, "correlation 0").rfind("4 events", 0), 0u)
      << warning_about(report, "correlation 0");
}

// ROCm's kineto logger writes a copy's size on its hipMemcpy* call, not on the copy: the copy
// takes it by correlation id. The MI250 trace's two copies each have a call saying "size": "2560"
// (read with Python's json module); the file's copy records carry no "bytes".
TEST(ImportKineto, ACopyWithoutASizeTakesItsCallsByCorrelation) {
  Recording r = import_kineto(trace("kineto_mi250_rocm_train.json.gz"));
  std::vector<uint64_t> sizes;
  for (const auto& a : r.device)
    if (a.kind == ActivityKind::Memcpy) sizes.push_back(a.bytes);
  EXPECT_EQ(sizes, (std::vector<uint64_t>{2560, 2560}));

  // Only a copy or memset call's size, only a number or digits, and never over the copy's own.
  auto call = [](const char* name, int corr, nlohmann::json size) {
    nlohmann::json args = {{"correlation", corr}};
    if (!size.is_null()) args["size"] = size;
    return nlohmann::json{{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", name}, {"pid", 1}, {"tid", 1},
                          {"ts", 10 * corr}, {"dur", 2}, {"args", args}};
  };
  auto gpu = [](const char* cat, int corr, nlohmann::json bytes) {
    nlohmann::json args = {{"correlation", corr}, {"device", 0}, {"stream", 7}};
    if (!bytes.is_null()) args["bytes"] = bytes;
    return nlohmann::json{{"ph", "X"}, {"cat", cat}, {"name", "Memcpy HtoD (Host -> Device)"}, {"pid", 0},
                          {"tid", 7}, {"ts", 10 * corr + 5}, {"dur", 1}, {"args", args}};
  };
  nlohmann::json events = nlohmann::json::array({
      call("hipMemcpyAsync", 1, "4096"), gpu("gpu_memcpy", 1, nullptr),      // takes 4096
      call("hipMemcpyWithStream", 2, 9), gpu("gpu_memcpy", 2, 100),          // keeps its own 100
      call("hipLaunchKernel", 3, "5"), gpu("gpu_memset", 3, nullptr),        // not a copy call: 0
      call("hipMemsetAsync", 4, 64), gpu("gpu_memset", 4, nullptr),          // a memset call: 64
      call("hipMemcpy", 5, "12abc"), gpu("gpu_memcpy", 5, nullptr),          // not digits: 0
      call("hipMemcpy", 6, -3), gpu("gpu_memcpy", 6, nullptr),               // negative: 0
      call("hipMemcpy", 7, nullptr), gpu("gpu_memcpy", 7, nullptr),          // no size at all: 0
  });
  const std::string path = ptest::temp_dir("kineto-call-sizes") + "/calls.json";
  write_file_atomically(path, nlohmann::json{{"traceEvents", events}}.dump());
  std::map<uint32_t, uint64_t> by_corr;
  for (const auto& a : import_kineto(path).device)
    if (a.kind == ActivityKind::Memcpy || a.kind == ActivityKind::Memset) by_corr[a.correlation_id] = a.bytes;
  EXPECT_EQ(by_corr, (std::map<uint32_t, uint64_t>{{1, 4096}, {2, 100}, {3, 0}, {4, 64}, {5, 0}, {6, 0}, {7, 0}}));
}

// ---- round trips
// -----------------------------------------------------------------------------------

namespace {

// Export, import, export again: the two files must be the same bytes. `warnings`: how many
// warning lines the import may give (GPU work with no launch is kept, and counted).
void expect_round_trip(const Recording& r, const std::string& tag, size_t warnings = 0) {
  std::string dir = ptest::temp_dir("kineto-rt-" + tag);
  write_chrome_trace(r, dir + "/a.json");
  ImportReport report;
  Recording back = import_kineto(dir + "/a.json", &report);
  EXPECT_EQ(check_recording(back), "");
  EXPECT_EQ(report.skipped, 0u);
  EXPECT_EQ(report.warnings.size(), warnings)
      << (report.warnings.empty() ? "" : report.warnings.front());
  write_chrome_trace(back, dir + "/b.json");
  std::string a = read_file(dir + "/a.json"), b = read_file(dir + "/b.json");
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b) << tag << ": first difference at byte "
                      << std::distance(a.begin(),
                                       std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first);
}

exec::DeviceActivity activity(ActivityKind kind, const std::string& name, int64_t start,
                              int64_t end, int32_t stream, uint32_t corr, uint32_t thread) {
  exec::DeviceActivity a;
  a.kind = kind;
  a.name = name;
  a.start_ns = start;
  a.end_ns = end;
  a.stream = stream;
  a.correlation_id = corr;
  a.thread_id = kind == ActivityKind::Runtime ? thread : 0;
  return a;
}

// A recorded session plus a Range and a node-less Op span on a second thread, device activity of
// every kind (copies with memory kinds, a context-wide sync on stream -1, a kernel with no launch)
// and a GPU.
Recording with_every_kind() {
  Recording r = ptest::record("mlp:dims=16-8-4", "none", 2);
  const Span first = r.spans.front();
  const int64_t t = first.start_ns, len = std::max<int64_t>(first.end_ns - first.start_ns, 400);
  const int32_t other = r.main_tid + 1;
  r.thread_names.push_back({other, "python thread"});
  Span range{.name = "forward",
             .start_ns = t + 1,
             .end_ns = t + len,
             .run = -1,
             .tid = other,
             .node = -1,
             .depth = 0,
             .kind = SpanKind::Range};
  Span host_op{.name = "aten::linear",
               .start_ns = t + 2,
               .end_ns = t + len / 2,
               .run = -1,
               .tid = other,
               .node = -1,
               .depth = 1,
               .kind = SpanKind::Op};
  r.spans.push_back(range);
  r.spans.push_back(host_op);
  std::stable_sort(r.spans.begin(), r.spans.end(), [](const Span& a, const Span& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  const uint32_t tid = static_cast<uint32_t>(r.main_tid);
  auto& d = r.device;
  d.push_back(activity(ActivityKind::Runtime, "cudaMemcpyAsync", t + 10, t + 20, 0, 1, tid));
  d.push_back(activity(ActivityKind::Runtime, "cudaLaunchKernel", t + 30, t + 40, 0, 2, tid));
  d.push_back(
      activity(ActivityKind::Memcpy, "Memcpy HtoD (Pageable -> Device)", t + 45, t + 60, 7, 1, 0));
  d.back().bytes = 1 << 20;
  d.back().copy_kind = 1;
  d.back().src_kind = exec::kMemoryKindPageable;
  d.back().dst_kind = 3;
  d.push_back(activity(ActivityKind::Runtime, "cudaMemsetAsync", t + 50, t + 55, 0, 3, tid));
  d.push_back(activity(ActivityKind::Kernel, "gemm_kernel", t + 61, t + 90, 7, 2, 0));
  d.back().grid[0] = 64;
  d.back().grid[2] = 2;
  d.back().block[0] = 256;
  d.back().registers = 40;
  d.back().shared_memory = 4096;
  d.back().node_index = 0;
  d.push_back(activity(ActivityKind::Runtime, "cudaStreamSynchronize", t + 91, t + 120, 0, 4, tid));
  d.push_back(activity(ActivityKind::Memset, "Memset (Device)", t + 92, t + 95, 7, 3, 0));
  d.back().bytes = 512;
  d.push_back(activity(ActivityKind::Sync, "Stream Sync", t + 96, t + 119, 7, 4, 0));
  d.push_back(activity(ActivityKind::Memcpy, "DtoH", t + 121, t + 130, 8, 0, 0));
  d.back().copy_kind = 2;
  d.back().src_kind = 3;
  d.back().dst_kind = 2;
  d.push_back(activity(ActivityKind::Sync, "Context Sync", t + 131, t + 140, -1, 0, 0));
  d.push_back(activity(ActivityKind::Kernel, "orphan_kernel", t + 141, t + 150, 8, 0, 0));
  GpuInfo gpu;
  gpu.name = "NVIDIA A100-SXM4-40GB";
  gpu.sm_count = 108;
  gpu.compute_major = 8;
  gpu.memory_bytes = uint64_t{40} << 30;
  gpu.memory_bandwidth_bps = 1.555e12;
  r.gpus.push_back(gpu);
  return r;
}

}  // namespace

TEST(ImportKineto, RoundTripOfARecordedSessionIsByteIdentical) {
  expect_round_trip(ptest::record("transformer:seq=16,d=32,heads=2,ffn=64", "all", 3), "session");
  expect_round_trip(ptest::record("mlp:dims=16-8-4", "none", 1), "mlp");
}

TEST(ImportKineto, RoundTripWithWorkerThreadsIsByteIdenticalAndKeepsTheirSpans) {
  // Two threads: worker spans on the ops' thread (inside their op) and on the pool's thread.
  const Recording r = ptest::record_workers(ptest::kGemmModel, 2, 2);
  size_t workers = 0;
  for (const Span& s : r.spans) workers += s.kind == SpanKind::Worker;
  ASSERT_GT(workers, 0u);
  expect_round_trip(r, "workers");
  std::string path = ptest::temp_dir("kineto-workers") + "/t.json";
  write_chrome_trace(r, path);
  const Recording back = import_kineto(path);
  EXPECT_EQ(back.thread_names, r.thread_names);
  ASSERT_EQ(back.spans.size(), r.spans.size());
  for (size_t i = 0; i < r.spans.size(); ++i) {
    const Span &a = r.spans[i], &b = back.spans[i];
    EXPECT_EQ(b.kind, a.kind) << a.name;
    EXPECT_EQ(b.tid, a.tid) << a.name;
    EXPECT_EQ(b.run, a.run) << a.name;
    EXPECT_EQ(b.node, a.node) << a.name;
    EXPECT_EQ(b.depth, a.depth) << a.name;
  }
  const std::vector<WorkerUtilisation> wa = worker_utilisation(r), wb = worker_utilisation(back);
  ASSERT_EQ(wb.size(), wa.size());
  for (size_t i = 0; i < wa.size(); ++i) {
    EXPECT_EQ(wb[i].worker, wa[i].worker);
    EXPECT_EQ(wb[i].busy_ns, wa[i].busy_ns);
  }
}

TEST(ImportKineto, RoundTripWithDeviceActivityOfEveryKindIsByteIdentical) {
  Recording r = with_every_kind();
  ASSERT_EQ(check_recording(r), "");
  expect_round_trip(r, "every-kind", 1);  // the DtoH copy and orphan_kernel have no launch
}

TEST(ImportKineto, OurExportReadsBackToTheRecordingItCameFrom) {
  Recording r = with_every_kind();
  std::string path = ptest::temp_dir("kineto-back") + "/t.json";
  write_chrome_trace(r, path);
  Recording back = import_kineto(path);
  EXPECT_EQ(back.source, "fusebox");
  EXPECT_EQ(back.model, r.model);
  EXPECT_EQ(back.label, r.label);
  EXPECT_EQ(back.passes, r.passes);
  EXPECT_EQ(back.executor, r.executor);
  EXPECT_EQ(back.threads, r.threads);
  EXPECT_EQ(back.pid, r.pid);
  EXPECT_EQ(back.main_tid, r.main_tid);
  EXPECT_EQ(back.origin_utc_ns, r.origin_utc_ns);
  EXPECT_EQ(back.thread_names, r.thread_names);
  ASSERT_EQ(back.spans.size(), r.spans.size());
  for (size_t i = 0; i < r.spans.size(); ++i) {
    const Span &a = r.spans[i], &b = back.spans[i];
    EXPECT_EQ(b.kind, a.kind) << a.name;
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.start_ns, a.start_ns - r.origin_ns) << a.name;  // the file's time base
    EXPECT_EQ(b.end_ns, a.end_ns - r.origin_ns) << a.name;
    EXPECT_EQ(b.tid, a.tid);
    EXPECT_EQ(b.run, a.run) << a.name;
    EXPECT_EQ(b.node, a.node) << a.name;
    EXPECT_EQ(b.depth, a.depth) << a.name;
  }
  for (const Span& s : r.spans)
    if (s.node >= 0) {
      ASSERT_LT(static_cast<size_t>(s.node), back.nodes.size());
      const NodeInfo &a = r.nodes[static_cast<size_t>(s.node)],
                     &b = back.nodes[static_cast<size_t>(s.node)];
      EXPECT_EQ(b.name, a.name);
      EXPECT_EQ(b.op, a.op);
      EXPECT_EQ(b.input_shapes, a.input_shapes);
      EXPECT_EQ(b.output_shapes, a.output_shapes);
      EXPECT_EQ(b.flops, a.flops);
      EXPECT_EQ(b.output_offsets, a.output_offsets);
      EXPECT_EQ(b.live_bytes, a.live_bytes);
    }
  ASSERT_EQ(back.counters.size(), r.counters.size());
  ASSERT_EQ(back.counter_tracks.size(), r.counter_tracks.size());
  for (size_t i = 0; i < r.counters.size(); ++i) {
    EXPECT_EQ(back.counter_tracks[static_cast<size_t>(back.counters[i].track)].name,
              r.counter_tracks[static_cast<size_t>(r.counters[i].track)].name);
    EXPECT_EQ(back.counters[i].value, r.counters[i].value);
  }
  ASSERT_EQ(back.device.size(), r.device.size());
  for (size_t i = 0; i < r.device.size(); ++i) {
    const exec::DeviceActivity &a = r.device[i], &b = back.device[i];
    EXPECT_EQ(b.kind, a.kind) << a.name;
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.start_ns, a.start_ns - r.origin_ns);
    EXPECT_EQ(b.end_ns - b.start_ns, a.end_ns - a.start_ns);
    EXPECT_EQ(b.correlation_id, a.correlation_id) << a.name;
    EXPECT_EQ(b.node_index, a.node_index) << a.name;
    if (a.kind == ActivityKind::Runtime) {
      EXPECT_EQ(b.thread_id, a.thread_id);
      continue;
    }
    EXPECT_EQ(b.stream, a.stream) << a.name;
    EXPECT_EQ(b.copy_kind, a.copy_kind) << a.name;
    EXPECT_EQ(b.src_kind, a.src_kind) << a.name;
    EXPECT_EQ(b.dst_kind, a.dst_kind) << a.name;
    if (a.kind != ActivityKind::Kernel) {
      EXPECT_EQ(b.bytes, a.bytes) << a.name;
    }
    EXPECT_EQ(std::vector<int32_t>(b.grid, b.grid + 3), std::vector<int32_t>(a.grid, a.grid + 3));
    EXPECT_EQ(b.registers, a.registers);
    EXPECT_EQ(b.shared_memory, a.shared_memory);
  }
  ASSERT_EQ(back.gpus.size(), 1u);
  EXPECT_EQ(back.gpus[0].name, r.gpus[0].name);
  EXPECT_EQ(back.gpus[0].memory_bytes, r.gpus[0].memory_bytes);
  EXPECT_EQ(back.gpus[0].memory_bandwidth_bps, r.gpus[0].memory_bandwidth_bps);
}

TEST(ImportKineto, AnImportedKinetoTraceExportsToAFileThatReadsBackTheSame) {
  Recording r = import_kineto(trace("kineto_a100_alexnet.json.gz"));
  expect_round_trip(r, "alexnet");
}

// ---- times and nesting --------------------------------------------------------------------------

TEST(ImportKineto, FractionalMicrosecondsBecomeExactNanoseconds) {
  std::string dir = ptest::temp_dir("kineto-times");
  std::string path = write_trace(dir, "t.json", {op("outer", 1.5, 10.25), op("inner", 2.001, 0.5)});
  Recording r = import_kineto(path);
  ASSERT_EQ(r.spans.size(), 2u);
  EXPECT_EQ(r.spans[0].start_ns, 1500);
  EXPECT_EQ(r.spans[0].end_ns, 11750);
  EXPECT_EQ(r.spans[1].start_ns, 2001);
  EXPECT_EQ(r.spans[1].end_ns, 2501);
  EXPECT_EQ(r.spans[1].depth, 1);
  EXPECT_EQ(r.spans[1].node, -1);
  EXPECT_EQ(r.pid, 10);
  EXPECT_EQ(r.main_tid, 11);
  EXPECT_EQ(r.thread_names, (std::vector<std::pair<int32_t, std::string>>{{11, "main"}}));
}

TEST(ImportKineto, ChildOverlappingItsParentsEndIsClampedAndCounted) {
  std::string dir = ptest::temp_dir("kineto-overlap");
  // Listed child first and parent last: the import sorts them.
  std::string path =
      write_trace(dir, "t.json", {op("child", 5, 10), op("sibling", 12, 5), op("parent", 0, 12)});
  ImportReport report;
  Recording r = import_kineto(path, &report);
  EXPECT_EQ(check_recording(r), "");
  ASSERT_EQ(r.spans.size(), 3u);
  EXPECT_EQ(r.spans[0].name, "parent");
  EXPECT_EQ(r.spans[1].name, "child");
  EXPECT_EQ(r.spans[1].end_ns, 12000);  // clamped from 15000
  EXPECT_EQ(r.spans[1].depth, 1);
  EXPECT_EQ(r.spans[2].name, "sibling");
  EXPECT_EQ(r.spans[2].depth, 0);
  EXPECT_EQ(report.skipped, 0u);
  EXPECT_EQ(warning_about(report, "clamped").rfind("1 event", 0), 0u)
      << warning_about(report, "clamped");
}

TEST(ImportKineto, NegativeDurationIsSkippedWithACountedWarning) {
  std::string dir = ptest::temp_dir("kineto-negative");
  std::string path =
      write_trace(dir, "t.json", {op("good", 0, 5), op("bad", 10, -3), op("worse", 20, -1.5)});
  ImportReport report;
  Recording r = import_kineto(path, &report);
  ASSERT_EQ(r.spans.size(), 1u);
  EXPECT_EQ(r.spans[0].name, "good");
  EXPECT_EQ(report.events, 5u);  // 3 X + 2 M
  EXPECT_EQ(report.skipped, 2u);
  EXPECT_EQ(warning_about(report, "negative dur"), "2 events with a negative dur, skipped");
}

TEST(ImportKineto, MissingOrHugeTsIsSkippedWithACountedWarning) {
  std::string dir = ptest::temp_dir("kineto-ts");
  std::string path =
      write_trace(dir, "t.json",
                  {op("good", 0, 5), op("no ts", nullptr, 5), op("far", 1e300, 5),
                   op("string ts", "12", 5), op("no dur", 3, nullptr), op("far dur", 3, 1e300)});
  ImportReport report;
  Recording r = import_kineto(path, &report);
  ASSERT_EQ(r.spans.size(), 1u);
  EXPECT_EQ(report.skipped, 5u);
  EXPECT_EQ(warning_about(report, "usable ts").rfind("3 events", 0), 0u)
      << warning_about(report, "usable ts");
  EXPECT_EQ(warning_about(report, "usable dur").rfind("2 events", 0), 0u)
      << warning_about(report, "usable dur");
}

TEST(ImportKineto, BareArrayOfEventsAndUnknownCategoriesAreRead) {
  std::string dir = ptest::temp_dir("kineto-bare");
  nlohmann::json events = {op("aten::add", 0, 5),
                           {{"ph", "X"},
                            {"cat", "python_function"},
                            {"name", "model.py(12): forward"},
                            {"pid", 10},
                            {"tid", 11},
                            {"ts", 0},
                            {"dur", 9}},
                           {{"ph", "X"},
                            {"cat", "overhead"},
                            {"name", "x"},
                            {"pid", 10},
                            {"tid", 11},
                            {"ts", 0},
                            {"dur", 1}},
                           {{"ph", "X"},
                            {"cat", "overhead"},
                            {"name", "y"},
                            {"pid", 10},
                            {"tid", 11},
                            {"ts", 2},
                            {"dur", 1}}};
  write_file_atomically(dir + "/bare.json", events.dump());
  ImportReport report;
  Recording r = import_kineto(dir + "/bare.json", &report);
  ASSERT_EQ(r.spans.size(), 2u);
  EXPECT_EQ(r.spans[0].kind, SpanKind::Range);  // python_function, the longer one, first
  EXPECT_EQ(r.spans[1].kind, SpanKind::Op);
  EXPECT_EQ(warning_about(report, "'overhead'"), "2 events of category 'overhead', skipped");
}

TEST(ImportKineto, MalformedEventsAreSkippedNotFatal) {
  std::string dir = ptest::temp_dir("kineto-malformed");
  nlohmann::json bad_name = op("x", 1, 1);
  bad_name["name"] = 7;
  nlohmann::json bad_tid = op("y", 1, 1);
  bad_tid["tid"] = int64_t{1} << 40;
  nlohmann::json string_pid = op("z", 1, 1);
  string_pid["pid"] = "Spans";
  std::string path = write_trace(dir, "t.json",
                                 {op("good", 0, 5),
                                  bad_name,
                                  bad_tid,
                                  string_pid,
                                  42,
                                  {{"ph", "M"},
                                   {"name", "thread_name"},
                                   {"pid", 10},
                                   {"tid", int64_t{1} << 40},
                                   {"args", {{"name", "t"}}}}});
  ImportReport report;
  Recording r = import_kineto(path, &report);
  ASSERT_EQ(r.spans.size(), 1u);
  EXPECT_EQ(r.thread_names.size(), 1u);
  EXPECT_EQ(report.skipped, 5u);
  EXPECT_EQ(warning_about(report, "not an integer").rfind("1 event", 0), 0u);
  EXPECT_EQ(warning_about(report, "not a JSON object").rfind("1 event", 0), 0u);
}

TEST(ImportKineto, AForeignProcessNamedFuseboxIsStillAKinetoTrace) {
  std::string dir = ptest::temp_dir("kineto-name");
  nlohmann::json events = {op("aten::mm", 0, 5),
                           {{"ph", "M"},
                            {"name", "process_name"},
                            {"pid", 10},
                            {"tid", 0},
                            {"args", {{"name", "fusebox serve"}}}}};
  write_file_atomically(dir + "/t.json",
                        nlohmann::json{{"traceName", "run 3"}, {"traceEvents", events}}.dump());
  Recording r = import_kineto(dir + "/t.json");
  EXPECT_EQ(r.source, "kineto");
  EXPECT_EQ(r.model, dir + "/t.json");
}

TEST(ImportKineto, ExportWritesMemoryKindsSyncKindsAndDeviceProperties) {
  nlohmann::json j = chrome_trace(with_every_kind());
  ASSERT_TRUE(j.contains("deviceProperties"));
  EXPECT_EQ(j["deviceProperties"][0]["numSms"], 108);
  EXPECT_EQ(j["deviceProperties"][0]["name"], "NVIDIA A100-SXM4-40GB");
  size_t copies = 0, syncs = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("cat", "") == "gpu_memcpy" && e["name"] == "Memcpy HtoD (Pageable -> Device)") {
      ++copies;
      EXPECT_EQ(e["args"]["src kind"], exec::kMemoryKindPageable);
      EXPECT_EQ(e["args"]["dst kind"], 3);
    }
    if (e.value("cat", "") == "cuda_sync") {
      ++syncs;
      EXPECT_EQ(e["args"]["cuda_sync_kind"], e["name"]);
      EXPECT_EQ(e["tid"], e["args"]["stream"]);
      EXPECT_FALSE(e["args"].contains("bytes"));
    }
  }
  EXPECT_EQ(copies, 1u);
  EXPECT_EQ(syncs, 2u);
  // A recording without GPUs keeps the old layout.
  EXPECT_FALSE(
      chrome_trace(ptest::record("mlp:dims=16-8-4", "none", 1)).contains("deviceProperties"));
}

// ---- bad input
// -----------------------------------------------------------------------------------

TEST(ImportKineto, TruncatedGzipIsAnErrorNamingTheFile) {
  std::string whole = read_file(trace("kineto_a100_alexnet.json.gz"));
  std::string path = ptest::temp_dir("kineto-truncated") + "/half.json.gz";
  write_file_atomically(path, whole.substr(0, whole.size() / 2));
  EXPECT_EQ(import_error(path), path + ": truncated gzip stream");
}

TEST(ImportKineto, CorruptGzipIsAnErrorNamingTheFile) {
  std::string bytes = read_file(trace("kineto_inference_small.json.gz"));
  for (size_t i = 20; i < bytes.size() - 8; i += 7) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  std::string path = ptest::temp_dir("kineto-corrupt") + "/corrupt.gz";
  write_file_atomically(path, bytes);
  std::string e = import_error(path);
  EXPECT_EQ(e.rfind(path + ": corrupt gzip data: ", 0), 0u) << e;
}

TEST(ImportKineto, BytesAfterTheGzipStreamAreCorruptData) {
  std::string path = ptest::temp_dir("kineto-trailing") + "/trailing.json.gz";
  write_file_atomically(path, read_file(trace("kineto_inference_small.json.gz")) + "trailing junk");
  EXPECT_EQ(import_error(path),
            path + ": corrupt gzip data: bytes after the end of the gzip stream");
}

TEST(ImportKineto, GzipIsToldByContentNotByName) {
  std::string dir = ptest::temp_dir("kineto-names");
  // gzip bytes under a plain name, plain JSON under a .gz name
  write_file_atomically(dir + "/trace.json", read_file(trace("kineto_inference_small.json.gz")));
  auto unzipped = ptest::run_command("zcat " + trace("kineto_inference_small.json.gz"));
  ASSERT_EQ(unzipped.status, 0) << unzipped.output;
  write_file_atomically(dir + "/trace.json.gz", unzipped.output);
  EXPECT_EQ(count(import_kineto(dir + "/trace.json"), ActivityKind::Kernel), 4u);
  EXPECT_EQ(count(import_kineto(dir + "/trace.json.gz"), ActivityKind::Kernel), 4u);
}

TEST(ImportKineto, NotJsonIsAnErrorNamingTheFileAndTheByte) {
  std::string dir = ptest::temp_dir("kineto-notjson");
  write_file_atomically(dir + "/model.onnx", std::string("\x08\x07\x12\x04onnx", 8));
  std::string e = import_error(dir + "/model.onnx");
  EXPECT_EQ(e.rfind(dir + "/model.onnx: not JSON (at byte 1)", 0), 0u) << e;
  write_file_atomically(dir + "/cut.json", R"({"traceEvents": [{"ph": "X", )");
  e = import_error(dir + "/cut.json");
  EXPECT_EQ(e.rfind(dir + "/cut.json: not JSON (at byte 30)", 0), 0u) << e;
  write_file_atomically(dir + "/empty.json", "");
  EXPECT_EQ(import_error(dir + "/empty.json").rfind(dir + "/empty.json: not JSON", 0), 0u);
}

TEST(ImportKineto, JsonThatIsNotATraceIsRefused) {
  std::string dir = ptest::temp_dir("kineto-nottrace");
  for (const char* text :
       {R"({"format": "fusebox-recording"})", R"({"traceEvents": {}})", "42", R"("traceEvents")"}) {
    write_file_atomically(dir + "/x.json", text);
    EXPECT_EQ(import_error(dir + "/x.json"),
              dir + "/x.json: not a Chrome/kineto trace (no traceEvents array)")
        << text;
  }
}

TEST(ImportKineto, FifoIsRefusedWithoutBlocking) {
  std::string dir = ptest::temp_dir("kineto-fifo");
  std::string path = dir + "/trace.json";
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string e = import_error(path);  // a reader of the FIFO would wait for a writer forever
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("FIFO"), std::string::npos) << e;
  ::unlink(path.c_str());
}

TEST(ImportKineto, DirectoryOrMissingFileIsRefused) {
  std::string dir = ptest::temp_dir("kineto-dir");
  std::string e = import_error(dir);
  EXPECT_NE(e.find(dir), std::string::npos) << e;
  EXPECT_NE(e.find("directory"), std::string::npos) << e;
  e = import_error(dir + "/missing.json");
  EXPECT_NE(e.find(dir + "/missing.json"), std::string::npos) << e;
}

// Two processes merged into one file, each numbering its launches from 1 (CUPTI counts per
// process) and each driving its own GPU: every kernel is tied to its own process's call, never
// to the other's (which would read as a 1 ms launch delay), by its flow, by the one call that
// started before it, or by its GPU's other kernels. A third GPU with one kernel, both calls
// before it and no flow, cannot be settled: its kernel stays untied.
TEST(ImportKineto, CorrelationIdsOfSeveralProcessesTieEachKernelToItsOwnProcess) {
  const std::string dir = ptest::temp_dir("kineto-processes");
  nlohmann::json events = nlohmann::json::array();
  auto call = [&](int pid, double ts, int corr) {
    events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", pid},
                      {"tid", pid + 1}, {"ts", ts}, {"dur", 5}, {"args", {{"correlation", corr}}}});
  };
  auto kernel = [&](int device, double ts, int corr) {
    events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "k"}, {"pid", device}, {"tid", 7},
                      {"ts", ts}, {"dur", 3},
                      {"args", {{"correlation", corr}, {"device", device}, {"stream", 7}}}});
  };
  auto flow = [&](int pid, double call_ts, int device, double kernel_ts, int id) {
    events.push_back({{"ph", "s"}, {"cat", "ac2g"}, {"name", "ac2g"}, {"id", id}, {"pid", pid},
                      {"tid", pid + 1}, {"ts", call_ts}});
    events.push_back({{"ph", "f"}, {"cat", "ac2g"}, {"name", "ac2g"}, {"id", id}, {"pid", device},
                      {"tid", 7}, {"ts", kernel_ts}, {"bp", "e"}});
  };
  for (int corr = 1; corr <= 3; ++corr) {
    const double t = 100.0 * corr;
    call(100, t, corr);  // process 100 launches onto GPU 0: its calls alone start before the kernels
    kernel(0, t + 20, corr);
    call(200, t + 1000, corr);  // process 200 onto GPU 1, the same ids: its flows say so
    kernel(1, t + 1020, corr);
    flow(200, t + 1000, 1, t + 1020, corr);
  }
  call(100, 900, 4);  // id 4 from both, onto GPU 0 after both calls: GPU 0's other kernels decide
  call(200, 900, 4);
  kernel(0, 950, 4);
  call(100, 5000, 9);  // id 9 from both processes, onto GPU 2 only once: which one launched it?
  call(200, 5000, 9);
  kernel(2, 5020, 9);
  ImportReport report;
  const Recording r = import_trace(write_trace(dir, "t.json", events), &report);
  EXPECT_NE(warning_about(report, "used by several launch calls of several processes"), "");
  EXPECT_NE(warning_about(report, "1 event on the GPU not settled"), "")
      << warning_about(report, "launch calls");
  std::map<uint32_t, uint32_t> call_thread;  // each process's calls are on its thread pid + 1
  for (const auto& a : r.device)
    if (a.kind == ActivityKind::Runtime) call_thread[a.correlation_id] = a.thread_id;
  size_t tied = 0;
  for (const auto& a : r.device) {
    if (a.kind != ActivityKind::Kernel) continue;
    if (a.device == 2) {
      EXPECT_EQ(a.correlation_id, 0u) << "never tied across processes";
      continue;
    }
    ASSERT_TRUE(call_thread.count(a.correlation_id));
    EXPECT_EQ(call_thread[a.correlation_id], a.device == 0 ? 101u : 201u) << "its own process's call";
    ++tied;
  }
  EXPECT_EQ(tied, 7u);
}

// Times no figure can be made of without overflowing int64 (a window of two kernels 2^63 ns
// apart, durations summing past 2^62 ns) are refused naming the file and the events, exit 2,
// instead of a negative kernel time or window.
TEST(ImportKineto, TimesPastWhatFiguresCanHoldAreRefusedNamingTheEvents) {
  const std::string dir = ptest::temp_dir("kineto-extremes");
  auto import_error = [](const std::string& path) -> std::string {
    try {
      import_trace(path);  // what every command reads a trace with
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  auto kernel = [](const std::string& name, double ts, double dur) {
    return nlohmann::json{{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", ts},
                          {"dur", dur}, {"args", {{"device", 0}, {"stream", 7}}}};
  };
  const std::string apart =
      import_error(write_trace(dir, "apart.json", {kernel("early", -9e15, 1), kernel("late", 9e15, 1)}));
  EXPECT_NE(apart.find("apart.json: its events span more than 2^56 ns"), std::string::npos) << apart;
  EXPECT_NE(apart.find("'early' starts at -9000000000000000000 ns"), std::string::npos) << apart;
  nlohmann::json many = nlohmann::json::array();
  for (int i = 0; i < 600; ++i) many.push_back(kernel("long", i, 1.0e13));  // 10^16 ns each, overlapping
  const std::string summed = import_error(write_trace(dir, "summed.json", many));
  EXPECT_NE(summed.find("summed.json: its events' durations sum past 2^62 ns"), std::string::npos) << summed;
  EXPECT_EQ(import_error(write_trace(dir, "fine.json", {kernel("a", 0, 1e6), kernel("b", 1e12, 1e6)})), "");
}

// An own-format op names its node by index, and the node table is sized by the largest: a 1 KB
// file naming node 16,777,215 made a 3.8 GB table. A table more than half empty (past the slack
// of a window that starts mid-run) is refused; one that starts at node 50,000 of 100,000 is not.
TEST(ImportKineto, ANodeIndexFarPastTheNodesDescribedIsRefusedNamingIt) {
  const std::string dir = ptest::temp_dir("kineto-node-index");
  auto op = [](int64_t index, double ts) {
    return nlohmann::json{{"ph", "X"},
                          {"cat", "cpu_op"},
                          {"name", "Relu"},
                          {"pid", 10},
                          {"tid", 11},
                          {"ts", ts},
                          {"dur", 1},
                          {"args",
                           {{"Node Index", index},
                            {"Op Type", "Relu"},
                            {"Node", "r" + std::to_string(index)},
                            {"Input Dims", {{1}}},
                            {"Output Dims", {{1}}},
                            {"FLOPs", 1},
                            {"Bytes", 8},
                            {"Arena Offsets", {0}},
                            {"Arena Live Bytes", 4}}}};
  };
  const std::string far = import_error(write_trace(dir, "far.json", {op(0, 1), op(16777215, 3)}));
  EXPECT_NE(far.find("far.json: node index 16777215 in a trace that describes 2 nodes"),
            std::string::npos)
      << far;
  nlohmann::json window = nlohmann::json::array();
  for (int64_t i = 50000; i < 100000; ++i) window.push_back(op(i, static_cast<double>(i)));
  const Recording r = import_kineto(write_trace(dir, "window.json", window));
  ASSERT_EQ(r.nodes.size(), 100000u);
  EXPECT_EQ(r.nodes[99999].name, "r99999");
  EXPECT_EQ(r.nodes[50000].op, "Relu");
  EXPECT_EQ(r.nodes[49999].name, "");  // before the window: not described
}

// One id on the launch calls of two threads of one process, driving two GPUs: without a flow no
// rule can say which call launched which kernel, so neither is tied (each kernel was paired with
// the other GPU's call, a "launch delay" of milliseconds). With ac2g flows each is tied to its own.
TEST(ImportKineto, OneIdOnTwoThreadsOfOneProcessIsNeverPairedAcrossGpus) {
  const std::string dir = ptest::temp_dir("kineto-one-process-ids");
  for (bool flows : {false, true}) {
    nlohmann::json events = nlohmann::json::array();
    for (int gpu = 0; gpu < 2; ++gpu) {
      const double t = 1000.0 + 3500.0 * gpu;
      events.push_back({{"ph", "X"},
                        {"cat", "cuda_runtime"},
                        {"name", "cudaLaunchKernel"},
                        {"pid", 10},
                        {"tid", 20 + gpu},
                        {"ts", t},
                        {"dur", 5},
                        {"args", {{"correlation", 1}}}});
      events.push_back({{"ph", "X"},
                        {"cat", "kernel"},
                        {"name", "k"},
                        {"pid", gpu},
                        {"tid", 7},
                        {"ts", t + 20},
                        {"dur", 10},
                        {"args", {{"correlation", 1}, {"device", gpu}, {"stream", 7}}}});
      if (!flows) continue;
      events.push_back({{"ph", "s"},
                        {"cat", "ac2g"},
                        {"name", "ac2g"},
                        {"id", gpu + 1},
                        {"pid", 10},
                        {"tid", 20 + gpu},
                        {"ts", t}});
      events.push_back({{"ph", "f"},
                        {"cat", "ac2g"},
                        {"name", "ac2g"},
                        {"id", gpu + 1},
                        {"pid", gpu},
                        {"tid", 7},
                        {"ts", t + 20},
                        {"bp", "e"}});
    }
    ImportReport report;
    const Recording r =
        import_trace(write_trace(dir, flows ? "flows.json" : "bare.json", events), &report);
    const std::string w =
        warning_about(report, "1 correlation id used by several launch calls of one process");
    EXPECT_NE(w, "") << flows;
    EXPECT_EQ(w.find("not settled") != std::string::npos, !flows) << w;
    std::map<uint32_t, uint32_t> call_thread;
    for (const auto& a : r.device)
      if (a.kind == ActivityKind::Runtime) call_thread[a.correlation_id] = a.thread_id;
    EXPECT_EQ(call_thread.size(), 2u) << "each call keeps an id of its own";
    for (const auto& a : r.device) {
      if (a.kind != ActivityKind::Kernel) continue;
      if (!flows) {
        EXPECT_EQ(a.correlation_id, 0u);
      } else {
        ASSERT_TRUE(call_thread.count(a.correlation_id));
        EXPECT_EQ(call_thread[a.correlation_id], 20u + static_cast<uint32_t>(a.device));
      }
    }
  }
}

// ---- counters -----------------------------------------------------------------------------------

// PyTorch's memory events (profile_memory=True) become counter tracks per device, a counter
// event a track per numeric series; both sorted by time, other instant events skipped. Exported
// and read back, the tracks and their samples are the same.
TEST(ImportKineto, MemoryEventsAndCountersBecomeNamedCounterTracks) {
  const std::string dir = ptest::temp_dir("kineto-counters");
  auto memory = [](double ts, int type, int id, int64_t allocated, int64_t reserved) {
    return nlohmann::json{{"ph", "i"},
                          {"cat", "cpu_instant_event"},
                          {"s", "t"},
                          {"name", "[memory]"},
                          {"pid", 10},
                          {"tid", 11},
                          {"ts", ts},
                          {"args",
                           {{"Total Reserved", reserved},
                            {"Total Allocated", allocated},
                            {"Bytes", 512},
                            {"Device Id", id},
                            {"Device Type", type}}}};
  };
  const std::string path = write_trace(
      dir, "t.json",
      {op("forward", 1, 100),
       memory(20, 1, 0, 3000, 8192),
       memory(10, 1, 0, 1000, 8192),
       memory(15, 0, -1, 64, 0),
       memory(30, 6, 1, 7, 9),
       {{"ph", "C"},
        {"name", "queue"},
        {"pid", 10},
        {"tid", 11},
        {"ts", 40},
        {"args", {{"depth", 3}, {"name", "x"}}}},
       {{"ph", "C"},
        {"name", "pool"},
        {"pid", 10},
        {"tid", 11},
        {"ts", 41},
        {"args", {{"bytes", 4096}}}},
       {{"ph", "i"}, {"name", "marker"}, {"pid", 10}, {"tid", 11}, {"ts", 50}, {"s", "t"}}});
  ImportReport report;
  const Recording r = import_kineto(path, &report);
  EXPECT_EQ(check_recording(r), "");
  std::map<std::string, std::vector<std::pair<int64_t, double>>> tracks;
  for (const CounterSample& c : r.counters)
    tracks[r.counter_tracks[static_cast<size_t>(c.track)].name].push_back({c.t_ns, c.value});
  using Samples = std::vector<std::pair<int64_t, double>>;
  EXPECT_EQ(tracks["memory allocated (cuda:0)"], (Samples{{10000, 1000}, {20000, 3000}}))
      << "by time";
  EXPECT_EQ(tracks["memory reserved (cuda:0)"], (Samples{{10000, 8192}, {20000, 8192}}));
  EXPECT_EQ(tracks["memory allocated (cpu)"], (Samples{{15000, 64}}));
  EXPECT_EQ(tracks.count("memory reserved (cpu)"), 0u) << "the CPU allocator reserves nothing";
  EXPECT_EQ(tracks["memory allocated (hip:1)"], (Samples{{30000, 7}}));
  EXPECT_EQ(tracks["queue depth"], (Samples{{40000, 3}}))
      << "a numeric series; the string one is not";
  EXPECT_EQ(tracks["pool"], (Samples{{41000, 4096}}));
  EXPECT_EQ(tracks.size(), 7u);
  for (const CounterTrack& t : r.counter_tracks)
    EXPECT_EQ(t.bytes, t.name != "queue depth") << t.name;
  EXPECT_NE(warning_about(report, "of phase 'i' (instant events: markers), skipped"), "");

  const std::vector<CounterSummary> sums = summarize_counters(r);
  ASSERT_EQ(sums.size(), 7u);
  EXPECT_EQ(sums[0].name, "memory allocated (cuda:0)");
  EXPECT_EQ(sums[0].samples, 2u);
  EXPECT_EQ(sums[0].first, 1000);
  EXPECT_EQ(sums[0].peak, 3000);
  EXPECT_EQ(sums[0].peak_ns, 20000);
  EXPECT_EQ(sums[0].last, 3000);
  EXPECT_NE(counters_text(sums).find("memory allocated (cuda:0)"), std::string::npos);

  write_chrome_trace(r, dir + "/back.json");
  const Recording back = import_kineto(dir + "/back.json");
  ASSERT_EQ(back.counters.size(), r.counters.size());
  for (size_t i = 0; i < r.counters.size(); ++i) {
    const CounterTrack &a = r.counter_tracks[static_cast<size_t>(r.counters[i].track)],
                       &b = back.counter_tracks[static_cast<size_t>(back.counters[i].track)];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.bytes, a.bytes);
    EXPECT_EQ(back.counters[i].value, r.counters[i].value);
  }
}

// A file of more counter names than a window has rows for keeps the first 1024 tracks and says
// how many samples it dropped.
TEST(ImportKineto, CounterTracksPastTheFirst1024AreDroppedAndCounted) {
  const std::string dir = ptest::temp_dir("kineto-many-counters");
  nlohmann::json events = nlohmann::json::array();
  for (int i = 0; i < 1030; ++i)
    events.push_back({{"ph", "C"},
                      {"name", "c" + std::to_string(i)},
                      {"pid", 10},
                      {"tid", 11},
                      {"ts", i},
                      {"args", {{"value", i}}}});
  events.push_back({{"ph", "C"},
                    {"name", "c3"},
                    {"pid", 10},
                    {"tid", 11},
                    {"ts", 2000},
                    {"args", {{"value", 7}}}});
  ImportReport report;
  const Recording r = import_kineto(write_trace(dir, "t.json", events), &report);
  EXPECT_EQ(r.counter_tracks.size(), 1024u);
  EXPECT_EQ(r.counters.size(), 1025u) << "a known track still takes samples";
  EXPECT_NE(warning_about(report, "6 counter samples of tracks past the first 1024, dropped"), "");
  EXPECT_EQ(check_recording(r), "");
}

// Two processes' totals of one device are two tracks, each named for its process; a name only
// one process has keeps its name.
TEST(ImportKineto, TwoProcessesCountersOfOneNameAreTwoTracksNamedForTheirProcess) {
  const std::string dir = ptest::temp_dir("kineto-counter-pids");
  auto memory = [](int pid, double ts, int64_t allocated) {
    return nlohmann::json{
        {"ph", "i"},
        {"name", "[memory]"},
        {"pid", pid},
        {"tid", pid},
        {"ts", ts},
        {"s", "t"},
        {"args", {{"Total Allocated", allocated}, {"Device Id", 0}, {"Device Type", 1}}}};
  };
  ImportReport report;
  const Recording r = import_kineto(write_trace(dir, "t.json",
                                                {op("forward", 1, 100),
                                                 memory(10, 5, 100),
                                                 memory(20, 6, 900),
                                                 memory(10, 7, 300),
                                                 {{"ph", "C"},
                                                  {"name", "queue"},
                                                  {"pid", 20},
                                                  {"tid", 20},
                                                  {"ts", 8},
                                                  {"args", {{"value", 2}}}}}),
                                    &report);
  std::map<std::string, std::vector<double>> tracks;
  for (const CounterSample& c : r.counters)
    tracks[r.counter_tracks[static_cast<size_t>(c.track)].name].push_back(c.value);
  EXPECT_EQ(tracks["memory allocated (cuda:0), pid 10"], (std::vector<double>{100, 300}));
  EXPECT_EQ(tracks["memory allocated (cuda:0), pid 20"], (std::vector<double>{900}));
  EXPECT_EQ(tracks["queue"], (std::vector<double>{2}));
  EXPECT_EQ(tracks.size(), 3u);
}
