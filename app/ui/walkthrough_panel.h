#pragma once
// The walkthrough: a scenario's steps one at a time. Previous / next (or step=N) enter a step:
// the App applies its settings and, once its result is in, selects what it points at; the panel
// shows the step's title, its text and its checks with live results over the results of the
// steps visited so far (a check against a step not yet run says so).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/ui/panel.h"
#include "app/workbench/scenario.h"

namespace fusebox::ui {

struct WalkthroughPanel {
  // The scenario being played, and where it is.
  std::shared_ptr<const workbench::Scenario> scenario;
  size_t step = 0;
  // The measured result of each step visited, by step index (kept so later steps can compare).
  std::map<size_t, std::shared_ptr<const workbench::RunResult>> results;

  void draw(const Frame& frame);
  // Records `result` as the current step's when it ran the step's settings and is measured.
  void observe(const std::shared_ptr<const workbench::RunResult>& result);

  struct Drawn {
    size_t checks = 0, passed = 0, pending = 0;  // the current step's checks and their state
    std::string error;                            // why the checks could not be evaluated
  } drawn;

 private:
  // The current step's checks, evaluated once per (scenario, step, results seen) and drawn from
  // here every frame.
  struct Evaluated {
    const workbench::Scenario* scenario = nullptr;
    size_t step = 0;
    // results[0..step], null where none (held, so a new result never has an old one's address)
    std::vector<std::shared_ptr<const workbench::RunResult>> inputs;
    std::vector<std::string> figures;
    std::vector<int> state;  // -1 pending, 0 failed, 1 passed
    std::string error;
  } evaluated_;
  void evaluate();
};

}  // namespace fusebox::ui
