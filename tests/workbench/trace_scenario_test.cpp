// Trace scenarios ("trace": FILE instead of "model"): parsing errors that name the JSON Pointer,
// the trace check kinds (finding, trace_total, gap) passing and failing on a real A100 trace, and
// the one Walkthrough playing them. The figures checked here come from Python's reading of the
// file (the scenarios' descriptions say how), not from the code under test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/workbench/checks.h"
#include "app/workbench/opened_trace.h"
#include "app/workbench/scenario.h"
#include "app/workbench/walkthrough.h"
#include "core/base/error.h"
#include "tests/support/temp_dir.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::workbench {
namespace {

const std::string kTraces = std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/";

std::string write(const std::string& name, const std::string& text) {
  const std::string path = fusebox::test::process_temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A trace scenario over CloverLeaf's nsys trace with `steps` (a JSON array), written next to
// nothing: the trace is named by its absolute path.
std::string clover(const std::string& steps) {
  return R"({"name": "t", "trace": ")" + kTraces + R"(nsys_a100_cloverleaf.sqlite", "steps": )" + steps + "}";
}

std::string error_of(const std::string& text) {
  test::register_cpu();
  try {
    load_scenario(write("bad_trace_scenario.json", text));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TraceScenario, ParsingErrorsNameThePointer) {
  const std::string p = fusebox::test::process_temp_dir() + "/bad_trace_scenario.json: ";
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "trace": "a.sqlite"})"),
            p + "/trace: give either \"model\" or \"trace\", not both (a trace scenario runs no model)");
  EXPECT_EQ(error_of(R"({"name": "x"})").rfind(p + "missing \"model\"", 0), 0u) << error_of(R"({"name": "x"})");
  EXPECT_NE(error_of(R"({"name": "x"})").find("or \"trace\""), std::string::npos);
  EXPECT_EQ(error_of(R"({"name": "x", "trace": "nope.sqlite"})").rfind(p + "/trace: no such file 'nope.sqlite'", 0), 0u);
  EXPECT_EQ(error_of(clover(R"([{"title": "a", "set": {"iters": 2}}])")),
            p + "/steps/0/set: a trace scenario's steps change no settings: there is nothing to run (look_at and checks only)");
  EXPECT_EQ(
      error_of(clover(R"([{"title": "a", "checks": [{"check": "node_count", "equals": 3}]}])")),
      p + "/steps/0/checks/0/check: node_count checks a model run, and this scenario replays a "
          "trace "
          "(checks here: finding, trace_total, phase_total, counter, gap, kernel_figure, "
          "kernel_finding, kernel_limiter)");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "checks": [{"check": "finding", "kind": "gpu_idle"}]}]})")
                .find(p + "/steps/0/checks/0/check: finding checks a recorded trace, and this scenario runs a model"),
            0u);
  EXPECT_EQ(error_of(clover(R"([{"title": "a", "checks": [{"check": "finding", "kind": "gpu_idel"}]}])")),
            p + "/steps/0/checks/0/kind: unknown finding kind 'gpu_idel' (did you mean 'gpu_idle'?)");
  EXPECT_EQ(error_of(clover(R"([{"title": "a", "checks": [{"check": "trace_total", "key": "kernel_cuont", "equals": 1}]}])")),
            p + "/steps/0/checks/0/key: unknown trace total 'kernel_cuont' (did you mean 'kernel_count'?)");
  EXPECT_EQ(error_of(clover(R"([{"title": "a", "checks": [{"check": "trace_total", "key": "kernel_count"}]}])")),
            p + "/steps/0/checks/0: trace_total needs \"equals\"");
  EXPECT_EQ(error_of(clover(R"([{"title": "a", "look_at": {"panel": "graph"}}])")),
            p + "/steps/0/look_at/panel: a recorded trace has no graph: look at the trace or ops panel, not graph");
  EXPECT_EQ(error_of(clover(R"([{"title": "a", "look_at": {"group": "launchr"}}])")),
            p + "/steps/0/look_at/group: unknown group 'launchr' (did you mean 'launcher'?)");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "look_at": {"gap": 1}}]})").rfind(
                p + "/steps/0/look_at/gap: gap is for a trace scenario", 0),
            0u);
  EXPECT_EQ(error_of(R"({"name": "x", "trace": "a.sqlite", "settings": {"iters": 2}})"),
            p + "/settings: a trace scenario runs nothing, so it takes no settings");
}

