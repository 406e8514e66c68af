// fusebox run MODEL: build, optimize, plan, run many times; print the report.
#include <cstdio>
#include <iostream>

#include "app/cli/commands.h"
#include "app/workbench/pipeline.h"
#include "app/workbench/report.h"
#include "core/base/error.h"
#include "core/ir/npy.h"

namespace fusebox::cli {

namespace {

struct RunArgs {
  std::unique_ptr<workbench::SettingsFlags> settings;
  std::string save_outputs;
  bool json = false;
  bool explain = false;
};

// A tensor name as a file name: path separators and colons become '_'.
std::string file_name_for(const std::string& tensor) {
  std::string s = tensor;
  for (char& c : s)
    if (c == '/' || c == ':' || c == '\\' || c == ' ') c = '_';
  return s + ".npy";
}

void run(const RunArgs& a) {
  workbench::Settings s = a.settings->resolve();
  if (!a.save_outputs.empty()) ensure_writable_dir(a.save_outputs, "--save-outputs");
  workbench::Pipeline pipeline;
  auto result = pipeline.run(s);
  if (!a.save_outputs.empty())
    for (size_t i = 0; i < result->outputs.size(); ++i)
      ir::write_npy(a.save_outputs + "/" + file_name_for(result->graph().outputs[i]),
                    result->outputs[i]);
  if (a.json) {
    std::cout << workbench::to_json(*result).dump(2) << "\n";
  } else {
    std::cout << workbench::report_text(*result);
    if (a.explain) std::cout << "\n" << result->optimized->log.to_text();
  }
}

void run_options(CLI::App& cmd, RunArgs& a) {
  workbench::Settings defaults;
  defaults.profile_runs = 0;  // `run` reports latency; `profile` records
  a.settings = std::make_unique<workbench::SettingsFlags>(&cmd, std::set<std::string>{}, defaults);
  cmd.add_option("--save-outputs", a.save_outputs, "directory to write each output as <name>.npy");
  cmd.add_flag("--json", a.json, "print the report as one JSON object");
  cmd.add_flag("--explain", a.explain, "print what each pass rewrote and what almost matched");
}

}  // namespace

Command run_command() {
  return make_command<RunArgs>(
      "run",
      "Build a model, run it many times and report latency, memory and output checksums.\n"
      "Example: fusebox run transformer --executor eager --iters 50 --json",
      run_options, run);
}

}  // namespace fusebox::cli
