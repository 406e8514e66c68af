#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/gpu_analysis.h"
#include "tests/profiler/device_records.h"

using namespace fusebox;
using namespace fusebox::profiler;
using exec::ActivityKind;
using exec::DeviceActivity;
using ptest::call;
using ptest::kernel;
using ptest::span;
using ptest::trace;

namespace {

DeviceActivity copy(int64_t s, int64_t e, uint64_t bytes, uint8_t copy_kind, uint8_t src,
                    uint8_t dst, int32_t stream = 7) {
  DeviceActivity a;
  a.kind = ActivityKind::Memcpy;
  a.name = exec::copy_kind_name(copy_kind);
  a.start_ns = s;
  a.end_ns = e;
  a.bytes = bytes;
  a.copy_kind = copy_kind;
  a.src_kind = src;
  a.dst_kind = dst;
  a.stream = stream;
  return a;
}

// Kernels with gaps of 100 ns, one per cause (see IdleGapsAreClassified...).
Recording four_causes() {
  Recording r = trace();
  auto& d = r.device;
  d.push_back(kernel("k1", 0, 100));                     // correlation 0
  d.push_back(call("cudaLaunchKernel", 150, 160, 2));    // after the gap began
  d.push_back(kernel("k2", 200, 300, 2));                // gap [100,200): host_bound
  d.push_back(call("cudaLaunchKernel", 50, 60, 3));      // queued early
  d.push_back(call("cudaStreamSynchronize", 300, 410));  // overlaps [300,400)
  d.push_back(kernel("k3", 400, 500, 3));                // gap [300,400): sync
  d.push_back(call("cudaLaunchKernel", 520, 530, 4));    // host-bound for 20 ns, but...
  d.push_back(call("cudaMemcpyAsync", 505, 590));        // ...a copy call covers 85, no GPU item
  d.push_back(kernel("k4", 600, 700, 4));                // gap [500,600): copy_wait
  d.push_back(call("cudaLaunchKernel", 60, 70, 5));      // queued early, nothing overlaps
  d.push_back(kernel("k5", 800, 900, 5));                // gap [700,800): other
  return r;
}

}  // namespace

TEST(GpuAnalysis, SplitCountsOverlappingStreamsOnceInBusyButSumsKinds) {
  Recording r = trace();
  r.device.push_back(kernel("a", 1000, 1100, 0, 1));  // stream 1
  r.device.push_back(kernel("b", 1050, 1150, 0, 2));  // stream 2, overlaps a by 50
  r.device.push_back(copy(1200, 1250, 1000, 1, 2, 3, 1));
  DeviceActivity ms;
  ms.kind = ActivityKind::Memset;
  ms.start_ns = 1300, ms.end_ns = 1310, ms.bytes = 64, ms.stream = 2;
  r.device.push_back(ms);
  DeviceActivity sy;
  sy.kind = ActivityKind::Sync;
  sy.start_ns = 1150, sy.end_ns = 1200, sy.stream = 1;
  r.device.push_back(sy);
  const GpuAnalysis a = analyze_gpu(r);
  ASSERT_TRUE(a.has_gpu);
  ASSERT_EQ(a.devices.size(), 1u);
  const DeviceSplit& s = a.devices[0];
  // Window [1000,1310) = 310. Union [1000,1150) + [1200,1250) + [1300,1310) = 150 + 50 + 10.
  EXPECT_EQ(s.window_start_ns, 1000);
  EXPECT_EQ(s.window_ns, 310);
  EXPECT_EQ(s.busy_ns, 210);
  EXPECT_EQ(s.idle_ns, 100);
  // Sums: kernels 100 + 100 = 200 (more than their union of 150).
  EXPECT_EQ(s.kernel_ns, 200);
  EXPECT_EQ(s.kernel_count, 2);
  EXPECT_EQ(s.memcpy_ns, 50);
  EXPECT_EQ(s.memcpy_bytes, 1000u);
  EXPECT_EQ(s.memset_ns, 10);
  EXPECT_EQ(s.memset_bytes, 64u);
  EXPECT_EQ(s.sync_ns, 50);
  EXPECT_EQ(s.streams, 2);
  // Gaps [1150,1200) (the Sync record overlaps: sync) and [1250,1300) (nothing: other).
  EXPECT_EQ(s.gap_count, 2);
  EXPECT_EQ(s.idle_sync_ns, 50);
  EXPECT_EQ(s.idle_other_ns, 50);
  EXPECT_EQ(s.idle_host_bound_ns + s.idle_copy_wait_ns, 0);
  EXPECT_EQ(a.kernel_count, 2);
  EXPECT_EQ(a.memcpy_count, 1);
  EXPECT_EQ(a.memset_count, 1);
}

