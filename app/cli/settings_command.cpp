// fusebox settings: every setting a run takes (key, values, default, what it does), or a
// resolved settings file to start from: `fusebox settings --json > s.json`, edit, then
// `fusebox run --settings s.json`.
#include <iostream>

#include "app/cli/commands.h"

namespace fusebox::cli {

namespace {

struct SettingsArgs {
  std::unique_ptr<workbench::SettingsFlags> settings;
  bool json = false;
};

void run_settings(const SettingsArgs& a) {
  if (a.json)
    std::cout << workbench::to_json(a.settings->resolve())
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  else
    std::cout << workbench::settings_help();
}

void settings_options(CLI::App& cmd, SettingsArgs& a) {
  // No MODEL positional here: --set model=... or the file gives one.
  a.settings = std::make_unique<workbench::SettingsFlags>(&cmd, std::set<std::string>{"model"});
  cmd.add_flag("--json", a.json, "print the resolved settings as JSON");
}

}  // namespace

Command settings_command() {
  return make_command<SettingsArgs>(
      "settings",
      "List every setting (the keys of --settings FILE.json, --set KEY=VALUE and compare's "
      "--a/--b),\n"
      "or with --json print the settings the other options resolve to, as a file to start from.\n"
      "Example: fusebox settings --json --planner first_fit --set passes.fuse_patterns=off > "
      "s.json",
      settings_options, run_settings);
}

}  // namespace fusebox::cli
