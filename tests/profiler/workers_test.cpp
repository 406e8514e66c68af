// Worker threads on the timeline: the CPU backend notes each intra-op thread's busy span inside
// its kernels' parallel regions, the recorder ties each to the op that forked it, the timeline
// gives each thread a track with its utilisation, and the exports carry them (trace.json: a tid
// and a thread_name per worker; the nsys SQLite file: their thread names, no NVTX ranges).
//
// This program runs with FUSEBOX_FORK_JOIN_NS=0 (set before main, below): every loop with an item
// per thread splits and the contention step-down is off, so at 2 threads every GEMM's region
// really runs on two threads however busy this machine is. The step-down test forces a
// step-down itself.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <set>

#include "core/base/error.h"
#include "ops/cpu/parallel.h"
#include "profiler/exporters.h"
#include "profiler/recorder.h"
#include "profiler/timeline.h"
#include "profiler_test_util.h"
#include "sqlite_reader.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {

const bool kEverySplit = setenv("FUSEBOX_FORK_JOIN_NS", "0", 1) == 0;

std::set<int32_t> worker_tids(const Recording& r) {
  std::set<int32_t> tids;
  for (const Span& s : r.spans)
    if (s.kind == SpanKind::Worker) tids.insert(s.tid);
  return tids;
}

// The op span on the ops' thread with this node and run; null when none.
const Span* op_span(const Recording& r, int32_t node, int64_t run) {
  for (const Span& s : r.spans)
    if (s.kind == SpanKind::Op && s.node == node && s.run == run) return &s;
  return nullptr;
}

}  // namespace

TEST(Workers, TwoThreadsPutEachGemmOnTwoWorkerThreadsTiedToItsOp) {
  ASSERT_TRUE(kEverySplit);
  const Recording r = ptest::record_workers(ptest::kGemmModel, 3, 2);
  ASSERT_EQ(check_recording(r), "");
  const std::set<int32_t> tids = worker_tids(r);
  ASSERT_EQ(tids.size(), 2u);
  EXPECT_TRUE(tids.count(r.main_tid)) << "worker 0 is the thread that runs the ops";
  std::map<int32_t, std::set<int32_t>> tids_of_gemm;  // node -> threads that worked on it
  for (const Span& s : r.spans) {
    if (s.kind != SpanKind::Worker) continue;
    ASSERT_GE(s.node, 0) << s.name;
    const Span* op = op_span(r, s.node, s.run);
    ASSERT_NE(op, nullptr) << s.name << " run " << s.run;
    EXPECT_EQ(s.name, op->name);
    EXPECT_GE(s.start_ns, op->start_ns) << s.name << ": a worker's span lies inside its op";
    EXPECT_LE(s.end_ns, op->end_ns) << s.name;
    EXPECT_EQ(s.depth, s.tid == r.main_tid ? op->depth + 1 : 0) << s.name;
    const std::string& kind = r.nodes[static_cast<size_t>(s.node)].op;
    if (kind.find("MatMul") != std::string::npos || kind.find("FusedBias") != std::string::npos)
      tids_of_gemm[s.node].insert(s.tid);
  }
  ASSERT_FALSE(tids_of_gemm.empty());
  for (const auto& [node, on] : tids_of_gemm)
    EXPECT_EQ(on.size(), 2u) << r.nodes[static_cast<size_t>(node)].name << " split over both";

  const std::vector<WorkerUtilisation> ws = worker_utilisation(r);
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].worker, 0);
  EXPECT_EQ(ws[0].tid, r.main_tid);
  EXPECT_EQ(ws[1].worker, 1);
  EXPECT_EQ(ws[1].name, "fusebox worker 1");
  for (const WorkerUtilisation& w : ws) {
    EXPECT_GT(w.utilisation(), 0.0) << w.name;
    EXPECT_LE(w.utilisation(), 1.0) << w.name;
    ASSERT_EQ(w.per_run.size(), 3u);
    for (double u : w.per_run) {
      EXPECT_GT(u, 0.0) << w.name;
      EXPECT_LE(u, 1.0) << w.name;
    }
    int64_t busy = 0;  // an independent sum: every span of that thread inside a run
    for (const Span& s : r.spans)
      if (s.kind == SpanKind::Worker && s.tid == w.tid) busy += s.end_ns - s.start_ns;
    EXPECT_EQ(w.busy_ns, busy) << w.name;
  }
  const std::string line = worker_utilisation_line(r);
  EXPECT_NE(line.find("worker 0 (runs the ops) "), std::string::npos) << line;
  EXPECT_NE(line.find(", worker 1 "), std::string::npos) << line;
  EXPECT_NE(line.find("over 3 recorded runs"), std::string::npos) << line;
}

