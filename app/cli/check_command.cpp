// fusebox check SCENARIO...: runs every step of each scenario and its checks, and prints step x
// check x result x figures. Exit 0 when every structural check holds (measured checks are printed
// and fail the run only with --strict), 1 when one does not, 2 for a bad file.
#include <iostream>

#include "app/cli/commands.h"
#include "app/workbench/pipeline.h"
#include "app/workbench/scenario.h"
#include "app/workbench/walkthrough.h"

namespace fusebox::cli {

namespace {

struct CheckArgs {
  std::vector<std::string> files;
  bool json = false;
  bool strict = false;
};

void check(const CheckArgs& a) {
  // Every file is read and validated before anything runs: a typo in the last one costs nothing.
  std::vector<std::shared_ptr<const workbench::Scenario>> scenarios;
  for (const auto& f : a.files)
    scenarios.push_back(std::make_shared<const workbench::Scenario>(workbench::load_scenario(f)));
  bool ok = true;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& sc : scenarios) {
    // The player fusebox-ui steps, here playing every step.
    workbench::Walkthrough walk(sc);
    workbench::Pipeline pipeline;
    const workbench::ScenarioRun run = walk.play(pipeline);
    ok &= run.structural_ok() && (!a.strict || run.measured_ok());
    if (a.json)
      all.push_back(run.to_json());
    else
      std::cout << run.to_text() << "\n";
  }
  if (a.json)
    std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!ok) throw CommandFailed{1};
}

void check_options(CLI::App& cmd, CheckArgs& a) {
  cmd.add_option("scenario", a.files, "scenario files")->required()->type_name("SCENARIO.json");
  cmd.add_flag("--json", a.json, "print the results as JSON");
  cmd.add_flag("--strict", a.strict, "measured checks (timing) fail the run too");
}

}  // namespace

Command check_command() {
  return make_command<CheckArgs>(
      "check",
      "Run scenarios step by step and check their findings (scenarios/*.json).\n"
      "Exit 0: every structural check holds; 1: one does not (or, with --strict, a measured one);\n"
      "2: a bad scenario file. Example: fusebox check scenarios/fusion.json",
      check_options, check);
}

}  // namespace fusebox::cli
