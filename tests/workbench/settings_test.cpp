// Settings: one table of fields behind JSON, KEY=VALUE, flags and printing. Each way in gives the
// same Settings, errors name where the value came from (JSON Pointer, key, flag) and suggest the
// closest valid name, and the layers stack defaults < file < flags given < --set.
#include "app/workbench/settings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/exec/executor.h"
#include "core/passes/fusion_patterns.h"
#include "core/passes/pass_manager.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/support/temp_dir.h"

namespace fusebox::workbench {
namespace {

using nlohmann::json;

std::string valid_passes() {
  return join(passes::PassRegistry::instance().names(), ", ");
}

std::string valid_patterns() {
  std::vector<std::string> names;
  for (const auto& p : passes::FusionRegistry::instance().entries()) names.push_back(p.name);
  return join(names, ", ");
}

// The CPU backend, and one registered as unavailable (a device this machine lacks), which is
// still a valid setting: the pipeline, not the settings, says why it cannot run.
constexpr const char* kAbsentBackend = "settings_test_gpu";

void register_backends() {
  cpu::register_backend();
  auto& registry = exec::BackendRegistry::instance();
  for (const auto& [name, reason] : registry.status())
    if (name == kAbsentBackend) return;
  registry.add_unavailable(kAbsentBackend, "a stand-in for a device this machine lacks");
}

// The message of the fusebox::Error `f` throws, or a note that it threw none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A settings file in the temp directory, removed when the test ends.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("fusebox_settings_test_" + std::to_string(::getpid()) + "_" + name)) {
    FILE* f = std::fopen(path_.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Parses argv (after the program name) on a fresh command and resolves.
Settings from_flags(const std::vector<std::string>& args, const std::set<std::string>& omit = {},
                    const Settings& defaults = {}) {
  register_backends();
  CLI::App app("settings test");
  SettingsFlags flags(&app, omit, defaults);
  std::vector<const char*> argv{"fusebox"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return flags.resolve();
}

// Every field away from its default.
Settings custom() {
  Settings s;
  s.model = "model.onnx";
  s.dims = {{"batch", 4}, {"seq", 16}};
  s.seed = 18446744073709551615ull;  // the largest seed: no narrowing on the way
  s.inputs = {{"input.1", "x.npy"}, {"mask", "m.npy"}};
  s.consts = {{"sr", "16000"}, {"table", "t.npy"}};
  s.backend = kAbsentBackend;
  s.executor = "eager";
  s.threads = 3;
  s.isa = "portable";
  s.precision = "tf32";
  s.gemm = "blas";
  s.passes_off = {"constant_fold", "dce"};
  s.patterns_off = {"attention"};
  s.planner = "first_fit";
  s.capture = true;
  s.warmup = 0;
  s.iters = 7;
  s.profile_runs = 2;
  return s;
}

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override { register_backends(); }
};

// ---- closest ----------------------------------------------------------------------------------

TEST(Closest, PicksTheNearestWithinTheLimitIgnoringCase) {
  const std::vector<std::string> keys{"planner", "passes", "patterns", "threads"};
  EXPECT_EQ(closest("planer", keys), "planner");
  EXPECT_EQ(closest("PASSES", keys), "passes");
  EXPECT_EQ(closest("pattrens", keys), "patterns");
  EXPECT_EQ(closest("threads", keys), "threads");
  EXPECT_EQ(closest("fuse_patern", {"absorb_matmul", "fuse_patterns", "dce"}), "fuse_patterns");
}

TEST(Suggest, TheNearestOrTheValidNames) {
  EXPECT_EQ(suggest("frist_fit", {"naive", "first_fit"}), "did you mean 'first_fit'?");
  EXPECT_EQ(suggest("frobnicate", {"naive", "first_fit"}), "valid: naive, first_fit");
}

TEST(Closest, NothingWhenTooFarOrNoCandidates) {
  EXPECT_EQ(closest("frobnicate", {"planner", "passes"}), "");
  EXPECT_EQ(closest("x", {}), "");
  // Short words may be off by 2 ...
  EXPECT_EQ(closest("dc", {"dce"}), "dce");
  EXPECT_EQ(closest("xy", {"dce"}), "");  // 3 edits
  // ... longer ones by a third of their length: 12 letters allow 4 edits, not 5.
  EXPECT_EQ(closest("abcdefghijkl", {"abcdefghXXXX"}), "abcdefghXXXX");
  EXPECT_EQ(closest("abcdefghijkl", {"abcdefgXXXXX"}), "");
}

TEST(Closest, TheFirstOfEqualCandidatesWins) {
  EXPECT_EQ(closest("cat", {"bat", "car"}), "bat");
  EXPECT_EQ(closest("cat", {"car", "bat"}), "car");
}

// ---- label and passes_text --------------------------------------------------------------------

TEST_F(SettingsTest, PassesTextSaysAllNoneOrTheOnesOnInPipelineOrder) {
  Settings s;
  EXPECT_EQ(s.passes_text(), "all");
  const auto names = passes::PassRegistry::instance().names();
  s.passes_off = {names.begin(), names.end()};
  EXPECT_EQ(s.passes_text(), "none");
  s.passes_off = {names.begin(), names.end()};
  s.passes_off.erase("dce");
  s.passes_off.erase("absorb_matmul");
  EXPECT_EQ(s.passes_text(), "absorb_matmul,dce") << "in pipeline order";
  EXPECT_TRUE(s.pass_on("dce"));
  EXPECT_FALSE(s.pass_on("constant_fold"));
}

TEST_F(SettingsTest, LabelIsOneLineWithPatternsOffOnlyWhenAny) {
  Settings s;
  EXPECT_EQ(s.label(), "passes=all executor=compiled threads=1 planner=greedy_by_size backend=cpu");
  s.patterns_off = {"gelu", "attention"};
  s.executor = "eager";
  s.threads = 4;
  s.passes_off = {"dce"};
  EXPECT_EQ(s.label(),
            "passes=absorb_matmul,constant_fold,fuse_patterns,channels_last,winograd,absorb_layout,fuse_elementwise,"
            "cse "
            "executor=eager threads=4 planner=greedy_by_size backend=cpu "
            "patterns_off=attention,gelu");
  s.capture = true;
  EXPECT_NE(s.label().find(" capture=on"), std::string::npos) << s.label();
  s.isa = "avx2";
  EXPECT_NE(s.label().find(" backend=cpu isa=avx2"), std::string::npos) << s.label();
  s.gemm = "blas";
  EXPECT_NE(s.label().find(" isa=avx2 gemm=blas"), std::string::npos) << s.label();
  EXPECT_FALSE(s.pattern_on("gelu"));
  EXPECT_TRUE(s.pattern_on("layernorm"));
}

// ---- the three ways in ------------------------------------------------------------------------

TEST_F(SettingsTest, CustomChangesEveryField) {
  // So the tests below, which compare custom() through each way in, cover every field.
  const json a = to_json(Settings{}), b = to_json(custom());
  for (const auto& key : settings_keys()) EXPECT_NE(a[key], b[key]) << key;
  EXPECT_EQ(a.size(), settings_keys().size());
}

TEST_F(SettingsTest, JsonRoundTrips) {
  const Settings s = custom();
  const json j = to_json(s);
  EXPECT_EQ(settings_from_json(j, "s.json"), s) << j.dump(2);
  EXPECT_EQ(settings_from_json(json::parse(j.dump()), "s.json"), s);
  EXPECT_EQ(settings_from_json(to_json(Settings{}), "s.json"), Settings{});
}

TEST_F(SettingsTest, JsonWritesEveryFieldWithSwitchesAsObjects) {
  const json j = to_json(custom());
  EXPECT_EQ(j["threads"], 3);
  EXPECT_EQ(j["seed"], 18446744073709551615ull);
  EXPECT_EQ(j["dims"], (json{{"batch", 4}, {"seq", 16}}));
  EXPECT_EQ(j["inputs"], (json{{"input.1", "x.npy"}, {"mask", "m.npy"}}));
  ASSERT_EQ(j["passes"].size(), passes::PassRegistry::instance().names().size());
  EXPECT_EQ(j["passes"]["dce"], false);
  EXPECT_EQ(j["passes"]["absorb_matmul"], true);
  EXPECT_EQ(j["patterns"]["attention"], false);
  EXPECT_EQ(j["patterns"]["gelu"], true);
}

TEST_F(SettingsTest, JsonChangesOnlyTheKeysGiven) {
  Settings s = settings_from_json(json::parse(R"({"threads": 2, "passes": {"dce": false}})"), "s");
  Settings want;
  want.threads = 2;
  want.passes_off = {"dce"};
  EXPECT_EQ(s, want);
  // Over a base: the file's keys change, the base's other fields stay.
  Settings base = custom();
  apply_json(base, json::parse(R"({"iters": 9, "patterns": {"gelu": false}})"), "s");
  Settings want2 = custom();
  want2.iters = 9;
  want2.patterns_off.insert("gelu");
  EXPECT_EQ(base, want2);
}

TEST_F(SettingsTest, JsonPassesAlsoTakeTheFlagsString) {
  EXPECT_EQ(settings_from_json(json{{"passes", "none"}}, "s").passes_text(), "none");
  EXPECT_EQ(settings_from_json(json{{"passes", "all"}}, "s").passes_text(), "all");
  EXPECT_EQ(settings_from_json(json{{"passes", "dce, absorb_matmul"}}, "s").passes_text(),
            "absorb_matmul,dce");
  Settings p = settings_from_json(json{{"patterns", "attention,gelu"}}, "s");
  EXPECT_TRUE(p.pattern_on("attention"));
  EXPECT_TRUE(p.pattern_on("gelu"));
  EXPECT_FALSE(p.pattern_on("layernorm"));
}

TEST_F(SettingsTest, KeyValueSetsEveryField) {
  Settings s;
  apply_all(
      s,
      "model=model.onnx; dims.batch=4 dims.seq=16 seed=18446744073709551615 "
      "inputs.input.1=x.npy inputs.mask=m.npy backend=settings_test_gpu executor=eager threads=3 "
      "isa=portable "
      "precision=tf32 gemm=blas;"
      "passes.constant_fold=off passes.dce=0 patterns.attention=false planner=first_fit capture=on "
      "warmup=0 iters=7 profile_runs=2 consts.sr=16000 consts.table=t.npy",
      "--a");
  EXPECT_EQ(s, custom()) << to_text(s);
}

TEST_F(SettingsTest, KeyValueWholeValuesReplace) {
  Settings s = custom();
  apply_all(s, "dims=a=1,b=2 inputs= passes=none patterns=all", "--a");
  EXPECT_EQ(s.dims, (std::map<std::string, int64_t>{{"a", 1}, {"b", 2}}));
  EXPECT_TRUE(s.inputs.empty());
  EXPECT_EQ(s.passes_text(), "none");
  EXPECT_TRUE(s.patterns_off.empty());
  apply(s, "passes=dce,absorb_matmul", "--a");
  EXPECT_EQ(s.passes_text(), "absorb_matmul,dce");
  apply(s, "passes.dce=off", "--a");
  apply(s, "passes.fuse_patterns=on", "--a");
  apply(s, "passes.absorb_matmul=true", "--a");
  EXPECT_EQ(s.passes_text(), "absorb_matmul,fuse_patterns");
  apply(s, "passes.absorb_matmul=1", "--a");
  apply(s, "passes.absorb_matmul=0", "--a");
  EXPECT_EQ(s.passes_text(), "fuse_patterns");
}

TEST_F(SettingsTest, FlagsSetEveryField) {
  Settings s =
      from_flags({"model.onnx",
                  "--dim",
                  "batch=4",
                  "--dim",
                  "seq=16",
                  "--seed",
                  "18446744073709551615",
                  "--input",
                  "input.1=x.npy",
                  "--input",
                  "mask=m.npy",
                  "--backend",
                  kAbsentBackend,
                  "--executor",
                  "eager",
                  "--threads",
                  "3",
                  "--isa",
                  "portable",
                  "--precision",
                  "tf32",
                  "--gemm",
                  "blas",
                  "--passes",
                  "absorb_matmul,fuse_patterns,channels_last,winograd,absorb_layout,"
                  "fuse_elementwise,cse",
                  "--patterns",
                  "gelu,layernorm,skip_layernorm,bias_relu,bias_gelu,bias_tanh,"
                  "bias_sigmoid,matmul_add,conv_batchnorm,conv_relu,conv_clip,conv_hardswish,"
                  "conv_hardsigmoid,conv_sigmoid",
                  "--planner",
                  "first_fit",
                  "--capture",
                  "on",
                  "--warmup",
                  "0",
                  "--iters",
                  "7",
                  "--profile-runs",
                  "2",
                  "--const",
                  "sr=16000",
                  "--const",
                  "table=t.npy"});
  EXPECT_EQ(s, custom()) << to_text(s);
}

TEST_F(SettingsTest, RepeatableFlagsTakeOneItemEachAndLeaveTheModelPositional) {
  Settings s = from_flags({"--dim", "batch=4", "m.onnx", "--input", "x=x.npy"});
  EXPECT_EQ(s.model, "m.onnx");
  EXPECT_EQ(s.dims, (std::map<std::string, int64_t>{{"batch", 4}}));
  EXPECT_EQ(s.inputs, (std::map<std::string, std::string>{{"x", "x.npy"}}));
}

TEST_F(SettingsTest, NoFlagsGivesTheCommandsDefaults) {
  EXPECT_EQ(from_flags({"transformer"}), Settings{});
  Settings profile;
  profile.iters = 50;
  profile.warmup = 5;
  EXPECT_EQ(from_flags({"transformer"}, {}, profile), profile);
}

TEST_F(SettingsTest, OmittedFieldsHaveNoFlagButAFileOrSetMayGiveThem) {
  EXPECT_THROW(from_flags({"mlp", "--executor", "eager"}, {"executor", "iters"}), CLI::ExtrasError);
  Settings s = from_flags({"mlp", "--set", "executor=eager"}, {"executor", "iters"});
  EXPECT_EQ(s.executor, "eager");
  EXPECT_EQ(error_of([] { from_flags({"mlp"}, {"executer"}); }),
            "SettingsFlags: cannot omit unknown key 'executer' (did you mean 'executor'?)");
}

TEST_F(SettingsTest, TheModelIsRequired) {
  // resolve() checks, not CLI11: the --settings file or --set may give it (test below).
  EXPECT_THROW(from_flags({"--threads", "2"}), Error);
}

TEST_F(SettingsTest, FlagHelpKeepsTheNamesAndShowsDefaults) {
  CLI::App app("t");
  Settings defaults;
  defaults.iters = 50;
  SettingsFlags flags(&app, {}, defaults);
  const std::string help = app.help();
  for (const char* flag : {"--backend", "--executor", "--threads", "--passes", "--patterns",
                           "--planner", "--capture", "--seed", "--warmup", "--iters", "--profile-runs",
                           "--input", "--dim", "--settings", "--set", "MODEL"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag << "\n" << help;
  EXPECT_NE(help.find("eager | interpreted | compiled"), std::string::npos) << help;
  EXPECT_NE(help.find("--iters INT=50"), std::string::npos) << "the command's default\n" << help;
  EXPECT_NE(help.find("intra-op threads (one pool shared with BLAS): 1..256"), std::string::npos)
      << help;
  EXPECT_NE(help.find("NAME=FILE.npy: feed input NAME from a .npy file"), std::string::npos)
      << help;
}

// ---- precedence -------------------------------------------------------------------------------

TEST_F(SettingsTest, AModelInTheFileOrASetMeetsTheRequirement) {
  TempFile file("with_model.json", R"({"model": "mlp", "threads": 2})");
  EXPECT_EQ(from_flags({"--settings", file.path()}).model, "mlp");
  EXPECT_EQ(from_flags({"--set", "model=stack"}).model, "stack");
  EXPECT_EQ(from_flags({"transformer", "--settings", file.path()}).model, "transformer")
      << "MODEL given beats the file";
  TempFile without("without_model.json", R"({"threads": 2})");
  EXPECT_EQ(error_of([&] {
              from_flags({"--settings", without.path()});
            }),
            "model is required: give MODEL, \"model\" in the --settings file or --set model=...");
  EXPECT_EQ(error_of([&] {
              from_flags({"--threads", "2"});
            }),
            "model is required: give MODEL, \"model\" in the --settings file or --set model=...");
}

TEST_F(SettingsTest, InputAndDimFlagsTakeCommaSeparatedItemsAsTheirSettingsDo) {
  Settings s = from_flags(
      {"m.onnx", "--input", "x=a.npy,y=b.npy", "--input", "z=c.npy", "--dim", "batch=2,seq=8"});
  EXPECT_EQ(s.inputs,
            (std::map<std::string, std::string>{{"x", "a.npy"}, {"y", "b.npy"}, {"z", "c.npy"}}));
  EXPECT_EQ(s.dims, (std::map<std::string, int64_t>{{"batch", 2}, {"seq", 8}}));
  EXPECT_EQ(s.inputs, from_flags({"m.onnx", "--set", "inputs=x=a.npy,y=b.npy,z=c.npy"}).inputs);
  EXPECT_EQ(error_of([&] {
              from_flags({"m.onnx", "--input", "x=a.npy,b.npy"});
            }),
            R"(--input: expected NAME=FILE.npy, got "b.npy")");
}

TEST_F(SettingsTest, FileThenFlagsGivenThenSet) {
  TempFile file("precedence.json", R"({"executor": "eager", "planner": "first_fit", "threads": 2,
      "iters": 3, "dims": {"seq": 8}, "passes": {"dce": false}})");
  Settings s = from_flags({"m.onnx", "--settings", file.path()});
  EXPECT_EQ(s.executor, "eager");
  EXPECT_EQ(s.planner, "first_fit");
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.warmup, 10) << "a key the file does not give keeps its default";

  s = from_flags(
      {"m.onnx", "--settings", file.path(), "--executor", "compiled", "--dim", "batch=2"});
  EXPECT_EQ(s.executor, "compiled") << "a flag given beats the file";
  EXPECT_EQ(s.planner, "first_fit") << "a flag not given keeps the file's value";
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.dims, (std::map<std::string, int64_t>{{"batch", 2}, {"seq", 8}}))
      << "--dim adds to the file's dims";
  EXPECT_FALSE(s.pass_on("dce"));

  // The flag comes after --set on the command line, and still --set wins.
  s = from_flags({"m.onnx", "--set", "threads=4; passes.dce=on", "--settings", file.path(),
                  "--threads", "3", "--set", "executor=interpreted"});
  EXPECT_EQ(s.threads, 4);
  EXPECT_TRUE(s.pass_on("dce"));
  EXPECT_EQ(s.executor, "interpreted");

  // The file starts from the command's defaults, not the struct's.
  Settings profile;
  profile.warmup = 5;
  EXPECT_EQ(from_flags({"m.onnx", "--settings", file.path()}, {}, profile).warmup, 5);
}

TEST_F(SettingsTest, LaterSetsWinOverEarlierOnes) {
  Settings s = from_flags({"mlp", "--set", "threads=2", "--set", "threads=5"});
  EXPECT_EQ(s.threads, 5);
}

// ---- errors -----------------------------------------------------------------------------------

std::string json_error(const std::string& text) {
  return error_of([&] { settings_from_json(json::parse(text), "s.json"); });
}

TEST_F(SettingsTest, JsonErrorsNameThePathAndSuggest) {
  EXPECT_EQ(json_error(R"({"planer": "first_fit"})"),
            "s.json: /planer: unknown key 'planer' (did you mean 'planner'?)");
  EXPECT_EQ(json_error(R"({"frobnicate": 1})"),
            "s.json: /frobnicate: unknown key 'frobnicate' (valid: model, backend, executor, "
            "threads, isa, precision, gemm, passes, patterns, planner, capture, seed, warmup, iters, "
            "profile_runs, inputs, "
            "dims, consts)");
  EXPECT_EQ(json_error(R"({"capture": "yes"})"), "s.json: /capture: expected true or false, got \"yes\"");
  EXPECT_EQ(json_error(R"({"passes": {"fuse_patern": false}})"),
            "s.json: /passes/fuse_patern: unknown pass 'fuse_patern' (did you mean "
            "'fuse_patterns'? valid: " +
                valid_passes() + ")");
  EXPECT_EQ(json_error(R"({"patterns": {"atention": false}})"),
            "s.json: /patterns/atention: unknown pattern 'atention' (did you mean 'attention'? "
            "valid: " +
                valid_patterns() + ")");
  EXPECT_EQ(json_error(R"({"executor": "compild"})"),
            "s.json: /executor: unknown executor 'compild' (did you mean 'compiled'? valid: "
            "eager, interpreted, compiled)");
  EXPECT_EQ(json_error(R"({"planner": "frist_fit"})"),
            "s.json: /planner: unknown planner 'frist_fit' (did you mean 'first_fit'? valid: "
            "naive, first_fit, best_fit, greedy_by_size, best)");
  EXPECT_EQ(json_error(R"({"planner": "zzz"})"),
            "s.json: /planner: unknown planner 'zzz' (valid: naive, first_fit, best_fit, "
            "greedy_by_size, best)");
  EXPECT_EQ(
      json_error(R"({"backend": "cpux"})")
          .rfind("s.json: /backend: unknown backend 'cpux' (did you mean 'cpu'? valid: cpu, ", 0),
      0u)
      << json_error(R"({"backend": "cpux"})");
  EXPECT_NE(json_error(R"({"backend": "cpux"})").find(kAbsentBackend), std::string::npos)
      << "unavailable backends are listed too";
  EXPECT_EQ(json_error(R"({"passes": "dce,nope"})"),
            "s.json: /passes: unknown pass 'nope' (valid: " + valid_passes() + ")");
  // Keys with '/' or '~' are escaped in the pointer (RFC 6901).
  EXPECT_EQ(json_error(R"({"passes": {"a/b~c": true}})").rfind("s.json: /passes/a~1b~0c: ", 0), 0u);
}

TEST_F(SettingsTest, JsonErrorsSayWhatWasExpectedAndWhatCame) {
  EXPECT_EQ(json_error(R"({"threads": "two"})"),
            R"(s.json: /threads: expected an integer in 1..256, got "two")");
  EXPECT_EQ(json_error(R"({"threads": 0})"),
            "s.json: /threads: expected an integer in 1..256, got 0");
  EXPECT_EQ(json_error(R"({"threads": 257})"),
            "s.json: /threads: expected an integer in 1..256, got 257");
  EXPECT_EQ(json_error(R"({"threads": 2.5})"),
            "s.json: /threads: expected an integer in 1..256, got 2.5");
  EXPECT_EQ(json_error(R"({"iters": 0})"),
            "s.json: /iters: expected an integer in 1..1000000, got 0");
  EXPECT_EQ(json_error(R"({"warmup": -1})"),
            "s.json: /warmup: expected an integer in 0..1000000, got -1");
  EXPECT_EQ(json_error(R"({"profile_runs": 100001})"),
            "s.json: /profile_runs: expected an integer in 0..100000, got 100001");
  EXPECT_EQ(json_error(R"({"seed": -1})"), "s.json: /seed: expected an integer >= 0, got -1");
  EXPECT_EQ(json_error(R"({"executor": 3})"),
            "s.json: /executor: expected a string (eager | interpreted | compiled), got 3");
  EXPECT_EQ(json_error(R"({"model": ""})"),
            R"(s.json: /model: expected a builtin model spec or a .onnx file, got "")");
  EXPECT_EQ(json_error(R"({"model": null})"),
            "s.json: /model: expected a string (a builtin model spec or a .onnx file), got null");
  EXPECT_EQ(json_error(R"({"passes": {"dce": "off"}})"),
            R"(s.json: /passes/dce: expected true or false, got "off")");
  EXPECT_EQ(json_error(R"({"passes": [1]})"),
            "s.json: /passes: expected an object {\"pass\": true | false} or a string (all | none "
            "| comma-separated pass names), got an array");
  EXPECT_EQ(json_error(R"({"dims": {"batch": "4"}})"),
            R"(s.json: /dims/batch: expected an integer in 0..1048576, got "4")");
  EXPECT_EQ(json_error(R"({"dims": "batch=4"})"),
            "s.json: /dims: expected an object {\"NAME\": an integer in 0..1048576}, got "
            "\"batch=4\"");
  EXPECT_EQ(json_error(R"({"inputs": {"x": 1}})"),
            "s.json: /inputs/x: expected a string (a .npy file), got 1");
  EXPECT_EQ(json_error(R"([1, 2])"),
            "s.json: expected an object {\"key\": value, ...} at the top level, got an array");
  EXPECT_EQ(json_error(R"("threads=2")"),
            "s.json: expected an object {\"key\": value, ...} at the top level, got \"threads=2\"");
}

TEST_F(SettingsTest, KeyValueErrorsNameTheKey) {
  auto err = [](const std::string& text) {
    return error_of([&] {
      Settings s;
      apply_all(s, text, "--a");
    });
  };
  EXPECT_EQ(err("passes.fuse_patern=off"),
            "--a: passes.fuse_patern: unknown pass 'fuse_patern' (did you mean 'fuse_patterns'? "
            "valid: " +
                valid_passes() + ")");
  EXPECT_EQ(err("planer=first_fit"), "--a: planer: unknown key 'planer' (did you mean 'planner'?)");
  EXPECT_EQ(err("pases.dce=off"), "--a: pases.dce: unknown key 'pases' (did you mean 'passes'?)");
  EXPECT_EQ(err("threads=x"), R"(--a: threads: expected an integer in 1..256, got "x")");
  EXPECT_EQ(err("threads=300"), "--a: threads: expected an integer in 1..256, got 300");
  EXPECT_EQ(err("threads="), R"(--a: threads: expected an integer in 1..256, got "")");
  EXPECT_EQ(err("passes.dce=maybe"),
            R"(--a: passes.dce: expected on | off | true | false | 1 | 0, got "maybe")");
  EXPECT_EQ(
      err("passes=dce,,absorb_matmul"),
      R"(--a: passes: expected all | none | comma-separated pass names, got "dce,,absorb_matmul")");
  EXPECT_EQ(
      err("threads.x=1"),
      "--a: threads.x: 'threads' has no sub-keys (passes, patterns, inputs, dims, consts do)");
  EXPECT_EQ(err("threads"), R"(--a: expected KEY=VALUE, got "threads")");
  EXPECT_EQ(err("dims=batch"), R"(--a: dims: expected NAME=VALUE, got "batch")");
  EXPECT_EQ(err("dims=batch=x"), R"(--a: dims.batch: expected an integer in 0..1048576, got "x")");
  EXPECT_EQ(err("executor=Compiled"),
            "--a: executor: unknown executor 'Compiled' (did you mean 'compiled'? valid: eager, "
            "interpreted, compiled)");
}

TEST_F(SettingsTest, FlagErrorsNameTheFlag) {
  auto err = [](const std::vector<std::string>& args) {
    return error_of([&] { from_flags(args); });
  };
  EXPECT_EQ(err({"mlp", "--threads", "x"}), R"(--threads: expected an integer in 1..256, got "x")");
  EXPECT_EQ(err({"mlp", "--iters", "0"}), "--iters: expected an integer in 1..1000000, got 0");
  EXPECT_EQ(err({"mlp", "--executor", "jit"}),
            "--executor: unknown executor 'jit' (valid: eager, interpreted, compiled)");
  EXPECT_EQ(err({"mlp", "--passes", "nope"}),
            "--passes: unknown pass 'nope' (valid: " + valid_passes() + ")");
  EXPECT_EQ(err({"mlp", "--patterns", "atention"}),
            "--patterns: unknown pattern 'atention' (did you mean 'attention'? valid: " +
                valid_patterns() + ")");
  EXPECT_EQ(err({"mlp", "--dim", "batch"}), R"(--dim: expected NAME=VALUE, got "batch")");
  EXPECT_EQ(err({"mlp", "--dim", "batch=-1"}),
            "--dim batch: expected an integer in 0..1048576, got -1");
  EXPECT_EQ(err({"mlp", "--input", "x="}), R"(--input x: expected a .npy file, got "")");
  EXPECT_EQ(err({"", "--threads", "2"}),
            R"(model: expected a builtin model spec or a .onnx file, got "")");
  EXPECT_EQ(err({"mlp", "--set", "planer=naive"}),
            "--set: planer: unknown key 'planer' (did you mean 'planner'?)");
}

TEST_F(SettingsTest, FileErrorsNameTheFile) {
  const std::string missing = std::filesystem::temp_directory_path() / "fusebox_no_such.json";
  EXPECT_EQ(error_of([&] { load_settings_file(missing); }),
            "settings file: cannot read '" + missing + "': No such file or directory");
  const std::string dir = std::filesystem::temp_directory_path();
  EXPECT_EQ(error_of([&] { load_settings_file(dir); }),
            dir + ": is a directory, not a settings file");

  TempFile bad("bad.json", "{\n  \"threads\": 2,\n  \"iters\" 3\n}\n");
  EXPECT_EQ(error_of([&] { load_settings_file(bad.path()); }),
            bad.path() +
                ": invalid JSON at line 3, column 11: syntax error while parsing object "
                "separator - unexpected number literal; expected ':'");
  TempFile empty("empty.json", "");
  EXPECT_EQ(error_of([&] {
              load_settings_file(empty.path());
            }).rfind(empty.path() + ": invalid JSON at line 1, column 1: ", 0),
            0u);
  TempFile array("array.json", "[]");
  EXPECT_EQ(
      error_of([&] { load_settings_file(array.path()); }),
      array.path() + ": expected an object {\"key\": value, ...} at the top level, got an array");
  TempFile wrong("wrong.json", R"({"threads": "two"})");
  EXPECT_EQ(error_of([&] {
              from_flags({"mlp", "--settings", wrong.path()});
            }),
            wrong.path() + R"(: /threads: expected an integer in 1..256, got "two")");
  TempFile good("good.json", to_json(custom()).dump(2));
  EXPECT_EQ(load_settings_file(good.path()), custom());
}

TEST_F(SettingsTest, NumberPastDoublesRangeIsAnErrorAtItsPlace) {
  TempFile huge("huge.json", "{\n  \"threads\": 2,\n  \"iters\": 1e999\n}\n");
  EXPECT_EQ(error_of([&] { load_settings_file(huge.path()); }),
            huge.path() + ": invalid JSON at line 3, column 12: number overflow parsing '1e999'");
  EXPECT_EQ(error_of([&] {
              from_flags({"mlp", "--settings", huge.path()});
            }),
            huge.path() + ": invalid JSON at line 3, column 12: number overflow parsing '1e999'");
}

TEST_F(SettingsTest, FilesThatAreNotRegularAreRefused) {
  EXPECT_EQ(error_of([&] { load_settings_file("/dev/zero"); }),
            "settings file: cannot read '/dev/zero': not a regular file (a device or socket)");
  const std::string fifo = fusebox::test::process_temp_dir() + "/settings.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { load_settings_file(fifo); }),
            "settings file: cannot read '" + fifo + "': not a regular file (a FIFO)");
  std::filesystem::remove(fifo);
  TempFile big("big.json", "{\"threads\": 2" + std::string(kMaxJsonFileBytes, ' ') + "}");
  EXPECT_EQ(error_of([&] { load_settings_file(big.path()); }),
            "settings file: cannot read '" + big.path() +
                "': " + std::to_string(kMaxJsonFileBytes + 14) + " bytes, more than the " +
                std::to_string(kMaxJsonFileBytes) + " allowed");
}

// ---- printing ---------------------------------------------------------------------------------

TEST_F(SettingsTest, ToTextIsOneAlignedLinePerField) {
  const std::string text = to_text(custom());
  const auto lines = split(text, '\n');
  ASSERT_EQ(lines.size(), settings_keys().size() + 1) << text;  // + the empty after the last \n
  for (size_t i = 0; i < settings_keys().size(); ++i) {
    EXPECT_EQ(lines[i].rfind(settings_keys()[i], 0), 0u) << lines[i];
    EXPECT_EQ(lines[i].find_first_not_of(' ', settings_keys()[i].size()), 14u)
        << "values start in one column: " << lines[i];
  }
  EXPECT_NE(text.find("dims          batch=4,seq=16\n"), std::string::npos) << text;
  EXPECT_NE(text.find("passes        absorb_matmul,fuse_patterns,channels_last,winograd,absorb_layout,fuse_elementwise,"
                      "cse\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("profile_runs  2\n"), std::string::npos) << text;
  EXPECT_NE(to_text(Settings{}).find("inputs        -\n"), std::string::npos);
}

TEST_F(SettingsTest, ToTextValuesReadBackAsKeyValue) {
  // Each printed value is what KEY=VALUE takes, so a printout can be pasted back in.
  const Settings want = custom();
  Settings s;
  for (const auto& line : split(to_text(want), '\n')) {
    if (line.empty()) continue;
    const size_t gap = line.find(' ');
    apply(s, line.substr(0, gap) + "=" + trim(line.substr(gap)), "to_text");
  }
  EXPECT_EQ(s, want);
}

TEST_F(SettingsTest, HelpListsEveryFieldWithSyntaxAndDefault) {
  const std::string help = settings_help();
  for (const auto& key : settings_keys())
    EXPECT_NE(help.find("\n" + key + "  ("), std::string::npos) << key << "\n" << help;
  EXPECT_NE(help.find("--profile-runs"), std::string::npos);
  EXPECT_NE(help.find("value: an integer in 1..256; default: 1"), std::string::npos) << help;
  EXPECT_NE(help.find("value: naive | first_fit | best_fit | greedy_by_size | best; default: "
                      "greedy_by_size"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("passes.NAME=on | off"), std::string::npos) << help;
  EXPECT_NE(help.find("value: auto | avx512 | avx2 | portable; default: auto"), std::string::npos) << help;
  EXPECT_NE(help.find("names: " + valid_patterns()), std::string::npos) << help;
}


// ---- The fields as front ends see them --------------------------------------------------------

TEST_F(SettingsTest, FieldsExposeTheTablesChoicesAndRanges) {
  const std::vector<SettingField> all = setting_fields();
  std::vector<std::string> keys;
  for (const auto& f : all) keys.push_back(f.key);
  EXPECT_EQ(keys, settings_keys());

  const SettingField threads = setting_field("threads");
  EXPECT_EQ(threads.kind, SettingField::Kind::Integer);
  EXPECT_EQ(threads.flag, "--threads");
  EXPECT_EQ(threads.min, 1);
  EXPECT_EQ(threads.max, 256);
  ASSERT_TRUE(threads.suggested_max.has_value());  // this machine's cores, within the range
  EXPECT_GE(*threads.suggested_max, 2);
  EXPECT_LE(*threads.suggested_max, 256);
  EXPECT_EQ(threads.clamp(0), 1);
  EXPECT_EQ(threads.clamp(300), 256);
  EXPECT_EQ(threads.clamp(200), 200);

  EXPECT_EQ(setting_field("iters").min, 1);
  EXPECT_EQ(setting_field("iters").max, 1000000);
  EXPECT_FALSE(setting_field("iters").suggested_max.has_value());
  EXPECT_EQ(setting_field("seed").min, 0);
  EXPECT_FALSE(setting_field("seed").max.has_value()) << "uint64 max: unbounded";
  EXPECT_EQ(setting_field("dims").max, 1048576);
  EXPECT_FALSE(setting_field("inputs").min.has_value());

  EXPECT_EQ(setting_field("executor").choices, exec::executors().names());
  EXPECT_EQ(setting_field("planner").choices.back(), "best");
  EXPECT_EQ(setting_field("isa").choices.front(), "auto");
  EXPECT_EQ(setting_field("passes").choices, passes::PassRegistry::instance().names());
  EXPECT_EQ(setting_field("passes").kind, SettingField::Kind::Switches);
  const std::vector<std::string> backends = setting_field("backend").choices;
  EXPECT_NE(std::find(backends.begin(), backends.end(), kAbsentBackend), backends.end())
      << "an unavailable backend is still a choice";
  EXPECT_EQ(error_of([] { setting_field("thread"); }), "unknown key 'thread' (did you mean 'threads'?)");
}

// Every value the table allows is accepted, also beyond a control's suggested span.
TEST_F(SettingsTest, AValueBeyondTheSuggestedSpanIsValid) {
  Settings s;
  apply(s, "threads=" + std::to_string(*setting_field("threads").max), "ui");
  EXPECT_EQ(s.threads, 256);
}

TEST_F(SettingsTest, SetFieldConvertsOneValueAsItsFlagDoes) {
  Settings s;
  set_field(s, "backend", "cpu", "--backend");
  EXPECT_EQ(s.backend, "cpu");
  EXPECT_EQ(error_of([&] { set_field(s, "backend", "cpuu", "--backend"); }).rfind(
                "--backend: unknown backend 'cpuu' (did you mean 'cpu'? valid: ", 0),
            0u);
}

TEST_F(SettingsTest, PassesOnIsTheEnabledListInPipelineOrder) {
  Settings s;
  EXPECT_EQ(s.passes_on(), passes::PassRegistry::instance().names());
  apply(s, "passes=dce,absorb_matmul", "");
  EXPECT_EQ(s.passes_on(), (std::vector<std::string>{"absorb_matmul", "dce"}));
  EXPECT_EQ(s.passes_on(), passes::parse_pass_list(s.passes_text())) << "the text it replaced";
  apply(s, "passes=none", "");
  EXPECT_TRUE(s.passes_on().empty());
}

// Errors raised while running name the setting; the CLI puts back the flag the value came from.
TEST_F(SettingsTest, InFlagTermsNamesTheFlagOnlyWhereTheValueCameFromIt) {
  {
    CLI::App app("t");
    SettingsFlags flags(&app);
    const char* argv[] = {"fusebox", "m.onnx", "--dim", "batch=4", "--input", "x=x.npy"};
    app.parse(6, argv);
    flags.resolve();
    EXPECT_EQ(SettingsFlags::in_flag_terms("dims: only a .onnx model has dynamic dims"),
              "--dim: only a .onnx model has dynamic dims");
    EXPECT_EQ(SettingsFlags::in_flag_terms("inputs.x: the model has no input 'x'"),
              "--input x: the model has no input 'x'");
    EXPECT_EQ(SettingsFlags::in_flag_terms("unknown model 'q'"), "unknown model 'q'");
  }
  {
    CLI::App app("t");
    SettingsFlags flags(&app);
    const char* argv[] = {"fusebox", "m.onnx", "--set", "dims.batch=4"};
    app.parse(4, argv);
    flags.resolve();
    EXPECT_EQ(SettingsFlags::in_flag_terms("dims: only a .onnx model has dynamic dims"),
              "dims: only a .onnx model has dynamic dims")
        << "given with --set, not --dim";
  }
  {
    // From a --settings file: the file and the JSON pointer of the key.
    const std::string file = ::testing::TempDir() + "/in_flag_terms.json";
    std::ofstream(file) << R"({"model": "q", "inputs": {"x": "/tmp"}, "dims": {"b": 2}})";
    CLI::App app("t");
    SettingsFlags flags(&app, {}, {}, /*model_optional=*/true);
    const std::string arg = file;
    const char* argv[] = {"fusebox", "--settings", arg.c_str()};
    app.parse(3, argv);
    flags.resolve();
    EXPECT_EQ(SettingsFlags::in_flag_terms("inputs.x=/tmp: cannot read '/tmp': not a regular file"),
              file + ": /inputs/x: cannot read '/tmp': not a regular file");
    EXPECT_EQ(SettingsFlags::in_flag_terms("dims: only a .onnx model has dynamic dims"),
              file + ": /dims: only a .onnx model has dynamic dims");
    EXPECT_EQ(SettingsFlags::in_flag_terms("unknown model 'q'"), file + ": /model: unknown model 'q'");
    EXPECT_EQ(SettingsFlags::in_flag_terms("m.onnx: node n: bad"), "m.onnx: node n: bad") << "not a setting's";
  }
  EXPECT_EQ(SettingsFlags::in_flag_terms("dims: x"), "dims: x") << "no SettingsFlags alive";
}

}  // namespace
}  // namespace fusebox::workbench
