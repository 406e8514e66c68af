// The fusebox CLI as a user meets it: exit codes (0 ok, 2 usage or input error), messages that
// name what is wrong, the JSON report's keys, and outputs saved as .npy.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "core/ir/npy.h"
#include "core/passes/pass_manager.h"
#include "tests/cli/cli_runner.h"

namespace {

using Result = fusebox::test::CliResult;
using fusebox::test::run_cli;

// stdout alone: a note on stderr (the machine cache re-measured under load) is not the JSON.
nlohmann::json json_of(const std::string& args) {
  Result r = run_cli(args + " --json", /*with_stderr=*/false);
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

TEST(Cli, RunJsonHasTheDocumentedKeys) {
  auto j = json_of("run mlp --iters 5 --warmup 1");
  for (const char* key : {"model", "nodes", "executor", "threads", "latency_us", "arena_bytes", "outputs", "passes",
                          "planner", "lower_bound_bytes"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"median", "min", "p90"}) EXPECT_TRUE(j["latency_us"].contains(key)) << key;
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::array({1, 10}));
}

// capture=on on the CPU: the run goes on and both the text and the JSON say it did not apply.
TEST(Cli, CaptureOnTheCpuIsReportedNotApplicable) {
  Result r = run_cli("run mlp --capture on --iters 2 --warmup 0 --profile-runs 0");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("capture    not applicable: backend 'cpu' cannot capture a run (it has no graph capture)"),
            std::string::npos)
      << r.out;
  auto j = json_of("run mlp --set capture=on --iters 2 --warmup 0 --profile-runs 0");
  EXPECT_EQ(j["capture"]["asked"], true);
  EXPECT_EQ(j["capture"]["applied"], false);
  EXPECT_EQ(j["capture"]["not_applicable"], "backend 'cpu' cannot capture a run (it has no graph capture)");
  EXPECT_EQ(json_of("run mlp --iters 2 --warmup 0 --profile-runs 0")["capture"]["asked"], false);
  Result bad = run_cli("run mlp --capture maybe");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--capture: expected on | off | true | false | 1 | 0, got \"maybe\""), std::string::npos)
      << bad.out;
}

TEST(Cli, EagerAndCompiledPrintTheSameChecksums) {
  auto a = json_of("run transformer --executor compiled --iters 3 --warmup 0");
  auto b = json_of("run transformer --executor eager --iters 3 --warmup 0");
  EXPECT_EQ(a["outputs"][0]["checksum"], b["outputs"][0]["checksum"]);
  auto c = json_of("run transformer --executor compiled --iters 3 --warmup 0 --seed 2");
  EXPECT_NE(a["outputs"][0]["checksum"], c["outputs"][0]["checksum"]) << "the seed must change the result";
}

TEST(Cli, BadInputIsExitCode2WithAClearMessage) {
  struct Bad {
    const char* args;
    const char* says;
  };
  for (const Bad& b : {Bad{"run nosuchmodel", "nosuchmodel"}, Bad{"run transformer:sequence=4", "sequence"},
                       Bad{"run mlp:dims=784-0-10", "0"}, Bad{"run transformer:d=99999999", "d"},
                       Bad{"run mlp --threads 0", "threads"}, Bad{"run mlp --executor jit", "jit"},
                       Bad{"run mlp --iters 0", "iters"}, Bad{"run mlp --save-outputs /proc/nope", "/proc/nope"},
                       Bad{"run mlp --passes nope", "nope"}, Bad{"run mlp --planner nope", "greedy_by_size"},
                       Bad{"run", "model"}, Bad{"frobnicate", "frobnicate"}}) {
    Result r = run_cli(b.args);
    EXPECT_EQ(r.code, 2) << b.args << "\n" << r.out;
    EXPECT_NE(r.out.find(b.says), std::string::npos) << b.args << " should mention '" << b.says << "':\n" << r.out;
  }
}

TEST(Cli, HelpSaysWhatEachCommandDoesWithAnExample) {
  Result top = run_cli("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("Example"), std::string::npos);
  for (const char* cmd : {"run", "passes", "plan"}) {
    Result r = run_cli(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find("Example"), std::string::npos) << cmd;
  }
}

TEST(Cli, SaveOutputsWritesNpyFiles) {
  std::string dir = std::filesystem::temp_directory_path() / ("fusebox_cli_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto j = json_of("run mlp:dims=16-8-3,batch=2 --iters 1 --warmup 0 --save-outputs " + dir);
  fusebox::ir::Tensor t = fusebox::ir::read_npy(dir + "/logits.npy");
  EXPECT_EQ(t.shape(), (fusebox::ir::Shape{2, 3}));
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) sum += t.data<float>()[i];
  EXPECT_DOUBLE_EQ(sum, j["outputs"][0]["checksum"].get<double>());
  std::filesystem::remove_all(dir);
}

TEST(Cli, PlanPrintsTableAndChart) {
  Result r = run_cli("plan transformer:seq=8,d=16,heads=2,ffn=32 --planner first_fit");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("lower bound"), std::string::npos);
  EXPECT_NE(r.out.find("arena chart"), std::string::npos);
  Result passes = run_cli("passes");
  EXPECT_EQ(passes.code, 0);
  for (const std::string& p : fusebox::passes::PassRegistry::instance().names())
    EXPECT_NE(passes.out.find(p), std::string::npos) << p;
}

