// fusebox compare: two recordings side by side (e.g. passes off vs on): time per op type and in
// total, node count, arena bytes; new, vanished and changed ops. Two GPU traces (kineto, nsys):
// kernels and host ops by name and GPU time by category (workbench/trace_compare.h).
//   fusebox compare A/profile.json B/profile.json
//   fusebox compare base.json.gz test.json.gz
//   fusebox compare transformer --a "passes=none" --b "passes=all"
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/workbench/compare.h"
#include "app/workbench/pipeline.h"
#include "app/workbench/trace_compare.h"
#include "core/base/error.h"
#include "profiler/analysis.h"

namespace fusebox::cli {

namespace {

struct CompareArgs {
  std::vector<std::string> items;
  std::unique_ptr<workbench::SettingsFlags> settings;
  std::string a, b;
  bool json = false;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

template <typename C>
void print(const C& c, bool json) {
  if (json)
    std::cout << c.to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else
    std::cout << c.to_text();
}

void compare(const CompareArgs& a) {
  if (a.items.size() == 2) {
    if (!a.a.empty() || !a.b.empty())
      throw Error("compare: --a/--b go with one MODEL, not two recordings");
    const bool ta = workbench::is_trace_file(a.items[0]), tb = workbench::is_trace_file(a.items[1]);
    if (ta != tb)
      throw Error("compare: " + a.items[ta ? 0 : 1] + " is a GPU trace and " + a.items[ta ? 1 : 0] +
                  " is not: compare two traces, or two recordings (profile.json)");
    if (ta) {
      const auto x = workbench::open_trace(a.items[0]), y = workbench::open_trace(a.items[1]);
      print(workbench::compare_traces(*x, *y), a.json);
      return;
    }
    print(profiler::compare(profiler::Recording::load(a.items[0]),
                            profiler::Recording::load(a.items[1])),
          a.json);
    return;
  }
  if (a.items.size() != 1)
    throw Error("compare: expected A.json B.json, or MODEL --a CONFIG --b CONFIG");
  if (ends_with(a.items[0], ".json"))
    throw Error("compare: give two recordings (A.json B.json), or a MODEL with --a and --b");
  if (a.a.empty() && a.b.empty())
    throw Error(
        "compare: with one MODEL, give --a and/or --b configurations, e.g. --a \"passes=none\" --b "
        "\"passes=all\"");
  workbench::Settings base = a.settings->resolve();
  base.model = a.items[0];
  workbench::Settings sa = base, sb = base;
  workbench::apply_all(sa, a.a, "--a");
  workbench::apply_all(sb, a.b, "--b");
  workbench::Pipeline pipeline;  // one pipeline: B reuses what A built where the settings agree
  auto ra = pipeline.run(sa);
  auto rb = pipeline.run(sb);
  print(workbench::compare(*ra, *rb), a.json);
}

void compare_options(CLI::App& cmd, CompareArgs& a) {
  cmd.add_option("items", a.items,
                 "A.json B.json (from `fusebox profile --out`), two GPU traces, or one MODEL")
      ->required()
      ->expected(1, 2);
  cmd.add_option("--a", a.a, "settings A over the others, as KEY=VALUE: \"passes=none threads=1\"");
  cmd.add_option("--b", a.b, "settings B, likewise: \"passes.fuse_patterns=off\"");
  workbench::Settings defaults;
  defaults.warmup = 5;
  defaults.iters = 30;
  defaults.profile_runs = 30;
  a.settings =
      std::make_unique<workbench::SettingsFlags>(&cmd, std::set<std::string>{"model"}, defaults);
  cmd.add_flag("--json", a.json, "print the comparison as JSON");
}

}  // namespace

Command compare_command() {
  return make_command<CompareArgs>(
      "compare",
      "Diff two recordings: time per op type and in total, node count, arena bytes, and the ops\n"
      "that appeared, vanished or changed. Two GPU traces (kineto .json/.json.gz, nsys .sqlite):\n"
      "kernels and host ops that appeared, vanished, got faster or slower, GPU time by category\n"
      "(compute, communication, copies, idle), and the steps' noise verdict.\n"
      "Examples: fusebox compare off/profile.json on/profile.json\n"
      "          fusebox compare base.json.gz test.json.gz\n"
      "          fusebox compare transformer --a \"passes=none\" --b \"passes=all\"",
      compare_options, compare);
}

}  // namespace fusebox::cli
