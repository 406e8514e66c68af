#pragma once
// The one home for how a run's pieces are written out, as JSON and as text: the CLI's --json,
// the UI's export and the scenario runner all write these. (Settings: settings.h; recordings and
// analyses: profiler/recorder.h and profiler/analysis.h; comparisons: compare.h.)
#include <string>

#include <nlohmann/json.hpp>

#include "app/workbench/run_result.h"

namespace fusebox::workbench {

// [{pass, enabled, changed, nodes_before, nodes_after, millis,
//   rewrites: [{pattern, removed, added, changed, text}], near_misses: [{pattern, node, text}]}]
nlohmann::json to_json(const passes::PassLog& log);
// {planner, tried, arena_bytes, lower_bound_bytes, ratio, live_bytes,
//  buffers: [{name, offset, bytes, first_step, last_step, scratch, tensors, producers, consumers}]}
nlohmann::json to_json(const planner::ExecutionPlan& plan, const planner::PlanIndex* index = nullptr);
// {median, p10, p90, min, mean, iters} in us, and noisy: Latency::noise_warning() when it says so.
nlohmann::json to_json(const Latency& latency);

// The run report (`fusebox run --json`): model, settings, nodes before and after, op histogram,
// latency, arena against its bound, pass log, outputs, stage times; with `detail`, also the plan's
// buffers, the recording's analysis and nothing else bulky.
nlohmann::json to_json(const RunResult& result, bool detail = false);
// The same for people (`fusebox run`).
std::string report_text(const RunResult& result);

}  // namespace fusebox::workbench