TEST(TraceScenario, ARelativeTraceIsFoundNextToTheScenario) {
  const Scenario sc = load_scenario(std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/gpu_copies_and_syncs.json");
  EXPECT_TRUE(sc.is_trace());
  EXPECT_EQ(std::filesystem::path(sc.trace).filename(), "nsys_a100_cloverleaf.sqlite");
  EXPECT_TRUE(std::filesystem::exists(sc.trace));
}

// Each trace check kind passes on CloverLeaf's figures (Python over the SQLite: 1312 kernels,
// 1312 sync records holding the host 301.137 ms, 279 pageable copies; the longest gap's host in
// cudaMalloc) and fails off them.
TEST(TraceScenario, TraceChecksEvaluate) {
  const Scenario sc = load_scenario(write("clover_checks.json", clover(R"([{"title": "a", "checks": [
      {"check": "trace_total", "key": "kernel_count", "equals": 1312, "tolerance": 0},
      {"check": "trace_total", "key": "kernel_count", "equals": 1311, "tolerance": 0},
      {"check": "trace_total", "key": "sync_ms", "equals": 301.137, "tolerance": 0.001},
      {"check": "trace_total", "key": "sync_ms", "equals": 280, "tolerance": 0.01},
      {"check": "finding", "kind": "api_sync", "rank_at_most": 1, "time_lost_ms": 301.137, "tolerance": 0.01},
      {"check": "finding", "kind": "pageable_copy", "rank_at_most": 1},
      {"check": "finding", "kind": "api_sync", "time_lost_ms": 200, "tolerance": 0.01},
      {"check": "gap", "gap": 0, "cause": "host_bound", "host": "cudaMalloc"},
      {"check": "gap", "gap": 0, "cause": "sync"},
      {"check": "gap", "gap": 0, "host": "cudaFree"},
      {"check": "gap", "gap": 10}]}])")));
  const auto trace = open_trace(sc.trace);
  const std::vector<CheckResult> r = evaluate_checks(sc, 0, {}, trace.get());
  ASSERT_EQ(r.size(), 11u);
  const std::vector<bool> want = {true, false, true, false, true, false, false, true, false, false, false};
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i].passed, want[i]) << i << ": " << r[i].figures;
  EXPECT_EQ(r[0].figures, "kernel_count = 1312 (want 1312 within 0%)");
  EXPECT_NE(r[4].figures.find("rank 1 of 7"), std::string::npos) << r[4].figures;
  EXPECT_NE(r[5].figures.find("rank 4 of 7"), std::string::npos) << r[5].figures;
  EXPECT_NE(r[7].figures.find("cudaMalloc"), std::string::npos) << r[7].figures;
  EXPECT_NE(r[10].figures.find("no gap 10 (10 listed)"), std::string::npos) << r[10].figures;
  EXPECT_FALSE(sc.steps[0].checks[0].measured()) << "trace checks are structural";
  EXPECT_TRUE(sc.steps[0].checks[0].trace());
  EXPECT_THROW(evaluate_checks(sc, 0, {}, nullptr), Error) << "no trace, no trace checks";
}

// A trace with its Nsight Compute export ("kernels"): the kernel checks read the export's
// figures (values from Python's csv module over kernel_0001, the decode GEMV: DRAM Throughput
// 19.66%, Block Limit Registers 2), pass on them and fail off them; bad kernel checks are located.
std::string with_kernels(const std::string& steps) {
  return R"({"name": "k", "trace": ")" + std::string(FUSEBOX_SOURCE_DIR) + R"(/tests/data/ncu/kernel_level_trace.json", )" +
         R"("kernels": ")" + std::string(FUSEBOX_SOURCE_DIR) + R"(/tests/data/ncu/rtx5090_deepseek_ocr", "steps": )" + steps + "}";
}

