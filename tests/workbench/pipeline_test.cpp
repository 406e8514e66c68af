// The staged pipeline: each kind of flip re-runs exactly the stages downstream of it, results
// match an independent node-by-node evaluation, and a run stopped early has what it promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"

#include "app/workbench/pipeline.h"
#include "app/workbench/report.h"
#include "tests/support/graph_eval.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::workbench {
namespace {

using test::fixed_roofline;
using test::small_settings;

// Stage executions added by one run of `s`.
std::array<int64_t, kStageCount> delta(Pipeline& p, const Settings& s) {
  auto before = p.executions();
  p.run(s);
  auto after = p.executions();
  for (size_t i = 0; i < kStageCount; ++i) after[i] -= before[i];
  return after;
}

// load, optimize, plan, compile, bind, measure
using Counts = std::array<int64_t, kStageCount>;

TEST(Pipeline, EachFlipRerunsOnlyItsDownstreamStages) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  EXPECT_EQ(delta(p, s), (Counts{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 0, 1})) << "the same settings only measure again";

  s.threads = 2;
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 0, 1})) << "threads";
  s.iters = 3;
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 0, 1})) << "iters";
  s.executor = "interpreted";
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 1, 1})) << "executor: plan and kernels reused";
  s.planner = "naive";
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 1, 0, 1, 1})) << "planner: graph and kernels reused";
  s.planner = "greedy_by_size";
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 1, 1})) << "planner back: its plan is still cached";
  s.passes_off = {"fuse_elementwise"};
  EXPECT_EQ(delta(p, s), (Counts{0, 1, 1, 1, 1, 1})) << "pass";
  s.patterns_off = {"attention"};
  EXPECT_EQ(delta(p, s), (Counts{0, 1, 1, 1, 1, 1})) << "pattern";
  s.passes_off.clear();
  s.patterns_off.clear();
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 1, 1})) << "passes back: graph, plan and kernels cached";
  s.isa = "portable";
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 1, 1, 1})) << "isa: kernels prepared (weights packed) again";
  s.isa = "auto";
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 1, 1})) << "isa back: its kernels are still cached";
  s.gemm = "blas";
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 1, 1, 1})) << "gemm: kernels prepared again (weights as stored)";
  s.gemm = "auto";
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 1, 1})) << "gemm back: its kernels are still cached";
  s.seed = 7;
  EXPECT_EQ(delta(p, s), (Counts{1, 1, 1, 1, 1, 1})) << "seed: new weights";
}

// Each instruction-set level this CPU runs gives the same outputs as the portable one (to
// rounding: the packed GEMMs sum in another order than OpenBLAS), and the result names the level
// that ran; a level the CPU lacks is refused before any work, naming the ones it runs.
TEST(Pipeline, EveryIsaLevelThisCpuRunsAgreesAndSaysWhichRan) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  s.isa = "portable";
  auto portable = p.run(s);
  EXPECT_EQ(portable->isa, "portable");
  EXPECT_NE(report_text(*portable).find("backend    cpu (portable)"), std::string::npos) << report_text(*portable);
  auto levels = exec::BackendRegistry::instance().create("cpu")->caps().isa_levels;
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.back(), "portable");
  for (const std::string level : {"avx512", "avx2"}) {
    s.isa = level;
    if (std::find(levels.begin(), levels.end(), level) == levels.end()) {
      try {
        p.run(s);
        ADD_FAILURE() << level << " was not refused";
      } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("isa '" + level + "': this CPU"), std::string::npos) << m;
        EXPECT_NE(m.find("it runs " + levels.front()), std::string::npos) << m;
      }
      continue;
    }
    auto r = p.run(s);
    EXPECT_EQ(r->isa, level);
    ASSERT_EQ(r->outputs.size(), portable->outputs.size());
    for (size_t o = 0; o < r->outputs.size(); ++o) {
      const float* a = r->outputs[o].data<float>();
      const float* b = portable->outputs[o].data<float>();
      for (int64_t i = 0; i < r->outputs[o].numel(); ++i)
        ASSERT_NEAR(a[i], b[i], 1e-4 + 1e-4 * std::fabs(b[i])) << level << " output " << o << " element " << i;
    }
  }
  s.isa = "auto";
  EXPECT_EQ(p.run(s)->isa, levels.front());
}