TEST(GpuAnalysis, IdleGapsAreClassifiedHostBoundSyncCopyWaitOrOther) {
  const GpuAnalysis a = analyze_gpu(four_causes());
  ASSERT_EQ(a.devices.size(), 1u);
  const DeviceSplit& s = a.devices[0];
  // Window [0,900), busy 5 x 100, four gaps of 100 ns, one per cause.
  EXPECT_EQ(s.idle_ns, 400);
  EXPECT_EQ(s.gap_count, 4);
  EXPECT_EQ(s.idle_host_bound_ns, 100);  // k2's launch at 150 > gap start 100
  EXPECT_EQ(s.idle_sync_ns, 100);        // cudaStreamSynchronize [300,410) overlaps [300,400)
  EXPECT_EQ(s.idle_copy_wait_ns, 100);   // cudaMemcpyAsync covers 85 ns of it, host_bound 20
  EXPECT_EQ(s.idle_other_ns, 100);       // k5 was queued at 60, before the gap
  ASSERT_EQ(s.longest_gaps.size(), 4u);  // equal lengths: by start
  EXPECT_EQ(s.longest_gaps[0].cause, IdleCause::HostBound);
  EXPECT_EQ(s.longest_gaps[1].cause, IdleCause::Sync);
  EXPECT_EQ(s.longest_gaps[2].cause, IdleCause::CopyWait);
  EXPECT_EQ(s.longest_gaps[3].cause, IdleCause::Other);
}

TEST(GpuAnalysis, AGapIsTheCauseCoveringMostOfItNotTheFirstThatTouchesIt) {
  Recording r = trace();
  r.device.push_back(kernel("k1", 0, 1000));
  r.device.push_back(call("cudaDeviceSynchronize", 10, 1005));  // returns 5 ns into the gap
  r.device.push_back(call("cudaLaunchKernel", 1900, 1910, 2));  // the host worked 900 ns first
  r.device.push_back(kernel("k2", 2000, 2100, 2));
  // Gap [1000,2000): sync covers 5, host_bound 900 -> host_bound.
  const DeviceSplit s = analyze_gpu(r).devices.at(0);
  EXPECT_EQ(s.idle_host_bound_ns, 1000);
  EXPECT_EQ(s.idle_sync_ns, 0);
  // The same with the sync lasting until 1950: sync covers 950 -> sync.
  r.device[1].end_ns = 1950;
  const DeviceSplit t = analyze_gpu(r).devices.at(0);
  EXPECT_EQ(t.idle_sync_ns, 1000);
  EXPECT_EQ(t.idle_host_bound_ns, 0);
}

