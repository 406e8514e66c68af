// The workbench window under a real display (Xvfb in CI): start on a model, drive it through the
// command function as a user would, render, and check what is drawn: one box per node, one
// rectangle per buffer, the selected node lit up in every panel (down to the pixels), errors
// shown with the last good result kept. Without a display every test skips, saying why.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "app/ui/app.h"
#include "app/ui/widgets.h"
#include "app/ui/window.h"
#include "app/workbench/graph_viewport.h"
#include "core/backend/backend.h"
#include "core/base/error.h"
#include "core/passes/pass_manager.h"
#include "ops/cpu/parallel.h"
#include "tests/support/temp_dir.h"
#include "tests/ui/window_test.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::ui {
namespace {

class UiTest : public WindowTest {
 protected:
  const workbench::RunResult& result() { return *app_->runner().result(); }

  // The 1,008-node stack (18 small layers, every pass off), one run: the graph that opens folded.
  void start_thousand_node_stack() {
    workbench::Settings s = workbench::test::small_settings("stack:layers=18,seq=8,d=32,heads=2,ffn=64");
    for (const std::string& pass : passes::PassRegistry::instance().names()) s.passes_off.insert(pass);
    s.iters = 1;
    s.profile_runs = 1;
    start(s);
  }

  // Whether any pixel of the rectangle's outline (1 px inside) has `color` (0xRRGGBB).
  bool outline_has(const ImRect& r, uint32_t color) {
    const auto& px = window_->captured();
    const float s = window_->framebuffer_scale();
    for (int x = static_cast<int>(r.Min.x * s); x <= static_cast<int>(r.Max.x * s); ++x) {
      for (int y : {static_cast<int>(r.Min.y * s) + 1, static_cast<int>(r.Max.y * s) - 1}) {
        if (px.at(x, y) == color) return true;
      }
    }
    for (int y = static_cast<int>(r.Min.y * s); y <= static_cast<int>(r.Max.y * s); ++y) {
      for (int x : {static_cast<int>(r.Min.x * s) + 1, static_cast<int>(r.Max.x * s) - 1}) {
        if (px.at(x, y) == color) return true;
      }
    }
    return false;
  }

};

constexpr uint32_t kSelectionRgb = 0xFFC800;  // kSelectionColor

size_t boxes_of(const ir::Graph& g) { return g.nodes.size() + g.inputs.size() + g.outputs.size(); }

// A kineto trace of `kernels` 1 us kernels on GPU 0's stream 7, the i-th at step * i us (step 0:
// all at 1 us, each with correlation id 1), written in the process's temp folder; its path.
std::string kernel_stream_trace(const std::string& file, int kernels, int step) {
  const std::string path = fusebox::test::process_temp_dir() + "/" + file;
  std::ofstream out(path);
  out << "{\"traceEvents\": [\n";
  for (int i = 0; i < kernels; ++i)
    out << (i ? ",\n" : "")
        << R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )"
        << (step ? step * i : 1) << R"(, "dur": 1, "args": {)"
        << (step ? "" : R"("correlation": 1, )") << R"("device": 0, "stream": 7}})";
  out << "]}\n";
  return path;
}

