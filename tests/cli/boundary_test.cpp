// What comes into the CLI from outside (settings files, scenarios, flags, file names that are
// bytes, not UTF-8) is bad input at worst: exit 2 with a message naming the file and the place,
// never "internal error" (exit 1) or a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace {

using fusebox::test::run_cli;

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string write(const std::string& name, const std::string& text) {
  const std::string path = fusebox::test::process_temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliBoundary, ANumberPastDoublesRangeInASettingsFileExits2NamingItsPlace) {
  const std::string file = write("huge.json", "{\"warmup\": 0,\n \"iters\": 1e999}");
  const auto r = run_cli("run mlp --settings " + file);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(
      r.out.find(file + ": invalid JSON at line 2, column 11: number overflow parsing '1e999'"),
      std::string::npos)
      << r.out;
}

TEST(CliBoundary, ANumberPastDoublesRangeInAScenarioExits2NamingItsPlace) {
  const std::string file = write(
      "huge_scenario.json",
      R"({"name": "x", "model": "mlp", "steps": [{"title": "a", "set": {"iters": -1e999}}]})");
  const auto r = run_cli("check " + file);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(
      r.out.find(file + ": invalid JSON at line 1, column 73: number overflow parsing '-1e999'"),
      std::string::npos)
      << r.out;
}

TEST(CliBoundary, ASettingsFileThatIsADeviceExits2) {
  const auto r = run_cli("run mlp --settings /dev/zero");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("'/dev/zero': not a regular file"), std::string::npos) << r.out;
}

TEST(CliBoundary, AModelPathThatIsNotUtf8PrintsAsJsonWithReplacementCharacters) {
  const auto r = run_cli("settings --json --set 'model=/tmp/caf\xE9.onnx'", /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["model"], "/tmp/caf" + kReplacement + ".onnx");
}

TEST(CliBoundary, AValueThatIsNotUtf8IsNamedWithReplacementCharacters) {
  const auto r = run_cli("run mlp --set 'planner=first\xFF'");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown planner"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first" + kReplacement), std::string::npos) << r.out;
}

TEST(CliBoundary, CheckJsonOfAScenarioWhosePathIsNotUtf8) {
  const std::string file =
      write("sc\xE9nario.json", R"({"name": "x", "model": "mlp", "settings": {"iters": 1,
      "warmup": 0, "profile_runs": 0}, "steps": [{"title": "a"}]})");
  const auto r = run_cli("check --json '" + file + "'", /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at(0)["path"],
            fusebox::test::process_temp_dir() + "/sc" + kReplacement + "nario.json");
}

TEST(CliBoundary, AnUnknownDimExits2NamingItAndTheModelsDims) {
  const std::string model = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/mlp_opset17.onnx";
  const auto r = run_cli("run " + model + " --dim bacth=2 --iters 1 --warmup 0 --profile-runs 0");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--dim bacth: " + model + " has no dim 'bacth' (its dims: x:0, x:1)"),
            std::string::npos)
      << r.out;
}

TEST(CliBoundary, AModelNamedInTheSettingsFileIsEnough) {
  const std::string file =
      write("with_model.json", R"({"model": "mlp", "iters": 1, "warmup": 0, "profile_runs": 0})");
  auto r = run_cli("run --settings " + file + " --json", /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["model"], "mlp");
  r = run_cli("run --iters 1");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("model is required"), std::string::npos) << r.out;
}

}  // namespace