TEST(GpuAnalysis, LaunchDelayStatsAndLaunchBoundKernels) {
  Recording r = trace();
  auto& d = r.device;
  // (call, kernel): launch delay = kernel start - call start, queue delay = - call end.
  d.push_back(call("cudaLaunchKernel", 0, 10, 1));
  d.push_back(kernel("k", 15, 20, 1));  // delay 15, queue 5, 5 < 10: launch-bound, lost 5
  d.push_back(call("cudaLaunchKernel", 100, 110, 2));
  d.push_back(kernel("k", 130, 160, 2));  // delay 30, queue 20
  d.push_back(call("cudaLaunchKernel", 200, 210, 3));
  d.push_back(kernel("k", 212, 214, 3));  // delay 12, queue 2, launch-bound, lost 8
  d.push_back(call("cudaLaunchKernel", 300, 310, 4));
  d.push_back(kernel("k", 350, 400, 4));  // delay 50, queue 40
  d.push_back(call("cudaLaunchKernel", 500, 520, 5));
  d.push_back(kernel("k", 540, 550, 5));  // delay 40, queue 20, 10 < 20: launch-bound, but the
                                          // call counts at most the median call (10): lost 0
  d.push_back(kernel("k", 600, 610, 0));  // no correlation
  d.push_back(kernel("k", 700, 700, 0));  // end == start
  d.push_back(call("cudaLaunchKernel", 800, 805, 99));  // launches nothing recorded
  const GpuAnalysis a = analyze_gpu(r);
  EXPECT_EQ(a.launch.kernels, 7);
  EXPECT_EQ(a.launch.correlated, 5);
  // Delays 12 15 30 40 50: median 30, p90 (nearest rank of 0.9 * 4) 50, max 50.
  EXPECT_DOUBLE_EQ(a.launch.launch_delay.median_ns, 30);
  EXPECT_DOUBLE_EQ(a.launch.launch_delay.p90_ns, 50);
  EXPECT_DOUBLE_EQ(a.launch.launch_delay.max_ns, 50);
  // Queue delays 2 5 20 20 40: median 20.
  EXPECT_DOUBLE_EQ(a.launch.queue_delay.median_ns, 20);
  EXPECT_DOUBLE_EQ(a.launch.queue_delay.max_ns, 40);
  EXPECT_EQ(a.launch.launch_bound, 3);
  EXPECT_EQ(a.launch.launch_bound_lost_ns, 13);  // 5 + 8 + 0
  EXPECT_DOUBLE_EQ(a.launch.call_duration.median_ns, 10);
  EXPECT_EQ(a.launch.launch_call_total_ns, 60);
  EXPECT_EQ(a.devices.at(0).kernel_count, 7);
}

TEST(GpuAnalysis, KernelsGroupByNameAndByInnermostLaunchingHostSpan) {
  Recording r = trace();
  r.spans.push_back(span(SpanKind::Op, "forward", 0, 1000, 1, 0));
  r.spans.push_back(span(SpanKind::Range, "attn", 100, 400, 1, 1));
  r.spans.push_back(span(SpanKind::Op, "matmul", 150, 250, 1, 2));
  r.spans.push_back(span(SpanKind::Op, "other thread", 0, 5000, 2, 0));
  auto& d = r.device;
  d.push_back(call("cudaLaunchKernel", 160, 165, 1));    // in matmul (innermost)
  d.push_back(call("cudaLaunchKernel", 300, 305, 2));    // in attn, after matmul ended
  d.push_back(call("cudaLaunchKernel", 500, 505, 3));    // in forward only
  d.push_back(call("cudaLaunchKernel", 2000, 2005, 4));  // thread 1 has nothing there
  d.push_back(kernel("gemm", 3000, 3100, 1));            // 100
  d.push_back(kernel("gemm", 3100, 3150, 2));            // 50
  d.push_back(kernel("relu", 3150, 3180, 3));            // 30
  d.push_back(kernel("relu", 3180, 3190, 4));            // 10
  d.push_back(kernel("add", 3190, 3210, 0));             // 20, no correlation
  const GpuAnalysis a = analyze_gpu(r);
  // By name: gemm 150 (2, min 50, max 100), relu 40, add 20; of 210.
  ASSERT_EQ(a.kernels_by_name.size(), 3u);
  EXPECT_EQ(a.kernels_by_name[0].key, "gemm");
  EXPECT_EQ(a.kernels_by_name[0].count, 2);
  EXPECT_EQ(a.kernels_by_name[0].total_ns, 150);
  EXPECT_EQ(a.kernels_by_name[0].min_ns, 50);
  EXPECT_EQ(a.kernels_by_name[0].max_ns, 100);
  EXPECT_DOUBLE_EQ(a.kernels_by_name[0].mean_ns, 75);
  EXPECT_NEAR(a.kernels_by_name[0].share, 150.0 / 210, 1e-12);
  EXPECT_EQ(a.kernels_by_name[1].key, "relu");
  EXPECT_EQ(a.kernels_by_name[1].total_ns, 40);
  EXPECT_EQ(a.kernels_by_name[2].key, "add");
  // By launcher: matmul 100, attn 50, then 30 each: "(no host range)" (relu 10 + add 20) and
  // forward, ties by name.
  ASSERT_EQ(a.kernels_by_launcher.size(), 4u);
  EXPECT_EQ(a.kernels_by_launcher[0].key, "matmul");
  EXPECT_EQ(a.kernels_by_launcher[0].total_ns, 100);
  EXPECT_EQ(a.kernels_by_launcher[1].key, "attn");
  EXPECT_EQ(a.kernels_by_launcher[1].total_ns, 50);
  EXPECT_EQ(a.kernels_by_launcher[2].key, "(no host range)");
  EXPECT_EQ(a.kernels_by_launcher[2].count, 2);
  EXPECT_EQ(a.kernels_by_launcher[2].total_ns, 30);
  EXPECT_EQ(a.kernels_by_launcher[3].key, "forward");
  EXPECT_EQ(a.kernels_by_launcher[3].total_ns, 30);
}

