#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "core/base/error.h"
#include "core/planner/plan.h"
#include "profiler/recorder.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;

TEST(Recorder, RecordsStagesRunsAndOpsNested) {
  Recording r = ptest::record("mlp:dims=16-8-4", "none", 3);
  EXPECT_EQ(check_recording(r), "");
  EXPECT_EQ(r.run_count(), 3);
  std::vector<std::string> stages;
  size_t ops = 0;
  for (const Span& s : r.spans) {
    if (s.kind == SpanKind::Stage) stages.push_back(s.name);
    if (s.kind == SpanKind::Op) {
      ++ops;
      EXPECT_EQ(s.depth, 1) << s.name;
      ASSERT_GE(s.node, 0);
      const NodeInfo& n = r.nodes[static_cast<size_t>(s.node)];
      EXPECT_EQ(s.name, n.op + "." + std::to_string(s.node) + "(" + n.name + ")");
      EXPECT_GE(s.run, 0);
    }
  }
  // Stage names are whatever the session reports ("optimize", "verify", "pass ...", "plan", ...).
  ASSERT_FALSE(stages.empty());
  EXPECT_EQ(stages.front(), "optimize");
  EXPECT_NE(std::find(stages.begin(), stages.end(), "verify"), stages.end());
  EXPECT_NE(std::find(stages.begin(), stages.end(), "compile"), stages.end());
  EXPECT_EQ(ops % 3, 0u);
  EXPECT_GT(ops, 0u);
  // Node table: shapes, costs, offsets.
  bool matmul = false;
  for (const NodeInfo& n : r.nodes)
    if (n.op == "MatMul") {
      matmul = true;
      EXPECT_EQ(n.flops, 2.0 * 1 * 16 * 8) << n.name;
      EXPECT_GT(n.bytes, 0);
      ASSERT_EQ(n.output_offsets.size(), 1u);
      EXPECT_EQ(n.output_shapes[0], (std::vector<int64_t>{1, 8}));
      break;
    }
  EXPECT_TRUE(matmul);
  // Counter track: one sample per op plus a zero at each run end.
  EXPECT_EQ(r.counters.size(), ops + 3);
  ASSERT_EQ(r.counter_tracks.size(), 1u);
  EXPECT_EQ(r.counter_tracks[0].name, kArenaCounter);
}

TEST(Recorder, SaveLoadRoundTrip) {
  Recording r = ptest::record("mlp:dims=16-8-4", "all", 2);
  std::string path = ptest::temp_dir("rt") + "/profile.json";
  r.save(path);
  Recording back = Recording::load(path);
  EXPECT_EQ(back.spans.size(), r.spans.size());
  EXPECT_EQ(back.nodes.size(), r.nodes.size());
  EXPECT_EQ(back.to_json(), r.to_json());
}

TEST(Recorder, LoadRejectsOtherFiles) {
  std::string path = ptest::temp_dir("bad") + "/x.json";
  FILE* f = fopen(path.c_str(), "w");
  fputs("{\"traceEvents\": []}", f);
  fclose(f);
  EXPECT_THROW(Recording::load(path), Error);
  EXPECT_THROW(Recording::load(path + ".missing"), Error);
}

TEST(Recorder, CheckRecordingFindsOverlaps) {
  Recording r;
  r.spans.push_back({.name = "run 0",
                     .start_ns = 0,
                     .end_ns = 100,
                     .run = 0,
                     .tid = 1,
                     .node = -1,
                     .depth = 0,
                     .kind = SpanKind::Run});
  r.spans.push_back({.name = "a",
                     .start_ns = 50,
                     .end_ns = 150,
                     .run = 0,
                     .tid = 1,
                     .node = -1,
                     .depth = 1,
                     .kind = SpanKind::Op});
  EXPECT_NE(check_recording(r), "");
  r.spans[1].end_ns = 100;
  EXPECT_EQ(check_recording(r), "");
}

TEST(Recorder, OverheadPerOpIsSmall) {
  // The hook cost: two clock reads and two vector appends per op. Measured on a chain of tiny
  // ops where everything else is nearly free.
  ptest::register_cpu();
  ir::Graph g;
  std::string x = g.add_input("x", ir::DType::f32, {1});
  for (int i = 0; i < 200; ++i) x = g.add_node("Relu", {x}, {}, "r" + std::to_string(i));
  g.outputs = {x};
  exec::SessionOptions opt;
  opt.passes = "none";
  exec::Session s(g, opt);
  Recorder rec(1 << 20);
  rec.attach(s);
  auto in = ptest::ones_inputs(s.graph());
  ir::Tensor out(ir::DType::f32, {1});
  const void* ip[] = {in[0].bytes()};
  void* op[] = {out.bytes()};
  auto best = [&](exec::ExecutionObserver* o) {
    s.set_observer(o);
    int64_t b = INT64_MAX;
    for (int i = 0; i < 300; ++i) {
      int64_t t0 = now_ns();
      s.run_raw(ip, op);
      b = std::min(b, now_ns() - t0);
    }
    return static_cast<double>(b);
  };
  double plain = best(nullptr), recorded = best(&rec);
  double per_op = (recorded - plain) / 200.0;
  std::printf("recorder overhead: %.1f ns per op (plain %.1f ns/op)\n", per_op, plain / 200.0);
  EXPECT_LT(per_op, 2000.0);
}

// A scatter the plan writes over its data moves only its indices and updates (and the elements
// it writes); copied to a buffer of its own, or run by the eager executor, it moves the data too.
TEST(Recorder, AnUpdateWrittenInPlaceIsChargedOnlyTheBytesItMoves) {
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  for (const bool data_read_later : {false, true}) {
    ir::Graph g;
    const std::string data = g.add_input("cache", ir::DType::f32, {4, 64});  // 1024 B
    g.add_input("idx", ir::DType::i64, {4, 2});                              // 64 B
    g.add_input("upd", ir::DType::f32, {4, 2});                              // 32 B
    const std::string y = g.add_node("ScatterElements", {data, "idx", "upd"}, axis, "scatter");
    g.outputs = {g.add_node("Relu", {y})};
    if (data_read_later) g.outputs.push_back(g.add_node("Neg", {data}));
    const planner::MemoryRules rules{64, [](const ir::Node&, const std::vector<ir::TensorType>&,
                                            const std::vector<ir::TensorType>&) { return size_t{0}; }};
    const planner::ExecutionPlan plan = planner::make_plan(g, "greedy_by_size", rules);
    for (const std::string executor : {"interpreted", "compiled", "eager"}) {
      Recording config;
      config.executor = executor;
      Recorder rec;
      rec.attach(g, plan, config);
      const Recording r = rec.finish();
      ASSERT_EQ(r.nodes.at(0).name, "scatter");
      const bool in_place = !data_read_later && executor != "eager";
      // In place: indices 64 + updates 32 read, 32 written. Else every input and output whole.
      EXPECT_EQ(r.nodes[0].bytes, in_place ? 64.0 + 32 + 32 : 1024.0 + 64 + 32 + 1024)
          << executor << (data_read_later ? ", data read later" : "");
    }
  }
}
