// fusebox compare: two recordings side by side (e.g. passes off vs on): time per op type and in
// total, node count, arena bytes; new, vanished and changed ops.
//   fusebox compare A/profile.json B/profile.json
//   fusebox compare transformer --a "passes=none" --b "passes=all"
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/profile_common.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "profiler/analysis.h"

namespace fusebox::cli {

namespace {

struct CompareArgs {
  std::vector<std::string> items;
  SessionArgs session;
  std::string a, b;
  int iters = 30;
  int warmup = 5;
  bool json = false;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "passes=none threads=2" (separated by spaces or ';') applied over the shared options.
SessionArgs configured(const SessionArgs& base, const std::string& config, const char* option) {
  SessionArgs s = base;
  std::string text = config;
  for (char& c : text)
    if (c == ';') c = ' ';
  for (const std::string& item : split(text, ' ')) {
    std::string kv = trim(item);
    if (kv.empty()) continue;
    auto eq = kv.find('=');
    if (eq == std::string::npos) throw Error(std::string(option) + ": '" + kv + "' is not KEY=VALUE");
    std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "passes") s.passes = v;
    else if (k == "executor") s.executor = v;
    else if (k == "planner") s.planner = v;
    else if (k == "backend") s.backend = v;
    else if (k == "threads") s.threads = static_cast<int>(parse_int(v, std::string(option) + " threads"));
    else throw Error(std::string(option) + ": unknown key '" + k + "' (valid: passes, executor, planner, threads, backend)");
  }
  return s;
}

void compare_command(const CompareArgs& a) {
  profiler::Recording ra, rb;
  if (a.items.size() == 2) {
    if (!a.a.empty() || !a.b.empty()) throw Error("compare: --a/--b go with one MODEL, not two recordings");
    ra = profiler::Recording::load(a.items[0]);
    rb = profiler::Recording::load(a.items[1]);
  } else if (a.items.size() == 1) {
    if (ends_with(a.items[0], ".json")) throw Error("compare: give two recordings (A.json B.json), or a MODEL with --a and --b");
    if (a.a.empty() && a.b.empty()) throw Error("compare: with one MODEL, give --a and/or --b configurations, e.g. --a \"passes=none\" --b \"passes=all\"");
    SessionArgs base = a.session;
    base.model = a.items[0];
    ra = record_model(configured(base, a.a, "--a"), a.iters, a.warmup).recording;
    rb = record_model(configured(base, a.b, "--b"), a.iters, a.warmup).recording;
  } else {
    throw Error("compare: expected A.json B.json, or MODEL --a CONFIG --b CONFIG");
  }
  profiler::Comparison c = profiler::compare(ra, rb);
  if (a.json)
    std::cout << c.to_json().dump(2) << "\n";
  else
    std::cout << c.to_text();
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Diff two recordings: time per op type and in total, node count, arena bytes, and the ops\n"
      "that appeared, vanished or changed.\n"
      "Examples: fusebox compare off/profile.json on/profile.json\n"
      "          fusebox compare transformer --a \"passes=none\" --b \"passes=all\"");
  cmd->add_option("items", args->items, "A.json B.json (from `fusebox profile --out`), or one MODEL")->required()->expected(1, 2);
  cmd->add_option("--a", args->a, "configuration A over the run options: \"passes=none threads=1\"");
  cmd->add_option("--b", args->b, "configuration B");
  cmd->add_option("--executor", args->session.executor, "eager | interpreted | compiled")->capture_default_str();
  cmd->add_option("--backend", args->session.backend, "device to run on")->capture_default_str();
  cmd->add_option("--threads", args->session.threads, "intra-op threads")->capture_default_str();
  cmd->add_option("--passes", args->session.passes, "passes for both sides unless --a/--b set them")->capture_default_str();
  cmd->add_option("--planner", args->session.planner, "memory planner strategy")->capture_default_str();
  cmd->add_option("--seed", args->session.seed, "seed for weights and inputs")->capture_default_str();
  cmd->add_option("--iters", args->iters, "recorded runs per side (MODEL form)")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "unrecorded runs first")->capture_default_str();
  cmd->add_flag("--json", args->json, "print the comparison as JSON");
  cmd->callback([args] { compare_command(*args); });
}

}  // namespace fusebox::cli