TEST_F(UiTest, EveryModelDrawsOneBoxPerNodeAndOneRectanglePerBuffer) {
  for (const std::string& model : std::vector<std::string>{
           "transformer", "mlp", "stack:layers=2", std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/mlp_opset17.onnx"}) {
    SCOPED_TRACE(model);
    start(model);
    ASSERT_TRUE(app_->runner().result());
    EXPECT_EQ(app_->graph.drawn.layout_boxes, boxes_of(result().graph()));
    EXPECT_EQ(app_->arena.drawn.rects, result().plan->placements.size());
    EXPECT_GT(app_->trace.drawn.spans, 0u);
    EXPECT_GT(app_->ops.drawn.rows, 0u);
    EXPECT_GT(app_->passes.drawn.passes, 0u);
    EXPECT_NE(app_->status.drawn_text.find("median " + result().latency.text() + " |"),
              std::string::npos)
        << "the status line shows the run's latency the one way: " << app_->status.drawn_text;
  }
}

// After a planner flip the compare panel shows the verdict (faster, slower or within noise) that
// workbench::compare gives the two results: which one depends on this machine's load, so the test
// checks the panel draws the verdict, not what it is.
TEST_F(UiTest, ComparePanelShowsTheVerdictNotABareRatio) {
  start("transformer");
  const auto baseline = app_->runner().result();
  run("pin; planner=naive; panel=compare");
  const auto current = app_->runner().result();
  ASSERT_NE(baseline, current);
  ASSERT_TRUE(app_->compare.drawn.compared);
  const workbench::RunComparison c = workbench::compare(*baseline, *current);
  EXPECT_EQ(app_->compare.drawn.verdict, workbench::verdict_name(c.verdict.verdict));
  EXPECT_EQ(c.verdict.n_baseline, baseline->latency.samples_us.size());
}

TEST_F(UiTest, FlipsThroughTheCommandFunctionRedrawTheNewResult) {
  start("transformer");
  const size_t fused_nodes = result().graph().nodes.size();
  run("passes.fuse_patterns=off");
  EXPECT_FALSE(result().settings.pass_on("fuse_patterns"));
  EXPECT_GT(result().graph().nodes.size(), fused_nodes);
  EXPECT_EQ(app_->graph.drawn.layout_boxes, boxes_of(result().graph()));
  EXPECT_EQ(app_->arena.drawn.rects, result().plan->placements.size());

  run("passes.fuse_patterns=on; patterns.attention=off");
  EXPECT_GT(result().graph().nodes.size(), fused_nodes);
  EXPECT_EQ(app_->graph.drawn.layout_boxes, boxes_of(result().graph()));

  run("planner=naive");
  EXPECT_EQ(result().plan->strategy, "naive");
  EXPECT_EQ(app_->arena.drawn.rects, result().plan->placements.size());

  run("executor=eager");
  EXPECT_TRUE(app_->arena.drawn.eager_note);
  run("executor=compiled; threads=2");
  EXPECT_FALSE(app_->arena.drawn.eager_note);
  EXPECT_EQ(result().settings.threads, 2);
  EXPECT_EQ(app_->runner().snapshot().error, nullptr);
}

// The isa switch, live: each level this CPU runs re-prepares the kernels, and the status line and
// the op table show the level that ran; a level the CPU lacks keeps the last good result and says
// why in the status line.
TEST_F(UiTest, TheIsaSwitchFlipsLiveAndTheStatusLineNamesTheLevel) {
  start("mlp:batch=16");
  const auto levels = exec::BackendRegistry::instance().create("cpu")->caps().isa_levels;
  for (const auto& level : levels) {
    run("isa=" + level);
    EXPECT_EQ(result().isa, level);
    EXPECT_EQ(app_->runner().snapshot().error, nullptr) << level;
    EXPECT_NE(app_->status.drawn_text.find("| " + level + " |"), std::string::npos) << app_->status.drawn_text;
    EXPECT_GT(app_->ops.drawn.rows, 0u);
  }
  if (std::find(levels.begin(), levels.end(), "avx512") == levels.end()) {
    const auto good = app_->runner().result();
    app_->command("isa=avx512");
    settle();
    const auto snap = app_->runner().snapshot();
    ASSERT_TRUE(snap.error);
    EXPECT_NE(snap.error->message.find("has no AVX-512"), std::string::npos) << snap.error->message;
    EXPECT_EQ(snap.result, good);
    frame();
    EXPECT_NE(app_->status.drawn_text.find("has no AVX-512"), std::string::npos) << app_->status.drawn_text;
  }
}

// The op table's figures take a fixed width; where they leave its names and bound class too
// little room (a walkthrough beside it takes half the row), the table scrolls sideways with its
// names kept wide enough to read and frozen at the left, instead of squeezing them to a letter.
TEST_F(UiTest, ANarrowOpTableScrollsSidewaysWithItsNamesReadable) {
  start("transformer");
  EXPECT_GT(app_->ops.drawn.rows, 0u);
  EXPECT_FALSE(app_->ops.drawn.scrolls_sideways) << "room for names, figures and bound at 1600x1000";
  run("scenario=" + std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/fusion.json");
  EXPECT_GT(app_->ops.drawn.rows, 0u);
  EXPECT_TRUE(app_->ops.drawn.scrolls_sideways) << "the walkthrough takes half the row";
}

TEST_F(UiTest, ASelectedNodeLightsUpInEveryPanel) {
  start("transformer");
  // The first MatMul-like node: it has buffers, spans and a row.
  std::string node;
  for (const auto& n : result().graph().nodes) {
    if (n.op.find("MatMul") != std::string::npos) {
      node = n.name;
      break;
    }
  }
  ASSERT_FALSE(node.empty());
  run("ops.group=node; select=" + node);
  EXPECT_EQ(app_->selection().node, node);
  ASSERT_TRUE(app_->graph.drawn.selected_box);
  EXPECT_TRUE(outline_has(*app_->graph.drawn.selected_box, kSelectionRgb)) << "graph box not lit";
  ASSERT_FALSE(app_->arena.drawn.selected_rects.empty());
  EXPECT_TRUE(outline_has(app_->arena.drawn.selected_rects[0], kSelectionRgb)) << "arena buffer not lit";
  EXPECT_GT(app_->trace.drawn.selected_spans, 0u);
  EXPECT_TRUE(app_->ops.drawn.selected_row);

  run("select=");
  EXPECT_FALSE(app_->graph.drawn.selected_box);
  EXPECT_TRUE(app_->arena.drawn.selected_rects.empty());
  EXPECT_EQ(app_->trace.drawn.selected_spans, 0u);
}

TEST_F(UiTest, AtTwoThreadsTheTraceHasATrackPerWorkerThreadTiedToItsOps) {
  // Every loop splits and the contention step-down is off when this test has its process to
  // itself (CTest runs each test alone); run beside others it still must show what ran.
  setenv("FUSEBOX_FORK_JOIN_NS", "0", 1);
  start("mlp:batch=32,dims=256-256-256-256");
  run("threads=2");
  ASSERT_TRUE(result().recording);
  std::set<int32_t> tids;
  for (const auto& s : result().recording->spans)
    if (s.kind == profiler::SpanKind::Worker) tids.insert(s.tid);
  ASSERT_FALSE(tids.empty());
  if (cpu::fork_join_ns(2) == 0) {
    EXPECT_EQ(tids.size(), 2u) << "every GEMM split over two threads";
  }
  ASSERT_EQ(app_->trace.drawn.worker_tracks.size(), tids.size()) << "one track per worker thread";
  for (size_t i = 0; i < app_->trace.drawn.worker_tracks.size(); ++i) {
    const std::string& label = app_->trace.drawn.worker_tracks[i];
    EXPECT_EQ(label.rfind("worker " + std::to_string(i) + "  ", 0), 0u) << label;
    EXPECT_EQ(label.back(), '%') << label << ": labelled with its utilisation";
  }
  // Selecting a GEMM outlines its op span and its chunks on the worker tracks.
  std::string node;
  for (const auto& n : result().graph().nodes)
    if (n.op.find("MatMul") != std::string::npos || n.op.find("FusedBias") != std::string::npos) {
      node = n.name;
      break;
    }
  ASSERT_FALSE(node.empty());
  run("select=" + node);
  EXPECT_GT(app_->trace.drawn.selected_spans, 0u);
  EXPECT_GE(app_->trace.drawn.selected_worker_spans, tids.size());
  run("threads=1");
  EXPECT_EQ(app_->trace.drawn.worker_tracks.size(), 0u) << "one thread is one track: its CPU track";
}

// The details pane follows the selection: nothing selected says so; a fused node shows its op,
// shapes, attributes, times, roofline point, buffers and the rewrites that made it, each checked
// against the result it was drawn from; one of its origins (a node a pass removed) says what
// replaced it.
TEST_F(UiTest, TheDetailsPaneShowsTheSelectedNodeAndSaysWhenNothingIs) {
  start("transformer");
  run("select=; panel=details");
  EXPECT_EQ(app_->focus(), PanelId::Details);
  EXPECT_TRUE(app_->details.drawn.empty_state);
  EXPECT_NE(app_->details.drawn.note.find("nothing selected"), std::string::npos)
      << app_->details.drawn.note;

  const ir::Graph& g = result().graph();
  const ir::Node* gelu = nullptr;
  for (const auto& n : g.nodes)
    if (n.op == "FusedBiasGelu") gelu = &n;
  ASSERT_NE(gelu, nullptr) << "the transformer's FFN fuses into FusedBiasGelu";
  run("select=" + gelu->name);
  ASSERT_FALSE(app_->details.drawn.empty_state);
  const NodeDetails d = app_->details.drawn.details;
  EXPECT_EQ(d.state, NodeDetails::State::Node) << details_state_name(d.state);
  EXPECT_EQ(d.node, gelu->name);
  EXPECT_EQ(d.op, "FusedBiasGelu");
  EXPECT_EQ(g.nodes.at(static_cast<size_t>(d.index)).name, gelu->name);
  // Shapes as the graph has them.
  ASSERT_EQ(d.inputs.size(), gelu->inputs.size());
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    const ir::TensorInfo& t = g.tensor(gelu->inputs[i]);
    EXPECT_EQ(d.inputs[i].type, std::string(ir::dtype_name(t.dtype)) + ir::shape_str(t.shape));
  }
  ASSERT_EQ(d.outputs.size(), 1u);
  EXPECT_EQ(d.outputs[0].type, "f32" + ir::shape_str(g.tensor(gelu->outputs[0]).shape));
  EXPECT_TRUE(std::any_of(d.attributes.begin(), d.attributes.end(),
                          [](const auto& a) { return a.first == "approximate"; }));
  // Times and the roofline point: its by-node row, with both roof fractions and a class.
  ASSERT_TRUE(d.row);
  EXPECT_EQ(d.row->key, gelu->name);
  EXPECT_EQ(d.row->stats.count, result().analysis->breakdown.runs);
  EXPECT_GT(d.row->stats.min_ns, 0);
  EXPECT_LE(d.row->stats.min_ns, d.row->stats.median_ns);
  EXPECT_LE(d.row->stats.median_ns, d.row->stats.max_ns);
  EXPECT_GT(d.row->compute_fraction, 0);
  EXPECT_GT(d.row->memory_fraction, 0);
  EXPECT_EQ(d.row->math, std::vector<std::string>{"erf"});
  EXPECT_NE(d.row->bound, profiler::Bound::Unknown);
  // Its output's buffer, where the plan put it.
  const auto out = std::find_if(d.buffers.begin(), d.buffers.end(),
                                [&](const BufferDetail& b) { return b.name == gelu->outputs[0]; });
  ASSERT_NE(out, d.buffers.end());
  EXPECT_EQ(out->role, "writes");
  EXPECT_EQ(out->offset, result().plan->locations.at(gelu->outputs[0]).offset);
  EXPECT_LE(out->first, d.index);
  EXPECT_GE(out->last, d.index);
  // Made by fuse_patterns' bias_gelu, from the loaded model's nodes (a MatMul among them).
  ASSERT_FALSE(d.rewrites.empty());
  EXPECT_TRUE(std::any_of(d.rewrites.begin(), d.rewrites.end(), [](const RewriteDetail& w) {
    return w.pass == "fuse_patterns" && w.pattern == "bias_gelu";
  }));
  const ir::Graph& loaded = result().model->graph;
  auto loaded_op = [&](const std::string& name) -> std::string {
    for (const auto& n : loaded.nodes)
      if (n.name == name) return n.op;
    return "";
  };
  ASSERT_GE(d.origins.size(), 3u);
  for (const std::string& o : d.origins) EXPECT_NE(loaded_op(o), "") << o << " is not a loaded node";
  EXPECT_TRUE(std::any_of(d.origins.begin(), d.origins.end(),
                          [&](const std::string& o) { return loaded_op(o) == "MatMul"; }));

  // A node a pass removed: which rewrite took it.
  std::string matmul;
  for (const std::string& o : d.origins)
    if (loaded_op(o) == "MatMul") matmul = o;
  run("select=" + matmul);
  const NodeDetails& removed = app_->details.drawn.details;
  EXPECT_EQ(removed.state, NodeDetails::State::Removed) << details_state_name(removed.state);
  ASSERT_EQ(removed.rewrites.size(), 1u);
  EXPECT_FALSE(removed.rewrites[0].added.empty());

  run("select=");
  EXPECT_TRUE(app_->details.drawn.empty_state);
  EXPECT_EQ(app_->details.drawn.details.state, NodeDetails::State::NoSelection);
}

TEST_F(UiTest, APassViewHighlightsWhatThePassTouched) {
  start("transformer");
  run("graph.view=fuse_patterns:after");
  EXPECT_FALSE(app_->graph.drawn.highlighted_boxes.empty());
  EXPECT_TRUE(outline_has(app_->graph.drawn.highlighted_boxes[0], 0xE62828)) << "kHighlightColor";
  run("graph.view=fuse_patterns:before");
  EXPECT_FALSE(app_->graph.drawn.highlighted_boxes.empty());
  run("graph.view=final");
  EXPECT_TRUE(app_->graph.drawn.highlighted_boxes.empty());
}

TEST_F(UiTest, ABadModelDroppedOnTheWindowKeepsTheLastGoodResultAndSaysWhy) {
  start("transformer");
  const auto good = app_->runner().result();
  const std::string bad = fusebox::test::process_temp_dir() + "/not_a_model.onnx";
  std::ofstream(bad) << "this is not protobuf";
  app_->drop_files({bad});
  settle();
  const auto snap = app_->runner().snapshot();
  ASSERT_TRUE(snap.error);
  EXPECT_NE(snap.error->message.find("not_a_model.onnx"), std::string::npos) << snap.error->message;
  EXPECT_EQ(snap.result, good) << "the last good result stays published";
  EXPECT_EQ(app_->graph.drawn.layout_boxes, boxes_of(good->graph())) << "and stays on screen";
  EXPECT_NE(app_->status.drawn_text.find("not_a_model.onnx"), std::string::npos) << app_->status.drawn_text;
}

// Issue 35's two levels in one window: a trace, then its Nsight Compute export (a second open=):
// the kernel rows carry their profiled launch's limiter, and a selected kernel shows its figures.
TEST_F(UiTest, AnNcuExportBesideATraceGivesKernelRowsTheirLimiterAndFigures) {
  start("mlp");
  const std::string ncu = std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/ncu/rtx5090_deepseek_ocr";
  EXPECT_NE(app_->command("kernels=" + ncu).find("open a GPU trace first"), std::string::npos);
  run("open=" + std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/ncu/kernel_level_trace.json");
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  run("open=" + ncu + "; panel=ops");
  ASSERT_NE(app_->kernel_level(), nullptr) << app_->last_command_error();
  EXPECT_EQ(app_->kernel_level()->links.ncu_matched, 14u);
  frame();
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_level_lines, 1u);
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_rows, 16u) << "14 profiled kernels and 2 that were not";
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_limiters, 14u);
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_figures, 0u) << "nothing selected";
  const std::string fmha = app_->opened_trace()->analysis.kernels_by_name.front().key;
  ASSERT_NE(fmha.find("fmha_cutlassF"), std::string::npos) << fmha;
  run("kernel=" + fmha);
  frame();
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_figures, 1u);
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_findings, 3u) << "occupancy, latency, L2 misses: what its report holds";
  EXPECT_NE(app_->command("kernel=no_such_kernel").find("no kernel named 'no_such_kernel'"), std::string::npos);
  // A bad export is the reader's located error, and the export on screen stays.
  const std::string bad = fusebox::test::process_temp_dir() + "/foreign.csv";
  std::ofstream(bad) << "\"Kernel Name\",x\n";
  EXPECT_NE(app_->command("kernels=" + bad).find("foreign.csv"), std::string::npos);
  EXPECT_EQ(app_->kernel_level()->links.ncu_matched, 14u);
  // Another trace drops the export: its kernels are not that trace's.
  run("open=" + std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/kineto_a100_alexnet.json.gz");
  EXPECT_EQ(app_->kernel_level(), nullptr);
}

// A trace's counters are tracks of their own below the others, each named and scaled to its
// peak: the GPU memory PyTorch recorded (profile_memory=True) in a real H100 trace; a hover on
// one names it and its value there.
TEST_F(UiTest, ATracesMemoryCountersAreTracksNamedAndScaledToTheirPeak) {
  start("mlp");
  run("open=" + std::string(FUSEBOX_SOURCE_DIR) +
      "/tests/data/traces/kineto_h100_hf_bert_small.json.gz");
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  run("trace.zoom=fit");
  frame();
  EXPECT_EQ(app_->trace.drawn.counters,
            (std::vector<std::string>{"memory allocated (cuda:0) 96.61 MiB",
                                      "memory reserved (cuda:0) 116.00 MiB",
                                      "memory allocated (cpu) 16 B"}));
  EXPECT_GE(app_->trace.drawn.tracks, 3u + 2u)
      << "the counters are tracks beside the GPU's and the host's";
}

