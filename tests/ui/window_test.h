#pragma once
// The fixture every window test shares: one GLFW window per suite under a real display (Xvfb in
// CI), an App started on a model with few runs and the fixed roofline, and frames drawn until the
// runs, the script and the layout are done. Without a display every test skips, saying why, unless
// FUSEBOX_REQUIRE_DISPLAY is set (tools/test.sh sets it): then the skip is a failure.
#include <gtest/gtest.h>
#include <imgui_internal.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "app/ui/app.h"
#include "app/ui/window.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::ui {

class WindowTest : public ::testing::Test {
 protected:
  using Clock = std::chrono::steady_clock;

  // One window for the suite: opening and closing GLFW per test is slow and gains nothing.
  static void SetUpTestSuite() {
    why_not_ = Window::why_no_display();
    if (!why_not_) window_ = std::make_unique<Window>("fusebox test", 1600, 1000);
  }
  static void TearDownTestSuite() { window_.reset(); }

  void SetUp() override {
    if (why_not_) {
      if (std::getenv("FUSEBOX_REQUIRE_DISPLAY")) FAIL() << *why_not_;
      GTEST_SKIP() << *why_not_ << " (tools/test.sh runs these under xvfb-run)";
    }
  }
  // A modal left open would come back in the next test's window (ImGui keeps its popups).
  void TearDown() override {
    if (ImGui::GetCurrentContext()) ImGui::GetCurrentContext()->OpenPopupStack.resize(0);
    app_.reset();
  }

  // A window on `model` with `runs` timed and recorded runs and the fixed roofline.
  App& start(const std::string& model, int runs = 3) {
    workbench::Settings s = workbench::test::small_settings(model);
    s.iters = runs;
    s.profile_runs = runs;
    return start(s);
  }
  App& start(const workbench::Settings& s) {
    app_ = std::make_unique<App>(s, workbench::test::fixed_roofline);
    settle();
    return *app_;
  }

  // Draws one frame; with `capture` its pixels are kept (Window::captured()).
  void frame(bool capture = false) {
    window_->begin_frame();
    app_->draw();
    window_->end_frame(capture);
  }

  // Draws frames until the runs and the script are done and the graph is laid out, then two
  // more (the panels fit their views on the first frame of a new result), capturing the last.
  void settle() {
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (!app_->idle()) {
      ASSERT_LT(Clock::now(), deadline) << "the window never settled";
      frame();
    }
    frame();
    frame(true);
  }

  // Runs window commands as --do would and settles; a command the window refuses fails the test.
  void run(const std::string& commands) {
    app_->script(commands);
    settle();
    ASSERT_EQ(app_->script_error(), "") << commands;
  }

  static inline std::optional<std::string> why_not_;
  static inline std::unique_ptr<Window> window_;
  std::unique_ptr<App> app_;
};

}  // namespace fusebox::ui