TEST(TraceScenario, KernelChecksReadTheNcuExportBesideTheTrace) {
  const std::string p = fusebox::test::process_temp_dir() + "/bad_trace_scenario.json: ";
  EXPECT_EQ(error_of(clover(R"([{"title": "a", "checks": [{"check": "kernel_limiter", "kernel": "gemv", "unit": "DRAM"}]}])")),
            p + "/steps/0/checks/0/check: kernel_limiter reads the scenario's \"kernels\" (an Nsight Compute export), and it names none");
  EXPECT_EQ(error_of(with_kernels(R"([{"title": "a", "checks": [{"check": "kernel_finding", "kernel": "gemv", "item": "occupancey"}]}])")),
            p + "/steps/0/checks/0/item: unknown fine-grained item 'occupancey' (did you mean 'occupancy'?)");
  EXPECT_EQ(error_of(with_kernels(R"([{"title": "a", "checks": [{"check": "kernel_figure", "kernel": "gemv", "key": "dram_pct", "equals": 1}]}])"))
                .rfind(p + "/steps/0/checks/0/key: unknown kernel figure 'dram_pct'", 0),
            0u);
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "kernels": "a"})"),
            p + "/kernels: \"kernels\" (an Nsight Compute export) goes with a \"trace\": its launches are matched to the trace's kernels");
  auto sc = std::make_shared<const Scenario>(load_scenario(write("kernel_checks.json", with_kernels(R"([{"title": "a",
      "look_at": {"panel": "ops", "kernel": "0, 7, 0, cublasGemvParamsEx"},
      "checks": [
        {"check": "kernel_figure", "kernel": "0, 7, 0, cublasGemvParamsEx", "key": "dram_throughput_pct", "equals": 19.66, "tolerance": 0.001},
        {"check": "kernel_figure", "kernel": "0, 7, 0, cublasGemvParamsEx", "key": "dram_throughput_pct", "equals": 20, "tolerance": 0.001},
        {"check": "kernel_limiter", "kernel": "0, 7, 0, cublasGemvParamsEx", "unit": "DRAM"},
        {"check": "kernel_limiter", "kernel": "0, 7, 0, cublasGemvParamsEx", "unit": "SM"},
        {"check": "kernel_finding", "kernel": "0, 7, 0, cublasGemvParamsEx", "item": "occupancy", "rank_at_most": 1},
        {"check": "kernel_finding", "kernel": "0, 7, 0, cublasGemvParamsEx", "item": "bank conflicts"},
        {"check": "kernel_figure", "kernel": "cublasGemvParamsEx", "key": "duration_us", "equals": 6.75},
        {"check": "kernel_figure", "kernel": "no_such_kernel", "key": "duration_us", "equals": 6.75}]}])"))));
  Walkthrough walk(sc);
  Pipeline pipeline(test::fixed_roofline);
  const ScenarioRun run = walk.play(pipeline);
  ASSERT_NE(run.kernels, nullptr) << "play() opens the export beside the trace";
  const auto& r = run.steps.at(0).checks;
  ASSERT_EQ(r.size(), 8u);
  const std::vector<bool> want = {true, false, true, false, true, false, false, false};
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i].passed, want[i]) << i << ": " << r[i].figures;
  EXPECT_NE(r[5].figures.find("not in this report"), std::string::npos) << "unmeasured: " << r[5].figures;
  EXPECT_NE(r[6].figures.find("several profiled kernels"), std::string::npos) << "two GEMVs: " << r[6].figures;
  EXPECT_NE(r[7].figures.find("no profiled launch"), std::string::npos) << r[7].figures;
  EXPECT_THROW(evaluate_checks(*sc, 0, {}, run.trace.get(), nullptr), Error) << "no export, no kernel checks";
}

// fusebox's own generate recording (GPT, 64 prompt tokens then 15 decode steps, on the CPU): the
// phase and counter checks pass on Python's figures (trace_totals.py's kineto_phases and
// kineto_counters over the file) and fail off them; bad names are located.
std::string generate(const std::string& steps) {
  return R"({"name": "g", "trace": ")" + kTraces + R"(cpu_gpt_generate.json.gz", "steps": )" +
         steps + "}";
}