// A real A100 trace opened in the window: the trace panel gets the host thread, the CUDA API
// calls and the GPU streams with flows from launches to kernels; the op table the GPU analysis;
// the panels that draw a graph say there is none. A gap can be picked; a failed open keeps the
// trace; running the settings returns to the model.
TEST_F(UiTest, ARecordedGpuTraceOpensInTheTraceAndOpPanels) {
  start("mlp");
  const std::string path = std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/kineto_a100_alexnet.json.gz";
  run("open=" + path);
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  frame();
  EXPECT_GE(app_->trace.drawn.tracks, 4u) << "NVTX, the host thread, CUDA API, GPU streams";
  EXPECT_GT(app_->trace.drawn.spans, 0u);
  EXPECT_TRUE(app_->settings_bar.drawn_for_trace) << "the recording's bar: no backend, executor or planner";
  EXPECT_GT(app_->ops.gpu.drawn.findings, 0u);
  EXPECT_GT(app_->ops.gpu.drawn.kernel_rows, 10u);
  EXPECT_EQ(app_->ops.gpu.drawn.copy_rows, 1u) << "HtoD pageable -> device";
  EXPECT_NE(app_->status.drawn_text.find("79 kernels"), std::string::npos) << app_->status.drawn_text;
  EXPECT_EQ(app_->command("trace.gap=0"), "");
  EXPECT_NE(app_->command("trace.gap=99").find("valid: none, 0..9"), std::string::npos);
  run("ops.group=node");
  EXPECT_GT(app_->ops.gpu.drawn.kernel_rows, 0u);
  // Picking a host op lights up its launch calls and kernels (aten::addmm launches GEMMs).
  run("trace.gap=none; trace.zoom=fit; trace.select=aten::addmm");
  EXPECT_GE(app_->trace.drawn.linked, 2u) << "its launch call and kernel";
  EXPECT_NE(app_->command("trace.select=aten::nothing").find("no host span named"), std::string::npos);
  run("trace.select=none");
  EXPECT_EQ(app_->trace.drawn.linked, 0u);
  EXPECT_NE(app_->command("open=" + fusebox::test::process_temp_dir() + "/missing.json.gz"), "");
  EXPECT_NE(app_->opened_trace(), nullptr) << "a failed open keeps the trace on screen";
  run("run");
  EXPECT_EQ(app_->opened_trace(), nullptr) << "running the settings leaves the trace";
  frame();
  EXPECT_FALSE(app_->settings_bar.drawn_for_trace);
  EXPECT_NE(app_->command("trace.gap=0"), "") << "no gaps without a trace";
}

// A generation's op table per phase (ops.phase=): every phase's ops, then one phase's alone. A
// CPU recording (fusebox generate --out writes such ranges) and a GPU serving trace alike.
TEST_F(UiTest, TheOpTableListsOnePhasesKernelsOrOps) {
  start("mlp");
  const std::string path = fusebox::test::process_temp_dir() + "/phases_trace.json";
  {
    std::ofstream f(path);
    f << R"({"traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "prefill toks=4", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
      {"ph": "X", "cat": "cpu_op", "name": "MatMul", "ts": 10, "dur": 50, "pid": 1, "tid": 1},
      {"ph": "X", "cat": "cpu_op", "name": "Softmax", "ts": 70, "dur": 20, "pid": 1, "tid": 1},
      {"ph": "X", "cat": "user_annotation", "name": "decode toks=1", "ts": 200, "dur": 100, "pid": 1, "tid": 1},
      {"ph": "X", "cat": "cpu_op", "name": "MatMul", "ts": 210, "dur": 30, "pid": 1, "tid": 1},
      {"ph": "X", "cat": "cpu_op", "name": "Add", "ts": 250, "dur": 10, "pid": 1, "tid": 1},
      {"ph": "X", "cat": "user_annotation", "name": "decode toks=1", "ts": 400, "dur": 100, "pid": 1, "tid": 1},
      {"ph": "X", "cat": "cpu_op", "name": "MatMul", "ts": 410, "dur": 30, "pid": 1, "tid": 1}]})";
  }
  run("open=" + path + "; panel=ops");
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  frame();
  EXPECT_EQ(app_->ops.gpu.drawn.phase_choices, 3u) << "all, prefill, decode";
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_rows, 3u) << "MatMul, Softmax, Add over every phase";
  run("ops.phase=decode");
  frame();
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_rows, 2u) << "MatMul, Add";
  run("ops.phase=mixed");
  frame();
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_rows, 0u) << "no mixed steps here";
  EXPECT_NE(app_->command("ops.phase=warmup"), "") << "not a phase";

  // SGLang's prefill on an MI300X: the kernels its prefill step launched, as the analysis counts
  // (here every kernel of the trace; the CPU recording above is the one whose phases differ).
  run("ops.phase=prefill; open=" + std::string(FUSEBOX_SOURCE_DIR) +
      "/tests/data/traces/mi300x_sglang_qwen3_8b_prefilldecode.json.gz");
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  frame();
  const profiler::Phases& phases = app_->opened_trace()->analysis.phases;
  ASSERT_FALSE(phases.phases.empty());
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_rows, phases.phases[0].kernels.size());
  EXPECT_EQ(app_->ops.gpu.drawn.phase_choices, 2u) << "all, prefill";
  run("ops.phase=all");
}

// vLLM's piecewise HIP graphs on an MI300X: the op table warns of the clock offset it corrected
// and gives the graph replays their line; AlexNet (no replays, no NCCL, no phases) gets none.
TEST_F(UiTest, AGraphReplayTraceShowsItsReplaysAndTheClockWarning) {
  start("mlp");
  const std::string dir = std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/";
  run("open=" + dir + "mi300x_vllm_prefilldecode_piecewise.json.gz; panel=ops");
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  frame();
  EXPECT_EQ(app_->ops.gpu.drawn.warnings, 1u) << "the host/GPU clock offset";
  EXPECT_EQ(app_->ops.gpu.drawn.level_lines, 2u) << "graph replays, the mixed phase";
  run("open=" + dir + "kineto_a100_alexnet.json.gz");
  frame();
  EXPECT_EQ(app_->ops.gpu.drawn.warnings, 0u);
  EXPECT_EQ(app_->ops.gpu.drawn.level_lines, 0u);
}

// A folder of one job's rank traces (HTA's 2-rank NCCL sample): a group of tracks per rank under
// its header, host threads folded until asked for; the op table leads with the ranks and the
// straggler; a collective picked on one rank is outlined on the other too.
TEST_F(UiTest, AFolderOfRankTracesShowsEachRankAsAGroupAndACollectiveOnEveryRank) {
  start("mlp");
  run("open=" + std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/a100_2rank_nccl; panel=ops");
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  ASSERT_TRUE(app_->opened_trace()->ranks);
  frame();
  EXPECT_EQ(app_->trace.drawn.groups, 2u);
  EXPECT_EQ(app_->ops.gpu.drawn.ranks, 2u);
  EXPECT_GE(app_->trace.drawn.folded, 4u) << "each rank's NVTX and CPU threads";
  run("trace.select=ncclKernel_SendRecv");
  frame();
  EXPECT_GE(app_->trace.drawn.linked, 1u) << "the same collective on rank 1";
  EXPECT_NE(app_->command("trace.hosts=7"), "") << "no rank 7";
  run("trace.hosts=all");
  frame();
  EXPECT_EQ(app_->trace.drawn.folded, 0u);
  EXPECT_NE(app_->command("trace.select=no_such_kernel"), "");
}

// A recorded trace's host threads nest deep (vLLM's Python stacks: over 40 levels): each NVTX and
// CPU track shows its outer levels and folds the rest under its label; a click on the label,
// depth= and a match in a folded level unfold them.
TEST_F(UiTest, DeepHostStacksAreFoldedUnderTheirLabelAndUnfoldOnAsk) {
  start("mlp");
  run("open=" + std::string(FUSEBOX_SOURCE_DIR) +
      "/tests/data/traces/mi300x_vllm_prefilldecode_piecewise.json.gz; panel=trace");
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  frame();
  const size_t folded = app_->trace.drawn.folded_rows;
  EXPECT_GE(folded, 40u) << "the NVTX and CPU tracks' levels past the fourth";
  // A click on a folded track's label unfolds it, another folds it again. The mouse is GLFW's:
  // its cursor moved there, and a press as its callback reports one.
  ASSERT_FALSE(app_->trace.drawn.fold_labels.empty());
  const ImVec2 at = app_->trace.drawn.fold_labels.front().GetCenter();
  GLFWwindow* w = window_->handle();
  auto click = [&] {  // as GLFW reports a press: the backend sees the button down for a frame
    ImGui_ImplGlfw_CursorEnterCallback(w, GLFW_TRUE);
    glfwSetCursorPos(w, at.x, at.y);
    frame();
    ImGui_ImplGlfw_MouseButtonCallback(w, GLFW_MOUSE_BUTTON_LEFT, GLFW_PRESS, 0);
    frame();
    frame();  // released
    frame();
  };
  click();
  EXPECT_LT(app_->trace.drawn.folded_rows, folded) << "the clicked track's levels are shown";
  click();
  EXPECT_EQ(app_->trace.drawn.folded_rows, folded) << "and folded again";
  run("trace.depth=2");
  frame();
  EXPECT_EQ(app_->trace.drawn.folded_rows, folded + 4) << "two more levels on each of two tracks";
  run("trace.depth=all");
  frame();
  EXPECT_EQ(app_->trace.drawn.folded_rows, 0u);
  EXPECT_NE(app_->command("trace.depth=0"), "");
  EXPECT_NE(app_->command("trace.depth=deep"), "");
  run("trace.depth=1");
  frame();
  const size_t at_one = app_->trace.drawn.folded_rows;
  run("trace.find=aten::");  // host ops sit under the Python frames: the first is folded
  frame();
  frame();
  EXPECT_GE(app_->trace.drawn.find_matches, 1u);
  EXPECT_LT(app_->trace.drawn.folded_rows, at_one) << "the shown match's track unfolded";
}

// Two recordings compared in the window (HTA's trace_compare pair): pin one, open the other, and
// the compare panel lists the categories and the kernels that changed; unpin drops it.
TEST_F(UiTest, ATracePinnedAndAnotherOpenedAreComparedInTheComparePanel) {
  start("mlp");
  const std::string dir = std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/";
  run("open=" + dir + "kineto_trace_compare_base.json.gz; pin; panel=compare");
  frame();
  EXPECT_FALSE(app_->compare.drawn.compared) << "the pinned trace is the one on screen";
  run("open=" + dir + "kineto_trace_compare_test.json.gz");
  frame();
  ASSERT_TRUE(app_->compare.drawn.compared) << app_->last_command_error();
  EXPECT_GE(app_->compare.drawn.rows, 7u) << "six categories and at least one kernel";
  EXPECT_NE(app_->compare.drawn.sides.find("kineto_trace_compare_base"), std::string::npos);
  run("unpin");
  frame();
  EXPECT_FALSE(app_->compare.drawn.compared);
}

// A trace of 100,000 events (a PyTorch-profiler layout: per step an op, its launch call and the
// kernel, written here) opens, import and analysis included, and pans frame by frame. The issue
// asks for under 2 s to open and 16 ms a frame on a desktop; this 2-core machine renders with
// Mesa's software rasteriser, so the test prints both figures and fails only well above them.
TEST_F(UiTest, AHundredThousandEventTraceOpensAndPans) {
  start("mlp");
  const std::string path = fusebox::test::process_temp_dir() + "/big_trace.json";
  {
    nlohmann::json events = nlohmann::json::array();
    const int steps = 33334;  // x3 events
    for (int i = 0; i < steps; ++i) {
      const int64_t t = int64_t{i} * 20;
      events.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::op" + std::to_string(i % 7)}, {"pid", 1}, {"tid", 1},
                        {"ts", t}, {"dur", 12}});
      events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1},
                        {"ts", t + 2}, {"dur", 6}, {"args", {{"correlation", i + 1}}}});
      events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "kernel_" + std::to_string(i % 5)}, {"pid", 0}, {"tid", 7},
                        {"ts", t + 9 + (i % 3)}, {"dur", 8}, {"args", {{"correlation", i + 1}, {"device", 0}, {"stream", 7}}}});
    }
    std::ofstream(path) << nlohmann::json{{"traceEvents", events}}.dump();
  }
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(app_->command("open=" + path), "");
  const double open_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_NE(app_->opened_trace(), nullptr);
  EXPECT_EQ(app_->opened_trace()->analysis.kernel_count, 33334);
  frame();  // builds the timeline model
  std::vector<double> ms;
  for (int i = 0; i < 30; ++i) {
    app_->command(i % 10 == 0 ? "trace.zoom=fit" : (i % 10 < 5 ? "trace.zoom=2" : "trace.pan=0.2"));
    const auto f0 = std::chrono::steady_clock::now();
    frame();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - f0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("[ 100k trace ] open (import + analysis) %.2f s; frame median %.1f ms, max %.1f ms\n", open_s,
              ms[ms.size() / 2], ms.back());
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "timings under a sanitizer say nothing about the build users run (printed above)";
#endif
  EXPECT_LT(open_s, 10.0);
  EXPECT_LT(ms[ms.size() / 2], 200.0);
}