TEST(GpuAnalysis, CopiesGroupByDirectionAndMemoryKindsWithPageableFlaggedAndGBs) {
  Recording r = trace();
  auto& d = r.device;
  // HtoD pageable -> device: 2 x 1e6 B in 2 x 100 us = 10 GB/s.
  d.push_back(copy(0, 100000, 1000000, 1, 1, 3));
  d.push_back(copy(200000, 300000, 1000000, 1, 1, 3));
  // HtoD pinned -> device: 4e6 B in 200 us = 20 GB/s.
  d.push_back(copy(400000, 600000, 4000000, 1, 2, 3));
  // DtoH device -> pageable: 1e6 B in 50 us = 20 GB/s.
  d.push_back(copy(700000, 750000, 1000000, 2, 3, 1));
  const GpuAnalysis a = analyze_gpu(r);
  ASSERT_EQ(a.copies.size(), 3u);
  // By time: the two HtoD groups (200 us each, pageable < pinned by name), then DtoH.
  EXPECT_EQ(a.copies[0].direction, "HtoD");
  EXPECT_EQ(a.copies[0].src, "pageable");
  EXPECT_EQ(a.copies[0].dst, "device");
  EXPECT_TRUE(a.copies[0].pageable);
  EXPECT_EQ(a.copies[0].count, 2);
  EXPECT_EQ(a.copies[0].bytes, 2000000u);
  EXPECT_EQ(a.copies[0].total_ns, 200000);
  EXPECT_DOUBLE_EQ(a.copies[0].gbs, 10.0);
  EXPECT_EQ(a.copies[1].src, "pinned");
  EXPECT_FALSE(a.copies[1].pageable);
  EXPECT_DOUBLE_EQ(a.copies[1].gbs, 20.0);
  EXPECT_EQ(a.copies[2].direction, "DtoH");
  EXPECT_EQ(a.copies[2].dst, "pageable");
  EXPECT_TRUE(a.copies[2].pageable);
  EXPECT_DOUBLE_EQ(a.copies[2].gbs, 20.0);
  EXPECT_EQ(a.memcpy_bytes, 7000000u);
  EXPECT_EQ(a.memcpy_ns, 450000);
  // Pageable: 3 copies, 250 us, 3e6 B / 250000 ns = 12.0 GB/s.
  bool found = false;
  for (const GpuFinding& f : a.findings)
    if (f.kind == "pageable_copy") {
      found = true;
      EXPECT_EQ(f.time_lost_ns, 250000);
      EXPECT_NE(f.sentence.find("3 copies from pageable memory"), std::string::npos) << f.sentence;
      EXPECT_NE(f.sentence.find("12.0 GB/s"), std::string::npos) << f.sentence;
    }
  EXPECT_TRUE(found);
}

