#include "app/workbench/walkthrough.h"

#include <utility>

#include "core/base/error.h"

namespace fusebox::workbench {

Walkthrough::Walkthrough(std::shared_ptr<const Scenario> scenario)
    : scenario_(std::move(scenario)) {
  if (!scenario_ || scenario_->steps.empty())
    throw Error("a walkthrough needs a scenario with at least one step");
}

const Settings& Walkthrough::enter(size_t n) {
  const auto& all = scenario_->steps;
  if (n >= all.size()) {
    throw Error("step: no step " + std::to_string(n) + " (the scenario has steps 0.." +
                std::to_string(all.size() - 1) + ")");
  }
  step_ = n;
  return all[n].settings;
}

bool Walkthrough::observe(const std::shared_ptr<const RunResult>& result) {
  if (scenario_->is_trace()) return false;  // a trace scenario runs nothing
  if (!result || !result->measured() || !(result->settings == current().settings)) return false;
  results_[step_] = result;
  return true;
}

void Walkthrough::record(std::shared_ptr<const RunResult> result) {
  results_[step_] = std::move(result);
}

std::vector<std::shared_ptr<const RunResult>> Walkthrough::results_through(size_t step) const {
  std::vector<std::shared_ptr<const RunResult>> out(step + 1);
  for (const auto& [i, r] : results_)
    if (i <= step) out[i] = r;
  return out;
}

StepOutcome Walkthrough::outcome() const {
  if (scenario_->is_trace()) {
    if (!trace_)
      throw Error(scenario_->path + ": /trace: the trace " + scenario_->trace + " is not open");
    validate_look_at(*scenario_, step_, *trace_);
    return {nullptr, evaluate_checks(*scenario_, step_, {}, trace_.get(), kernels_.get())};
  }
  const auto results = results_through(step_);
  if (!results[step_])
    throw Error(scenario_->path + ": /steps/" + std::to_string(step_) + ": step " +
                std::to_string(step_) + " has no result");
  validate_look_at(*scenario_, step_, *results[step_]);
  return {results[step_], evaluate_checks(*scenario_, step_, results)};
}

const Walkthrough::LiveChecks& Walkthrough::live_checks() const {
  const size_t n = current().checks.size();
  auto inputs = results_through(step_);
  if (live_valid_ && live_step_ == step_ && live_inputs_ == inputs && live_trace_ == trace_.get() &&
      live_kernels_ == kernels_.get())
    return live_;
  live_valid_ = true;
  live_step_ = step_;
  live_inputs_ = std::move(inputs);
  live_trace_ = trace_.get();
  live_kernels_ = kernels_.get();
  live_ = LiveChecks{std::vector<LiveCheck>(n), ""};
  // This step has not run yet (a trace scenario's trace is not open): every check pending.
  if (!has_result(step_)) return live_;
  // One check at a time, so a check whose earlier step has not run yet does not hide the others.
  for (size_t k = 0; k < n; ++k) {
    try {
      const CheckResult out = evaluate_check(*scenario_, step_, k, live_inputs_, trace_.get(), kernels_.get());
      if (out.passed || out.not_measurable.empty())
        live_.checks[k] = {out.passed ? 1 : 0, out.figures};
      else
        live_.checks[k] = {2, "not measurable: " + out.not_measurable + "; " + out.figures};
    } catch (const Error& e) {
      live_.checks[k].figures = e.what();
      live_.error = e.what();
    }
  }
  return live_;
}

ScenarioRun Walkthrough::play(Pipeline& pipeline) {
  ScenarioRun run;
  run.scenario = scenario_.get();
  if (scenario_->is_trace()) {
    if (!trace_) {  // once, for every step
      try {
        attach(open_path(scenario_->trace));
      } catch (const Error& e) {
        throw Error(scenario_->path + ": /trace: " + e.what());
      }
    }
    if (!scenario_->kernels.empty() && !kernels_) {
      try {
        kernels_ = open_kernel_level(scenario_->kernels, *trace_);
      } catch (const Error& e) {
        throw Error(scenario_->path + ": /kernels: " + e.what());
      }
    }
    run.trace = trace_;
    run.kernels = kernels_;
    for (size_t i = 0; i < steps(); ++i) {
      enter(i);
      run.steps.push_back(outcome());
    }
    return run;
  }
  for (size_t i = 0; i < steps(); ++i) {
    const Settings& settings = enter(i);
    try {
      record(pipeline.run(settings));
    } catch (const Error& e) {
      throw Error(scenario_->path + ": /steps/" + std::to_string(i) + ": " + e.what());
    }
    run.steps.push_back(outcome());
  }
  return run;
}

ScenarioRun run_scenario(const Scenario& scenario, Pipeline& pipeline) {
  // The caller owns the scenario and the run points into it: a non-owning handle.
  Walkthrough walk(std::shared_ptr<const Scenario>(std::shared_ptr<const Scenario>(), &scenario));
  return walk.play(pipeline);
}

}  // namespace fusebox::workbench