// Settings files: what s.json says is what runs, flags given on top win, and a misspelt key
// exits 2 naming its JSON path and the key it meant.
std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".json");
  FILE* f = fopen(path.c_str(), "w");
  fputs(text.c_str(), f);
  fclose(f);
  return path;
}

TEST(Cli, RunTakesItsSettingsFromAFile) {
  std::string file = write_temp("fusebox_settings", R"({"executor": "eager", "planner": "first_fit",
      "passes": {"fuse_elementwise": false}, "patterns": {"attention": false}, "iters": 3, "warmup": 0})");
  auto j = json_of("run transformer:seq=8,d=16,heads=2,ffn=32 --settings " + file);
  EXPECT_EQ(j["executor"], "eager");
  EXPECT_EQ(j["planner"], "first_fit");
  EXPECT_EQ(j["latency_us"]["iters"], 3);
  EXPECT_EQ(j["settings"]["passes"]["fuse_elementwise"], false);
  EXPECT_EQ(j["settings"]["patterns"]["attention"], false);
  EXPECT_FALSE(j["op_histogram"].contains("Attention")) << j["op_histogram"].dump();
  auto flag_wins = json_of("run transformer:seq=8,d=16,heads=2,ffn=32 --settings " + file + " --executor compiled");
  EXPECT_EQ(flag_wins["executor"], "compiled");
  EXPECT_EQ(flag_wins["planner"], "first_fit") << "a flag not given keeps the file's value";
  std::filesystem::remove(file);
}

TEST(Cli, AMisspeltSettingsKeyExits2WithItsPathAndTheSuggestion) {
  std::string file = write_temp("fusebox_bad_settings", R"({"planer": "first_fit"})");
  Result r = run_cli("run transformer --settings " + file);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(file), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/planer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'planner'"), std::string::npos) << r.out;
  std::filesystem::remove(file);
  file = write_temp("fusebox_bad_pass", R"({"passes": {"fuse_patern": false}})");
  r = run_cli("run transformer --settings " + file);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/passes/fuse_patern"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'fuse_patterns'"), std::string::npos) << r.out;
  std::filesystem::remove(file);
}

TEST(Cli, CompareRunsTwoSettingsOfOneModel) {
  auto j = json_of("compare transformer:seq=8,d=16,heads=2,ffn=32 --a passes=none --b \"passes=all; executor=eager\" "
                   "--iters 2 --warmup 0 --profile-runs 2");
  EXPECT_GT(j["nodes_a"].get<int>(), j["nodes_b"].get<int>());
  EXPECT_TRUE(j.contains("latency_us_a"));
  Result bad = run_cli("compare transformer --a passes.fuse_patern=off");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("did you mean 'fuse_patterns'"), std::string::npos) << bad.out;
}