// precision=tf32 asks for TF32 tensor-core GEMMs, which the CPU does not have: the run is refused
// before any work with a sentence saying so, instead of silently computing fp32.
TEST(Pipeline, Tf32IsRefusedOnTheCpu) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  s.precision = "tf32";
  try {
    p.run(s);
    ADD_FAILURE() << "precision=tf32 was not refused on the cpu";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "backend 'cpu' has no TF32 math: precision=tf32 is for GPU tensor cores (the cuda backend); "
                 "'cpu' computes every GEMM in fp32, so use precision=fp32");
  }
  s.precision = "fp32";
  EXPECT_FALSE(p.run(s)->outputs.empty());
}

// Capture asked of a backend that cannot capture: the run goes on, and the result says the
// setting did not apply and why (JSON and text), instead of dropping it silently.
TEST(Pipeline, CaptureOnTheCpuIsReportedNotApplicable) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  s.profile_runs = 0;
  auto off = p.run(s);
  EXPECT_EQ(off->capture_note, "");
  EXPECT_EQ(report_text(*off).find("capture"), std::string::npos);
  s.capture = true;
  EXPECT_EQ(delta(p, s), (Counts{0, 0, 0, 0, 1, 1})) << "capture: plan and kernels reused";
  auto on = p.run(s);
  const std::string why = "backend 'cpu' cannot capture a run (it has no graph capture)";
  EXPECT_EQ(on->capture_note, why);
  EXPECT_NE(report_text(*on).find("capture    not applicable: " + why), std::string::npos) << report_text(*on);
  const nlohmann::json j = to_json(*on);
  EXPECT_EQ(j["capture"]["asked"], true);
  EXPECT_EQ(j["capture"]["applied"], false);
  EXPECT_EQ(j["capture"]["not_applicable"], why);
  ASSERT_EQ(on->outputs.size(), off->outputs.size());
  for (size_t i = 0; i < on->outputs.size(); ++i)
    EXPECT_LE(testing::tolerance_ratio(on->outputs[i], off->outputs[i], 1e-6, 1e-6), 1.0) << "same run either way";
}

TEST(Pipeline, ResultsSayWhichStagesWereReused) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  auto first = p.run(s);
  s.executor = "eager";
  auto second = p.run(s);
  ASSERT_EQ(second->stages.size(), kStageCount);
  for (const StageRun& st : second->stages) {
    bool want_cached = st.stage != Stage::Bind && st.stage != Stage::Measure;
    EXPECT_EQ(st.cached, want_cached) << stage_name(st.stage);
  }
  EXPECT_EQ(first->optimized, second->optimized) << "a reused stage shares its result";
  EXPECT_EQ(first->plan, second->plan);
  EXPECT_GT(second->sequence, first->sequence);
}

TEST(Pipeline, OutputsMatchANodeByNodeEvaluationForEveryExecutorAndPlanner) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  s.profile_runs = 0;
  for (const char* executor : {"eager", "interpreted", "compiled"}) {
    for (const char* planner : {"naive", "first_fit", "best"}) {
      for (int threads : {1, 2}) {
        s.executor = executor;
        s.planner = planner;
        s.threads = threads;
        auto r = p.run(s);
        auto want = fusebox::testing::evaluate_graph(r->model->graph, *r->inputs);
        ASSERT_EQ(r->outputs.size(), want.size());
        for (size_t o = 0; o < want.size(); ++o)
          for (int64_t i = 0; i < want[o].numel(); ++i)
            ASSERT_NEAR(r->outputs[o].data<float>()[i], want[o].data<float>()[i], 1e-4)
                << executor << " " << planner << " threads " << threads << " element " << i;
      }
    }
  }
}