// Find, on a real A100 trace: every span and kernel whose name holds the text, any case, counted
// against the recording itself; Enter again and match= step through them by start time, the view
// following and the match picked; a bad match number and a text nothing holds say so.
TEST_F(UiTest, FindMarksEveryMatchAndStepsThroughThem) {
  start("mlp");
  run("open=" + std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/kineto_a100_alexnet.json.gz");
  const profiler::Recording& rec = app_->opened_trace()->recording;
  auto holds = [](std::string name) {
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return name.find("gemm") != std::string::npos;
  };
  size_t expected = 0;
  for (const auto& s : rec.spans) expected += holds(s.name);
  for (const auto& d : rec.device) expected += holds(d.name);
  ASSERT_GT(expected, 2u);
  run("trace.find=GEMM");
  EXPECT_EQ(app_->trace.drawn.find_matches, expected);
  EXPECT_TRUE(app_->trace.drawn.find_shown.starts_with("1/" + std::to_string(expected) + " "))
      << app_->trace.drawn.find_shown;
  EXPECT_GE(app_->trace.drawn.find_marked, 1u) << "the shown match is in view, outlined";
  EXPECT_GE(app_->trace.drawn.linked, 1u) << "and picked";
  run("trace.find=GEMM");
  EXPECT_TRUE(app_->trace.drawn.find_shown.starts_with("2/")) << app_->trace.drawn.find_shown;
  run("trace.match=prev; trace.match=prev");
  EXPECT_TRUE(app_->trace.drawn.find_shown.starts_with(std::to_string(expected) + "/"))
      << "prev from the first wraps to the last: " << app_->trace.drawn.find_shown;
  run("trace.match=2");
  EXPECT_TRUE(app_->trace.drawn.find_shown.starts_with("2/")) << app_->trace.drawn.find_shown;
  EXPECT_NE(app_->command("trace.match=100000").find("has " + std::to_string(expected)), std::string::npos);
  EXPECT_NE(app_->command("trace.match=two").find("expected next, prev or a match number"), std::string::npos);
  run("trace.find=no_kernel_is_called_this");
  EXPECT_EQ(app_->trace.drawn.find_matches, 0u);
  EXPECT_EQ(app_->trace.drawn.find_marked, 0u);
  run("trace.find=");
  EXPECT_EQ(app_->trace.drawn.find_matches, 0u);
  EXPECT_NE(app_->command("trace.match=next").find("trace.find=TEXT first"), std::string::npos);
}

// Find's histogram (Tracy's find zone): the matches' durations in log-spaced bins, checked
// against the durations read from the recording itself; keeping a bin keeps exactly the calls
// whose duration lies in it, and stepping goes through those alone.
TEST_F(UiTest, FindsHistogramBinsTheMatchesAndABinKeepsOnlyItsCalls) {
  start("mlp");
  run("open=" + std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/kineto_a100_alexnet.json.gz");
  const profiler::Recording& rec = app_->opened_trace()->recording;
  std::vector<double> durations;  // of every span and kernel named *conv*, any case
  auto add = [&](std::string name, int64_t start, int64_t end) {
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (name.find("conv") != std::string::npos) durations.push_back(std::max<double>(1.0, static_cast<double>(end - start)));
  };
  for (const auto& s : rec.spans) add(s.name, s.start_ns, s.end_ns);
  for (const auto& d : rec.device) add(d.name, d.start_ns, d.end_ns);
  ASSERT_GT(durations.size(), 10u);
  run("trace.find=conv; trace.histogram=show");
  const std::vector<double> edges = app_->trace.drawn.hist_edges;
  const std::vector<size_t> counts = app_->trace.drawn.hist_counts;
  ASSERT_EQ(edges.size(), counts.size() + 1);
  EXPECT_EQ(counts.size(), 40u);
  EXPECT_DOUBLE_EQ(edges.front(), *std::min_element(durations.begin(), durations.end()));
  EXPECT_DOUBLE_EQ(edges.back(), *std::max_element(durations.begin(), durations.end()));
  auto in_bin = [&](double d, size_t b) {
    return d >= edges[b] && (d < edges[b + 1] || (b + 1 == counts.size() && d <= edges[b + 1]));
  };
  size_t fullest = 0;
  for (size_t b = 0; b < counts.size(); ++b) {
    const auto expected = static_cast<size_t>(std::count_if(durations.begin(), durations.end(),
                                                            [&](double d) { return in_bin(d, b); }));
    EXPECT_EQ(counts[b], expected) << "bin " << b;
    if (counts[b] > counts[fullest]) fullest = b;
  }
  run("trace.bin=" + std::to_string(fullest + 1));
  EXPECT_EQ(app_->trace.drawn.hist_bin, static_cast<int>(fullest));
  EXPECT_EQ(app_->trace.drawn.find_matches, counts[fullest]);
  EXPECT_TRUE(app_->trace.drawn.find_shown.starts_with("1/" + std::to_string(counts[fullest]) + " "))
      << app_->trace.drawn.find_shown;
  EXPECT_NE(app_->command("trace.bin=41").find("has 40 bins"), std::string::npos);
  const auto empty = std::find(counts.begin(), counts.end(), 0u);
  ASSERT_NE(empty, counts.end()) << "log-spaced bins over a few dozen calls leave some empty";
  run("trace.bin=" + std::to_string(empty - counts.begin() + 1));
  EXPECT_EQ(app_->trace.drawn.find_matches, 0u);
  EXPECT_EQ(app_->trace.drawn.hist_counts, counts) << "an empty bin kept: the histogram stays, to pick another";
  run("trace.bin=none");
  EXPECT_EQ(app_->trace.drawn.find_matches, durations.size());
  run("trace.histogram=hide");
  EXPECT_TRUE(app_->trace.drawn.hist_edges.empty());
}

// 50,000 kernels stacked on one instant of one stream (a hostile file; the fuzz corpus's gzip
// bomb is 8 million of them). Drawn one over another, each a full-width bar with its outline and
// label, they cost Mesa about a minute a frame and gigabytes of vertices. A row now draws what a
// pixel shows: the first bar, the rest counted as covered.
TEST_F(UiTest, SpansStackedOnOnePixelAreDrawnOnceAndCounted) {
  start("mlp");
  const int kernels = 50000;
  const std::string path = kernel_stream_trace("stacked_kernels.json", kernels, 0);
  ASSERT_EQ(app_->command("open=" + path), "");
  ASSERT_NE(app_->opened_trace(), nullptr);
  const auto f0 = std::chrono::steady_clock::now();
  frame();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - f0).count();
  std::printf("[ stacked ] frame %.1f ms: %zu spans drawn, %zu covered\n", ms, app_->trace.drawn.spans,
              app_->trace.drawn.covered);
  EXPECT_EQ(app_->trace.drawn.spans + app_->trace.drawn.covered, static_cast<size_t>(kernels));
  EXPECT_LE(app_->trace.drawn.spans, 10u) << "one bar covers the instant at any zoom";
  run("trace.zoom=4");  // the bars now reach past both edges of the view
  EXPECT_EQ(app_->trace.drawn.spans + app_->trace.drawn.covered, static_cast<size_t>(kernels));
  EXPECT_LE(app_->trace.drawn.spans, 10u);
  run("trace.find=k");  // every one matches; their marks lie on one another too
  EXPECT_EQ(app_->trace.drawn.find_matches, static_cast<size_t>(kernels));
  EXPECT_LE(app_->trace.drawn.find_marked, 10u);
}

// A stream of 100,000 kernels, each narrower than a pixel when the trace is fitted: a row's
// loop jumps over each pixel's run of them (level of detail), so a frame looks at a few items a
// pixel and not at every one, and still accounts for each.
TEST_F(UiTest, AFittedStreamOfTinyKernelsCostsItsPixelsNotItsKernels) {
  start("mlp");
  const int kernels = 100000;
  const std::string path = kernel_stream_trace("tiny_kernels.json", kernels, 2);
  ASSERT_EQ(app_->command("open=" + path), "");
  ASSERT_NE(app_->opened_trace(), nullptr);
  frame();
  EXPECT_EQ(app_->trace.drawn.spans + app_->trace.drawn.covered, static_cast<size_t>(kernels));
  EXPECT_LT(app_->trace.drawn.visited, 10000u) << "a frame looks at a few kernels a pixel";
  run("trace.zoom=8");  // an eighth of them in view, still many a pixel
  EXPECT_NEAR(static_cast<double>(app_->trace.drawn.spans + app_->trace.drawn.covered),
              kernels / 8.0, kernels / 80.0);
  EXPECT_LT(app_->trace.drawn.visited, 10000u);
  run("trace.zoom=1000");  // a few dozen, each wider than a pixel: each looked at and drawn
  EXPECT_GT(app_->trace.drawn.spans, 0u);
  EXPECT_GE(app_->trace.drawn.visited, app_->trace.drawn.spans + app_->trace.drawn.covered);
}

TEST_F(UiTest, BadCommandsSayWhatIsWrongAndChangeNothing) {
  start("mlp");
  const auto before = app_->settings();
  EXPECT_NE(app_->command("select=NoSuchNode").find("no node 'NoSuchNode'"), std::string::npos);
  EXPECT_NE(app_->command("panel=arean").find("valid: graph, arena"), std::string::npos);
  EXPECT_NE(app_->command("passes.fuse_patern=off").find("did you mean 'fuse_patterns'"), std::string::npos);
  EXPECT_NE(app_->command("graph.view=nonsense").find("nonsense"), std::string::npos);
  EXPECT_NE(app_->command("frobnicate").find("unknown command"), std::string::npos);
  EXPECT_EQ(app_->settings(), before);
  EXPECT_EQ(app_->last_command_error().empty(), false);
  frame();
  EXPECT_NE(app_->status.drawn_text.find("unknown command"), std::string::npos);
  // A script stops at its first error.
  app_->script("select=NoSuchNode; planner=naive");
  settle();
  EXPECT_NE(app_->script_error().find("NoSuchNode"), std::string::npos);
  EXPECT_EQ(app_->settings().planner, before.planner);
}

TEST_F(UiTest, AScenarioPlaysStepByStepWithItsChecksLive) {
  start("mlp");
  const std::string path = fusebox::test::process_temp_dir() + "/walk.json";
  std::ofstream(path) << R"({"name": "walk", "model": "transformer:seq=16,d=32,heads=2,ffn=64",
    "settings": {"iters": 2, "warmup": 0, "profile_runs": 1},
    "steps": [
      {"title": "none", "set": {"passes": "none"}, "look_at": {"panel": "graph"},
       "checks": [{"check": "node_count", "equals": 56}]},
      {"title": "all", "text": "every pass", "set": {"passes": "all", "planner": "first_fit"},
       "look_at": {"panel": "arena", "op": "Attention"},
       "checks": [{"check": "node_count", "equals": 9}, {"check": "outputs_match_previous", "tolerance": 1e-4},
                  {"check": "op_absent", "op": "Attention"}]}]})";
  app_->drop_files({path});
  settle();
  ASSERT_TRUE(app_->playing());
  EXPECT_EQ(app_->playing()->step(), 0u);
  EXPECT_EQ(app_->focus(), PanelId::Graph);
  EXPECT_EQ(result().settings.passes_text(), "none");
  EXPECT_EQ(app_->walkthrough.drawn.checks, 1u);
  EXPECT_EQ(app_->walkthrough.drawn.passed, 1u);

  run("step=1");
  EXPECT_EQ(app_->playing()->step(), 1u);
  EXPECT_EQ(result().settings.planner, "first_fit");
  EXPECT_EQ(app_->focus(), PanelId::Arena);
  EXPECT_EQ(app_->selection().node, "attn.scores.Attention") << "look_at op selects its first node";
  EXPECT_EQ(app_->walkthrough.drawn.checks, 3u);
  EXPECT_EQ(app_->walkthrough.drawn.passed, 2u) << "op_absent Attention fails: the check is live";
  EXPECT_EQ(app_->walkthrough.drawn.pending, 0u);
  EXPECT_EQ(app_->walkthrough.drawn.error, "");

  // A broken scenario shows its error and keeps what was on screen.
  const auto before = app_->runner().result();
  const std::string bad = fusebox::test::process_temp_dir() + "/broken.json";
  std::ofstream(bad) << R"({"name": "b", "model": "mlp", "steps": [{"title": "x", "set": {"planner": "frist_fit"}}]})";
  app_->drop_files({bad});
  settle();
  EXPECT_NE(app_->last_command_error().find("/steps/0/set/planner"), std::string::npos) << app_->last_command_error();
  EXPECT_EQ(app_->runner().result(), before);
  EXPECT_EQ(app_->playing()->scenario().name, "walk");
  EXPECT_NE(app_->command("step=7").find("no step 7"), std::string::npos);
}