// A copy whose size the trace leaves off (ROCm's GPU copy records carry none) counts in its
// group's count and time, not in its rate; a group with no sized copy has no rate at all, where it
// once read "0 B" at "0.00 GB/s".
TEST(GpuAnalysis, CopiesWithoutASizeCountInTimeButNotInTheRate) {
  Recording r = trace();
  auto& d = r.device;
  // HtoD pageable -> device: 1e6 B in 100 us, and one unsized copy of 300 us: 10 GB/s, not 2.5.
  d.push_back(copy(0, 100000, 1000000, 1, 1, 3));
  d.push_back(copy(200000, 500000, 0, 1, 1, 3));
  // DtoH device -> device: unsized only.
  d.push_back(copy(600000, 650000, 0, 2, 3, 3));
  const GpuAnalysis a = analyze_gpu(r);
  ASSERT_EQ(a.copies.size(), 2u);
  EXPECT_EQ(a.copies[0].count, 2);
  EXPECT_EQ(a.copies[0].sized, 1);
  EXPECT_EQ(a.copies[0].total_ns, 400000);
  EXPECT_EQ(a.copies[0].sized_ns, 100000);
  EXPECT_DOUBLE_EQ(a.copies[0].gbs, 10.0);
  EXPECT_EQ(a.copies[1].sized, 0);
  EXPECT_EQ(a.copies[1].gbs, 0);
  const std::string text = gpu_analysis_text(a);
  // The DtoH row, word by word: no bytes, no rate.
  const size_t row = text.find("\nDtoH ");
  ASSERT_NE(row, std::string::npos) << text;
  std::istringstream words(text.substr(row + 1, text.find('\n', row + 1) - row - 1));
  const std::vector<std::string> got{std::istream_iterator<std::string>(words), {}};
  EXPECT_EQ(got, (std::vector<std::string>{"DtoH", "device", "->", "device", "1", "-", "50.0", "us", "-"})) << text;
  EXPECT_EQ(text.find("0.00 GB/s"), std::string::npos) << text;
  for (const GpuFinding& f : a.findings)
    if (f.kind == "pageable_copy") {
      EXPECT_NE(f.sentence.find("2 copies from pageable memory took 400.0 us at 10.0 GB/s"), std::string::npos)
          << f.sentence;
    }
}

TEST(GpuAnalysis, GapListIsLongestFirstCappedWithTheHostActivityDuringIt) {
  Recording r = trace();
  // Kernels of 10 ns with gaps of 30, 100, 10, 100, 50 after them.
  const int64_t gaps[] = {30, 100, 10, 100, 50};
  int64_t t = 0;
  for (int64_t g : gaps) {
    r.device.push_back(kernel("k", t, t + 10));
    t += 10 + g;
  }
  r.device.push_back(kernel("k", t, t + 10));
  // First 100 ns gap is [50,150): a range covers it all, a nested one 30 ns of it and a
  // runtime call 40 ns. The outer range holds the others, so it is left out for them: the
  // list says what the host was doing, not the ranges around it.
  r.spans.push_back(span(SpanKind::Range, "dataloader", 40, 160));
  r.spans.push_back(span(SpanKind::Range, "dataloader", 60, 90, 1, 1));  // nested
  r.device.push_back(call("cudaEventQuery", 100, 140));
  GpuAnalysisOptions o;
  o.top_gaps = 3;
  const GpuAnalysis a = analyze_gpu(r, o);
  const DeviceSplit& s = a.devices.at(0);
  EXPECT_EQ(s.gap_count, 5);
  EXPECT_EQ(s.idle_ns, 290);
  ASSERT_EQ(s.longest_gaps.size(), 3u);
  EXPECT_EQ(s.longest_gaps[0].start_ns, 50);  // 100, the earlier
  EXPECT_EQ(s.longest_gaps[0].duration_ns, 100);
  EXPECT_EQ(s.longest_gaps[1].start_ns, 180);  // 100, the later: after 10+30+10+100+10+10+10
  EXPECT_EQ(s.longest_gaps[1].duration_ns, 100);
  EXPECT_EQ(s.longest_gaps[2].duration_ns, 50);
  ASSERT_EQ(s.longest_gaps[0].host.size(), 2u);
  EXPECT_EQ(s.longest_gaps[0].host[0].name, "cudaEventQuery");
  EXPECT_EQ(s.longest_gaps[0].host[0].overlap_ns, 40);
  EXPECT_EQ(s.longest_gaps[0].host[1].name, "dataloader");
  EXPECT_EQ(s.longest_gaps[0].host[1].overlap_ns, 30);
  EXPECT_TRUE(s.longest_gaps[1].host.empty());
}

namespace {

// Launches of `names` in order from thread 1: calls of 5 us, `host_gap` apart, each kernel
// 2 us long starting 1 us after its call ends (on a busy GPU that does not matter).
Recording launches(const std::vector<std::string>& names, int64_t host_gap = 1000,
                    const char* launch_call = "cudaLaunchKernel") {
  Recording r = trace();
  int64_t t = 0;
  uint32_t corr = 1;
  for (const std::string& n : names) {
    r.device.push_back(call(launch_call, t, t + 5000, corr));
    r.device.push_back(kernel(n, t + 6000, t + 8000, corr));
    ++corr;
    t += 5000 + host_gap;
  }
  return r;
}

}  // namespace