TEST(Workers, OneThreadPutsEverythingOnTheOpsOwnThread) {
  const Recording r = ptest::record_workers(ptest::kGemmModel, 2, 1);
  ASSERT_EQ(check_recording(r), "");
  const std::set<int32_t> tids = worker_tids(r);
  ASSERT_EQ(tids.size(), 1u);
  EXPECT_EQ(*tids.begin(), r.main_tid);
  const std::vector<WorkerUtilisation> ws = worker_utilisation(r);
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_GT(ws[0].utilisation(), 0.0);
  EXPECT_LE(ws[0].utilisation(), 1.0);
}

TEST(Workers, SteppedDownTeamsShowTheOneThreadThatRan) {
  ptest::register_cpu();
  Recorder rec;
  exec::SessionOptions opt;
  opt.threads = 2;
  opt.observer = &rec;
  exec::Session s(models::build_model(ptest::kGemmModel, 1), opt);
  rec.attach(s, ptest::kGemmModel);
  auto in = ptest::ones_inputs(s.graph());
  s.run(in);  // kernels warm
  rec.clear();
  // A window of team regions that took 20x the work their threads did: the detector steps the
  // teams down to one thread for 100 ms, and the recorded run must show only worker 0.
  cpu::reset_contention();
  const int64_t busy[1] = {cpu::kContentionWindowNs / 20}, items[1] = {1};
  cpu::detail::note_team(cpu::kContentionWindowNs, busy, items, 1);
  ASSERT_TRUE(cpu::stepped_down());
  exec::BackendRecording noted(s.backend());
  s.run(in);
  exec::BackendActivity activity = noted.finish();
  const bool still = cpu::stepped_down();
  cpu::reset_contention();
  const Recording r = rec.finish(std::move(activity));
  if (!still) GTEST_SKIP() << "the run outlasted the 100 ms step-down on this machine";
  const std::set<int32_t> tids = worker_tids(r);
  ASSERT_EQ(tids.size(), 1u);
  EXPECT_EQ(*tids.begin(), r.main_tid);
  for (const Span& sp : r.spans) {
    if (sp.kind == SpanKind::Worker) {
      EXPECT_GE(sp.node, 0) << sp.name;
    }
  }
}

TEST(Workers, NothingIsNotedWhenNoOneRecords) {
  ptest::register_cpu();
  exec::SessionOptions opt;
  opt.threads = 2;
  exec::Session s(models::build_model(ptest::kGemmModel, 1), opt);
  auto in = ptest::ones_inputs(s.graph());
  (void)cpu::take_worker_spans();
  s.run(in);
  EXPECT_TRUE(cpu::take_worker_spans().empty()) << "no one records";
  exec::BackendRecording noted(s.backend());
  s.run(in);
  EXPECT_FALSE(noted.finish().workers.empty());
  s.run(in);
  EXPECT_TRUE(cpu::take_worker_spans().empty()) << "recording stopped";
  EXPECT_TRUE(s.backend().end_recording().workers.empty()) << "no recording is open";
  // A recording an exception leaves is ended on the way out.
  try {
    exec::BackendRecording left(s.backend());
    throw Error("the run failed");
  } catch (const Error&) {
  }
  s.run(in);
  EXPECT_TRUE(cpu::take_worker_spans().empty()) << "the recording the exception left ended";
}