TEST(TraceScenario, PhaseAndCounterChecksEvaluate) {
  const std::string p = fusebox::test::process_temp_dir() + "/bad_trace_scenario.json: ";
  EXPECT_EQ(
      error_of(generate(
          R"([{"title": "a", "checks": [{"check": "phase_total", "phase": "decod", "key": "steps", "equals": 1}]}])")),
      p + "/steps/0/checks/0/phase: unknown phase 'decod' (did you mean 'decode'?)");
  EXPECT_EQ(
      error_of(
          generate(
              R"([{"title": "a", "checks": [{"check": "phase_total", "phase": "decode", "key": "step", "equals": 1}]}])"))
          .rfind(p + "/steps/0/checks/0/key: unknown phase total 'step'", 0),
      0u);
  EXPECT_EQ(
      error_of(
          generate(
              R"([{"title": "a", "checks": [{"check": "counter", "counter": "kv cache bytes", "key": "max", "equals": 1}]}])"))
          .rfind(p + "/steps/0/checks/0/key: unknown counter figure 'max'", 0),
      0u);
  EXPECT_EQ(
      error_of(generate(
          R"([{"title": "a", "checks": [{"check": "phase_total", "key": "steps", "equals": 1}]}])")),
      p + "/steps/0/checks/0: phase_total needs \"phase\"");
  EXPECT_EQ(error_of(generate(R"([{"title": "a", "look_at": {"phase": "prefil"}}])")),
            p + "/steps/0/look_at/phase: unknown phase 'prefil' (did you mean 'prefill'?)");
  EXPECT_EQ(
      error_of(
          R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "look_at": {"phase": "decode"}}]})")
          .rfind(p + "/steps/0/look_at/phase: phase is for a trace scenario", 0),
      0u);

  const Scenario sc =
      load_scenario(write("generate_checks.json", generate(R"([{"title": "a", "checks": [
      {"check": "phase_total", "phase": "prefill", "key": "steps", "equals": 1, "tolerance": 0},
      {"check": "phase_total", "phase": "decode", "key": "tokens", "equals": 15, "tolerance": 0},
      {"check": "phase_total", "phase": "decode", "key": "kernel_count", "equals": 435, "tolerance": 0},
      {"check": "phase_total", "phase": "decode", "key": "top_kernel_ms", "equals": 24.486985, "tolerance": 0.001, "top_kernel": "lm_head"},
      {"check": "phase_total", "phase": "decode", "key": "top_kernel_count", "equals": 15, "top_kernel": "attn"},
      {"check": "phase_total", "phase": "prefill", "key": "kernel_ms", "equals": 11, "tolerance": 0.01},
      {"check": "phase_total", "phase": "mixed", "key": "steps", "equals": 0},
      {"check": "counter", "counter": "kv cache bytes", "key": "last", "equals": 161792, "tolerance": 0},
      {"check": "counter", "counter": "kv cache bytes", "key": "samples", "equals": 17, "tolerance": 0},
      {"check": "counter", "counter": "arena live bytes", "key": "peak", "equals": 13029632, "tolerance": 0},
      {"check": "counter", "counter": "kv cache bytes", "key": "first", "equals": 1},
      {"check": "counter", "counter": "gpu memory", "key": "peak", "equals": 1}]}])")));
  const auto trace = open_trace(sc.trace);
  const std::vector<CheckResult> r = evaluate_checks(sc, 0, {}, trace.get());
  EXPECT_EQ(trace->summary(), "kineto trace, 1489 events: no GPU work (a CPU recording)");
  ASSERT_EQ(r.size(), 12u);
  const std::vector<bool> want = {true,  true, true, true, false, false,
                                  false, true, true, true, false, false};
  for (size_t i = 0; i < r.size(); ++i)
    EXPECT_EQ(r[i].passed, want[i]) << i << ": " << r[i].figures;
  EXPECT_EQ(r[0].figures, "prefill steps = 1 (want 1 within 0%)");
  EXPECT_NE(r[3].figures.find("its top op: MatMul"), std::string::npos) << r[3].figures;
  EXPECT_NE(r[3].figures.find("lm_head"), std::string::npos) << r[3].figures;
  EXPECT_NE(r[4].figures.find("top_kernel_count = 15"), std::string::npos)
      << "the count is right, the name not: " << r[4].figures;
  EXPECT_NE(r[6].figures.find("no mixed phase in this trace (it has prefill, decode)"),
            std::string::npos)
      << r[6].figures;
  EXPECT_EQ(r[7].figures, "'kv cache bytes' last = 161792 (want 161792 within 0%)");
  EXPECT_NE(r[11].figures.find("no counter track 'gpu memory' ("), std::string::npos)
      << r[11].figures;
  EXPECT_NE(r[11].figures.find("kv cache bytes"), std::string::npos) << r[11].figures;
  EXPECT_FALSE(sc.steps[0].checks[0].measured()) << "a recording's figures are fixed";

  // A look_at phase the trace lacks is an error naming the pointer when the trace is open.
  auto sc2 = std::make_shared<const Scenario>(load_scenario(
      write("generate_mixed.json",
            generate(R"([{"title": "a", "look_at": {"panel": "ops", "phase": "mixed"}}])"))));
  Walkthrough walk(sc2);
  Pipeline pipeline(test::fixed_roofline);
  try {
    walk.play(pipeline);
    FAIL() << "no mixed phase";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/steps/0/look_at/phase: no mixed phase in"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("(it has prefill, decode)"), std::string::npos)
        << e.what();
  }
}

