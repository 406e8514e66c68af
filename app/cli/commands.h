#pragma once
// The `fusebox` subcommands, one file each. Each add_*_command registers a CLI11 subcommand
// whose callback does the work; errors are thrown as fusebox::Error and main() maps them to
// exit code 2 (usage or input problem) with the message on stderr.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fusebox::cli {

// Options shared by every command that builds a session (run, plan, profile, ...).
struct SessionArgs {
  std::string model;
  std::string backend = "cpu";
  std::string executor = "compiled";
  int threads = 1;
  std::string passes = "all";
  std::string planner = "greedy_by_size";
  uint64_t seed = 1;
};
void add_session_options(CLI::App* cmd, SessionArgs& args, bool with_executor = true);
// Creates `dir` if missing; throws fusebox::Error naming `option` when it is not a writable directory.
void ensure_writable_dir(const std::string& dir, const std::string& option);

void add_run_command(CLI::App& app);
void add_passes_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_machine_command(CLI::App& app);

}  // namespace fusebox::cli