TEST(Cli, ProfilePrintsTheTimelineWhenAsked) {
  Result r = run_cli("profile mlp --iters 2 --warmup 0 --profile-runs 3 --timeline");
  ASSERT_EQ(r.code, 0) << r.out;
  // NVTX and the CPU thread: at threads=1 the one worker is the ops' own thread, already its CPU
  // track (one thread is one track); its busy share is on the "threads:" line.
  EXPECT_NE(r.out.find("timeline: 2 tracks, 3 runs, median run "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("  worker 0  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threads: worker 0 (runs the ops)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  NVTX  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  CPU "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  median\n"), std::string::npos) << r.out;
  Result plain = run_cli("profile mlp --iters 2 --warmup 0 --profile-runs 3");
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_EQ(plain.out.find("timeline:"), std::string::npos) << plain.out;
}

TEST(Cli, SettingsPrintsEveryKeyAndAFileToStartFrom) {
  Result help = run_cli("settings");
  EXPECT_EQ(help.code, 0) << help.out;
  for (const char* key : {"model", "backend", "executor", "threads", "passes", "patterns", "planner", "iters"})
    EXPECT_NE(help.out.find(key), std::string::npos) << key;
  auto j = json_of("settings --planner first_fit --set passes.dce=off");
  EXPECT_EQ(j["planner"], "first_fit");
  EXPECT_EQ(j["passes"]["dce"], false);
}

TEST(Cli, GraphWritesTheSvgOfAPassWithItsFusionsMarked) {
  std::string file =
      std::filesystem::temp_directory_path() / ("fusebox_graph_" + std::to_string(::getpid()) + ".svg");
  Result r = run_cli("graph transformer:seq=8,d=16,heads=2,ffn=32 --pass fuse_patterns --out " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  ASSERT_TRUE(std::filesystem::exists(file)) << r.out;
  std::string svg;
  if (FILE* f = std::fopen(file.c_str(), "rb")) {
    std::array<char, 4096> buf{};
    while (size_t n = std::fread(buf.data(), 1, buf.size(), f)) svg.append(buf.data(), n);
    std::fclose(f);
  }
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find(">Attention<"), std::string::npos) << "the fused attention node is drawn";
  EXPECT_NE(svg.find("class=\"node highlight\""), std::string::npos)
      << "what the pass added is marked";
  std::filesystem::remove(file);
  for (const char* bad : {"--pass fuse", "--before", "--passes dce --pass dce"}) {
    Result e =
        run_cli(std::string("graph transformer:seq=8,d=16,heads=2,ffn=32 --out ") + file + " " + bad);
    EXPECT_EQ(e.code, 2) << bad << "\n" << e.out;
    EXPECT_FALSE(std::filesystem::exists(file)) << bad;
  }
  Result unknown = run_cli("graph transformer --pass fuse --out " + file);
  EXPECT_NE(unknown.out.find("valid: absorb_matmul"), std::string::npos) << unknown.out;
}

}  // namespace

namespace {

std::string decoder_asset(const std::string& file) {
  return std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/" + file;
}

// The PyTorch-exported GPT decoder blocks (assets/models/export_models.py): with every pass on,
// Attention takes the causal mask (or none), reads Q, K and V through strides out of the one
// QKV projection, and no Slice, Transpose, Where or Softmax is left; the tanh GELU lands in the
// first MLP Linear's GEMM.
TEST(Cli, DecoderExportsFuseToAttentionWithItsMask) {
  for (const char* file : {"decoder_opset13.onnx", "decoder_opset17.onnx", "decoder_nomask_opset13.onnx",
                           "decoder_nomask_opset17.onnx"}) {
    SCOPED_TRACE(file);
    const bool masked = std::string(file).find("nomask") == std::string::npos;
    auto j = json_of("run " + decoder_asset(file) + " --passes all --iters 1 --warmup 0");
    const auto& ops = j["op_histogram"];
    EXPECT_EQ(ops.value("Attention", 0), 1) << ops.dump();
    for (const char* gone : {"Slice", "Transpose", "Where", "Softmax", "Split", "Tanh", "Gelu", "FusedElementwise"})
      EXPECT_EQ(ops.value(gone, 0), 0) << gone << " left: " << ops.dump();
    EXPECT_EQ(ops.value("FusedBiasGelu", 0), 1) << ops.dump();
    Result r = run_cli("run " + decoder_asset(file) + " --passes all --iters 1 --warmup 0 --explain");
    ASSERT_EQ(r.code, 0) << r.out;
    // The Where is part of the attention rewrite exactly when the model has the mask.
    EXPECT_EQ(r.out.find("/attn/Where + /attn/Softmax") != std::string::npos, masked) << r.out;
    EXPECT_EQ(r.out.find("-> /attn/Attention (causal mask") != std::string::npos, masked) << r.out;
    EXPECT_NE(r.out.find("absorbed"), std::string::npos) << r.out;
  }
}

// `fusebox check` plays a trace scenario: the trace opened once, each step's checks over its GPU
// analysis, the same text and JSON as a model scenario's; a check that does not hold exits 1.
TEST(Cli, CheckPlaysATraceScenario) {
  const std::string shipped = std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/gpu_copies_and_syncs.json";
  Result r = run_cli("check " + shipped);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("nsys trace"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   exact    finding kind=api_sync"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("structural checks: all hold"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(run_cli("check " + shipped + " --json", false).out);
  EXPECT_EQ(j.at(0).at("structural_ok"), true);
  EXPECT_EQ(j.at(0).at("steps").size(), 5u);

  const std::string failing = write_temp("fusebox_trace_scenario", R"({"name": "f", "trace": ")" + std::string(FUSEBOX_SOURCE_DIR) +
      R"(/tests/data/traces/kineto_inference_small.json.gz", "steps": [{"title": "a", "checks": [
        {"check": "trace_total", "key": "kernel_count", "equals": 4, "tolerance": 0},
        {"check": "trace_total", "key": "kernel_count", "equals": 5, "tolerance": 0}]}]})");
  r = run_cli("check " + failing);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL exact    trace_total key=kernel_count equals=5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel_count = 4"), std::string::npos) << r.out;

  const std::string bad = write_temp("fusebox_bad_trace_scenario", R"({"name": "b", "trace": ")" + std::string(FUSEBOX_SOURCE_DIR) +
      R"(/tests/data/traces/kineto_inference_small.json.gz", "steps": [{"title": "a", "set": {"iters": 2}}]})");
  r = run_cli("check " + bad);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/steps/0/set: a trace scenario"), std::string::npos) << r.out;
}

}  // namespace