// A trace scenario (scenarios/gpu_host_bound.json, AlexNet's kineto trace) opens its trace and
// plays in the walkthrough: nothing runs, each step points at a panel, an idle gap or a kernel
// grouping, and its checks over the trace's analysis are drawn live.
// Issue 36: a range selected on a recorded trace (trace.range=, or shift+drag) says what lies
// in it: each track's busy share and items, and the GPU time by name. AlexNet's, 30.5 to 43.3 s
// from its first kept event: the pageable HtoD copies lead, 2 copies clipped to 3.686 ms, then
// ampere_sgemm 1.319 ms of 3 (Python's json over the file, the 'Trace' category left out as the
// importer does).
TEST_F(UiTest, ARangeSelectedOnATraceSaysWhatLiesInsideIt) {
  start("mlp");
  run("open=" + std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/kineto_a100_alexnet.json.gz; panel=trace");
  ASSERT_NE(app_->opened_trace(), nullptr) << app_->last_command_error();
  frame();
  EXPECT_TRUE(app_->trace.drawn.range_lines.empty()) << "no range selected";
  run("trace.range=30500000,43300000");
  frame();
  const std::vector<std::string>& lines = app_->trace.drawn.range_lines;
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines.front().rfind("range 12.80 s", 0), 0u) << lines.front();
  EXPECT_NE(std::find(lines.begin(), lines.end(), "GPU time in it, by name:"), lines.end());
  const auto first = std::find(lines.begin(), lines.end(), "GPU time in it, by name:");
  ASSERT_TRUE(first != lines.end() && first + 2 < lines.end());
  EXPECT_EQ(first[1].rfind("  3.69 ms  Memcpy HtoD (Pageable -> Device)", 0), 0u) << first[1];
  EXPECT_EQ(first[1].substr(first[1].size() - 3), ", 2") << first[1];
  EXPECT_EQ(first[2].rfind("  1.32 ms  ampere_sgemm_32x32_sliced1x4_tn", 0), 0u) << first[2];
  EXPECT_NE(app_->command("trace.range=5").find("two different times"), std::string::npos);
  EXPECT_NE(app_->command("trace.range=nan,3").find("two different times"), std::string::npos);
  run("trace.range=none");
  frame();
  EXPECT_TRUE(app_->trace.drawn.range_lines.empty());
}

// Issue 35's scenario on real ncu data: it opens its export beside the trace, each step selects
// its kernel (look_at kernel) and the kernel checks pass in the walkthrough.
TEST_F(UiTest, AKernelLevelScenarioOpensItsExportAndSelectsEachStepsKernel) {
  start("mlp");
  run("scenario=" + std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/gpu_kernel_level.json");
  ASSERT_TRUE(app_->playing()) << app_->last_command_error();
  ASSERT_NE(app_->kernel_level(), nullptr);
  EXPECT_EQ(app_->playing()->kernels().get(), app_->kernel_level()) << "one export, opened once";
  frame();
  EXPECT_NE(app_->selection().kernel.find("0, 7, 0, cublasGemvParamsEx"), std::string::npos) << app_->selection().kernel;
  EXPECT_EQ(app_->ops.gpu.drawn.kernel_figures, 1u);
  EXPECT_EQ(app_->walkthrough.drawn.checks, 7u);
  EXPECT_EQ(app_->walkthrough.drawn.passed, 7u) << app_->walkthrough.drawn.error;
  run("step=1");
  frame();
  EXPECT_NE(app_->selection().kernel.find("flash_fwd_splitkv_kernel"), std::string::npos) << app_->selection().kernel;
  EXPECT_EQ(app_->walkthrough.drawn.passed, app_->walkthrough.drawn.checks) << app_->walkthrough.drawn.error;
}

// The prefill-against-decode scenario (fusebox's own CPU recording of a generation): each step's
// look_at phase sets the op table's phase, and the phase and counter checks pass live.
TEST_F(UiTest, AGenerationScenarioShowsEachStepsPhaseInTheOpTable) {
  start("mlp");
  run("scenario=" + std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/generation_phases.json");
  ASSERT_TRUE(app_->playing()) << app_->last_command_error();
  frame();
  EXPECT_EQ(app_->ops.gpu.phase, "");
  EXPECT_EQ(app_->walkthrough.drawn.passed, app_->walkthrough.drawn.checks)
      << app_->walkthrough.drawn.error;
  run("step=1");
  frame();
  EXPECT_EQ(app_->focus(), PanelId::Ops);
  EXPECT_EQ(app_->ops.gpu.phase, "prefill") << app_->last_command_error();
  run("step=2");
  frame();
  EXPECT_EQ(app_->ops.gpu.phase, "decode") << app_->last_command_error();
  EXPECT_EQ(app_->walkthrough.drawn.checks, 4u);
  EXPECT_EQ(app_->walkthrough.drawn.passed, 4u) << app_->walkthrough.drawn.error;
  run("step=3");
  frame();
  EXPECT_EQ(app_->walkthrough.drawn.passed, 4u)
      << "the counter checks: " << app_->walkthrough.drawn.error;
}

TEST_F(UiTest, ATraceScenarioOpensItsTraceAndStepsThroughIt) {
  start("mlp");
  const auto before = app_->runner().result();
  run("scenario=" + std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/gpu_host_bound.json");
  ASSERT_TRUE(app_->playing()) << app_->last_command_error();
  ASSERT_NE(app_->opened_trace(), nullptr);
  EXPECT_EQ(app_->playing()->trace().get(), app_->opened_trace()) << "one trace, opened once";
  EXPECT_EQ(app_->playing()->step(), 0u);
  EXPECT_EQ(app_->focus(), PanelId::Trace);
  EXPECT_EQ(app_->runner().result(), before) << "a trace scenario runs nothing";
  EXPECT_GT(app_->trace.drawn.spans, 0u);
  EXPECT_EQ(app_->walkthrough.drawn.checks, 5u);
  EXPECT_EQ(app_->walkthrough.drawn.passed, 5u) << app_->walkthrough.drawn.error;
  EXPECT_EQ(app_->walkthrough.drawn.pending, 0u);

  run("step=2");
  EXPECT_EQ(app_->playing()->step(), 2u);
  EXPECT_EQ(app_->trace.selected_gap(), 1) << "look_at gap 1: the second longest";
  EXPECT_EQ(app_->walkthrough.drawn.checks, 2u);
  EXPECT_EQ(app_->walkthrough.drawn.passed, 2u) << app_->walkthrough.drawn.error;

  run("step=3");
  EXPECT_EQ(app_->focus(), PanelId::Ops);
  EXPECT_TRUE(app_->ops.gpu.by_launcher) << "look_at group launcher: ops.group=node";
  EXPECT_EQ(app_->walkthrough.drawn.passed, app_->walkthrough.drawn.checks);
  run("step=4");
  EXPECT_FALSE(app_->ops.gpu.by_launcher) << "group name: ops.group=type";
  EXPECT_NE(app_->command("step=5").find("no step 5"), std::string::npos);

  // Running the settings leaves the trace; stepping again shows it again.
  run("run");
  EXPECT_EQ(app_->opened_trace(), nullptr);
  run("step=1");
  EXPECT_NE(app_->opened_trace(), nullptr);
  EXPECT_EQ(app_->trace.selected_gap(), 0);
}

TEST_F(UiTest, SaveWritesTheSettingsAsAScenarioThatLoadsBack) {
  start("mlp");
  run("planner=first_fit; threads=2");
  const std::string path = fusebox::test::process_temp_dir() + "/saved_from_ui.json";
  run("save=" + path);
  const workbench::Scenario sc = workbench::load_scenario(path);
  EXPECT_EQ(sc.steps.at(0).settings, app_->settings());
}

TEST_F(UiTest, AJsonNumberPastDoublesRangeFailsTheCommandNotTheWindow) {
  start("mlp");
  const std::string path = fusebox::test::process_temp_dir() + "/huge_iters.json";
  std::ofstream(path)
      << R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "set": {"iters": 1e999}}]})";
  const std::string error = app_->command("open=" + path);
  EXPECT_NE(
      error.find(path + ": invalid JSON at line 1, column 73: number overflow parsing '1e999'"),
      std::string::npos)
      << error;
  EXPECT_EQ(app_->command("threads=2"), "") << "the window still takes commands";
}