TEST(Workers, TimelineHasATrackPerWorkerWithItsUtilisation) {
  const Recording r = ptest::record_workers(ptest::kGemmModel, 3, 2);
  const Timeline t = build_timeline(r);
  std::vector<const TimelineTrack*> workers;
  for (const TimelineTrack& track : t.tracks) {
    for (const TimelineRow& row : track.rows)
      for (const TimelineItem& it : row.items)
        EXPECT_EQ(it.kind == TimelineItemKind::Worker, track.kind == TrackKind::Worker)
            << track.label << ": worker spans on worker tracks only";
    if (track.kind == TrackKind::Worker) workers.push_back(&track);
  }
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0]->label, "worker 0");
  EXPECT_EQ(workers[0]->tid, r.main_tid);
  EXPECT_EQ(workers[1]->label, "worker 1");
  for (const TimelineTrack* w : workers) {
    EXPECT_GT(w->utilisation, 0.0);
    EXPECT_LE(w->utilisation, 1.0);
    ASSERT_EQ(w->run_utilisation.size(), 3u);
    EXPECT_GE(w->utilisation_of_run(t.median()->run), 0.0);
    EXPECT_EQ(w->utilisation_of_run(99), -1.0);
  }
  // The worker tracks sit under the CPU thread tracks.
  size_t last_cpu = 0, first_worker = t.tracks.size();
  for (size_t i = 0; i < t.tracks.size(); ++i) {
    if (t.tracks[i].kind == TrackKind::Cpu) last_cpu = i;
    if (t.tracks[i].kind == TrackKind::Worker) first_worker = std::min(first_worker, i);
  }
  EXPECT_LT(last_cpu, first_worker);
  // A GEMM node's worker spans are indexed for the selection: both threads' chunks.
  bool found = false;
  for (size_t n = 0; n < r.nodes.size(); ++n) {
    if (r.nodes[n].op.find("MatMul") == std::string::npos &&
        r.nodes[n].op.find("FusedBias") == std::string::npos)
      continue;
    std::set<uint32_t> tracks;
    for (const TimelineItemRef& ref : t.worker_items_of_node[n]) tracks.insert(ref.track);
    EXPECT_EQ(tracks.size(), 2u) << r.nodes[n].name;
    found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_NE(timeline_text(t).find("% of the runs' wall time)"), std::string::npos);
}

TEST(Workers, ChromeTraceGivesEachWorkerItsTidAndThreadName) {
  const Recording r = ptest::record_workers(ptest::kGemmModel, 2, 2);
  const nlohmann::json j = chrome_trace(r);
  std::map<int32_t, std::string> names;
  std::map<int32_t, size_t> worker_events;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == r.pid)
      names[e["tid"].get<int32_t>()] = e["args"]["name"].get<std::string>();
    if (e["ph"] == "X" && e.contains("args") && e["args"].value("Kind", "") == "worker") {
      EXPECT_EQ(e["cat"], "user_annotation");
      EXPECT_GE(e["args"]["Node Index"].get<int>(), 0);
      EXPECT_GE(e["args"]["Run"].get<int>(), 0);
      ++worker_events[e["tid"].get<int32_t>()];
    }
  }
  ASSERT_EQ(worker_events.size(), 2u) << "a tid per worker";
  for (const auto& [tid, n] : worker_events) {
    ASSERT_TRUE(names.count(tid)) << "tid " << tid << " has no thread_name";
    EXPECT_GT(n, 0u);
  }
  EXPECT_EQ(names[r.main_tid], r.thread_names.front().second);
  size_t pool_names = 0;
  for (const auto& [tid, name] : names) pool_names += name == "fusebox worker 1";
  EXPECT_EQ(pool_names, 1u);
}

TEST(Workers, NsysSqliteNamesTheWorkerThreadsButWritesNoRangesForThem) {
  const Recording r = ptest::record_workers(ptest::kGemmModel, 2, 2);
  const std::string path = ptest::temp_dir("workers-sqlite") + "/t.sqlite";
  write_nsys_sqlite(r, path);
  ptest::Sql db(path);
  EXPECT_EQ(db.one("SELECT COUNT(*) FROM ThreadNames t JOIN StringIds s ON t.nameId = s.id "
                   "WHERE s.value = 'fusebox worker 1'"),
            "1");
  size_t not_worker = 0;
  for (const Span& s : r.spans) not_worker += s.kind != SpanKind::Worker;
  EXPECT_EQ(db.one("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 59"),
            std::to_string(not_worker))
      << "push/pop ranges: the recording's spans less its worker spans";
}

TEST(Workers, NvtxtWritesNoRangesForWorkerSpans) {
  const Recording r = ptest::record_workers(ptest::kGemmModel, 2, 2);
  size_t workers = 0, not_worker = 0;
  for (const Span& s : r.spans) (s.kind == SpanKind::Worker ? workers : not_worker) += 1;
  ASSERT_GT(workers, 0u);
  const std::string text = nvtxt(r);
  size_t pushes = 0;
  for (size_t at = text.find("\nRangePush, "); at != std::string::npos;
       at = text.find("\nRangePush, ", at + 1))
    ++pushes;
  EXPECT_EQ(pushes, not_worker) << "one range per span, none for a worker's chunk";
  EXPECT_EQ(nvtxt_range_count(r), not_worker);
}
