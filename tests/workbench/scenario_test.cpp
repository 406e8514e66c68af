// Scenarios: loading with errors that name the file, the JSON Pointer and the closest valid
// name; steps resolved relative to each other; checks that pass and fail on figures computed
// here from the results, not by the code under test.
#include "app/workbench/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "app/workbench/checks.h"
#include "app/workbench/walkthrough.h"
#include "core/base/error.h"
#include "tests/support/temp_dir.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::workbench {
namespace {

using test::fixed_roofline;
namespace fs = std::filesystem;

std::string write(const std::string& name, const std::string& text) {
  const std::string path = fusebox::test::process_temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The message load_scenario (or, for what needs a graph, run_scenario) throws for `text`.
std::string error_of(const std::string& text, bool run = false) {
  test::register_cpu();
  const std::string path = write("bad_scenario.json", text);
  try {
    Scenario sc = load_scenario(path);
    if (run) {
      Pipeline p(fixed_roofline);
      run_scenario(sc, p);
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kSmall = "transformer:seq=16,d=32,heads=2,ffn=64";

TEST(Scenario, EmptyNamesAndTitlesAndNulBytesAreRefusedWithTheirPointer) {
  const std::string p = fusebox::test::process_temp_dir() + "/bad_scenario.json: ";
  EXPECT_EQ(error_of(R"({"name": "", "model": "mlp"})"),
            p + "/name: expected a non-empty string, got \"\"");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a"}, {"title": ""}]})"),
            p + "/steps/1/title: expected a non-empty string, got \"\"");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a\u0000b"}]})"),
            p + "/steps/0/title: a NUL byte (\\u0000) is not allowed in a string");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp\u0000.onnx"})"),
            p + "/model: a NUL byte (\\u0000) is not allowed in a string");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "inputs": {"x\u0000": "a.npy"}})"),
            p + "/inputs/x\\u0000: a NUL byte (\\u0000) is not allowed in a key");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(
      error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "set": )" + deep + "}]}"),
      p + "/steps/0/set" +
          [] {
            std::string at;
            for (int i = 0; i < 62; ++i) at += "/0";
            return at;
          }() +
          ": nested deeper than 64 levels");
}

TEST(Scenario, NumberPastDoublesRangeAndFilesNotRegularAreErrors) {
  const std::string p = fusebox::test::process_temp_dir() + "/bad_scenario.json: ";
  EXPECT_EQ(error_of("{\"name\": \"x\", \"model\": \"mlp\",\n \"steps\": [{\"title\": \"a\", "
                     "\"set\": {\"iters\": 1e999}}]}"),
            p + "invalid JSON at line 2, column 44: number overflow parsing '1e999'");
  EXPECT_EQ(error_of("{\"name\": \"x\", \"model\": \"mlp\", \"steps\": [-1e400]}"),
            p + "invalid JSON at line 1, column 41: number overflow parsing '-1e400'");
  try {
    load_scenario("/dev/zero");
    ADD_FAILURE() << "/dev/zero was read as a scenario";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "scenario file: cannot read '/dev/zero': not a regular file (a device or socket)");
  }
}

TEST(Scenario, MalformedFilesNameThePathAndWhatWasExpected) {
  const std::string p = fusebox::test::process_temp_dir() + "/bad_scenario.json: ";
  EXPECT_EQ(error_of("{\"name\": \"x\",\n  \"model\": }"),
            p + "invalid JSON at line 2, column 12: syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal");
  EXPECT_EQ(error_of(R"({"name": 3, "model": "mlp"})"), p + "/name: expected a string, got 3");
  EXPECT_EQ(error_of(R"({"name": "x", "modle": "mlp"})"), p + "/modle: unknown key 'modle' (did you mean 'model'?)");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "set": {"planner": "frist_fit"}}]})"),
            p + "/steps/0/set/planner: unknown planner 'frist_fit' (did you mean 'first_fit'? valid: naive, first_fit, "
                "best_fit, greedy_by_size, best)");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a"}, {"title": "b", "set": {"threads": "two"}}]})"),
            p + "/steps/1/set/threads: expected an integer in 1..256, got \"two\"");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "checks": [{"check": "node_cuont", "equals": 3}]}]})"),
            p + "/steps/0/checks/0/check: unknown check 'node_cuont' (did you mean 'node_count'?)");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "checks": [{"check": "op_present", "op": "Sofmax"}]}]})"),
            p + "/steps/0/checks/0/op: unknown op 'Sofmax' (did you mean 'Softmax'?)");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "checks": [{"check": "faster_than", "step": 0}]}]})"),
            p + "/steps/0/checks/0/step: step 0 is not an earlier step (this is step 0, counting from 0)");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "look_at": {"panel": "arean"}}]})"),
            p + "/steps/0/look_at/panel: unknown panel 'arean' (did you mean 'arena'?)");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "settings": {"model": "stack"}})"),
            p + "/settings/model: give the model at the top level (/model), not in the settings");
}

