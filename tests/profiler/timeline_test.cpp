// The timeline model (profiler/timeline.h) from hand-built recordings: which tracks, how many
// rows, which stream an activity lands on, the run ranges and which run is the median.
#include "profiler/timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/analysis.h"
#include "profiler/counters.h"
#include "profiler/trace_import.h"

namespace fusebox::profiler {
namespace {

Span span(SpanKind kind, const std::string& name, int64_t t0, int64_t t1, int32_t tid,
          int32_t depth, int64_t run = -1, int32_t node = -1) {
  Span s;
  s.kind = kind;
  s.name = name;
  s.start_ns = t0;
  s.end_ns = t1;
  s.tid = tid;
  s.depth = depth;
  s.run = run;
  s.node = node;
  return s;
}

exec::DeviceActivity activity(exec::ActivityKind kind, int64_t t0, int64_t t1, int32_t stream,
                              uint32_t thread = 0, int32_t node = -1) {
  exec::DeviceActivity a;
  a.kind = kind;
  a.name = "k";
  a.start_ns = t0;
  a.end_ns = t1;
  a.device = 0;
  a.stream = stream;
  a.thread_id = thread;
  a.node_index = node;
  return a;
}

// A run of two ops (nodes 0 and 1) on thread 100, starting at `t0` and lasting `len` ns.
void add_run(Recording& r, int64_t run, int64_t t0, int64_t len) {
  r.spans.push_back(span(SpanKind::Run, run_range_name(run), t0, t0 + len, 100, 0, run));
  r.spans.push_back(span(SpanKind::Op, "A", t0 + 1, t0 + 3, 100, 1, run, 0));
  r.spans.push_back(span(SpanKind::Op, "B", t0 + 4, t0 + len - 1, 100, 1, run, 1));
}

Recording two_threads() {
  Recording r;
  r.thread_names = {{100, "main"}};
  r.nodes.resize(2);
  r.spans.push_back(span(SpanKind::Stage, "compile", 1000, 1100, 100, 0));
  add_run(r, 0, 1200, 30);
  add_run(r, 1, 1300, 10);
  add_run(r, 2, 1400, 20);
  // A worker thread nobody named, spans only at depth 3: one row, not four.
  r.spans.push_back(span(SpanKind::Op, "helper", 1210, 1215, 200, 3, 0, -1));
  r.arena_bytes = 64;
  r.counter_tracks = {{kArenaCounter, true}, {"queue depth", false}};
  r.counters = {{1250, 100, 0, 32},
                {1201, 100, 0, 96},
                {1300, 100, 0, 0},
                {1220, 100, 1, 3},
                {1210, 100, 1, 5}};
  return r;
}

TEST(Timeline, TracksAndNestingRows) {
  const Timeline t = build_timeline(two_threads());
  EXPECT_EQ(t.base_ns, 1000);
  ASSERT_EQ(t.tracks.size(), 3u);
  EXPECT_EQ(t.tracks[0].label, "NVTX");
  EXPECT_EQ(t.tracks[0].kind, TrackKind::Nvtx);
  EXPECT_EQ(t.tracks[1].label, "CPU main");
  EXPECT_EQ(t.tracks[2].label, "CPU thread 200");
  // NVTX: the stage and the three runs, all at depth 0.
  ASSERT_EQ(t.tracks[0].rows.size(), 1u);
  EXPECT_EQ(t.tracks[0].span_count(), 4u);
  // main: runs on row 0, their ops on row 1.
  ASSERT_EQ(t.tracks[1].rows.size(), 2u);
  EXPECT_EQ(t.tracks[1].rows[0].items.size(), 4u);  // stage + 3 runs
  EXPECT_EQ(t.tracks[1].rows[1].items.size(), 6u);
  for (const TimelineItem& it : t.tracks[1].rows[1].items) EXPECT_EQ(it.kind, TimelineItemKind::Op);
  EXPECT_EQ(t.tracks[1].rows[0].max_len, 100);  // the stage
  // The unnamed thread's depth 3 is its only row.
  ASSERT_EQ(t.tracks[2].rows.size(), 1u);
  EXPECT_EQ(t.tracks[2].rows[0].items[0].t0, 210);
  EXPECT_EQ(t.extent_t0, 0);
  EXPECT_EQ(t.extent_t1, 420);
}

TEST(Timeline, RunRangesAndTheMedianRun) {
  const Recording rec = two_threads();
  const Timeline t = build_timeline(rec);
  ASSERT_EQ(t.runs.size(), 3u);
  EXPECT_EQ(t.runs[0].run, 0);
  EXPECT_EQ(t.runs[0].t0, 200);
  EXPECT_EQ(t.runs[0].t1, 230);
  EXPECT_EQ(t.runs[1].ops, 2u);
  // Durations 30, 10, 20: the median is run 2, and its duration is the analysis's median run.
  ASSERT_NE(t.median(), nullptr);
  EXPECT_EQ(t.median()->run, 2);
  EXPECT_EQ(t.median()->duration(), analyze(rec, Roofline{}).breakdown.run_ns);
  EXPECT_EQ(t.find_run(1), &t.runs[1]);
  EXPECT_EQ(t.find_run(7), nullptr);
}

TEST(Timeline, EvenRunCountPicksTheShorterMiddleRun) {
  Recording rec;
  rec.nodes.resize(2);
  add_run(rec, 0, 0, 40);
  add_run(rec, 1, 100, 10);
  add_run(rec, 2, 200, 30);
  add_run(rec, 3, 300, 20);
  const Timeline t = build_timeline(rec);
  ASSERT_NE(t.median(), nullptr);
  EXPECT_EQ(t.median()->run, 3);  // 20 ns, and the analysis's median run is that run's 20, not 25
  EXPECT_EQ(analyze(rec, Roofline{}).breakdown.run_ns, 20);
  // Equal durations keep start-time order: the lower middle of (0, 1, 2, 3) is run 1.
  Recording same;
  same.nodes.resize(2);
  for (int i = 0; i < 4; ++i) add_run(same, i, 100 * i, 20);
  EXPECT_EQ(build_timeline(same).median()->run, 1);
  EXPECT_EQ(median_run_index({}), 0u);
}

TEST(Timeline, OpSpansPerNodeByStartTime) {
  const Timeline t = build_timeline(two_threads());
  ASSERT_EQ(t.op_items_of_node.size(), 2u);
  ASSERT_EQ(t.op_items_of_node[0].size(), 3u);
  double last = -1;
  for (const TimelineItemRef& ref : t.op_items_of_node[0]) {
    const TimelineItem& it = t.item(ref);
    EXPECT_EQ(ref.track, 1u);
    EXPECT_EQ(it.node, 0);
    EXPECT_GT(it.t0, last);
    last = it.t0;
  }
}

// Each counter track apart, in the recording's order, its samples by time, its scale its peak
// (the arena's at least the plan's size); a track without samples is left out.
TEST(Timeline, CounterTracksSortedWithTheirScales) {
  Recording r = two_threads();
  r.counter_tracks.push_back({"never sampled", true});
  const Timeline t = build_timeline(r);
  ASSERT_EQ(t.counters.size(), 2u);
  const TimelineCounter& arena = t.counters[0];
  EXPECT_EQ(arena.name, kArenaCounter);
  ASSERT_EQ(arena.samples.size(), 3u);
  EXPECT_EQ(arena.samples[0].first, 201);
  EXPECT_EQ(arena.samples[0].second, 96);
  EXPECT_EQ(arena.samples[2].first, 300);
  EXPECT_EQ(arena.max, 96);  // the peak sample is above the arena's 64 bytes
  EXPECT_EQ(counter_value_text(arena.bytes, 96), "96 B");
  const TimelineCounter& queue = t.counters[1];
  EXPECT_EQ(queue.name, "queue depth");
  EXPECT_FALSE(queue.bytes);
  ASSERT_EQ(queue.samples.size(), 2u);
  EXPECT_EQ(queue.samples[0], (std::pair<double, double>{210, 5}));
  EXPECT_EQ(queue.max, 5);
  EXPECT_EQ(counter_value_text(queue.bytes, 5), "5");
  r.arena_bytes = 1000;
  EXPECT_EQ(build_timeline(r).counters[0].max, 1000)
      << "the arena's scale is at least the plan's size";
}

// A recorded GPU trace: device activity only, no spans. Stream 7: kernels [500, 600) (node 2) and
// [200, 260), a memset [450, 470); stream 9: a copy [300, 400); thread 42's API call [100, 150).
static Recording five_device_records() {
  Recording rec;
  rec.nodes.resize(3);
  rec.device.push_back(activity(exec::ActivityKind::Kernel, 500, 600, 7, 0, 2));
  rec.device.push_back(activity(exec::ActivityKind::Runtime, 100, 150, 0, 42));
  rec.device.push_back(activity(exec::ActivityKind::Memcpy, 300, 400, 9));
  rec.device.push_back(activity(exec::ActivityKind::Kernel, 200, 260, 7));
  rec.device.push_back(activity(exec::ActivityKind::Memset, 450, 470, 7));
  return rec;
}

TEST(Timeline, DeviceActivityGroupedByStreamAndApiThread) {
  const Recording rec = five_device_records();
  const Timeline t = build_timeline(rec);
  EXPECT_EQ(t.base_ns, 100);
  ASSERT_EQ(t.tracks.size(), 3u);  // by first appearance
  EXPECT_EQ(t.tracks[0].label, "GPU 0 stream 7");
  EXPECT_EQ(t.tracks[0].kind, TrackKind::GpuStream);
  EXPECT_EQ(t.tracks[1].label, "CUDA API 42");
  EXPECT_EQ(t.tracks[1].kind, TrackKind::CudaApi);
  EXPECT_EQ(t.tracks[2].label, "GPU 0 stream 9");
  const TimelineRow& s7 = t.tracks[0].rows.at(0);
  ASSERT_EQ(s7.items.size(), 3u);  // sorted by start: kernel, memset, kernel
  EXPECT_EQ(s7.items[0].t0, 100);
  EXPECT_EQ(s7.items[0].index, 3);
  EXPECT_EQ(s7.items[1].kind, TimelineItemKind::Memset);
  EXPECT_EQ(s7.items[2].node, 2);
  EXPECT_TRUE(is_device_item(s7.items[2].kind));
  EXPECT_EQ(t.tracks[0].busy_ns(), 60 + 20 + 100);
  EXPECT_TRUE(t.runs.empty());
  EXPECT_EQ(t.median(), nullptr);
  // Kernels are not op spans: nothing for a selection to outline.
  EXPECT_TRUE(t.op_items_of_node[2].empty());
}

// A range selected on the timeline: the same device records as above (times from base 100:
// stream 7 kernel [100, 160), memset [350, 370), kernel [400, 500); stream 9 copy [200, 300); the
// API call [0, 50)). The range [150, 420) holds 10 + 20 + 20 ns of stream 7 (3 items), 100 of
// stream 9, and no API call; its top names are the GPU's, clipped.
TEST(Timeline, ARangeSaysWhatLiesInsideIt) {
  Recording rec = five_device_records();
  rec.device[0].name = "gemm";
  rec.device[2].name = "HtoD";
  rec.device[3].name = "gemm";
  rec.device[4].name = "memset";
  const Timeline t = build_timeline(rec);
  const RangeStats r = range_stats(t, rec, 420, 150);  // either order
  EXPECT_EQ(r.t0, 150);
  EXPECT_EQ(r.width(), 270);
  ASSERT_EQ(r.tracks.size(), 2u) << "the API call ends before the range";
  EXPECT_EQ(t.tracks[r.tracks[0].track].label, "GPU 0 stream 7");
  EXPECT_EQ(r.tracks[0].items, 3u);
  EXPECT_DOUBLE_EQ(r.tracks[0].busy_ns, 10 + 20 + 20);
  EXPECT_DOUBLE_EQ(r.tracks[1].busy_ns, 100);
  EXPECT_TRUE(r.gpu);
  ASSERT_EQ(r.top.size(), 3u);
  EXPECT_EQ(r.top[0].name, "HtoD");
  EXPECT_DOUBLE_EQ(r.top[0].time_ns, 100);
  EXPECT_EQ(r.top[1].name, "gemm");
  EXPECT_EQ(r.top[1].count, 2u);
  EXPECT_DOUBLE_EQ(r.top[1].time_ns, 30);
  EXPECT_TRUE(range_stats(t, rec, 700, 800).tracks.empty()) << "past every item";
  // A model run's host ops when there is no GPU work: inclusive, op spans only.
  const Recording host = two_threads();
  const Timeline h = build_timeline(host);
  const RangeStats hr = range_stats(h, host, 200, 230);  // run 0 (from base 1000: [200, 230))
  EXPECT_FALSE(hr.gpu);
  ASSERT_FALSE(hr.top.empty());
  EXPECT_EQ(hr.top[0].name, "B");
  EXPECT_DOUBLE_EQ(hr.top[0].time_ns, 25);  // B: [204, 229)
}

// Each API call is tied to the GPU work of its correlation id; syncs, uncorrelated work (id 0)
// and calls that launched nothing have no flow. Flows come by the launch's start.
TEST(Timeline, FlowsTieEachLaunchToWhatItLaunched) {
  Recording rec;
  auto with = [](exec::DeviceActivity a, uint32_t corr) {
    a.correlation_id = corr;
    return a;
  };
  rec.device.push_back(with(activity(exec::ActivityKind::Runtime, 300, 320, 0, 42), 2));
  rec.device.push_back(with(activity(exec::ActivityKind::Runtime, 100, 120, 0, 42), 1));
  rec.device.push_back(with(activity(exec::ActivityKind::Runtime, 400, 420, 0, 42), 3));  // nothing launched
  rec.device.push_back(with(activity(exec::ActivityKind::Kernel, 130, 200, 7), 1));
  rec.device.push_back(with(activity(exec::ActivityKind::Memcpy, 330, 360, 9), 2));
  rec.device.push_back(with(activity(exec::ActivityKind::Kernel, 500, 600, 7), 0));
  rec.device.push_back(with(activity(exec::ActivityKind::Sync, 500, 600, -1), 1));
  const Timeline t = build_timeline(rec);
  ASSERT_EQ(t.flows.size(), 2u);
  EXPECT_EQ(t.item(t.flows[0].launch).t0, 0);  // the call at 100, the base
  EXPECT_EQ(t.item(t.flows[0].target).t0, 30);
  EXPECT_EQ(t.item(t.flows[0].target).kind, TimelineItemKind::Kernel);
  EXPECT_EQ(t.item(t.flows[1].launch).t0, 200);
  EXPECT_EQ(t.item(t.flows[1].target).kind, TimelineItemKind::Memcpy);
  EXPECT_EQ(t.tracks[t.flows[1].target.track].device, 0);
  EXPECT_NE(timeline_text(t).find("2 flows"), std::string::npos);
}

// A picked host op lights up its launch calls and their kernels; a picked kernel its call and the
// innermost op around it; a call its kernel and that op. Calls on another thread, or outside the
// op, are not its.
// The flows of every shipped trace against a plain reading: each GPU item with a correlation id
// tied to the first API call carrying it (by track, then time), and the flows in launch order.
TEST(Timeline, FlowsOfEveryShippedTraceAreEachTargetsFirstCallInLaunchOrder) {
  size_t traces = 0, flows = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces")) {
    const std::string path = e.path().string();
    if (!looks_like_trace(path)) continue;
    const Recording rec = import_trace(path, nullptr);
    const Timeline t = build_timeline(rec);
    using Pair =
        std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;        // launch track, item; target's
    std::map<uint32_t, std::pair<uint32_t, uint32_t>> first_call;  // by id: its first call
    for (uint32_t c = 0; c < t.tracks.size(); ++c) {
      if (t.tracks[c].kind != TrackKind::CudaApi) continue;
      const std::vector<TimelineItem>& calls = t.tracks[c].rows[0].items;
      for (uint32_t j = 0; j < calls.size(); ++j)
        if (const uint32_t id = rec.device[static_cast<size_t>(calls[j].index)].correlation_id)
          first_call.emplace(id, std::make_pair(c, j));
    }
    std::vector<Pair> want, got;
    for (uint32_t k = 0; k < t.tracks.size(); ++k) {
      if (t.tracks[k].kind != TrackKind::GpuStream) continue;
      const std::vector<TimelineItem>& items = t.tracks[k].rows[0].items;
      for (uint32_t i = 0; i < items.size(); ++i) {
        const exec::DeviceActivity& a = rec.device[static_cast<size_t>(items[i].index)];
        if (a.correlation_id == 0 || a.kind == exec::ActivityKind::Sync) continue;
        if (auto c = first_call.find(a.correlation_id); c != first_call.end())
          want.emplace_back(c->second.first, c->second.second, k, i);
      }
    }
    for (size_t f = 0; f < t.flows.size(); ++f) {
      const TimelineFlow& x = t.flows[f];
      got.emplace_back(x.launch.track, x.launch.item, x.target.track, x.target.item);
      if (f > 0) {
        EXPECT_LE(t.item(t.flows[f - 1].launch).t0, t.item(x.launch).t0) << path << " flow " << f;
      }
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << path;
    traces += 1, flows += got.size();
  }
  EXPECT_GE(traces, 20u);
  EXPECT_GT(flows, 10000u);
}

TEST(Timeline, LinkedItemsTieHostOpsLaunchesAndKernels) {
  Recording rec;
  rec.spans.push_back(span(SpanKind::Range, "step", 50, 400, 1, 0));
  rec.spans.push_back(span(SpanKind::Op, "aten::addmm", 100, 200, 1, 1));
  auto with = [](exec::DeviceActivity a, uint32_t corr, const char* name) {
    a.correlation_id = corr;
    a.name = name;
    return a;
  };
  rec.device.push_back(with(activity(exec::ActivityKind::Runtime, 120, 130, 0, 1), 1, "cudaLaunchKernel"));
  rec.device.push_back(with(activity(exec::ActivityKind::Kernel, 150, 180, 7), 1, "gemm"));
  rec.device.push_back(with(activity(exec::ActivityKind::Runtime, 300, 310, 0, 1), 2, "cudaLaunchKernel"));
  rec.device.push_back(with(activity(exec::ActivityKind::Kernel, 320, 330, 7), 2, "relu"));
  rec.device.push_back(with(activity(exec::ActivityKind::Runtime, 140, 145, 0, 2), 3, "cudaMemcpyAsync"));
  rec.device.push_back(with(activity(exec::ActivityKind::Memcpy, 160, 170, 9), 3, "HtoD"));
  const Timeline t = build_timeline(rec);
  auto ref_of = [&](TimelineItemKind kind, const std::string& name) {
    for (uint32_t k = 0; k < t.tracks.size(); ++k)
      for (uint32_t r = 0; r < t.tracks[k].rows.size(); ++r)
        for (uint32_t i = 0; i < t.tracks[k].rows[r].items.size(); ++i) {
          const TimelineItem& it = t.tracks[k].rows[r].items[i];
          const std::string& n = is_device_item(it.kind) ? rec.device[static_cast<size_t>(it.index)].name
                                                         : rec.spans[static_cast<size_t>(it.index)].name;
          if (it.kind == kind && n == name && t.tracks[k].kind != TrackKind::Nvtx) return TimelineItemRef{k, r, i};
        }
    ADD_FAILURE() << name;
    return TimelineItemRef{};
  };
  auto names = [&](const std::vector<TimelineItemRef>& refs) {
    std::vector<std::string> out;
    for (const TimelineItemRef& ref : refs) {
      const TimelineItem& it = t.item(ref);
      out.push_back(is_device_item(it.kind) ? rec.device[static_cast<size_t>(it.index)].name
                                            : rec.spans[static_cast<size_t>(it.index)].name);
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(linked_items(t, rec, ref_of(TimelineItemKind::Op, "aten::addmm"))), (V{"cudaLaunchKernel", "gemm"}));
  EXPECT_EQ(names(linked_items(t, rec, ref_of(TimelineItemKind::Kernel, "gemm"))), (V{"cudaLaunchKernel", "aten::addmm"}));
  EXPECT_EQ(names(linked_items(t, rec, ref_of(TimelineItemKind::Kernel, "relu"))), (V{"cudaLaunchKernel", "step"}));
  EXPECT_EQ(names(linked_items(t, rec, ref_of(TimelineItemKind::Memcpy, "HtoD"))), (V{"cudaMemcpyAsync"}))
      << "thread 2 has no host span";
  EXPECT_EQ(names(linked_items(t, rec, ref_of(TimelineItemKind::Range, "step"))).size(), 4u);
  const TimelineItemRef gemm = ref_of(TimelineItemKind::Kernel, "gemm");
  const auto found = find_item(t, &t.item(gemm));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->track, gemm.track);
  EXPECT_EQ(found->item, gemm.item);
  TimelineItem elsewhere;
  EXPECT_FALSE(find_item(t, &elsewhere));
}

TEST(Timeline, BusyTimeIsTheUnionOfOverlappingSpans) {
  const Timeline t = build_timeline(two_threads());
  // main: stage 0..100, runs 200..230, 300..310, 400..420; the ops lie inside the runs.
  EXPECT_EQ(t.tracks[1].busy_ns(), 100 + 30 + 10 + 20);
}

// A row is disjoint when no item starts before an earlier one ends: the trace panel then jumps
// over a pixel's run of items by binary search, which is wrong for a row whose items overlap.
TEST(Timeline, ARowIsDisjointOnlyWhenNoItemStartsInsideAnEarlierOne) {
  Recording rec;
  // Stream 7: back to back (touching ends count as disjoint). Stream 9: the second kernel starts
  // inside the first, the third after both.
  rec.device = {activity(exec::ActivityKind::Kernel, 100, 200, 7),
                activity(exec::ActivityKind::Kernel, 200, 260, 7),
                activity(exec::ActivityKind::Kernel, 100, 400, 9),
                activity(exec::ActivityKind::Kernel, 150, 170, 9),
                activity(exec::ActivityKind::Kernel, 300, 310, 9)};
  const Timeline t = build_timeline(rec);
  ASSERT_EQ(t.tracks.size(), 2u);
  EXPECT_TRUE(t.tracks[0].rows.at(0).disjoint) << t.tracks[0].label;
  EXPECT_FALSE(t.tracks[1].rows.at(0).disjoint) << t.tracks[1].label;
  // Nesting levels of host spans are disjoint rows.
  const Timeline h = build_timeline(two_threads());
  for (const TimelineTrack& track : h.tracks)
    for (const TimelineRow& row : track.rows) EXPECT_TRUE(row.disjoint) << track.label;
}

TEST(Timeline, TextHasOneLinePerTrackAndTheRuns) {
  const std::string text = timeline_text(build_timeline(two_threads()));
  EXPECT_NE(text.find("timeline: 3 tracks, 3 runs, median run 2 (20 ns)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  CPU main                  2 rows      10 spans  busy 160 ns\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("CPU thread 200"), std::string::npos) << text;
  EXPECT_NE(text.find("arena live"), std::string::npos) << text;
  EXPECT_NE(text.find("  run 2           400 ns .. 420 ns            20 ns     2 ops  median\n"),
            std::string::npos)
      << text;
}

// The op table's header figure is the recorded runs' median (Breakdown::run_ns) and the trace opens
// on the recorded run nearest it: the same quantity, from the same runs, an outlier or not.
TEST(Timeline, TheDefaultRunIsTheRecordedRunNearestTheOpTablesMedianRun) {
  Recording rec;
  rec.nodes.resize(2);
  // Half the runs held up 17 ms, as on a busy machine: the op table and the trace name one run.
  const std::vector<int64_t> durations = {2030, 17600, 1900, 8900,  17500,
                                          2100, 17700, 1800, 17650, 2000};
  for (size_t i = 0; i < durations.size(); ++i)
    add_run(rec, static_cast<int>(i), 1000 * static_cast<int64_t>(i), durations[i]);
  const Timeline t = build_timeline(rec);
  const double op_table_run = analyze(rec, Roofline{}).breakdown.run_ns;
  ASSERT_NE(t.median(), nullptr);
  EXPECT_EQ(t.median()->duration(), op_table_run);
  for (const RunRange& r : t.runs)
    EXPECT_GE(std::abs(r.duration() - op_table_run),
              std::abs(t.median()->duration() - op_table_run));
}

}  // namespace
}  // namespace fusebox::profiler