TEST(GpuAnalysis, RepeatedKernelSequenceIsAGraphCandidateWithItsSaving) {
  std::vector<std::string> names = {"setup"};
  for (int i = 0; i < 12; ++i)
    for (const char* n : {"gemm", "relu", "add"}) names.push_back(n);
  const GpuAnalysis a = analyze_gpu(launches(names));
  ASSERT_EQ(a.graph_candidates.size(), 1u);
  const GraphCandidate& g = a.graph_candidates[0];
  EXPECT_EQ(g.kernels, (std::vector<std::string>{"gemm", "relu", "add"}));
  EXPECT_EQ(g.repetitions, 12);
  // 36 calls of 5 us = 180 us; a graph costs one mean call (5 us) per repetition: 180 - 60 = 120
  // us.
  EXPECT_EQ(g.launch_ns, 180000);
  EXPECT_EQ(g.kernel_ns, 72000);
  EXPECT_EQ(g.saving_ns, 120000);
  EXPECT_EQ(g.thread, 1);
  bool found = false;
  for (const GpuFinding& f : a.findings)
    if (f.kind == "cuda_graph") {
      found = true;
      EXPECT_EQ(f.sentence,
                "the sequence gemm, relu, add repeats 12 times: a CUDA graph would save about "
                "120.0 us of launch time");
      EXPECT_EQ(f.time_lost_ns, 120000);
    }
  EXPECT_TRUE(found);
}

// The advice names the runtime the trace's calls name: a ROCm trace (hip* calls, as in
// kineto_mi250_rocm_train) is told hipMemcpyAsync and HIP graphs, not CUDA's.
TEST(GpuAnalysis, AdviceNamesTheRuntimeTheCallsName) {
  std::vector<std::string> names;
  for (int i = 0; i < 4; ++i)
    for (const char* n : {"gemm", "relu", "add"}) names.push_back(n);
  for (const char* launch : {"cudaLaunchKernel", "hipLaunchKernel"}) {
    const bool hip = launch[0] == 'h';
    Recording r = launches(names, 1000, launch);
    r.device.push_back(call(hip ? "hipMemcpy" : "cudaMemcpy", 200000, 210000));
    const GpuAnalysis a = analyze_gpu(r);
    EXPECT_EQ(a.runtime, hip ? "HIP" : "CUDA");
    std::string sync, graph;
    for (const GpuFinding& f : a.findings) {
      if (f.kind == "memcpy_sync") sync = f.sentence;
      if (f.kind == "cuda_graph") graph = f.sentence;
    }
    EXPECT_EQ(sync, std::string("1 synchronous memcpy calls held the host 10.0 us: use ") +
                        (hip ? "hipMemcpyAsync" : "cudaMemcpyAsync") + " on a stream");
    EXPECT_NE(graph.find(hip ? "a HIP graph would save" : "a CUDA graph would save"),
              std::string::npos)
        << graph;
    EXPECT_NE(gpu_analysis_text(a).find(hip ? "HIP graph candidates" : "CUDA graph candidates"),
              std::string::npos);
    EXPECT_EQ(gpu_analysis_json(a)["runtime"], a.runtime);
  }
}

TEST(GpuAnalysis, NoGraphCandidateInARandomOrderOrWhenLaunchesAreNotBackToBack) {
  std::mt19937 rng(7);
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("k" + std::to_string(rng() % 10));
  EXPECT_TRUE(analyze_gpu(launches(names)).graph_candidates.empty());
  // The repeated sequence of the test above, but with 50 us of host work between launches.
  std::vector<std::string> rep;
  for (int i = 0; i < 12; ++i)
    for (const char* n : {"gemm", "relu", "add"}) rep.push_back(n);
  EXPECT_TRUE(analyze_gpu(launches(rep, 50000)).graph_candidates.empty());
  EXPECT_EQ(analyze_gpu(launches(rep, 1000)).graph_candidates.size(), 1u);
}