TEST(Scenario, AMissingModelFileIsNamedWithWhereItWasLookedFor) {
  const std::string dir = fusebox::test::process_temp_dir();
  EXPECT_EQ(error_of(R"({"name": "x", "model": "models/nope.onnx"})"),
            dir + "/bad_scenario.json: /model: no such file 'models/nope.onnx' (looked for " +
                (fs::path(dir) / "models/nope.onnx").lexically_normal().string() +
                "); builtin models: mlp, transformer, stack");
}

TEST(Scenario, AStepNamingANodeTheGraphLacksFailsWhenItRuns) {
  const std::string text = R"({"name": "x", "model": ")" + kSmall +
                           R"(", "settings": {"iters": 1, "warmup": 0, "profile_runs": 0},
      "steps": [{"title": "a", "look_at": {"node": "attn.scores.Atention"}}]})";
  EXPECT_EQ(error_of(text, /*run=*/true),
            fusebox::test::process_temp_dir() + "/bad_scenario.json: /steps/0/look_at/node: no node 'attn.scores.Atention' in this "
                                   "step's graph (did you mean 'attn.scores.Attention'?)");
}

TEST(Scenario, StepsChangeSettingsRelativeToTheStepBefore) {
  test::register_cpu();
  const std::string path = write("steps.json", R"({"name": "s", "model": ")" + kSmall + R"(",
      "settings": {"iters": 2, "warmup": 0, "planner": "naive"},
      "steps": [{"title": "a", "set": {"passes": "none"}},
                {"title": "b", "set": {"planner": "first_fit"}},
                {"title": "c", "set": {"passes": {"fuse_patterns": true}, "model": "mlp"}}]})");
  const Scenario sc = load_scenario(path);
  ASSERT_EQ(sc.steps.size(), 3u);
  EXPECT_EQ(sc.steps[0].settings.passes_text(), "none");
  EXPECT_EQ(sc.steps[0].settings.planner, "naive");
  EXPECT_EQ(sc.steps[1].settings.passes_text(), "none");
  EXPECT_EQ(sc.steps[1].settings.planner, "first_fit");
  EXPECT_EQ(sc.steps[2].settings.passes_text(), "fuse_patterns");
  EXPECT_EQ(sc.steps[2].settings.model, "mlp");
  EXPECT_EQ(sc.steps[2].settings.iters, 2);
}

TEST(Scenario, ARelativeModelFileIsFoundNextToTheScenario) {
  const fs::path dir = fs::path(fusebox::test::process_temp_dir()) / "scenario_dir";
  fs::create_directories(dir);
  fs::copy_file(std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/mlp_opset17.onnx", dir / "m.onnx",
                fs::copy_options::overwrite_existing);
  const std::string path = (dir / "s.json").string();
  std::ofstream(path) << R"({"name": "s", "model": "m.onnx"})";
  const Scenario sc = load_scenario(path);
  EXPECT_EQ(sc.settings.model, (dir / "m.onnx").string());
  ASSERT_EQ(sc.steps.size(), 1u) << "a scenario without steps has one: its settings";
  EXPECT_EQ(sc.steps[0].title, "s");
}

TEST(Scenario, ChecksPassAndFailOnTheResultsFigures) {
  test::register_cpu();
  const std::string path = write("checks.json", R"({"name": "c", "model": ")" + kSmall + R"(",
      "settings": {"iters": 3, "warmup": 0, "profile_runs": 2},
      "steps": [
        {"title": "none", "set": {"passes": "none", "planner": "naive"},
         "checks": [{"check": "node_count", "equals": 56}, {"check": "node_count", "at_most": 55},
                    {"check": "op_present", "op": "Softmax"}, {"check": "op_absent", "op": "Softmax"},
                    {"check": "arena_within_bound", "percent": 10}]},
        {"title": "all", "set": {"passes": "all", "planner": "greedy_by_size"},
         "checks": [{"check": "node_count", "equals": 9}, {"check": "pass_changed", "pass": "fuse_patterns"},
                    {"check": "pass_changed", "pass": "constant_fold"},
                    {"check": "pass_changed", "pass": "constant_fold", "changed": false},
                    {"check": "outputs_match_previous", "tolerance": 1e-4},
                    {"check": "outputs_match_previous", "tolerance": 0},
                    {"check": "arena_at_most", "step": 0, "ratio": 0.5},
                    {"check": "arena_within_bound", "percent": 0}]}]})");
  const Scenario sc = load_scenario(path);
  Pipeline p(fixed_roofline);
  const ScenarioRun run = run_scenario(sc, p);
  ASSERT_EQ(run.steps.size(), 2u);
  auto passed = [&](size_t step) {
    std::vector<bool> v;
    for (const auto& c : run.steps[step].checks) v.push_back(c.passed);
    return v;
  };
  const auto& r0 = *run.steps[0].result;
  const bool naive_at_bound = r0.plan->arena_bytes <= r0.plan->lower_bound_bytes * 1.1;
  EXPECT_EQ(passed(0), (std::vector<bool>{true, false, true, false, naive_at_bound}));
  // Outputs after every pass differ from the unfused ones in the last bits: within 1e-4, not 0.
  EXPECT_EQ(passed(1), (std::vector<bool>{true, true, false, true, true, false, true, true}));
  EXPECT_EQ(run.steps[0].checks[0].figures, "56 nodes");
  EXPECT_EQ(run.steps[1].checks[1].figures, "fuse_patterns changed the graph: 48 -> 17 nodes");
  EXPECT_FALSE(run.structural_ok());
  EXPECT_TRUE(run.measured_ok()) << "no measured checks";
  const std::string text = run.to_text();
  EXPECT_NE(text.find("FAIL exact    node_count at_most=55"), std::string::npos) << text;
  EXPECT_EQ(run.to_json()["steps"][1]["checks"][0]["passed"], true);
}

