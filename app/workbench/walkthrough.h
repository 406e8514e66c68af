#pragma once
// The one scenario player both front ends use. A Walkthrough owns a scenario, the step it is at,
// the result of each step that ran and the checks over them; entering a step makes it current and
// hands back the settings to run. `fusebox check` plays every step through one (play: enter, run,
// record, check, and the first error throws); fusebox-ui steps one (step=N, previous / next),
// records each result the runner brings for the current step and draws its checks live, one at a
// time, so a check against a step not yet run says so without hiding the others.
//
//   Walkthrough walk(scenario);
//   pipeline.run(walk.enter(2));        // throws "step: no step 9 (...)" for a step it lacks
//   walk.observe(result);               // kept when it ran step 2's settings and was measured
//   for (const auto& c : walk.live_checks().checks) ...
//
// A trace scenario ("trace": FILE) runs nothing: its player holds the trace, opened once
// (attach(), or play() opens it through workbench::open_trace), and every step's checks read its
// GPU analysis; entering a step only changes which look_at and checks are current.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/workbench/kernel_level.h"
#include "app/workbench/opened_trace.h"
#include "app/workbench/pipeline.h"
#include "app/workbench/run_result.h"
#include "app/workbench/scenario.h"
#include "app/workbench/settings.h"

namespace fusebox::workbench {

class Walkthrough {
 public:
  // Starts at step 0 (not entered: call enter(0) to get its settings).
  explicit Walkthrough(std::shared_ptr<const Scenario> scenario);

  const Scenario& scenario() const { return *scenario_; }
  size_t step() const { return step_; }
  size_t steps() const { return scenario_->steps.size(); }
  const ScenarioStep& current() const { return scenario_->steps.at(step_); }

  // Makes step `n` current and returns the settings it runs. Throws fusebox::Error
  // "step: no step N (the scenario has steps 0..M)".
  const Settings& enter(size_t n);

  // Records `result` as the current step's when it ran the current step's settings and was
  // measured (the runner also brings results of other settings); returns whether it did.
  bool observe(const std::shared_ptr<const RunResult>& result);
  // Records `result` as the current step's, whatever it ran (a player that ran it itself).
  void record(std::shared_ptr<const RunResult> result);
  // A trace scenario's step "has run" once its trace is attached.
  bool has_result(size_t step) const {
    return scenario_->is_trace() ? trace_ != nullptr : results_.count(step) != 0;
  }
  // A trace scenario's trace, opened by the caller (the window's App::open_trace) or by play().
  void attach(std::shared_ptr<const OpenedTrace> trace) { trace_ = std::move(trace); }
  const std::shared_ptr<const OpenedTrace>& trace() const { return trace_; }
  // Its "kernels" export matched to that trace (the window's kernels=, or play() opens it).
  void attach_kernels(std::shared_ptr<const KernelLevel> kernels) { kernels_ = std::move(kernels); }
  const std::shared_ptr<const KernelLevel>& kernels() const { return kernels_; }
  // The results of steps 0..step, null where a step has not run.
  std::vector<std::shared_ptr<const RunResult>> results_through(size_t step) const;

  // The current step's checks over the results so far, all at once: the look_at is checked
  // against the result first. Throws fusebox::Error for a step without a result, a look_at or
  // a check naming what the graph lacks, or a check against a step that has not run.
  StepOutcome outcome() const;

  // The current step's checks one at a time, for drawing every frame: evaluated again only when
  // the step or the results it reads changed.
  struct LiveCheck {
    // -1 pending (the step has not run), 0 failed, 1 passed, 2 not measurable (a measured check
    // that failed on a busy machine: CheckResult::not_measurable)
    int state = -1;
    std::string figures;  // the figures, or the error that kept it from being evaluated
  };
  struct LiveChecks {
    std::vector<LiveCheck> checks;  // one per check of the current step
    std::string error;              // the last error among them, "" when none
  };
  const LiveChecks& live_checks() const;

  // Plays every step from the first: enter, run on `pipeline` (stages shared between steps, as
  // the UI shares them), record, check. Throws fusebox::Error naming the step for a step that
  // cannot run, and as outcome() does. A trace scenario opens its trace once (unless attached)
  // and checks every step over it; `pipeline` runs nothing.
  ScenarioRun play(Pipeline& pipeline);

 private:
  std::shared_ptr<const Scenario> scenario_;
  size_t step_ = 0;
  std::map<size_t, std::shared_ptr<const RunResult>> results_;  // by step
  std::shared_ptr<const OpenedTrace> trace_;                     // a trace scenario's
  std::shared_ptr<const KernelLevel> kernels_;                   // and its "kernels", or null

  // live_checks()'s cache: what it was evaluated over, and what it found.
  mutable size_t live_step_ = 0;
  mutable std::vector<std::shared_ptr<const RunResult>> live_inputs_;
  mutable const OpenedTrace* live_trace_ = nullptr;
  mutable const KernelLevel* live_kernels_ = nullptr;
  mutable LiveChecks live_;
  mutable bool live_valid_ = false;
};

}  // namespace fusebox::workbench
