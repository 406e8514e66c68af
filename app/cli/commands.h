#pragma once
// The `fusebox` subcommands, one file each, listed in commands(). Each is a CLI11 subcommand
// whose callback does the work; errors are thrown as fusebox::Error and main() maps them to
// exit code 2 (usage or input problem) with the message on stderr. Commands that run a model
// take their settings through workbench::SettingsFlags (the one table of settings: flags,
// --settings FILE.json, --set KEY=VALUE) and run them through workbench::Pipeline.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/workbench/settings.h"
#include "core/base/registry.h"

namespace fusebox::cli {

// Thrown by a command that ran but whose verdict is "no" (fusebox check): main() exits with `code`.
struct CommandFailed {
  int code = 1;
};

// Output directories (output_dir.cpp). `ours` says which file names the command writes there:
// an existing directory holding anything else is refused, not replaced.
using FileNameFilter = std::function<bool(const std::string& name)>;
// Before a long run: throws fusebox::Error naming `option` and `dir` when `dir` exists and is not
// a directory, or holds files that are not ours.
void check_output_dir(const std::string& dir, const std::string& option,
                      const FileNameFilter& ours);
// write(tmp) fills a new folder that then replaces `dir` whole; on failure `dir` is untouched.
void write_output_dir(const std::string& dir, const std::string& option, const FileNameFilter& ours,
                      const std::function<void(const std::string& tmp)>& write);

// A subcommand, as data: main() creates "fusebox <name>" with `help` and hands it to `setup`,
// which adds its options and the callback that does the work. One file per command defines
// one; commands() lists them (adding a command: its file and its row there).
struct Command {
  std::string name;
  std::string help;
  std::function<void(CLI::App& cmd)> setup;
};

// The usual Command: the options bind to one Args, and `run` gets it once CLI11 parsed them.
template <typename Args>
Command make_command(std::string name, std::string help, void (*options)(CLI::App&, Args&),
                     void (*run)(const Args&)) {
  return {std::move(name), std::move(help), [options, run](CLI::App& cmd) {
            auto args = std::make_shared<Args>();
            options(cmd, *args);
            cmd.callback([args, run] { run(*args); });
          }};
}

// Every subcommand, in the order `fusebox --help` lists them.
const Registry<Command>& commands();

}  // namespace fusebox::cli
