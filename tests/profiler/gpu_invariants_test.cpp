// The accounting invariants of the GPU analysis (DESIGN.md, "Accounting first"), over every real
// trace in tests/data/traces and over generated edge cases: graph replays, clock skew, captures,
// communication, a saturated GPU, many ranks. A new definition that breaks one fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/base/error.h"
#include "profiler/communication.h"
#include "profiler/gpu_analysis.h"
#include "profiler/rank_view.h"
#include "profiler/ranks.h"
#include "profiler/timeline.h"
#include "profiler/trace_import.h"
#include "tests/profiler/device_records.h"

using namespace fusebox;
using namespace fusebox::profiler;
using exec::ActivityKind;
using exec::DeviceActivity;
using ptest::call;
using ptest::kernel;
using ptest::trace;

namespace {

// The host's wall time: first to last host call or span.
int64_t host_wall(const Recording& r) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const DeviceActivity& x : r.device)
    if (x.kind == ActivityKind::Runtime) lo = std::min(lo, x.start_ns), hi = std::max(hi, x.end_ns);
  for (const Span& s : r.spans) lo = std::min(lo, s.start_ns), hi = std::max(hi, s.end_ns);
  return hi > lo ? hi - lo : 0;
}

// Sum of the distinct launch calls' durations (each host call once).
int64_t launch_call_time(const Recording& r) {
  std::map<uint32_t, int64_t> calls;
  std::map<uint32_t, bool> launched;
  for (const DeviceActivity& x : r.device)
    if (x.kind == ActivityKind::Runtime && x.correlation_id)
      calls.try_emplace(x.correlation_id, x.end_ns - x.start_ns);
  for (const DeviceActivity& x : r.device)
    if (x.kind == ActivityKind::Kernel && x.correlation_id) launched[x.correlation_id] = true;
  int64_t t = 0;
  for (const auto& [c, d] : calls)
    if (launched.count(c)) t += d;
  return t;
}

// Every invariant, with the file named in each failure.
void expect_invariants(const Recording& r, const GpuAnalysis& a, const std::string& what) {
  SCOPED_TRACE(what);
  int64_t windows = 0, busy = 0;
  for (const DeviceSplit& s : a.devices) {
    EXPECT_GE(s.window_ns, 0);
    EXPECT_GE(s.busy_ns, 0);
    EXPECT_LE(s.busy_ns, s.window_ns);
    EXPECT_EQ(s.idle_ns, s.window_ns - s.busy_ns);
    EXPECT_EQ(s.idle_host_bound_ns + s.idle_sync_ns + s.idle_copy_wait_ns + s.idle_other_ns,
              s.idle_ns);
    for (const IdleGap& g : s.longest_gaps) {
      EXPECT_GT(g.duration_ns, 0);
      EXPECT_LE(g.duration_ns, s.idle_ns);
      EXPECT_GE(g.start_ns, s.window_start_ns);
      EXPECT_LE(g.start_ns + g.duration_ns, s.window_end_ns);
      for (const HostOverlap& h : g.host) EXPECT_LE(h.overlap_ns, g.duration_ns);
    }
    EXPECT_LE(s.comm.busy_ns, s.busy_ns);
    EXPECT_LE(s.comm.overlap_ns, s.comm.busy_ns);
    EXPECT_LE(s.comm.overlap_ns, s.comm.compute_busy_ns);
    EXPECT_EQ(s.comm.exposed_ns, s.comm.busy_ns - s.comm.overlap_ns);
    EXPECT_LE(s.comm.busy_ns, s.comm.kernel_ns);
    windows += s.window_ns;
    busy += s.busy_ns;
  }
  // Each host call counted once: what launching lost is within the launch calls' time.
  const int64_t calls = launch_call_time(r);
  EXPECT_GE(a.launch.launch_bound_lost_ns, 0);
  EXPECT_LE(a.launch.launch_bound_lost_ns, a.launch.launch_call_total_ns);
  EXPECT_LE(a.launch.launch_call_total_ns + a.graphs.launch_call_ns, calls);
  EXPECT_LE(a.launch.launch_bound, a.launch.calls);
  // After the clock correction no kernel starts before its launch call.
  EXPECT_GE(a.launch.launch_delay.median_ns, 0);
  if (a.launch.launch_delay.count > 0) {
    EXPECT_GE(a.launch.launch_delay.max_ns, 0);
  }
  // Kernels: graph-replayed + direct + uncorrelated = all.
  int64_t direct = 0;
  for (const KernelGroup& g : a.kernels_by_name) direct += g.count;
  EXPECT_EQ(direct, a.launch.kernels);
  EXPECT_LE(a.graphs.kernels, a.launch.correlated);
  EXPECT_LE(a.graphs.kernel_ns, a.kernel_ns);
  EXPECT_LE(a.comm.kernel_ns, a.kernel_ns);
  // A finding never claims more than the window it measures.
  const int64_t host = host_wall(r);
  for (const GpuFinding& f : a.findings) {
    SCOPED_TRACE(f.sentence);
    EXPECT_GT(f.time_lost_ns, 0);
    if (f.kind == "gpu_idle" || f.kind == "gpu_gaps") {
      EXPECT_LE(f.time_lost_ns, windows - busy);
    }
    if (f.kind == "gpu_bound" || f.kind == "communication") {
      EXPECT_LE(f.time_lost_ns, busy);
    }
    if (f.kind == "launch_bound" || f.kind == "graph_outside" || f.kind == "cuda_graph" ||
        f.kind == "api_sync" || f.kind == "memcpy_sync") {
      EXPECT_LE(f.time_lost_ns, std::max(host, calls));
    }
  }
  for (const GraphCandidate& g : a.graph_candidates) EXPECT_LE(g.saving_ns, g.launch_ns);
}