TEST(TraceScenario, TheWalkthroughPlaysATraceScenarioOverOneOpenedTrace) {
  auto sc = std::make_shared<const Scenario>(load_scenario(write("clover_walk.json", clover(R"([
      {"title": "a", "look_at": {"panel": "ops", "group": "name"},
       "checks": [{"check": "trace_total", "key": "memcpy_count", "equals": 279, "tolerance": 0}]},
      {"title": "b", "look_at": {"panel": "trace", "gap": 9},
       "checks": [{"check": "finding", "kind": "cuda_graph"}, {"check": "trace_total", "key": "graph_repetitions", "equals": 30}]}])"))));
  Walkthrough walk(sc);
  walk.enter(0);
  EXPECT_FALSE(walk.has_result(0));
  EXPECT_EQ(walk.live_checks().checks.at(0).state, -1) << "pending until the trace is open";
  Pipeline pipeline(test::fixed_roofline);
  const ScenarioRun run = walk.play(pipeline);
  ASSERT_NE(run.trace, nullptr);
  EXPECT_EQ(walk.trace(), run.trace) << "opened once, kept by the player";
  ASSERT_EQ(run.steps.size(), 2u);
  EXPECT_EQ(run.steps[0].result, nullptr);
  EXPECT_TRUE(run.steps[0].checks[0].passed);
  EXPECT_TRUE(run.steps[1].checks[0].passed);
  EXPECT_FALSE(run.steps[1].checks[1].passed) << "31 repetitions, not 30";
  EXPECT_FALSE(run.structural_ok());
  EXPECT_NE(run.to_text().find("nsys trace"), std::string::npos) << run.to_text();
  EXPECT_NE(run.to_text().find("FAIL exact"), std::string::npos);
  EXPECT_EQ(run.to_json().at("steps").at(1).at("checks").at(1).at("passed"), false);
  walk.enter(1);
  EXPECT_EQ(walk.live_checks().checks.at(0).state, 1);
  EXPECT_EQ(walk.live_checks().checks.at(1).state, 0);

  // A look_at gap beyond the trace's listed gaps is an error naming the pointer.
  auto far = std::make_shared<const Scenario>(load_scenario(
      write("clover_far.json", clover(R"([{"title": "a", "look_at": {"panel": "trace", "gap": 10}}])"))));
  Walkthrough w2(far);
  try {
    w2.play(pipeline);
    FAIL() << "gap 10 of 10";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/steps/0/look_at/gap: no gap 10"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("valid: 0..9"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusebox::workbench