TEST_F(UiTest, SavingAModelPathThatIsNotUtf8IsRefusedNotACrash) {
  start("mlp");
  // A model that opens, under a name that is not UTF-8 (a failed run would put the setting back).
  const std::string model = fusebox::test::process_temp_dir() + "/caf\xE9.onnx";
  const std::string assets = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/";
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"mlp_opset17.onnx", model},
                                 {"weights.bin", fusebox::test::process_temp_dir() + "/weights.bin"}})
    std::filesystem::copy_file(assets + from, to, std::filesystem::copy_options::overwrite_existing);
  app_->command("model=" + model);
  settle();
  ASSERT_EQ(app_->settings().model, model);
  const std::string path = fusebox::test::process_temp_dir() + "/not_saved.json";
  const std::string error = app_->command("save=" + path);
  EXPECT_NE(error.find("caf\xEF\xBF\xBD.onnx\" is not valid UTF-8"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(app_->command("model=mlp"), "") << "the window still takes commands";
}

TEST_F(UiTest, NumberKeysFocusPanelsAndSpaceReruns) {
  start("mlp");
  const auto first = app_->runner().result();
  ImGuiIO& io = ImGui::GetIO();
  auto press = [&](int key) {
    io.KeysDown[key] = true;
    frame();
    io.KeysDown[key] = false;
    frame();
  };
  press(GLFW_KEY_2);
  EXPECT_EQ(app_->focus(), PanelId::Arena);
  press(GLFW_KEY_7);
  EXPECT_EQ(app_->focus(), PanelId::Walkthrough);
  press(GLFW_KEY_3);
  EXPECT_EQ(app_->focus(), PanelId::Trace);
  press(GLFW_KEY_8);
  EXPECT_EQ(app_->focus(), PanelId::Details);
  press(GLFW_KEY_SPACE);
  settle();
  EXPECT_NE(app_->runner().result(), first) << "space ran again";
  EXPECT_TRUE(app_->runner().result()->measured());
  EXPECT_EQ(app_->runner().result()->settings, first->settings);
}

// The panels' switches as tables: each panel's commands, their errors and their help come from
// one table (app/ui/panel_switch.h). No window needed.
// A FIFO given to open= or scenario= is refused by its kind before anything opens it: open(2)
// of a FIFO blocks until a writer comes, and the UI thread (a scenario, a trace) or the runner
// (a model) would wait with it. What was on screen stays.
TEST_F(UiTest, AFifoGivenToOpenIsRefusedBeforeAnythingOpensIt) {
  start("transformer");
  const auto good = app_->runner().result();
  const std::string dir = fusebox::test::process_temp_dir();
  for (const std::string name : {"fifo_model.onnx", "fifo_scenario.json", "fifo_trace.json.gz"}) {
    const std::string path = dir + "/" + name;
    std::filesystem::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
    EXPECT_EQ(app_->command("open=" + path), "open: '" + path + "' is not a regular file (a FIFO)");
    if (name.ends_with(".json")) {
      EXPECT_EQ(app_->command("scenario=" + path),
                "scenario: '" + path + "' is not a regular file (a FIFO)");
    }
  }
  settle();
  const auto snap = app_->runner().snapshot();
  EXPECT_EQ(snap.result, good) << "no run was asked for";
  EXPECT_FALSE(snap.error);
}

// A graph beyond dot's caps is drawn with the simple layout, and the panel says so.
TEST_F(UiTest, AGraphBeyondTheLayoutCapsSaysItGotTheSimpleLayout) {
  workbench::Settings s =
      workbench::test::small_settings("stack:layers=30,seq=8,d=32,heads=2,ffn=64");
  for (const std::string& pass : passes::PassRegistry::instance().names())
    s.passes_off.insert(pass);
  s.iters = 1;
  s.profile_runs = 1;
  app_ = std::make_unique<App>(s, workbench::test::fixed_roofline);
  settle();
  run("graph.unfold=all");  // it opens folded, 30 layer boxes
  ASSERT_GT(boxes_of(result().graph()), workbench::kLayeredLayoutMaxBoxes);
  EXPECT_GT(app_->graph.drawn.boxes, 0u) << "drawn (the fit's zoom has a floor: not all on screen)";
  EXPECT_FALSE(app_->graph.drawn.layout_pending);
  EXPECT_NE(app_->graph.drawn.caption.find(std::to_string(result().graph().nodes.size()) +
                                           " nodes: simple layout"),
            std::string::npos)
      << app_->graph.drawn.caption;
}

// The default view keeps labels legible: the held-out-like GPT block (9 nodes after the passes,
// 58% before) opens at the readable zoom or more, and a minimap shows where it does not fit.
TEST_F(UiTest, TheGraphOpensAtAReadableZoomWithAMinimapWhenItDoesNotFit) {
  start(std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/decoder_opset17.onnx");
  const GraphPanel::Drawn& d = app_->graph.drawn;
  EXPECT_GE(d.zoom, workbench::kReadableZoom);
  EXPECT_GT(d.boxes, 0u);
  EXPECT_EQ(d.layout_boxes, boxes_of(result().graph()));
  EXPECT_EQ(d.minimap.has_value(), d.boxes < d.layout_boxes) << "a minimap exactly when boxes are off screen";
  run("graph.zoom=0.2");  // all of it on screen: no minimap
  EXPECT_EQ(app_->graph.drawn.boxes, app_->graph.drawn.layout_boxes);
  EXPECT_FALSE(app_->graph.drawn.minimap);
  run("graph.zoom=fit");
  EXPECT_GE(app_->graph.drawn.zoom, workbench::kReadableZoom) << "fit never goes below it";
}

// The 1,008-node stack (18 layers, no passes) opens folded, one box per layer, with a minimap;
// layers unfold and fold by command, and a node selected inside a fold lights the fold.
TEST_F(UiTest, TheThousandNodeStackOpensFoldedByLayerAndUnfolds) {
  start_thousand_node_stack();
  ASSERT_EQ(result().graph().nodes.size(), 1008u);
  const GraphPanel::Drawn& d = app_->graph.drawn;
  EXPECT_EQ(d.folds, 18u);
  EXPECT_EQ(d.layout_boxes, 18u + 2u) << "18 layers, the input and the output";
  EXPECT_GE(d.zoom, workbench::kReadableZoom);
  EXPECT_TRUE(d.minimap) << "18 layers are taller than the panel at a readable zoom";
  EXPECT_EQ(app_->graph.folded().count("layer3"), 1u);

  run("graph.unfold=layer3");
  EXPECT_EQ(app_->graph.drawn.folds, 17u);
  EXPECT_EQ(app_->graph.drawn.layout_boxes, 17u + 56u + 2u);
  EXPECT_EQ(app_->graph.folded().count("layer3"), 0u);
  run("graph.fold=layer3.attn");
  EXPECT_EQ(app_->graph.drawn.folds, 18u);
  run("graph.fold=layer3");
  EXPECT_EQ(app_->graph.drawn.layout_boxes, 18u + 2u) << "layer3 folds around its folded attn";

  // Selecting a node inside a folded layer outlines the layer's box.
  run("select=layer5.attn.Softmax");
  ASSERT_TRUE(app_->graph.drawn.selected_box);
  EXPECT_TRUE(outline_has(*app_->graph.drawn.selected_box, kSelectionRgb));

  EXPECT_NE(app_->command("graph.fold=layer99").find("no scope 'layer99'"), std::string::npos);
  // Unfolding a scope inside a folded one opens the folds around it; again, nothing is folded.
  run("graph.unfold=layer4.ffn");
  EXPECT_EQ(app_->graph.folded().count("layer4"), 0u);
  EXPECT_NE(app_->command("graph.unfold=layer4.ffn").find("not folded"), std::string::npos);
  run("graph.unfold=all");
  EXPECT_EQ(app_->graph.drawn.folds, 0u);
  EXPECT_EQ(app_->graph.drawn.layout_boxes, 1008u + 2u);
  run("graph.fold=auto");
  EXPECT_EQ(app_->graph.drawn.folds, 18u);
}

// Search: graph.find (Enter in the Ctrl+F box) selects the matches one after another in graph
// order, outlined on screen; a match inside a folded scope unfolds it.
TEST_F(UiTest, FindSelectsTheNextMatchAndUnfoldsItsScope) {
  start("transformer");
  std::vector<std::string> matches;
  for (const auto& n : result().graph().nodes)
    if (n.op == "MatMulAdd") matches.push_back(n.name);
  ASSERT_GE(matches.size(), 2u);
  run("graph.find=matmuladd");
  EXPECT_EQ(app_->selection().node, matches[0]);
  EXPECT_GE(app_->graph.drawn.search_matches, matches.size());
  ASSERT_FALSE(app_->graph.drawn.search_boxes.empty());
  EXPECT_TRUE(outline_has(app_->graph.drawn.search_boxes[0], 0xFF46E6))
      << "kSearchColor";
  run("graph.find=matmuladd");
  EXPECT_EQ(app_->selection().node, matches[1]);
  run("graph.find=");
  EXPECT_EQ(app_->graph.drawn.search_matches, 0u);

  start_thousand_node_stack();
  ASSERT_EQ(app_->graph.folded().count("layer7"), 1u);
  run("graph.find=layer7.ffn.gelu.Erf");
  EXPECT_EQ(app_->selection().node, "layer7.ffn.gelu.Erf");
  EXPECT_EQ(app_->graph.folded().count("layer7"), 0u) << "its layer unfolded";
  EXPECT_EQ(app_->graph.drawn.folds, 17u);
  ASSERT_TRUE(app_->graph.drawn.selected_box) << "and the node is on screen";
}

// The rewrites column folds away: hidden by default on a panel this narrow, shown on demand.
TEST_F(UiTest, TheRewritesColumnToggles) {
  start("transformer");
  EXPECT_FALSE(app_->graph.drawn.log_shown) << "the graph panel of a 1600 px window is under 900 px";
  run("graph.rewrites=show");
  EXPECT_TRUE(app_->graph.drawn.log_shown);
  run("graph.rewrites=hide");
  EXPECT_FALSE(app_->graph.drawn.log_shown);
  EXPECT_NE(app_->command("graph.rewrites=maybe").find("show"), std::string::npos);
}

// The window's quit while the graph panel waits for a big layout (1,400 nodes: seconds in dot)
// and the runner measures: the App goes within a second.
TEST_F(UiTest, QuitReturnsWithinASecondWhileABigLayoutIsPending) {
  workbench::Settings s =
      workbench::test::small_settings("stack:layers=25,seq=8,d=32,heads=2,ffn=64");
  for (const std::string& pass : passes::PassRegistry::instance().names())
    s.passes_off.insert(pass);
  s.iters = 1000;
  app_ = std::make_unique<App>(s, workbench::test::fixed_roofline);
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  // The panel folds the stack by layer at first (25 boxes: milliseconds in dot), so on a loaded
  // machine that layout can start and finish between two frames. Once a laid-out graph is on
  // screen, unfold everything: 1,400 boxes, seconds in dot, pending for many frames.
  bool unfolded = false;
  while (!app_->graph.drawn.layout_pending) {
    ASSERT_LT(Clock::now(), deadline) << "the graph never started its layout";
    frame();
    if (!unfolded && app_->graph.drawn.layout_boxes > 0) {
      ASSERT_EQ(app_->command("graph.unfold=all"), "");
      unfolded = true;
    }
  }
  ASSERT_TRUE(app_->layouts().busy());
  EXPECT_EQ(app_->command("quit"), "");
  EXPECT_TRUE(app_->quit_requested());
  const auto start = Clock::now();
  app_.reset();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(seconds, 1.0) << "the layout cache and the runner wait 0.4 s each at most";
}

// A failed open and a refused backend leave the controls describing what is on screen: the
// settings go back to the last good run's, the error stays, and the next flip runs that model.
TEST_F(UiTest, AFailedOpenLeavesTheControlsMatchingTheResultOnScreen) {
  start("mlp");
  const auto good = app_->runner().result();
  run("open=" + fusebox::test::process_temp_dir() + "/no_such_model.onnx");
  EXPECT_EQ(app_->runner().result(), good) << "the last good result stays on screen";
  ASSERT_TRUE(app_->runner().snapshot().error) << "the failure is shown";
  EXPECT_NE(app_->error_banner().find("last run failed (showing the last good result): "), std::string::npos)
      << "once, above the panels: " << app_->error_banner();
  EXPECT_NE(app_->error_banner().find("no_such_model.onnx"), std::string::npos) << app_->error_banner();
  EXPECT_EQ(app_->settings().model, "mlp") << "the controls describe the result on screen";
  EXPECT_EQ(app_->settings(), good->settings);
  run("threads=2");
  EXPECT_EQ(app_->runner().result()->settings.model, "mlp") << "a later flip runs the good model";
  EXPECT_FALSE(app_->runner().snapshot().error);
  EXPECT_EQ(app_->error_banner(), "") << "the banner goes with the error";
  if (app_->command("backend=cuda").empty()) {  // a backend that is registered but cannot run here
    settle();
    EXPECT_EQ(app_->settings().backend, "cpu") << "the bar says what ran";
  }
}

// A model the importer refuses for its ops (ONNX's own Einsum node test: fusebox has no Einsum)
// is drawn from the file, the way Netron would: its boxes laid out, the unsupported one filled
// red with a red border, the caption saying it was refused and not run. The controls go back to
// the last good run as for any failed open, the other panels keep it under the one banner, and
// the refused graph's nodes can be selected.
TEST_F(UiTest, ARefusedModelIsDrawnWithItsUnsupportedNodesMarked) {
  const std::string refused = "/usr/share/libonnx-testdata/data/node/test_einsum_transpose/model.onnx";
  if (!std::filesystem::exists(refused)) GTEST_SKIP() << refused << " missing: apt-get install libonnx-testdata";
  start("mlp");
  const auto good = app_->runner().result();
  run("open=" + refused);
  const auto snap = app_->runner().snapshot();
  ASSERT_TRUE(snap.error);
  ASSERT_TRUE(snap.error->refused) << snap.error->message;
  EXPECT_EQ(snap.result, good);
  EXPECT_EQ(app_->settings(), good->settings) << "the controls describe the run on screen";
  EXPECT_NE(app_->error_banner().find("Einsum"), std::string::npos) << app_->error_banner();

  const GraphPanel::Drawn& d = app_->graph.drawn;
  EXPECT_TRUE(d.refused);
  EXPECT_EQ(d.caption, "refused: 1 op fusebox does not import (Einsum) - drawn from the file, not run");
  // The file's graph (one Einsum node, its input and its output), not mlp's.
  EXPECT_EQ(d.layout_boxes, boxes_of(snap.error->refused->drawing->model->graph));
  EXPECT_EQ(snap.error->refused->drawing->model->graph.nodes.size(), 1u);
  ASSERT_EQ(d.unsupported_boxes.size(), 1u);
  const ImRect box = d.unsupported_boxes[0];
  EXPECT_TRUE(outline_has(box, 0xDC1E1E)) << "the red border (kUnsupportedColor)";
  const float s = window_->framebuffer_scale();
  EXPECT_EQ(window_->captured().at(static_cast<int>((box.Min.x + 5) * s), static_cast<int>(box.GetCenter().y * s)),
            0xF4A6A6u)
      << "the red fill (kUnsupportedFill)";
  EXPECT_GT(app_->ops.drawn.rows, 0u) << "the op table keeps the last good run";

  const std::string node = snap.error->refused->unsupported.begin()->first;
  EXPECT_EQ(app_->command("select=" + node), "");
  settle();
  EXPECT_TRUE(app_->graph.drawn.selected_box) << "the refused graph's node is selected";

  // The next flip runs the good model again, and the graph is mlp's.
  run("threads=2");
  EXPECT_FALSE(app_->graph.drawn.refused);
  EXPECT_EQ(app_->graph.drawn.layout_boxes, boxes_of(result().graph()));
}

// Opened first, with no good run before it: the same drawing, no other panel has anything.
TEST_F(UiTest, ARefusedFirstOpenIsDrawnToo) {
  const std::string refused = "/usr/share/libonnx-testdata/data/node/test_einsum_transpose/model.onnx";
  if (!std::filesystem::exists(refused)) GTEST_SKIP() << refused << " missing";
  start(refused);
  EXPECT_FALSE(app_->runner().result());
  EXPECT_TRUE(app_->graph.drawn.refused);
  EXPECT_EQ(app_->graph.drawn.unsupported_boxes.size(), 1u);
  EXPECT_EQ(app_->error_banner().rfind("the run failed: ", 0), 0u) << app_->error_banner();
}

// The model on screen is named in the title, the status line and compare (a file by its name).
TEST_F(UiTest, TheModelIsNamedInTheTitleTheStatusLineAndCompare) {
  start("mlp");
  EXPECT_EQ(app_->title(), "fusebox - mlp");
  EXPECT_EQ(app_->status.drawn_text.rfind("mlp | median ", 0), 0u) << app_->status.drawn_text;
  run("pin; passes=none");
  EXPECT_NE(app_->compare.drawn.sides.find("baseline: mlp passes="), std::string::npos) << app_->compare.drawn.sides;
  const std::string onnx = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/mlp_opset17.onnx";
  run("open=" + onnx);
  EXPECT_EQ(app_->title(), "fusebox - mlp_opset17.onnx");
  EXPECT_EQ(app_->status.drawn_text.rfind("mlp_opset17.onnx | median ", 0), 0u) << app_->status.drawn_text;
}

#ifdef FUSEBOX_PYTHON
// Issue 23's window half: every model, scenario, trace, settings and special file the bad-input
// corpus (tests/fuzz) feeds the CLI is opened in one window, one after the other. Each open is
// answered (refused with a message, or its run fails or succeeds) and the window goes on taking
// commands; at the end quit returns within a second.
TEST_F(UiTest, TheWindowSurvivesEveryFileOfTheBadInputCorpus) {
  const std::string corpus = fusebox::test::process_temp_dir() + "/corpus";
  const std::string make = std::string(FUSEBOX_PYTHON) + " -B " + FUSEBOX_SOURCE_DIR +
                           "/tests/fuzz/make_corpus.py " + FUSEBOX_SOURCE_DIR + " " + corpus + " > /dev/null";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  // Every file the corpus holds that open= takes, whatever it is (FIFOs and links included),
  // but those of limits/: they are sized for a process under ulimit (the gzip bomb is 8 million
  // valid events without one, a real job's size the window does not yet hold in bounded memory).
  std::set<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(corpus)) {
    const std::string path = e.path().string();
    if (path.find("/limits/") != std::string::npos) continue;
    for (const char* ext : {".onnx", ".json", ".json.gz", ".sqlite"})
      if (path.ends_with(ext) && !path.ends_with("/cases.json")) files.insert(path);
  }
  ASSERT_GT(files.size(), 100u) << "the corpus lost its files";
  start("mlp");
  size_t refused = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    if (!app_->command("open=" + path).empty()) ++refused;
    settle();
    ASSERT_EQ(app_->command("panel=graph"), "") << "the window stopped taking commands";
  }
  std::printf("[ corpus   ] %zu files opened, %zu refused at open=\n", files.size(), refused);
  EXPECT_EQ(app_->command("quit"), "");
  const auto t0 = Clock::now();
  app_.reset();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 1.0);
}
#endif

