// CUPTI-like records built here -> exec::DeviceActivity -> Chrome trace (pid = device, tid =
// stream, ac2g flows from the runtime call to its kernel) and the nsys-schema SQLite (shortName /
// demangledName); where Nsight Systems is unpacked, `nsys stats` reads that SQLite and shows the
// kernel and runtime-API figures put in.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <unordered_map>
#include <sstream>

#include "core/base/error.h"
#include "core/base/symbols.h"
#ifdef FUSEBOX_HAVE_CUPTI_HEADERS
#include "ops/cuda/host/cupti_records.h"
#endif
#include "profiler/exporters.h"
#include "tests/profiler/profiler_test_util.h"
#include "tests/profiler/sqlite_reader.h"

#ifdef FUSEBOX_HAVE_CUPTI_HEADERS  // the toolkit's cupti_activity.h (record types only)
using namespace fusebox;
using namespace fusebox::cuda;
using namespace fusebox::profiler;

namespace {

// Mangled names g++ emits for a kernel template in a namespace and one taking a function pointer.
constexpr const char* kGemm = "_ZN2fb1k4gemmIfLi4EEEvPKT_PS2_i";
constexpr const char* kGemmDemangled = "void fb::k::gemm<float, 4>(float const*, float*, int)";
constexpr const char* kLaunch = "_Z6launchIPFviEEvT_N1S5InnerIiEE";

TEST(CuptiActivity, DemanglesAndShortensKernelNames) {
  EXPECT_EQ(demangle(kGemm), kGemmDemangled);
  EXPECT_EQ(kernel_short_name(kGemm), "gemm");
  EXPECT_EQ(kernel_short_name(kGemmDemangled), "gemm");
  EXPECT_EQ(demangle(kLaunch), "void launch<void (*)(int)>(void (*)(int), S::Inner<int>)");
  EXPECT_EQ(kernel_short_name(kLaunch), "launch");
  EXPECT_EQ(demangle("relu_kernel"), "relu_kernel") << "extern \"C\" names are not mangled";
  EXPECT_EQ(kernel_short_name("relu_kernel"), "relu_kernel");
  EXPECT_EQ(demangle("_Znot_valid"), "_Znot_valid") << "what does not demangle stays as it is";
}

TEST(CuptiActivity, RecordsBecomeDeviceActivityOnTheHostClock) {
  const CuptiClock clock{5'000'000, 1'000};  // CUPTI's 5 ms is the host's 1 us
  CUpti_ActivityKernel10 k{};
  k.name = kGemm;
  k.start = 5'002'000;
  k.end = 5'009'000;
  k.deviceId = 1;
  k.streamId = 13;
  k.correlationId = 42;
  k.gridX = 8, k.gridY = 2, k.gridZ = 1;
  k.blockX = 128, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024, k.dynamicSharedMemory = 2048;
  exec::DeviceActivity a = to_activity(k, clock);
  EXPECT_EQ(a.kind, exec::ActivityKind::Kernel);
  EXPECT_EQ(a.name, kGemmDemangled);
  EXPECT_EQ(a.start_ns, 3'000);
  EXPECT_EQ(a.end_ns, 10'000);
  EXPECT_EQ(a.device, 1);
  EXPECT_EQ(a.stream, 13);
  EXPECT_EQ(a.correlation_id, 42u);
  EXPECT_EQ(a.grid[0], 8);
  EXPECT_EQ(a.grid[1], 2);
  EXPECT_EQ(a.block[0], 128);
  EXPECT_EQ(a.registers, 40);
  EXPECT_EQ(a.shared_memory, 3072);

  CUpti_ActivityMemcpy6 m{};
  m.copyKind = 2;
  m.bytes = 1 << 20;
  m.start = 5'010'000;
  m.end = 5'012'500;
  m.streamId = 13;
  m.correlationId = 43;
  a = to_activity(m, clock);
  EXPECT_EQ(a.kind, exec::ActivityKind::Memcpy);
  EXPECT_EQ(a.name, "DtoH");
  EXPECT_EQ(a.copy_kind, 2);
  EXPECT_EQ(a.bytes, uint64_t{1} << 20);
  EXPECT_EQ(a.end_ns - a.start_ns, 2'500);

  CUpti_ActivityAPI r{};
  r.cbid = 211;
  r.start = 5'000'500;
  r.end = 5'001'000;
  r.threadId = 777;
  r.correlationId = 42;
  a = to_activity(r, "cudaLaunchKernel_v7000", clock);
  EXPECT_EQ(a.kind, exec::ActivityKind::Runtime);
  EXPECT_EQ(a.name, "cudaLaunchKernel");
  EXPECT_EQ(a.start_ns, 1'500);
  EXPECT_EQ(a.thread_id, 777u);
  EXPECT_EQ(to_activity(r, "cudaMemcpy_v3020", clock).name, "cudaMemcpy");
  EXPECT_EQ(to_activity(r, "cudaStreamSynchronize", clock).name, "cudaStreamSynchronize");
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// One flush: kernels, copies, a memset and launches, with the external correlation records CUPTI
// writes for ids pushed around each op's launches (node index + 1). Each activity gets its node;
// the input copy, launched outside any op, gets none; all come out in start order.
TEST(CuptiActivity, ABatchTiesEachLaunchToItsNodeThroughExternalIds) {
  const CuptiClock clock{0, 0};
  CUpti_ActivityMemcpy6 in{};
  in.copyKind = 1, in.bytes = 4096, in.start = 100, in.end = 200, in.correlationId = 1;
  CUpti_ActivityAPI launch0{}, launch1{};
  launch0.start = 300, launch0.end = 310, launch0.correlationId = 2;
  launch1.start = 320, launch1.end = 330, launch1.correlationId = 3;
  CUpti_ActivityKernel10 k0{}, k1{};
  k0.name = kGemm, k0.start = 400, k0.end = 900, k0.correlationId = 2;
  k1.name = "add_kernel", k1.start = 950, k1.end = 1000, k1.correlationId = 3;
  for (CUpti_ActivityKernel10* k : {&k0, &k1}) k->gridX = k->gridY = k->gridZ = k->blockX = k->blockY = k->blockZ = 1;
  CUpti_ActivityMemset4 zero{};
  zero.bytes = 64, zero.value = 0, zero.start = 340, zero.end = 350, zero.correlationId = 4;
  // In the order a flush may give them: not by time.
  const std::vector<exec::DeviceActivity> flushed = {
      to_activity(k1, clock),   to_activity(k0, clock), to_activity(in, clock),
      to_activity(launch1, "cudaLaunchKernel_v7000", clock), to_activity(launch0, "cudaLaunchKernel_v7000", clock),
      to_activity(zero, clock)};
  std::unordered_map<uint32_t, uint64_t> external = {{2, 5 + 1}, {3, 7 + 1}, {4, 7 + 1}};  // node 5: k0; 7: k1, memset

  std::vector<exec::DeviceActivity> out = flushed;
  attach_nodes(out, external);
  ASSERT_EQ(out.size(), 6u);
  std::vector<std::string> names;
  for (const auto& a : out) names.push_back(a.name + "@" + std::to_string(a.node_index));
  EXPECT_EQ(names, (std::vector<std::string>{"HtoD@-1", "cudaLaunchKernel@5", "cudaLaunchKernel@7", "Memset@7",
                                             std::string(kGemmDemangled) + "@5", "add_kernel@7"}));
  EXPECT_EQ(out[3].kind, exec::ActivityKind::Memset);
  EXPECT_EQ(out[3].bytes, 64u);

  // An external id of 0 names no node (ids are node + 1).
  external[2] = 0;
  out = flushed;
  attach_nodes(out, external);
  for (const auto& a : out)
    if (a.correlation_id == 2) {
      EXPECT_EQ(a.node_index, -1) << a.name;
    }
}

TEST(CuptiActivity, BadRecordsAreRefusedWithTheReason) {
  CUpti_ActivityKernel10 k{};
  k.name = "k";
  k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
  k.start = 10, k.end = 5;
  k.correlationId = 3;
  EXPECT_EQ(error_of([&] { to_activity(k, {}); }),
            "kernel record 'k' (correlation 3) ends before it starts (start 10 ns, end 5 ns)");
  k.end = 20;
  k.blockY = 0;
  EXPECT_EQ(error_of([&] { to_activity(k, {}); }),
            "kernel record 'k' (correlation 3) has grid (1,1,1) block (1,0,1): every dimension must be >= 1");
  k.blockY = 1;
  k.name = "";
  EXPECT_EQ(error_of([&] { to_activity(k, {}); }), "kernel record 3 has no name");
  CUpti_ActivityMemcpy6 m{};
  m.copyKind = 11;
  EXPECT_EQ(error_of([&] { to_activity(m, {}); }), "unknown CUPTI memcpy kind 11 (valid: 1..10)");
  m.copyKind = 0;
  EXPECT_NE(error_of([&] { to_activity(m, {}); }), "");
  CUpti_ActivityAPI r{};
  r.cbid = 211;
  EXPECT_EQ(error_of([&] { to_activity(r, "", {}); }), "runtime API record 0 (cbid 211) has no name");
}

// A recording with synthetic GPU work from CUPTI-like records: per run of `launches`, a runtime
// launch call inside an op's range and its kernel on stream 7 shortly after; kernels alternate
// between gemm (3 us) and relu (1 us); one DtoH copy with its cudaMemcpy call at the end.
struct Synthetic {
  Recording recording;
  std::map<std::string, std::pair<int64_t, int64_t>> kernels;  // short name -> total ns, count
  std::map<std::string, std::pair<int64_t, int64_t>> calls;    // runtime API -> total ns, count
};

Synthetic synthetic(int launches) {
  Synthetic s;
  s.recording = ptest::record("mlp:dims=16-8-4", "none", 1);
  Recording& r = s.recording;
  const CuptiClock clock{1'000'000'000, r.origin_ns};  // CUPTI time 1 s is the recording's origin
  uint64_t t = 1'000'000'000 + 10'000;
  uint32_t corr = 1;
  auto call = [&](const char* name, uint64_t start, uint64_t len, uint32_t c) {
    CUpti_ActivityAPI a{};
    a.start = start;
    a.end = start + len;
    a.correlationId = c;
    a.threadId = static_cast<uint32_t>(r.main_tid);
    r.device.push_back(to_activity(a, name, clock));
    const std::string shown = r.device.back().name;
    s.calls[shown].first += static_cast<int64_t>(len);
    s.calls[shown].second += 1;
  };
  for (int i = 0; i < launches; ++i, ++corr) {
    const bool gemm = i % 2 == 0;
    call("cudaLaunchKernel_v7000", t, 2'000, corr);
    CUpti_ActivityKernel10 k{};
    k.name = gemm ? kGemm : "relu_kernel";
    k.start = t + 5'000;
    k.end = k.start + (gemm ? 3'000 : 1'000);
    k.streamId = 7;
    k.correlationId = corr;
    k.gridX = 4, k.gridY = 1, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 32;
    r.device.push_back(to_activity(k, clock));
    auto& total = s.kernels[gemm ? "gemm" : "relu_kernel"];
    total.first += static_cast<int64_t>(k.end - k.start);
    total.second += 1;
    t = k.end + 1'000;
  }
  call("cudaMemcpy_v3020", t, 9'000, corr);
  CUpti_ActivityMemcpy6 m{};
  m.copyKind = 2;
  m.bytes = 4096;
  m.start = t + 1'000;
  m.end = t + 8'000;
  m.streamId = 7;
  m.correlationId = corr;
  r.device.push_back(to_activity(m, clock));
  return s;
}

TEST(CuptiActivity, ChromeTraceHasKernelsOnDeviceStreamTracksWithFlowsFromTheirLaunch) {
  Synthetic s = synthetic(4);
  // (The strict format check is chrome_trace_test's; these synthetic calls ignore op ranges.)
  nlohmann::json j = chrome_trace(s.recording);
  std::map<std::string, int> kernels;
  std::map<std::string, std::pair<double, int64_t>> flow_start, flow_end;  // id -> (ts, tid)
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "kernel") {
      EXPECT_EQ(e["pid"], 0);
      EXPECT_EQ(e["tid"], 7);
      ++kernels[e["name"].get<std::string>()];
    }
    if (e["ph"] == "s") flow_start[e["id"].dump()] = {e["ts"].get<double>(), e["tid"].get<int64_t>()};
    if (e["ph"] == "f") flow_end[e["id"].dump()] = {e["ts"].get<double>(), e["tid"].get<int64_t>()};
  }
  EXPECT_EQ(kernels[kGemmDemangled], 2);
  EXPECT_EQ(kernels["relu_kernel"], 2);
  EXPECT_EQ(flow_start.size(), 5u) << "4 launches and a copy";
  EXPECT_EQ(flow_end.size(), 5u);
  for (const auto& [id, start] : flow_start) {
    ASSERT_TRUE(flow_end.count(id)) << id;
    EXPECT_LT(start.first, flow_end[id].first) << "the call comes before its GPU work";
    EXPECT_EQ(flow_end[id].second, 7) << "the flow ends on the stream's track";
  }
}

using Db = ptest::Sql;

TEST(CuptiActivity, SqliteKernelRowsCarryShortAndDemangledNames) {
  Synthetic s = synthetic(4);
  const std::string path = ptest::temp_dir("cupti-sqlite") + "/trace.sqlite";
  write_nsys_sqlite(s.recording, path);
  Db db(path);
  auto rows = db.rows(
      "SELECT sn.value, dn.value, count(*), sum(k.end - k.start), min(k.streamId), min(k.registersPerThread) "
      "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds sn ON sn.id = k.shortName "
      "JOIN StringIds dn ON dn.id = k.demangledName GROUP BY sn.value ORDER BY sn.value");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"gemm", kGemmDemangled, "2", "6000", "7", "32"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"relu_kernel", "relu_kernel", "2", "2000", "7", "32"}));
  auto calls = db.rows(
      "SELECT s.value, count(*), sum(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
      "JOIN StringIds s ON s.id = r.nameId GROUP BY s.value ORDER BY s.value");
  EXPECT_EQ(calls, (std::vector<std::vector<std::string>>{{"cudaLaunchKernel", "4", "8000"},
                                                          {"cudaMemcpy", "1", "9000"}}));
  // Each kernel's correlation id is its launch call's.
  EXPECT_EQ(db.rows("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                    "ON r.correlationId = k.correlationId")[0][0],
            "4");
  EXPECT_EQ(db.rows("SELECT copyKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY")[0], (std::vector<std::string>{"2", "4096"}));
}

// CSV rows of an `nsys stats` report, from its header row ("Time (%),Total Time (ns),...") on:
// cells, quotes removed.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(text);
  std::string line;
  bool table = false;
  while (std::getline(in, line)) {
    table |= line.rfind("Time", 0) == 0;
    if (!table || line.empty()) continue;
    std::vector<std::string> cols;
    std::string cell;
    bool q = false;
    for (char c : line) {
      if (c == '"')
        q = !q;
      else if (c == ',' && !q)
        cols.push_back(cell), cell.clear();
      else
        cell += c;
    }
    cols.push_back(cell);
    out.push_back(cols);
  }
  return out;
}

// Runs the first report of `names` this nsys knows (the 2023+ name, then 2022.4's).
ptest::Run nsys_report(const std::string& nsys, const std::vector<std::string>& names, const std::string& path) {
  ptest::Run res;
  for (const auto& name : names) {
    res = ptest::run_command(nsys + " stats --report " + name + " --format csv --force-export=false " + path);
    if (res.status == 0 && res.output.find("could not be found") == std::string::npos) return res;
  }
  return res;
}

// Column index of the first of `headers` in the report's header row.
size_t column(const std::vector<std::string>& header_row, const std::vector<std::string>& headers) {
  for (const auto& header : headers)
    for (size_t i = 0; i < header_row.size(); ++i)
      if (header_row[i] == header) return i;
  ADD_FAILURE() << "no column '" << headers[0] << "'";
  return 0;
}

TEST(CuptiActivity, NsysStatsReadsTheKernelAndRuntimeFiguresPutIn) {
  const std::string nsys = ptest::tool("NSYS", "nsys");
  if (nsys.empty()) GTEST_SKIP() << "nsys not found (run tools/get-nsight-systems.sh, or set NSYS)";
  Synthetic s = synthetic(6);
  const std::string path = ptest::temp_dir("cupti-nsys") + "/trace.sqlite";
  write_nsys_sqlite(s.recording, path);

  struct Report {
    std::vector<std::string> names;
    const std::map<std::string, std::pair<int64_t, int64_t>>* want;
  };
  // Kernels by nsys's base name (shortName), runtime calls by name.
  for (const Report& report : {Report{{"cuda_gpu_kern_sum:base", "gpukernsum:base"}, &s.kernels},
                               Report{{"cuda_api_sum", "cudaapisum"}, &s.calls}}) {
    ptest::Run res = nsys_report(nsys, report.names, path);
    ASSERT_EQ(res.status, 0) << res.output;
    auto rows = csv_rows(res.output);
    ASSERT_FALSE(rows.empty()) << res.output;
    const size_t total = column(rows[0], {"Total Time (ns)"}), count = column(rows[0], {"Instances", "Num Calls"}),
                 name = column(rows[0], {"Name"});
    size_t matched = 0;
    for (size_t i = 1; i < rows.size(); ++i) {
      auto it = report.want->find(rows[i].at(name));
      if (it == report.want->end()) continue;
      EXPECT_EQ(std::stoll(rows[i].at(total)), it->second.first) << report.names[0] << " " << it->first;
      EXPECT_EQ(std::stoll(rows[i].at(count)), it->second.second) << report.names[0] << " " << it->first;
      ++matched;
    }
    EXPECT_EQ(matched, report.want->size()) << report.names[0] << " output:\n" << res.output.substr(0, 2000);
  }
}

}  // namespace

#endif  // FUSEBOX_HAVE_CUPTI_HEADERS
