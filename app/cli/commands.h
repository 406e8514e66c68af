#pragma once
// The `fusebox` subcommands, one file each. Each add_*_command registers a CLI11 subcommand
// whose callback does the work; errors are thrown as fusebox::Error and main() maps them to
// exit code 2 (usage or input problem) with the message on stderr. Commands that run a model
// take their settings through workbench::SettingsFlags (the one table of settings: flags,
// --settings FILE.json, --set KEY=VALUE) and run them through workbench::Pipeline.
#include <CLI/CLI.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/workbench/settings.h"

namespace fusebox::cli {

// Thrown by a command that ran but whose verdict is "no" (fusebox check): main() exits with `code`.
struct CommandFailed {
  int code = 1;
};

// Creates `dir` if missing; throws fusebox::Error naming `option` when it is not a writable directory.
void ensure_writable_dir(const std::string& dir, const std::string& option);

void add_run_command(CLI::App& app);
void add_passes_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_machine_command(CLI::App& app);
void add_settings_command(CLI::App& app);
void add_graph_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_selftest_command(CLI::App& app);

}  // namespace fusebox::cli