// op_bound's "level": a memory-bound op's level (the op table's "L3-bound"). Which level the
// placement rule picks depends on the run's speed, so the test asks the run's own row and checks
// that exactly that level passes, and that the parameter is refused where it means nothing.
TEST(Scenario, OpBoundNamesTheMemoryLevelOfAMemoryBoundOp) {
  test::register_cpu();
  const std::string p = fusebox::test::process_temp_dir() + "/bad_scenario.json: ";
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "checks": [{"check": "op_bound", "op": "MatMul", "bound": "compute", "level": "L2"}]}]})"),
            p + "/steps/0/checks/0: op_bound's \"level\" names the memory level of a memory-bound op: it needs \"bound\": \"memory\"");
  EXPECT_EQ(error_of(R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "checks": [{"check": "op_bound", "op": "MatMul", "bound": "memory", "level": "L4"}]}]})")
                .rfind(p + "/steps/0/checks/0/level: unknown memory level 'L4'", 0),
            0u);
  const Scenario sc = load_scenario(write("levels.json", R"({"name": "l", "model": "mlp",
      "settings": {"iters": 3, "warmup": 1, "profile_runs": 3},
      "steps": [{"title": "a", "checks": [
        {"check": "op_bound", "op": "FusedBiasRelu", "bound": "memory", "level": "L1"},
        {"check": "op_bound", "op": "FusedBiasRelu", "bound": "memory", "level": "L2"},
        {"check": "op_bound", "op": "FusedBiasRelu", "bound": "memory", "level": "L3"},
        {"check": "op_bound", "op": "FusedBiasRelu", "bound": "memory", "level": "DRAM"}]}]})"));
  Pipeline pipeline(fixed_roofline);
  const ScenarioRun run = run_scenario(sc, pipeline);
  const auto& rows = run.steps[0].result->analysis->by_type;
  const auto row = std::find_if(rows.begin(), rows.end(), [](const profiler::OpRow& r) { return r.key == "FusedBiasRelu"; });
  ASSERT_NE(row, rows.end());
  const bool memory_bound = std::string(profiler::bound_name(row->bound)).rfind("memory", 0) == 0;
  const char* levels[] = {"L1", "L2", "L3", "DRAM"};
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(run.steps[0].checks[i].passed, memory_bound && row->memory_level == levels[i])
        << levels[i] << ": " << run.steps[0].checks[i].figures;
  EXPECT_NE(run.to_text().find("level=L2"), std::string::npos) << "described with its level";
}

