// fusebox run MODEL: build, optimize, plan, run many times; print the report.
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

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

// A tensor name as a file name: path separators, colons and spaces become '_'.
std::string file_stem_for(const std::string& tensor) {
  std::string s = tensor;
  for (char& c : s)
    if (c == '/' || c == ':' || c == '\\' || c == ' ') c = '_';
  return s;
}

// Each output's file name, all distinct: two names that map to one file ("y/0" and "y_0" both
// to y_0.npy) would lose one output, so a later one gets "_2", "_3", ..., saying so on stderr.
std::vector<std::string> output_file_names(const std::vector<std::string>& outputs) {
  std::map<std::string, std::string> taken;  // file name -> the output written there
  std::vector<std::string> names;
  for (const std::string& output : outputs) {
    const std::string stem = file_stem_for(output);
    std::string name = stem + ".npy";
    for (int k = 2; taken.count(name); ++k) name = stem + "_" + std::to_string(k) + ".npy";
    if (name != stem + ".npy")
      std::cerr << "--save-outputs: outputs '" << taken[stem + ".npy"] << "' and '" << output
                << "' both map to '" << stem << ".npy'; '" << output << "' is written as '" << name
                << "'\n";
    taken[name] = output;
    names.push_back(name);
  }
  return names;
}

// The files --save-outputs writes (and so may replace): one .npy per output.
bool is_npy(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
}

void run(const RunArgs& a) {
  workbench::Settings s = a.settings->resolve();
  if (!a.save_outputs.empty()) check_output_dir(a.save_outputs, "--save-outputs", is_npy);
  workbench::Pipeline pipeline;
  auto result = pipeline.run(s);
  if (!a.save_outputs.empty()) {
    const std::vector<std::string> names = output_file_names(result->graph().outputs);
    write_output_dir(a.save_outputs, "--save-outputs", is_npy, [&](const std::string& tmp) {
      for (size_t i = 0; i < result->outputs.size(); ++i)
        ir::write_npy(tmp + "/" + names[i], result->outputs[i]);
    });
  }
  if (a.json) {
    std::cout << workbench::to_json(*result).dump(2, ' ', false,
                                                  nlohmann::json::error_handler_t::replace)
              << "\n";
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