TEST(GpuAnalysis, FindingsAreOrderedByTimeLost) {
  Recording r = trace();
  auto& d = r.device;
  d.push_back(copy(0, 100000, 1000000, 1, 1, 3));        // pageable: 100 us
  d.push_back(call("cudaDeviceSynchronize", 0, 50000));  // api_sync: 50 us (no gap then)
  d.push_back(call("cudaLaunchKernel", 390000, 390020, 1));
  d.push_back(kernel("tiny", 400000, 400010, 1));  // launch-bound: 20 - 10 = 10
  // Gap [100000, 400000) = 300 us, the launch at 390000 came after it began: host-bound.
  const GpuAnalysis a = analyze_gpu(r);
  ASSERT_EQ(a.findings.size(), 4u);
  EXPECT_EQ(a.findings[0].kind, "gpu_idle");
  EXPECT_EQ(a.findings[0].time_lost_ns, 300000);
  EXPECT_NE(a.findings[0].sentence.find(
                "GPU 0 idle 75% of 400.0 us (300.0 us): 300.0 us while the host was launching"),
            std::string::npos)
      << a.findings[0].sentence;
  EXPECT_EQ(a.findings[1].kind, "pageable_copy");
  EXPECT_EQ(a.findings[1].time_lost_ns, 100000);
  EXPECT_EQ(a.findings[2].kind, "api_sync");
  EXPECT_EQ(a.findings[2].time_lost_ns, 50000);
  EXPECT_EQ(a.findings[3].kind, "launch_bound");
  EXPECT_EQ(a.findings[3].time_lost_ns, 10);
  EXPECT_NE(a.findings[3].sentence.find(
                "1 of 1 kernel launches took longer than the kernels they launched"),
            std::string::npos)
      << a.findings[3].sentence;
  for (size_t i = 1; i < a.findings.size(); ++i)
    EXPECT_GE(a.findings[i - 1].time_lost_ns, a.findings[i].time_lost_ns);
  // A gap longer than the threshold is a gpu_gaps finding too.
  GpuAnalysisOptions o;
  o.gap_threshold_ns = 200000;
  const GpuAnalysis b = analyze_gpu(r, o);
  ASSERT_EQ(b.findings.size(), 5u);
  EXPECT_EQ(b.findings[1].kind, "gpu_gaps");
  EXPECT_EQ(b.findings[1].time_lost_ns, 300000);
}

TEST(GpuAnalysis, ARecordingWithoutGpuActivitySaysSo) {
  for (const Recording& r : {trace(), [] {
                               Recording x = trace();
                               x.device.push_back(call("cudaGetDevice", 0, 10));
                               x.spans.push_back(span(SpanKind::Op, "aten::add", 0, 100));
                               return x;
                             }()}) {
    const GpuAnalysis a = analyze_gpu(r);
    EXPECT_FALSE(a.has_gpu);
    EXPECT_TRUE(a.devices.empty());
    EXPECT_TRUE(a.findings.empty());
    EXPECT_EQ(a.launch.kernels, 0);
    EXPECT_NE(gpu_analysis_text(a).find("no GPU activity in this recording"), std::string::npos);
    const nlohmann::json j = gpu_analysis_json(a);
    EXPECT_FALSE(j["has_gpu"].get<bool>());
    EXPECT_TRUE(j["findings"].empty());
    EXPECT_TRUE(j["devices"].empty());
  }
}