std::vector<std::string> shipped_traces() {
  std::vector<std::string> out;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces")) {
    const std::string p = e.path().string();
    if (looks_like_trace(p)) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(GpuInvariants, HoldOnEveryShippedTrace) {
  const auto files = shipped_traces();
  ASSERT_GE(files.size(), 20u);
  for (const std::string& f : files) {
    const Recording r = import_trace(f);
    expect_invariants(r, analyze_gpu(r), f);
  }
}

TEST(GpuInvariants, AGraphReplayIsOneHostCallNotHundredsOfSlowLaunches) {
  Recording r = trace();
  auto& d = r.device;
  // One 1.5 ms graph launch starting 500 kernels of 10 us back to back, three times.
  for (uint32_t rep = 0; rep < 3; ++rep) {
    const int64_t t0 = rep * 10000000;
    d.push_back(call("hipGraphLaunch", t0, t0 + 1500000, 100 + rep));
    for (int k = 0; k < 500; ++k)
      d.push_back(kernel("k" + std::to_string(k % 5), t0 + 20000 + k * 10000,
                         t0 + 20000 + (k + 1) * 10000, 100 + rep));
  }
  const GpuAnalysis a = analyze_gpu(r);
  expect_invariants(r, a, "graph replays");
  EXPECT_EQ(a.graphs.replays, 3);
  EXPECT_EQ(a.graphs.kernels, 1500);
  EXPECT_DOUBLE_EQ(a.graphs.kernels_per_replay.median_ns, 500);
  EXPECT_DOUBLE_EQ(a.graphs.replay_span_ns.median_ns, 5000000);
  EXPECT_EQ(a.graphs.launch_call_ns, 4500000);
  EXPECT_DOUBLE_EQ(a.graphs.host_ns_per_kernel, 3000);
  EXPECT_EQ(a.launch.launch_bound, 0);
  EXPECT_EQ(a.launch.calls, 0);
  EXPECT_TRUE(a.graph_candidates.empty());
  for (const GpuFinding& f : a.findings) {
    EXPECT_NE(f.kind, "launch_bound") << f.sentence;
    EXPECT_NE(f.kind, "cuda_graph") << f.sentence;
  }
}

TEST(GpuInvariants, PiecewiseGraphsReportWhatRunsOutsideThem) {
  Recording r = trace();
  auto& d = r.device;
  uint32_t corr = 1;
  for (int step = 0; step < 4; ++step) {
    const int64_t t0 = step * 1000000;
    // Attention outside the graph: a launch of 12 us for a kernel of 5 us, then a graph.
    d.push_back(call("hipLaunchKernel", t0, t0 + 12000, corr));
    d.push_back(kernel("attention", t0 + 14000, t0 + 19000, corr++));
    d.push_back(call("hipGraphLaunch", t0 + 13000, t0 + 40000, corr));
    for (int k = 0; k < 15; ++k)
      d.push_back(kernel("gemm", t0 + 20000 + k * 20000, t0 + 40000 + k * 20000, corr));
    ++corr;
  }
  std::stable_sort(d.begin(), d.end(), [](const DeviceActivity& x, const DeviceActivity& y) {
    return x.start_ns < y.start_ns;
  });
  const GpuAnalysis a = analyze_gpu(r);
  expect_invariants(r, a, "piecewise");
  EXPECT_EQ(a.graphs.replays, 4);
  EXPECT_EQ(a.graphs.outside_kernels, 4);
  EXPECT_EQ(a.graphs.outside_kernel_ns, 20000);
  EXPECT_EQ(a.graphs.outside_calls, 4);
  EXPECT_EQ(a.graphs.outside_call_ns, 48000);
  EXPECT_EQ(a.launch.launch_bound, 4);
  const auto f = std::find_if(a.findings.begin(), a.findings.end(),
                              [](const GpuFinding& x) { return x.kind == "graph_outside"; });
  ASSERT_NE(f, a.findings.end());
  EXPECT_EQ(f->time_lost_ns, 4 * (12000 - 5000));
  EXPECT_NE(f->sentence.find("outside the 4 graph replays"), std::string::npos) << f->sentence;
}

TEST(GpuInvariants, ACaptureIsCapturedLaunchesNotSlowOnes) {
  Recording r = trace();
  auto& d = r.device;
  d.push_back(call("cudaStreamBeginCapture", 0, 1000));
  for (uint32_t i = 0; i < 40; ++i) d.push_back(call("cudaLaunchKernel", 2000 + i * 5000, 6000 + i * 5000, i + 1));
  d.push_back(call("cudaStreamEndCapture", 300000, 301000));
  d.push_back(call("cudaGraphInstantiateWithFlags", 302000, 900000));
  d.push_back(call("cudaLaunchKernel", 1000000, 1005000, 77));  // after the capture: runs
  d.push_back(kernel("k", 1006000, 1007000, 77));
  const GpuAnalysis a = analyze_gpu(r);
  expect_invariants(r, a, "capture");
  EXPECT_EQ(a.graphs.captures, 1);
  EXPECT_EQ(a.graphs.captured_launch_calls, 40);
  EXPECT_EQ(a.graphs.instantiations, 1);
  EXPECT_EQ(a.graphs.instantiate_ns, 598000);
  EXPECT_EQ(a.launch.calls, 1);
  EXPECT_NE(gpu_analysis_text(a).find("40 kernel launch calls into graphs"), std::string::npos)
      << gpu_analysis_text(a);
}

TEST(GpuInvariants, KernelsBeforeTheirLaunchAreClockSkewShiftedAndWarned) {
  Recording r = trace();
  auto& d = r.device;
  // The GPU clock runs 3 us behind: each kernel appears 2 us before its call began.
  for (uint32_t i = 0; i < 10; ++i) {
    const int64_t t0 = 100000 + i * 50000;
    d.push_back(call("cudaLaunchKernel", t0, t0 + 4000, i + 1));
    d.push_back(kernel("k", t0 - 2000 - (i == 3 ? 1000 : 0), t0 + 20000, i + 1));
  }
  const GpuAnalysis a = analyze_gpu(r);
  expect_invariants(r, a, "negative skew");
  EXPECT_TRUE(a.skew.detected());
  EXPECT_EQ(a.skew.before_call, 10);
  EXPECT_EQ(a.skew.worst_before_ns, -3000);
  EXPECT_EQ(a.skew.host_shift_ns, -3000);
  EXPECT_GE(a.launch.launch_delay.median_ns, 0);
  EXPECT_DOUBLE_EQ(a.launch.launch_delay.median_ns, 1000);
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_NE(a.warnings[0].find("10 kernels start before their launch call (by up to 3.0 us)"),
            std::string::npos)
      << a.warnings[0];
  // The GPU-only figures do not move.
  EXPECT_EQ(a.devices.at(0).window_ns, analyze_gpu(r).devices.at(0).window_ns);
}

TEST(GpuInvariants, AnIdleGpuTakingMillisecondsToStartIsAClockOffset) {
  Recording r = trace();
  auto& d = r.device;
  // Kernels start 146 ms after their calls returned, even on an idle GPU: the clocks disagree.
  for (uint32_t i = 0; i < 5; ++i) {
    const int64_t t0 = i * 10000000;
    d.push_back(call("hipLaunchKernel", t0, t0 + 10000, i + 1));
    d.push_back(kernel("k", t0 + 146010000 + (i == 2 ? 5000 : 0), t0 + 146110000, i + 1));
  }
  const GpuAnalysis a = analyze_gpu(r);
  expect_invariants(r, a, "positive offset");
  EXPECT_EQ(a.skew.host_shift_ns, 146000000);
  EXPECT_DOUBLE_EQ(a.launch.queue_delay.median_ns, 0);
  EXPECT_LT(a.launch.launch_delay.max_ns, 100000);
  // A few microseconds of latency is no offset.
  Recording ok = trace();
  ok.device.push_back(call("cudaLaunchKernel", 0, 5000, 1));
  ok.device.push_back(kernel("k", 9000, 10000, 1));
  EXPECT_FALSE(analyze_gpu(ok).skew.detected());
}

TEST(GpuInvariants, ASaturatedGpuSaysTheKernelsAreTheTimeAndNamesThem) {
  Recording r = trace();
  auto& d = r.device;
  int64_t t = 0;
  for (uint32_t i = 0; i < 100; ++i) {
    const int64_t len = i % 4 == 0 ? 70000 : 10000;  // "big" holds 70 / 100 of the time
    d.push_back(call("cudaLaunchKernel", t, t + 3000, i + 1));
    d.push_back(kernel(i % 4 == 0 ? "void big_gemm<128>(float*)" : "small", t + 1000 + (i ? 2000 : 0), t + 3000 + len, i + 1));
    t += len;
  }
  std::stable_sort(d.begin(), d.end(), [](const DeviceActivity& x, const DeviceActivity& y) {
    return x.start_ns < y.start_ns;
  });
  const GpuAnalysis a = analyze_gpu(r);
  expect_invariants(r, a, "saturated");
  ASSERT_FALSE(a.findings.empty());
  EXPECT_EQ(a.findings[0].kind, "gpu_bound");
  EXPECT_EQ(a.findings[0].next, "kernels");
  EXPECT_NE(a.findings[0].sentence.find("the kernels are the time"), std::string::npos);
  EXPECT_NE(a.findings[0].sentence.find("big_gemm<128>(float*) 70%"), std::string::npos) << a.findings[0].sentence;
  EXPECT_NE(a.findings[0].sentence.find("regex:'big_gemm'"), std::string::npos) << a.findings[0].sentence;
}

TEST(Communication, KernelsAreClassifiedByTheirFunctionName) {
  EXPECT_TRUE(is_communication_kernel(
      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"));
  EXPECT_TRUE(is_communication_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(is_communication_kernel("void multimem_all_reduce_kernel<__nv_bfloat16>(int)"));
  EXPECT_TRUE(is_communication_kernel(
      "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*)"));
  EXPECT_TRUE(is_communication_kernel("void rcclGenericKernel<1>(ncclDevComm*)"));
  // A collective's name inside a template argument does not make a softmax communication.
  EXPECT_FALSE(is_communication_kernel("void softmax_kernel<BlockAllReduce<float>>(float*)"));
  EXPECT_FALSE(is_communication_kernel("void at::native::reduce_kernel<512, 1>(int)"));
  EXPECT_EQ(kernel_function_name("void ns::f<int>(float)"), "ns::f");
  EXPECT_EQ(collective_of("ncclKernel_AllReduce_RING_LL_Sum_float(x)"), "allreduce");
  EXPECT_EQ(collective_of("ncclDevKernel_SendRecv(x)"), "sendrecv");
  EXPECT_EQ(collective_of("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)"), "reducescatter");
  EXPECT_EQ(nccl_algorithm("ncclKernel_AllReduce_RING_LL_Sum_float(x)"), "RING");
  EXPECT_EQ(nccl_protocol("ncclKernel_AllReduce_RING_LL_Sum_float(x)"), "LL");
  EXPECT_DOUBLE_EQ(busbw_factor("allreduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor("allgather", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor("sendrecv", 8), 1.0);
}

TEST(Communication, OverlapExposedAndBusBandwidthAsHtaAndNcclDefineThem) {
  Recording r = trace();
  auto& d = r.device;
  // comm [0, 100) and [200, 300); compute [50, 250): overlap 50 + 50, exposed 100.
  d.push_back(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(x)", 0, 100, 0, 9));
  d.push_back(kernel("gemm", 50, 250, 0, 7));
  d.push_back(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(x)", 200, 300, 0, 9));
  CollectiveArgs c;
  c.activity = 0;
  c.collective = "allreduce";
  c.in_nelems = c.out_nelems = 25;
  c.group_size = 2;
  c.dtype = "Float";
  r.collectives.push_back(c);
  const GpuAnalysis a = analyze_gpu(r);
  expect_invariants(r, a, "comm");
  EXPECT_EQ(a.comm.kernel_count, 2);
  EXPECT_EQ(a.comm.busy_ns, 200);
  EXPECT_EQ(a.comm.overlap_ns, 100);
  EXPECT_EQ(a.comm.exposed_ns, 100);
  ASSERT_EQ(a.collectives.size(), 1u);
  EXPECT_EQ(a.collectives[0].collective, "allreduce");
  EXPECT_EQ(a.collectives[0].algorithm, "RING/LL");
  EXPECT_EQ(a.collectives[0].bytes, 100u);       // 25 floats, the one kernel with sizes
  EXPECT_DOUBLE_EQ(a.collectives[0].algbw_gbs, 1.0);  // 100 B / 100 ns
  EXPECT_DOUBLE_EQ(a.collectives[0].busbw_gbs, 1.0);  // x 2(2-1)/2
  const auto f = std::find_if(a.findings.begin(), a.findings.end(),
                              [](const GpuFinding& x) { return x.kind == "communication"; });
  ASSERT_NE(f, a.findings.end());
  EXPECT_EQ(f->time_lost_ns, 100);
}

namespace {

// A rank's trace: two steps, each with compute then a collective of `comm` ns.
Recording rank_trace(int32_t rank, int32_t world, int64_t compute, int64_t comm,
                     std::vector<int64_t> steps = {7, 8}) {
  Recording r = trace();
  r.rank = rank;
  r.world_size = world;
  uint32_t corr = 1;
  int64_t t = 1000;
  for (int64_t n : steps) {
    Span s;
    s.kind = SpanKind::Range;
    s.name = "ProfilerStep#" + std::to_string(n);
    s.start_ns = t;
    s.end_ns = t + compute + comm + 10000;
    r.spans.push_back(s);
    r.device.push_back(call("cudaLaunchKernel", t + 100, t + 200, corr));
    r.device.push_back(kernel("gemm", t + 1000, t + 1000 + compute, corr++));
    r.device.push_back(call("cudaLaunchKernel", t + 300, t + 400, corr));
    r.device.push_back(kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", t + 1000 + compute,
                              t + 1000 + compute + comm, corr++, 9));
    t = s.end_ns + 5000;
  }
  std::stable_sort(r.device.begin(), r.device.end(),
                   [](const DeviceActivity& x, const DeviceActivity& y) { return x.start_ns < y.start_ns; });
  return r;
}

}  // namespace

TEST(Ranks, TheStragglerSpendsLeastInCommunicationAndTheOthersWaitForIt) {
  // Rank 1 computes 30 us longer; ranks 0 and 2 wait 30 us in the all-reduce.
  const Recording r0 = rank_trace(0, 4, 50000, 40000), r1 = rank_trace(1, 4, 80000, 10000),
                  r2 = rank_trace(2, 4, 50000, 40000);
  const RankAnalysis a = analyze_ranks({{"r2.json", &r2}, {"r0.json", &r0}, {"r1.json", &r1}});
  ASSERT_EQ(a.ranks.size(), 3u);
  EXPECT_EQ(a.ranks[0].rank, 0);
  EXPECT_EQ(a.ranks[2].rank, 2);
  EXPECT_EQ(a.steps, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(a.straggler, 1);
  EXPECT_EQ(a.ranks[0].wait_ns, 2 * 30000);
  EXPECT_EQ(a.others_wait_ns, 4 * 30000);
  EXPECT_EQ(a.ranks[1].compute_ns, 2 * 80000);
  EXPECT_EQ(a.ranks[1].comm_exposed_ns, 2 * 10000);
  EXPECT_EQ(a.missing, 1);
  EXPECT_EQ(a.missing_first, (std::vector<int32_t>{3}));
  EXPECT_NE(a.verdict.find("rank 1 is the straggler"), std::string::npos) << a.verdict;
  EXPECT_NE(rank_analysis_text(a).find("straggler"), std::string::npos);
  EXPECT_EQ(rank_analysis_json(a)["straggler"].get<int>(), 1);
}

TEST(Ranks, TracesThatAreNotOneJobAreRefusedNamingTheFiles) {
  const Recording a = rank_trace(0, 8, 1, 1), b = rank_trace(1, 4, 1, 1);
  try {
    analyze_ranks({{"a.json", &a}, {"b.json", &b}});
    FAIL() << "different world sizes were merged";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: world_size 4, but a.json says 8"),
              std::string::npos)
        << e.what();
  }
  const Recording c = rank_trace(1, 8, 1, 1);
  const Recording c2 = rank_trace(1, 8, 1, 1);
  EXPECT_THROW(analyze_ranks({{"c.json", &c}, {"c2.json", &c2}}), Error);  // rank 1 twice
  const Recording d = rank_trace(9, 8, 1, 1);
  EXPECT_THROW(analyze_ranks({{"a.json", &a}, {"d.json", &d}}), Error);  // 9 >= 8
  const Recording e = rank_trace(1, 8, 1, 1, {20, 21});
  try {
    analyze_ranks({{"a.json", &a}, {"e.json", &e}});
    FAIL() << "steps that do not align were merged";
  } catch (const Error& x) {
    EXPECT_NE(std::string(x.what()).find("no ProfilerStep in common"), std::string::npos) << x.what();
    EXPECT_NE(std::string(x.what()).find("e.json has #20-#21"), std::string::npos) << x.what();
  }
  Recording f = rank_trace(1, 8, 1, 1);
  f.spans.clear();
  EXPECT_THROW(analyze_ranks({{"a.json", &a}, {"f.json", &f}}), Error);
  Recording g = rank_trace(-1, 0, 1, 1);
  EXPECT_THROW(analyze_ranks({{"a.json", &a}, {"nameless.json", &g}}), Error);
  // The rank from the file's name when the trace does not say.
  const RankAnalysis ok = analyze_ranks({{"a.json", &a}, {"job_rank-5.json", &g}});
  EXPECT_EQ(ok.ranks[1].rank, 5);
  EXPECT_EQ(ok.ranks[1].rank_from, "file name");
}

// Ranks merged for one window: each keeps its own launches, GPUs and threads apart (both ranks
// here call their GPU 0 and their thread the same), a timeline groups each rank's tracks, and a
// collective picked on one rank is picked on the other.
TEST(Ranks, MergedForOneWindowEachRankKeepsItsOwnLaunchesAndACollectiveReachesTheOthers) {
  std::vector<Recording> ranks;
  ranks.push_back(rank_trace(0, 2, 50000, 40000));
  ranks.push_back(rank_trace(1, 2, 80000, 10000));
  for (Recording& r : ranks) {  // each rank's GPU memory, under the same name
    r.counter_tracks = {{"memory allocated (cuda:0)", true}};
    r.counters = {{1000, r.main_tid, 0, 100.0 + r.rank}, {2000, r.main_tid, 0, 200.0 + r.rank}};
  }
  const size_t n0 = ranks[0].device.size();
  const MergedRanks m = merge_ranks(std::move(ranks));
  ASSERT_EQ(m.slices.size(), 2u);
  EXPECT_EQ(m.slices[1].device_begin, n0);
  auto first_kernel = [&](size_t from) {
    while (m.recording.device[from].kind != ActivityKind::Kernel) ++from;
    return m.recording.device[from];
  };
  EXPECT_NE(first_kernel(0).device, first_kernel(n0).device) << "GPU 0 twice, renumbered";
  const Timeline tl = build_timeline(m.recording, m.slices);
  ASSERT_EQ(tl.groups.size(), 2u);
  EXPECT_EQ(tl.tracks.front().kind, TrackKind::GpuStream) << "a rank's GPU streams come first";
  EXPECT_EQ(tl.tracks.back().group, 1);
  // Every flow ties a launch to a kernel of its own rank.
  ASSERT_EQ(tl.flows.size(), 8u);
  for (const TimelineFlow& f : tl.flows)
    EXPECT_EQ(tl.tracks[f.launch.track].group, tl.tracks[f.target.track].group);
  // Rank 1's second all-reduce is rank 0's second.
  size_t second = 0, seen = 0;
  for (size_t i = n0; i < m.recording.device.size(); ++i)
    if (m.recording.device[i].name.starts_with("nccl") && ++seen == 2) second = i;
  const std::vector<size_t> others = same_collective(m.recording, m.slices, second);
  ASSERT_EQ(others.size(), 1u);
  EXPECT_LT(others[0], n0);
  EXPECT_GT(m.recording.device[others[0]].start_ns, m.recording.device[n0].start_ns + 90000)
      << "the second one, not the first";
  EXPECT_TRUE(same_collective(m.recording, m.slices, 1).empty() ||
              m.recording.device[1].name.starts_with("nccl"));
  // Picking it on the timeline reaches rank 0's.
  std::optional<TimelineItemRef> at;
  for (uint32_t k = 0; k < tl.tracks.size(); ++k)
    for (uint32_t i = 0; i < tl.tracks[k].rows[0].items.size(); ++i)
      if (tl.tracks[k].kind == TrackKind::GpuStream && static_cast<size_t>(tl.tracks[k].rows[0].items[i].index) == second)
        at = TimelineItemRef{k, 0, i};
  ASSERT_TRUE(at);
  const std::vector<TimelineItemRef> linked = linked_items(tl, m.recording, *at);
  EXPECT_TRUE(std::any_of(linked.begin(), linked.end(), [&](const TimelineItemRef& r) {
    return static_cast<size_t>(tl.item(r).index) == others[0];
  }));
  // A rank's slice is that rank's recording again.
  const Recording back = slice_recording(m.recording, m.slices[1]);
  EXPECT_EQ(back.device.size(), m.recording.device.size() - n0);
  EXPECT_EQ(back.rank, 1);
  // Counters: a track per rank, named for it, in the merged window; the rank's own in its slice.
  ASSERT_EQ(tl.counters.size(), 2u);
  EXPECT_EQ(tl.counters[0].name, "rank 0 memory allocated (cuda:0)");
  EXPECT_EQ(tl.counters[1].name, "rank 1 memory allocated (cuda:0)");
  EXPECT_EQ(tl.counters[1].max, 201);
  ASSERT_EQ(back.counter_tracks.size(), 1u);
  EXPECT_EQ(back.counter_tracks[0].name, "memory allocated (cuda:0)");
  ASSERT_EQ(back.counters.size(), 2u);
  EXPECT_EQ(back.counters[1].value, 201);
  EXPECT_EQ(check_recording(back), "");
}

// Aligning the clock moves the recording's host side itself, so what the window draws is what
// the figures measured; the figures and the warning are analyze_gpu's.
TEST(ClockSkew, AligningMovesTheHostSideOfTheRecordingItself) {
  Recording r = trace();
  r.device.push_back(call("cudaLaunchKernel", 10000, 11000, 1));
  r.device.push_back(kernel("k", 4000, 5000, 1));  // 6 us before its call started
  const GpuAnalysis copy = analyze_gpu(r);
  Recording moved = r;
  const GpuAnalysis in_place = analyze_gpu_aligning(moved);
  EXPECT_EQ(in_place.skew.host_shift_ns, -6000);
  EXPECT_EQ(copy.skew.host_shift_ns, in_place.skew.host_shift_ns);
  EXPECT_EQ(copy.warnings, in_place.warnings);
  EXPECT_EQ(moved.device[0].start_ns, 4000) << "the call now starts with its kernel";
  EXPECT_EQ(moved.device[1].start_ns, 4000) << "GPU times never move";
  EXPECT_EQ(r.device[0].start_ns, 10000) << "analyze_gpu leaves its input alone";
}