// The player fusebox-ui steps: entering a step hands back its settings, only a result of the
// current step's settings is kept, and the live checks are pending until it is in, then say
// which hold (a check against a step that has not run names it and hides no other check).
TEST(Walkthrough, StepsRecordsAndChecksLive) {
  test::register_cpu();
  const std::string path = write("walk.json", R"({"name": "w", "model": ")" + kSmall + R"(",
      "settings": {"iters": 2, "warmup": 0, "profile_runs": 1},
      "steps": [
        {"title": "none", "set": {"passes": "none"}, "checks": [{"check": "node_count", "equals": 56}]},
        {"title": "all", "set": {"passes": "all"},
         "checks": [{"check": "node_count", "equals": 9}, {"check": "outputs_match_previous"},
                    {"check": "op_absent", "op": "Softmax"}]}]})");
  Walkthrough walk(std::make_shared<const Scenario>(load_scenario(path)));
  EXPECT_EQ(walk.steps(), 2u);
  try {
    walk.enter(2);
    ADD_FAILURE() << "step 2 entered";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "step: no step 2 (the scenario has steps 0..1)");
  }
  Pipeline p(fixed_roofline);
  const auto r1 = p.run(walk.enter(1));
  EXPECT_EQ(walk.step(), 1u);
  EXPECT_EQ(walk.live_checks().checks.at(0).state, -1) << "pending before the step ran";
  const auto r0 = p.run(walk.scenario().steps[0].settings);
  EXPECT_FALSE(walk.observe(r0)) << "another step's settings";
  EXPECT_TRUE(walk.observe(r1));
  const Walkthrough::LiveChecks& live = walk.live_checks();
  ASSERT_EQ(live.checks.size(), 3u);
  EXPECT_EQ(live.checks[0].state, 1) << live.checks[0].figures;
  EXPECT_EQ(live.checks[1].state, -1) << "step 0 has not run";
  EXPECT_NE(live.checks[1].figures.find("step 0 has no result"), std::string::npos) << live.checks[1].figures;
  EXPECT_EQ(live.checks[2].state, 1) << live.checks[2].figures;
  EXPECT_EQ(live.error, live.checks[1].figures);
  EXPECT_THROW(walk.outcome(), Error);
  walk.enter(0);
  EXPECT_TRUE(walk.observe(r0));
  walk.enter(1);
  EXPECT_EQ(walk.live_checks().checks[1].state, 1) << "re-evaluated once step 0 is in";
  EXPECT_EQ(walk.outcome().checks.size(), 3u);
}

TEST(Scenario, EveryShippedScenarioLoads) {
  test::register_cpu();
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(std::string(FUSEBOX_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "scenario.schema.json") continue;
    SCOPED_TRACE(entry.path().string());
    const Scenario sc = load_scenario(entry.path().string());
    EXPECT_FALSE(sc.steps.empty());
    ++n;
  }
  EXPECT_GE(n, 8u);
}

// The schema lists the check kinds twice (the kind enum and one oneOf branch each): both must be
// exactly the registry's names, in its order for the enum, so the two cannot drift.
TEST(Scenario, TheSchemasCheckKindsAreTheRegistrys) {
  const nlohmann::json schema =
      read_json_file(std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/scenario.schema.json", "schema");
  const nlohmann::json& check = schema.at("$defs").at("check");
  EXPECT_EQ(check.at("properties").at("check").at("enum").get<std::vector<std::string>>(), check_kinds());
  std::vector<std::string> branches;
  for (const auto& branch : check.at("oneOf")) {
    const nlohmann::json& kind = branch.at("properties").at("check");
    if (kind.contains("const")) branches.push_back(kind.at("const").get<std::string>());
    for (const auto& k : kind.value("enum", nlohmann::json::array())) branches.push_back(k.get<std::string>());
  }
  EXPECT_EQ(branches, check_kinds());
  EXPECT_EQ(check_kinds_registry().names(), check_kinds());
  for (const auto& [name, kind] : check_kinds_registry().items()) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(kind.validate && kind.evaluate && kind.describe) << "every kind carries all three";
  }
}

// The keys a keyed check takes are listed in the schema's branch for it and in checks.cpp's
// table of figures: the two must be the same list, in the same order.
TEST(Scenario, TheSchemasCheckKeysAreTheTables) {
  const nlohmann::json schema =
      read_json_file(std::string(FUSEBOX_SOURCE_DIR) + "/scenarios/scenario.schema.json", "schema");
  std::map<std::string, std::vector<std::string>> keys;
  for (const auto& branch : schema.at("$defs").at("check").at("oneOf")) {
    const nlohmann::json& props = branch.at("properties");
    if (!props.at("check").contains("const") || !props.contains("key")) continue;
    const nlohmann::json* key = &props.at("key");
    const std::string prefix = "#/$defs/";
    if (key->contains("$ref"))
      key = &schema.at("$defs").at(key->at("$ref").get<std::string>().substr(prefix.size()));
    keys[props.at("check").at("const").get<std::string>()] =
        key->at("enum").get<std::vector<std::string>>();
  }
  EXPECT_EQ(keys["trace_total"], trace_total_keys());
  EXPECT_EQ(keys["kernel_figure"], kernel_figure_keys());
  EXPECT_EQ(keys["phase_total"], phase_total_keys());
  EXPECT_EQ(keys["counter"], counter_keys());
}

TEST(Scenario, SavedSettingsLoadBackAsTheSameSettings) {
  test::register_cpu();
  Settings s = test::small_settings();
  s.planner = "first_fit";
  s.passes_off = {"dce"};
  s.threads = 2;
  const std::string path = write("saved.json", scenario_json("saved", s).dump(2));
  const Scenario sc = load_scenario(path);
  EXPECT_EQ(sc.steps.at(0).settings, s);
}

}  // namespace
}  // namespace fusebox::workbench
