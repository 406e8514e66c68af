// The window's chrome under a real display (Xvfb): the Help lists every key and command the
// window dispatches on, Run > Options edits the model's options and the measuring, File > Open
// browses folders, File > Export writes the CLI's files, and --screenshot refuses a failed model.
#include <GLFW/glfw3.h>
#include <gtest/gtest.h>
#include <imgui_internal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/ui/app.h"
#include "app/ui/window.h"
#include "app/workbench/model_options.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "profiler/recording.h"
#include "tests/support/temp_dir.h"
#include "tests/ui/window_test.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::ui {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The chrome tests need only two runs of each kind.
class Chrome : public WindowTest {
 protected:
  App& start(const std::string& model) { return WindowTest::start(model, 2); }
};

bool listed(const std::vector<std::string>& names, const std::string& prefix) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
}

// Every verb, setting, panel switch and key the window dispatches on is in the Help: a command
// added to any of those tables without reaching the Help fails here.
TEST_F(Chrome, TheHelpListsEveryKeyAndCommandTheWindowDispatches) {
  start("mlp");
  EXPECT_TRUE(app_->help.drawn.names.empty()) << "closed until asked for";
  ImGuiIO& io = ImGui::GetIO();
  io.KeysDown[GLFW_KEY_F1] = true;  // F1, as a user would
  frame();
  io.KeysDown[GLFW_KEY_F1] = false;
  frame();
  const std::vector<std::string>& names = app_->help.drawn.names;
  ASSERT_FALSE(names.empty()) << "F1 shows the Help";
  for (const std::string& verb : app_->verb_names()) EXPECT_TRUE(listed(names, verb)) << verb;
  for (const std::string& key : workbench::settings_keys()) EXPECT_TRUE(listed(names, key + "=")) << key;
  ASSERT_FALSE(app_->panel_switch_names().empty());
  for (const std::string& sw : app_->panel_switch_names()) EXPECT_TRUE(listed(names, sw + "=")) << sw;
  for (const App::KeyBinding& k : app_->key_bindings()) {
    EXPECT_TRUE(std::find(names.begin(), names.end(), k.keys) != names.end()) << k.keys;
    // Each key runs a command the window takes.
    const std::string verb = k.command.substr(0, k.command.find('='));
    const auto verbs = app_->verb_names();
    EXPECT_TRUE(std::find(verbs.begin(), verbs.end(), verb) != verbs.end()) << k.command;
  }
  // The commands this change added are among them.
  for (const char* c : {"help", "options", "browse=", "export.trace=", "export.svg=", "export.profile="})
    EXPECT_TRUE(listed(names, c)) << c;
  // And the help text is the verbs' own: the unknown-command message lists the same usages.
  const std::string unknown = app_->command("frobnicate");
  for (const std::string& verb : app_->verb_names()) EXPECT_NE(unknown.find(verb), std::string::npos) << verb;
}