TEST(PanelSwitches, EachPanelDeclaresItsCommandsAndRefusesOthersByName) {
  ArenaPanel arena;
  EXPECT_EQ(arena.command("color", "buffer", nullptr), "");
  EXPECT_EQ(arena.command("color", "bufer", nullptr),
            "arena.color: unknown value 'bufer' (did you mean 'buffer'?)");
  EXPECT_EQ(arena.command("live", "maybe", nullptr), "arena.live: unknown value 'maybe' (valid: on, off)");
  EXPECT_EQ(arena.command("zom", "fit", nullptr), "arena: unknown key 'zom' (did you mean 'zoom'?)");
  TracePanel trace;
  EXPECT_EQ(trace.command("run", "all", nullptr), "");
  EXPECT_EQ(trace.command("run", "x", nullptr),
            "trace.run: expected median, all or a run number, got 'x'");
  EXPECT_EQ(trace.command("zoom", "0", nullptr),
            "trace.zoom: expected fit or a factor > 0 (2 zooms in 2x), got '0'");
  EXPECT_EQ(trace.command("pan", "", nullptr),
            "trace.pan: expected a fraction of the view (0.25 right, -0.25 left), got ''");
  OpTablePanel ops;
  EXPECT_EQ(ops.command("group", "node"), "");
  EXPECT_TRUE(ops.by_node);
  EXPECT_EQ(ops.command("group", "op"), "ops.group: unknown value 'op' (valid: type, node)");
  ComparePanel compare;
  EXPECT_TRUE(compare.switches().empty());
  EXPECT_EQ(compare.command("x", "1", nullptr), "compare: unknown key 'x' (it has no switches)");
  PassesPanel passes;
  EXPECT_TRUE(passes.switches().empty());
  const std::string help = switches_help("trace", trace.switches());
  EXPECT_NE(help.find("trace.run=median | all | <n>"), std::string::npos) << help;
  EXPECT_NE(help.find("trace.pan=<fraction>"), std::string::npos) << help;
  EXPECT_NE(switches_help("arena", arena.switches()).find("arena.color=kind|buffer"),
            std::string::npos);
}

