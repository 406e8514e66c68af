// fusebox plan MODEL: the memory plan after the chosen passes, as a table and an ASCII chart.
#include <iostream>

#include "app/cli/commands.h"
#include "app/workbench/pipeline.h"
#include "app/workbench/report.h"
#include "core/base/error.h"

namespace fusebox::cli {

namespace {

struct PlanArgs {
  std::unique_ptr<workbench::SettingsFlags> settings;
  bool json = false;
  int width = 64;
};

void plan(const PlanArgs& a) {
  if (a.width < 8 || a.width > 400)
    throw Error("--width must be in 8..400, got " + std::to_string(a.width));
  workbench::Settings s = a.settings->resolve();
  workbench::Pipeline pipeline;
  auto r = pipeline.run(s, nullptr, nullptr, workbench::Stage::Plan);
  const ir::Graph& graph = r->graph();
  if (a.json) {
    nlohmann::json j = workbench::to_json(*r->plan, r->plan_index.get());
    j["model"] = s.model;
    j["nodes"] = graph.nodes.size();
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "model " << s.model << ", " << graph.nodes.size() << " nodes, passes "
              << s.passes_text() << "\n"
              << r->plan->to_text(graph, a.width);
  }
}

void plan_options(CLI::App& cmd, PlanArgs& a) {
  a.settings = std::make_unique<workbench::SettingsFlags>(
      &cmd, std::set<std::string>{"executor", "capture", "threads", "warmup", "iters",
                                 "profile_runs", "inputs"});
  cmd.add_flag("--json", a.json, "print the plan as JSON");
  cmd.add_option("--width", a.width, "chart width in columns")->capture_default_str();
}

}  // namespace

Command plan_command() {
  return make_command<PlanArgs>(
      "plan",
      "Plan a model's memory: each buffer's offset, size and lifetime, the arena against its "
      "lower\n"
      "bound, and a chart of the arena over the steps.\n"
      "Example: fusebox plan transformer --planner first_fit --passes none",
      plan_options, plan);
}

}  // namespace fusebox::cli