TEST_F(Chrome, RunOptionsEditTheModelsOptionsAndTheMeasuringAndReRun) {
  start("transformer:seq=16,d=32,heads=2,ffn=64");
  run("options");
  const RunOptions::Drawn& d = app_->run_options.drawn;
  for (const char* key : {"seq", "d", "heads", "ffn", "batch", "warmup", "iters", "profile_runs", "seed"})
    EXPECT_TRUE(std::find(d.keys.begin(), d.keys.end(), key) != d.keys.end()) << key;
  const size_t seq = std::find(d.keys.begin(), d.keys.end(), "seq") - d.keys.begin();
  ASSERT_LT(seq, d.values.size());
  EXPECT_EQ(d.values[seq], "16");

  // An edit is one settings command; it re-runs the pipeline.
  const std::string cmd = workbench::model_option_command(app_->settings(), "seq", "8");
  EXPECT_EQ(cmd, "model=transformer:seq=8,d=32,heads=2,ffn=64");
  run(cmd + "; warmup=1; profile_runs=3");
  const auto& r = *app_->runner().result();
  EXPECT_EQ(r.settings.model, "transformer:seq=8,d=32,heads=2,ffn=64");
  EXPECT_EQ(r.graph().tensor("x").shape[1], 8);
  ASSERT_TRUE(r.recording);
  EXPECT_EQ(r.recording->run_count(), 3);
  EXPECT_EQ(r.settings.warmup, 1);
  const size_t seq_after = std::find(d.keys.begin(), d.keys.end(), "seq") - d.keys.begin();
  EXPECT_EQ(d.values.at(seq_after), "8") << "the window shows the value it runs with";
  // A value the spec refuses changes nothing and says which option.
  EXPECT_THROW(
      {
        try {
          workbench::model_option_command(app_->settings(), "heads", "3");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("heads"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

TEST_F(Chrome, TheOpenDialogBrowsesFoldersAndNamesOneItCannotRead) {
  const fs::path dir = fs::path(fusebox::test::process_temp_dir()) / "browse";
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "model.onnx") << "x";
  std::ofstream(dir / "notes.txt") << "x";
  start("mlp");
  run("browse=" + dir.string());
  const OpenDialog::Drawn& d = app_->open_dialog.drawn;
  EXPECT_EQ(d.folder, dir.string());
  EXPECT_EQ(d.entries, (std::vector<std::string>{"sub/", "model.onnx"}));
  EXPECT_EQ(d.error, "");
  run("browse=" + (dir / "missing").string());
  EXPECT_NE(d.error.find((dir / "missing").string()), std::string::npos) << d.error;
  EXPECT_TRUE(d.entries.empty());
  // Ctrl+O opens it too (where it was last).
  run("open");
  EXPECT_EQ(d.folder, (dir / "missing").string());
}

TEST_F(Chrome, ExportsWriteTheCliFilesAndTheyParse) {
  const fs::path dir = fs::path(fusebox::test::process_temp_dir()) / "exports";
  fs::create_directories(dir);
  start("mlp");
  run("export.trace=" + (dir / "t.json").string() + "; export.svg=" + (dir / "g.svg").string() +
      "; export.profile=" + (dir / "prof").string());
  const nlohmann::json trace = nlohmann::json::parse(read_file((dir / "t.json").string()));
  ASSERT_TRUE(trace.contains("traceEvents"));
  EXPECT_FALSE(trace.at("traceEvents").empty());
  const std::string svg = read_file((dir / "g.svg").string());
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  const profiler::Recording rec = profiler::Recording::load((dir / "prof" / "profile.json").string());
  EXPECT_EQ(rec.run_count(), 2);
  EXPECT_TRUE(nlohmann::json::parse(read_file((dir / "prof" / "analysis.json").string())).is_object());
  EXPECT_TRUE(nlohmann::json::parse(read_file((dir / "prof" / "trace.json").string())).contains("traceEvents"));
  for (const char* f : {"trace.nvtxt", "trace.sqlite"}) EXPECT_GT(fs::file_size(dir / "prof" / f), 0u) << f;

  // A folder holding anything else is refused, untouched; the error names the command.
  fs::create_directories(dir / "mine");
  std::ofstream(dir / "mine" / "thesis.tex") << "x";
  const std::string refused = app_->command("export.profile=" + (dir / "mine").string());
  EXPECT_NE(refused.find("export.profile"), std::string::npos) << refused;
  EXPECT_TRUE(fs::exists(dir / "mine" / "thesis.tex"));
  EXPECT_FALSE(fs::exists(dir / "mine" / "profile.json"));
  // Nothing recorded: the trace export says how to get a recording.
  run("profile_runs=0");
  const std::string none = app_->command("export.trace=" + (dir / "none.json").string());
  EXPECT_NE(none.find("profile_runs"), std::string::npos) << none;
  EXPECT_FALSE(fs::exists(dir / "none.json"));
  // The prompt: export.KIND alone shows it with that kind.
  run("export.svg");
  EXPECT_EQ(app_->export_dialog.drawn.kind, "svg");
}

std::string run_ui(const std::string& args, int* status) {
  const std::string cmd = std::string(FUSEBOX_UI_BIN) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  *status = WEXITSTATUS(pclose(pipe));
  return out;
}

// A model that fails after the first one loaded (a --do open of a broken file) leaves the last
// good result on screen: the screenshot is still refused, exit 2, naming the model.
TEST_F(Chrome, AScreenshotAfterAFailedOpenInTheScriptExits2) {
  const std::string shot = fusebox::test::process_temp_dir() + "/never_taken_after_open.png";
  const std::string model = fusebox::test::process_temp_dir() + "/garbage_later.onnx";
  std::ofstream(model) << "not a protobuf";
  int status = -1;
  const std::string out = run_ui("mlp --iters 2 --warmup 0 --profile-runs 1 --do \"open=" + model +
                                     "\" --screenshot " + shot,
                                 &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("not taken"), std::string::npos) << out;
  EXPECT_NE(out.find(model), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(shot));
}

}  // namespace
}  // namespace fusebox::ui
