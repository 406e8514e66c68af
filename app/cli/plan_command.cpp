// fusebox plan MODEL: the memory plan after the chosen passes, as a table and an ASCII chart.
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/exec/session.h"
#include "core/passes/pass_manager.h"
#include "core/planner/plan.h"
#include "core/planner/strategies.h"

namespace fusebox::cli {

namespace {

struct PlanArgs {
  SessionArgs session;
  bool json = false;
  int width = 64;
};

nlohmann::json plan_json(const planner::ExecutionPlan& plan) {
  nlohmann::json j;
  j["planner"] = plan.strategy;
  j["arena_bytes"] = plan.arena_bytes;
  j["lower_bound_bytes"] = plan.lower_bound_bytes;
  j["ratio"] = plan.ratio();
  j["live_bytes"] = plan.live_bytes;
  j["buffers"] = nlohmann::json::array();
  for (const auto& p : plan.placements)
    j["buffers"].push_back({{"name", p.buffer.name},
                            {"offset", p.offset},
                            {"bytes", p.buffer.bytes},
                            {"first_step", p.buffer.first},
                            {"last_step", p.buffer.last},
                            {"scratch", p.buffer.scratch}});
  return j;
}

void plan(const PlanArgs& a) {
  if (a.width < 8 || a.width > 400) throw Error("--width must be in 8..400, got " + std::to_string(a.width));
  if (!planner::find_strategy(a.session.planner))
    planner::make_plan(ir::Graph{}, a.session.planner);  // throws the "unknown planner" message
  ir::Graph graph = workbench::load_model(a.session.model, a.session.seed);
  std::vector<std::string> enabled = passes::parse_pass_list(a.session.passes);
  auto backend = exec::BackendRegistry::instance().create(a.session.backend);
  passes::PassContext ctx;
  ctx.evaluator = backend.get();
  passes::run_pipeline(graph, enabled, ctx);
  planner::ExecutionPlan p = planner::make_plan(graph, a.session.planner);
  if (a.json) {
    nlohmann::json j = plan_json(p);
    j["model"] = a.session.model;
    j["nodes"] = graph.nodes.size();
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "model " << a.session.model << ", " << graph.nodes.size() << " nodes, passes " << a.session.passes
              << "\n"
              << p.to_text(graph, a.width);
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Plan a model's memory: each buffer's offset, size and lifetime, the arena against its lower\n"
      "bound, and a chart of the arena over the steps.\n"
      "Example: fusebox plan transformer --planner first_fit --passes none");
  add_session_options(cmd, args->session, /*with_executor=*/false);
  cmd->add_flag("--json", args->json, "print the plan as JSON");
  cmd->add_option("--width", args->width, "chart width in columns")->capture_default_str();
  cmd->callback([args] { plan(*args); });
}

}  // namespace fusebox::cli