TEST(Pipeline, RecordsTheProfiledRunsAndAnalysesThem) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  s.profile_runs = 3;
  auto r = p.run(s);
  ASSERT_TRUE(r->recording.has_value());
  ASSERT_TRUE(r->analysis.has_value());
  EXPECT_EQ(r->recording->run_count(), 3);
  EXPECT_EQ(r->recording->nodes.size(), r->graph().nodes.size());
  EXPECT_FALSE(r->analysis->by_type.empty());
  EXPECT_EQ(r->latency.samples_us.size(), 2u);
  s.profile_runs = 0;
  auto bare = p.run(s);
  EXPECT_FALSE(bare->recording.has_value());
  EXPECT_FALSE(bare->analysis.has_value());
}

TEST(Pipeline, EveryExecutorEmitsTheSameOpHooks) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  s.passes_off = {"absorb_layout"};  // keeps Reshape views in the graph
  s.profile_runs = 1;
  std::vector<std::vector<int32_t>> per_executor;
  for (const char* executor : {"eager", "interpreted", "compiled"}) {
    s.executor = executor;
    auto r = p.run(s);
    std::vector<int32_t> nodes;
    for (const auto& sp : r->recording->spans)
      if (sp.kind == profiler::SpanKind::Op) nodes.push_back(sp.node);
    per_executor.push_back(nodes);
  }
  EXPECT_EQ(per_executor[0], per_executor[1]);
  EXPECT_EQ(per_executor[1], per_executor[2]);
  bool has_view = false;
  auto r = p.run(s);
  for (const auto& n : r->graph().nodes) has_view |= ir::OpRegistry::instance().get(n.op).view;
  EXPECT_TRUE(has_view) << "the check needs a graph with view nodes";
  EXPECT_LT(per_executor[0].size(), r->graph().nodes.size());
}

TEST(Pipeline, PlanIndexLinksBuffersTensorsAndNodes) {
  Pipeline p(fixed_roofline);
  auto r = p.run(small_settings(), nullptr, nullptr, Stage::Plan);
  ASSERT_TRUE(r->plan && r->plan_index);
  EXPECT_EQ(r->latency.samples_us.size(), 0u) << "stopped before measuring";
  const auto& ix = *r->plan_index;
  ASSERT_EQ(ix.buffers.size(), r->plan->placements.size());
  const ir::Graph& g = r->graph();
  for (size_t b = 0; b < ix.buffers.size(); ++b) {
    const auto& buf = r->plan->placements[b].buffer;
    ASSERT_FALSE(ix.buffers[b].producers.empty() && buf.scratch) << buf.name;
    for (int n : ix.buffers[b].producers) {
      ASSERT_GE(n, 0);
      // The producer writes one of the buffer's tensors (or owns it as scratch), within its life.
      EXPECT_GE(n, buf.first) << buf.name;
      EXPECT_LE(n, buf.last) << buf.name;
      const auto& touched = ix.buffers_of_node[static_cast<size_t>(n)];
      EXPECT_NE(std::find(touched.begin(), touched.end(), static_cast<int>(b)), touched.end());
    }
    for (int n : ix.buffers[b].consumers) EXPECT_LE(n, buf.last) << buf.name << " read after it died";
    if (!buf.scratch) {
      const auto& tensors = ix.buffers[b].tensors;
      EXPECT_NE(std::find(tensors.begin(), tensors.end(), buf.name), tensors.end()) << buf.name;
    }
  }
  // Every node output that lives in the arena is found, views included.
  for (const auto& n : g.nodes) {
    for (const auto& out : n.outputs) {
      auto loc = r->plan->locations.find(out);
      if (loc != r->plan->locations.end() && loc->second.storage == planner::Storage::Arena) {
        EXPECT_TRUE(ix.buffer_of_tensor.count(out)) << out;
      }
    }
  }
}

TEST(Pipeline, BadSettingsThrowNamingWhatIsWrong) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  s.model = "/nonexistent/model.onnx";
  try {
    p.run(s);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.onnx"), std::string::npos) << e.what();
  }
  s = small_settings();
  s.backend = "tpu";
  EXPECT_THROW(p.run(s), Error);
  s = small_settings();
  auto ok = p.run(s);
  EXPECT_TRUE(ok) << "a failure leaves the pipeline usable";
}

}  // namespace
}  // namespace fusebox::workbench