// While a flip is measured the Runner publishes its result unmeasured first: the trace says so
// (as the op table does) instead of drawing a result with no recording.
TEST_F(UiTest, TraceShowsTheMeasuringNoteUntilTheResultIsMeasured) {
  start("mlp");
  ASSERT_GT(app_->trace.drawn.spans, 0u);
  EXPECT_FALSE(app_->trace.drawn.measuring);
  app_->script("iters=4000");
  bool seen_unmeasured = false;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (!app_->idle() && Clock::now() < deadline) {
    const auto r = app_->runner().result();
    frame();
    // The frame drew `r` when it is the published result both before and after it.
    if (!r || r->measured() || r != app_->runner().result()) continue;
    seen_unmeasured = true;
    EXPECT_TRUE(app_->trace.drawn.measuring);
    EXPECT_EQ(app_->trace.drawn.spans, 0u);
    EXPECT_EQ(app_->ops.drawn.rows, 0u);
  }
  EXPECT_TRUE(seen_unmeasured) << "no frame saw the unmeasured result";
  settle();
  EXPECT_FALSE(app_->trace.drawn.measuring);
  EXPECT_GT(app_->trace.drawn.spans, 0u);
}

}  // namespace
}  // namespace fusebox::ui

namespace fusebox::ui {
namespace {

// fusebox-ui itself, with no display: the report instead of a window (exit 0), and a clear
// refusal for --screenshot (exit 2).
std::string run_without_display(const std::string& args, int* status) {
  const std::string cmd = "env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(FUSEBOX_UI_BIN) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  *status = WEXITSTATUS(pclose(pipe));
  return out;
}

TEST(UiHeadless, WithoutADisplayItSaysSoAndPrintsTheReport) {
  int status = -1;
  const std::string out = run_without_display("mlp --iters 3 --warmup 0 --profile-runs 0", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("no display"), std::string::npos) << out;
  EXPECT_NE(out.find("printing the report instead"), std::string::npos) << out;
  EXPECT_NE(out.find("median"), std::string::npos) << "the run report follows: " << out;
}

// A GPU trace given as the argument without a display: its analysis, as `fusebox trace` prints it;
// a missing one: exit 2 naming it.
TEST(UiHeadless, ATraceWithoutADisplayPrintsItsAnalysis) {
  int status = -1;
  const std::string trace = std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/kineto_inference_small.json.gz";
  std::string out = run_without_display(trace, &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("no display"), std::string::npos) << out;
  EXPECT_NE(out.find("4 kernels"), std::string::npos) << out;
  EXPECT_NE(out.find("GPU time split"), std::string::npos) << out;
  out = run_without_display("/nonexistent/run.sqlite", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("/nonexistent/run.sqlite"), std::string::npos) << out;
}

TEST(UiHeadless, AScreenshotWithoutADisplayExits2Saying) {
  int status = -1;
  const std::string out = run_without_display("mlp --screenshot /tmp/never.png", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("no display"), std::string::npos) << out;
  EXPECT_NE(out.find("cannot take a screenshot"), std::string::npos) << out;
}

TEST(UiHeadless, FlagsCli11RefusesExit2Too) {
  int status = -1;
  std::string out = run_without_display("mlp --frames 0", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("--frames"), std::string::npos) << out;
  out = run_without_display("mlp --no-such-flag", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("--no-such-flag"), std::string::npos) << out;
  out = run_without_display("--help", &status);
  EXPECT_EQ(status, 0) << out;
}

TEST(UiHeadless, AScenarioWithANumberPastDoublesRangeExits2NamingIt) {
  const std::string path = fusebox::test::process_temp_dir() + "/huge_headless.json";
  std::ofstream(path)
      << R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "set": {"iters": 1e999}}]})";
  int status = -1;
  const std::string out = run_without_display(path, &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find(path + ": invalid JSON at line 1, column 73: number overflow"),
            std::string::npos)
      << out;
}

// fusebox-ui with the display the tests run under (xvfb-run): bad input exits 2 there too.
std::string run_with_display(const std::string& args, int* status) {
  const std::string cmd = std::string(FUSEBOX_UI_BIN) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  *status = WEXITSTATUS(pclose(pipe));
  return out;
}

class UiProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = Window::why_no_display()) {
      if (std::getenv("FUSEBOX_REQUIRE_DISPLAY")) FAIL() << *why;
      GTEST_SKIP() << *why << " (tools/test.sh runs these under xvfb-run)";
    }
  }
};

TEST_F(UiProcess, AScreenshotOfAModelThatFailedToLoadExits2) {
  const std::string shot = fusebox::test::process_temp_dir() + "/never_taken.png";
  const std::string model = fusebox::test::process_temp_dir() + "/garbage.onnx";
  std::ofstream(model) << "not a protobuf";
  int status = -1;
  const std::string out = run_with_display(model + " --screenshot " + shot, &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find(model), std::string::npos) << out;
  EXPECT_NE(out.find("not taken"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(shot));
}

TEST_F(UiProcess, ADoScriptErrorExits2) {
  const std::string shot = fusebox::test::process_temp_dir() + "/never_taken_do.png";
  int status = -1;
  std::string out = run_with_display(
      "mlp --iters 2 --warmup 0 --profile-runs 0 --do \"planner=frist_fit\" --screenshot " + shot,
      &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("did you mean 'first_fit'"), std::string::npos) << out;
  // Without a screenshot too: the `quit` after the bad command never runs, so the window must
  // not wait for it (it used to stay open, for nobody).
  out = run_with_display("mlp --iters 2 --warmup 0 --profile-runs 0 --do \"nosuch=1; quit\"", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("unknown key 'nosuch'"), std::string::npos) << out;
}

TEST(UiHeadless, BadFlagsExit2NamingTheFlag) {
  int status = -1;
  std::string out = run_without_display("mlp --size 10x10", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("--size"), std::string::npos) << out;
  out = run_without_display("mlp --planner frist_fit", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("did you mean 'first_fit'"), std::string::npos) << out;
}

}  // namespace
}  // namespace fusebox::ui

namespace fusebox::ui {
namespace {

// A scenario step's look_at names the window's panels: every panel a step can point at loads.
TEST(UiPanels, ScenariosCanLookAtEveryPanelButTheWalkthroughItself) {
  for (int i = 0; i < kPanelCount; ++i) {
    const std::string name = panel_name(static_cast<PanelId>(i));
    const std::string path = fusebox::test::process_temp_dir() + "/look_at_" + name + ".json";
    std::ofstream(path) << R"({"name": "p", "model": "mlp", "steps": [{"title": "t", "look_at": {"panel": ")" + name +
                               R"("}}]})";
    if (static_cast<PanelId>(i) == PanelId::Walkthrough) {
      EXPECT_THROW(workbench::load_scenario(path), Error);
    } else {
      EXPECT_EQ(workbench::load_scenario(path).steps.at(0).look_at.panel, name);
    }
  }
}

}  // namespace
}  // namespace fusebox::ui

namespace fusebox::ui {
namespace {

// scenarios/scenario.schema.json lists the panels a step can look at: the window's panels
// (panel_name) but the walkthrough, in their order.
TEST(UiPanels, TheScenarioSchemaListsTheWindowsPanels) {
  const nlohmann::json schema = workbench::read_json_file(
      std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/scenario.schema.json", "schema");
  std::vector<std::string> panels;
  for (int i = 0; i < kPanelCount; ++i)
    if (static_cast<PanelId>(i) != PanelId::Walkthrough) panels.push_back(panel_name(static_cast<PanelId>(i)));
  EXPECT_EQ(schema.at("$defs").at("step").at("properties").at("look_at").at("properties").at("panel").at("enum"),
            nlohmann::json(panels));
}


// Window::fill_opaque (the plots' backgrounds) clears the framebuffer instead of drawing two
// triangles: the pixels must be the triangles' own, at fractional edges and under a clip rectangle
// that cuts it, and a colour with alpha is still blended as a rectangle.
TEST_F(UiTest, AnOpaqueFillByClearHasTheSamePixelsAsItsTriangles) {
  start("mlp", 1);
  const ImU32 color = IM_COL32(26, 27, 31, 255), translucent = IM_COL32(255, 255, 255, 8);
  const ImVec2 offset(0, 300);  // the triangles' copy, below the cleared one
  window_->begin_frame();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(1600, 1000));
  ImGui::Begin("fills", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoBackground);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto both = [&](ImVec2 a, ImVec2 b, ImU32 c, ImVec2 clip_a, ImVec2 clip_b) {
    dl->PushClipRect(clip_a, clip_b, true);
    Window::fill_opaque(dl, a, b, c);
    dl->PopClipRect();
    dl->PushClipRect(ImVec2(clip_a.x + offset.x, clip_a.y + offset.y), ImVec2(clip_b.x + offset.x, clip_b.y + offset.y),
                     true);
    dl->AddRectFilled(ImVec2(a.x + offset.x, a.y + offset.y), ImVec2(b.x + offset.x, b.y + offset.y), c);
    dl->PopClipRect();
  };
  both(ImVec2(100.4f, 100.6f), ImVec2(300.5f, 180.49f), color, ImVec2(0, 0), ImVec2(1600, 1000));
  both(ImVec2(400, 100), ImVec2(600, 200), color, ImVec2(450.7f, 120.2f), ImVec2(530.3f, 170.8f));  // clipped
  both(ImVec2(700, 100), ImVec2(900, 200), translucent, ImVec2(0, 0), ImVec2(1600, 1000));
  ImGui::End();
  window_->end_frame(true);
  const auto& px = window_->captured();
  const float s = window_->framebuffer_scale();
  int differing = 0, filled = 0;
  for (int y = static_cast<int>(90 * s); y < static_cast<int>(210 * s); ++y)
    for (int x = static_cast<int>(90 * s); x < static_cast<int>(910 * s); ++x) {
      const uint32_t cleared = px.at(x, y), drawn = px.at(x, y + static_cast<int>(offset.y * s));
      differing += cleared != drawn;
      filled += cleared == 0x1A1B1Fu;
    }
  EXPECT_EQ(differing, 0);
  // At scale 1 (Xvfb): the first rectangle's pixels whose centres lie inside, columns 100-299 and
  // rows 101-179 (200 x 79); of the second, the clip as imgui_impl_opengl3 truncates it, columns
  // from 450, (int)79.6 wide, and rows from 121, (int)50.6 high (79 x 50).
  if (s == 1) {
    EXPECT_EQ(filled, 200 * 79 + 79 * 50);
  }
  EXPECT_GT(filled, 0);
}

}  // namespace
}  // namespace fusebox::ui