TEST(GpuAnalysis, JsonAndTextCarryTheSameNumbersAsTheStruct) {
  Recording r = four_causes();
  r.device.push_back(copy(1000, 1100, 5000, 1, 1, 3));
  const GpuAnalysis a = analyze_gpu(r);
  const nlohmann::json j = gpu_analysis_json(a);
  ASSERT_TRUE(j["has_gpu"].get<bool>());
  const DeviceSplit& s = a.devices.at(0);
  const nlohmann::json& jd = j["devices"][0];
  EXPECT_EQ(jd["window_ns"].get<int64_t>(), s.window_ns);
  EXPECT_EQ(jd["busy_ns"].get<int64_t>(), s.busy_ns);
  EXPECT_EQ(jd["idle_ns"].get<int64_t>(), s.idle_ns);
  EXPECT_EQ(jd["kernel_ns"].get<int64_t>(), s.kernel_ns);
  EXPECT_EQ(jd["memcpy_bytes"].get<uint64_t>(), s.memcpy_bytes);
  EXPECT_EQ(jd["idle_by_cause"]["host_bound_ns"].get<int64_t>(), s.idle_host_bound_ns);
  EXPECT_EQ(jd["idle_by_cause"]["sync_ns"].get<int64_t>(), s.idle_sync_ns);
  EXPECT_EQ(jd["idle_by_cause"]["copy_wait_ns"].get<int64_t>(), s.idle_copy_wait_ns);
  EXPECT_EQ(jd["idle_by_cause"]["other_ns"].get<int64_t>(), s.idle_other_ns);
  ASSERT_EQ(jd["longest_gaps"].size(), s.longest_gaps.size());
  for (size_t i = 0; i < s.longest_gaps.size(); ++i) {
    EXPECT_EQ(jd["longest_gaps"][i]["start_ns"].get<int64_t>(), s.longest_gaps[i].start_ns);
    EXPECT_EQ(jd["longest_gaps"][i]["duration_ns"].get<int64_t>(), s.longest_gaps[i].duration_ns);
    EXPECT_EQ(jd["longest_gaps"][i]["cause"].get<std::string>(),
              idle_cause_name(s.longest_gaps[i].cause));
  }
  EXPECT_EQ(j["launch"]["launch_bound"].get<int64_t>(), a.launch.launch_bound);
  EXPECT_DOUBLE_EQ(j["launch"]["launch_delay"]["median_ns"].get<double>(),
                   a.launch.launch_delay.median_ns);
  ASSERT_EQ(j["kernels_by_name"].size(), a.kernels_by_name.size());
  EXPECT_EQ(j["kernels_by_name"][0]["total_ns"].get<int64_t>(), a.kernels_by_name[0].total_ns);
  ASSERT_EQ(j["copies"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["copies"][0]["gbs"].get<double>(), a.copies[0].gbs);
  EXPECT_TRUE(j["copies"][0]["pageable"].get<bool>());
  ASSERT_EQ(j["findings"].size(), a.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i) {
    EXPECT_EQ(j["findings"][i]["sentence"].get<std::string>(), a.findings[i].sentence);
    EXPECT_EQ(j["findings"][i]["time_lost_ns"].get<int64_t>(), a.findings[i].time_lost_ns);
  }
  const std::string text = gpu_analysis_text(a);
  for (const char* part : {"GPU time split", "idle time by cause", "kernels by name", "copies",
                           "longest idle gaps", "findings", "host_bound", "copy_wait", "pageable"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  for (const GpuFinding& f : a.findings) EXPECT_NE(text.find(f.sentence), std::string::npos);
}

TEST(GpuAnalysis, AHundredThousandDeviceRecordsAnalyseInWellUnderASecond) {
  Recording r = trace();
  std::mt19937 rng(1);
  const char* names[] = {"gemm", "relu", "add", "softmax", "layernorm"};
  int64_t t = 0;
  uint32_t corr = 1;
  for (int i = 0; i < 50000; ++i) {
    const int64_t c = 3000 + static_cast<int64_t>(rng() % 4000);
    r.device.push_back(call("cudaLaunchKernel", t, t + c, corr, 1 + (i % 2)));
    const int64_t k = 1000 + static_cast<int64_t>(rng() % 20000);
    r.device.push_back(kernel(names[(i % 3 == 0) ? i % 5 : rng() % 5], t + c + 500, t + c + 500 + k,
                              corr, 7 + i % 3));
    if (i % 50 == 0)
      r.spans.push_back(
          span(SpanKind::Op, "op" + std::to_string(i), t, t + 50 * 8000, 1 + (i % 2)));
    ++corr;
    t += c + static_cast<int64_t>(rng() % 8000);
  }
  ASSERT_EQ(r.device.size(), 100000u);
  const auto t0 = std::chrono::steady_clock::now();
  const GpuAnalysis a = analyze_gpu(r);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("analyze_gpu on %zu device records: %.3f s\n", r.device.size(), s);
  EXPECT_EQ(a.launch.kernels, 50000);
  EXPECT_EQ(a.launch.correlated, 50000);
  EXPECT_TRUE(a.has_gpu);
#ifdef NDEBUG
  EXPECT_LT(s, 2.0);
#endif
}
