#pragma once
// Scenarios: a saved investigation, a demo or an interview. A JSON file (scenarios/
// scenario.schema.json) names a model, its settings and optional steps; each step changes some
// settings (relative to the step before), says where to look, and checks its finding:
//
//   {"name": "fusion", "model": "transformer", "settings": {"iters": 200},
//    "steps": [{"title": "No passes", "text": "...", "set": {"passes": "none"},
//               "look_at": {"panel": "graph"},
//               "checks": [{"check": "node_count", "at_least": 40}]}, ...]}
//
// Structural checks hold exactly (node counts, ops present or gone, arena against its bound, a
// pass changed the graph, outputs equal to the previous step's); measured ones (faster than a
// step by a ratio, an op's roofline class) are printed with their figures and fail a run only
// when asked to (`fusebox check --strict`). Errors name the file, the JSON Pointer and the
// closest valid name: "fusion.json: /steps/3/set/planner: unknown planner 'frist_fit' ...".
//
// A trace scenario names a recorded GPU trace instead of a model and runs nothing: its steps
// look at the trace (panel trace or ops, an idle gap, a kernel grouping) and check its GPU
// analysis with the trace check kinds (finding, trace_total, gap; structural):
//
//   {"name": "copies", "trace": "../tests/data/traces/nsys_a100_cloverleaf.sqlite",
//    "steps": [{"title": "Syncs", "look_at": {"panel": "trace", "gap": 1},
//               "checks": [{"check": "finding", "kind": "api_sync", "rank_at_most": 1}]}]}
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/workbench/pipeline.h"
#include "app/workbench/run_result.h"
#include "app/workbench/settings.h"

namespace fusebox::workbench {

struct Check {
  std::string kind;     // "node_count", "op_present", ... (check_kinds())
  std::string pointer;  // where it sits in the file: "/steps/2/checks/0"
  // Parameters; which ones a kind reads is in its entry of check_kinds_registry() (checks.h).
  std::optional<int64_t> equals, at_most, at_least;  // node_count
  std::string op, node, pass, bound;
  std::string level;        // op_bound with bound memory: the level it is under (L1, L2, L3, DRAM)
  bool changed = true;      // pass_changed
  double percent = 0;       // arena_within_bound
  double tolerance = 1e-4;  // outputs_match_previous (relative to the largest |value|)
  double ratio = 1;         // faster_than, arena_at_most
  int step = -1;            // faster_than, arena_at_most: an earlier step, 0-based
  // Trace checks (over a trace scenario's OpenedTrace::analysis):
  std::string finding;                  // finding: a GpuFinding kind ("gpu_idle", ...)
  std::optional<int64_t> rank_at_most;  // finding: its rank among the findings, 1 = the top
  std::optional<double> time_lost_ms;   // finding: the time it costs, within tolerance
  std::string key;                      // trace_total: the total (trace_total_keys())
  std::optional<double> value;          // trace_total: "equals", within tolerance
  int gap = -1;                         // gap: the n-th longest idle gap, 0 = the longest
  std::string cause, host;              // gap: its idle cause; a host name active during it
  // Kernel checks (over a trace scenario's Nsight Compute export, "kernels"):
  std::string kernel;  // kernel_figure, kernel_finding, kernel_limiter: a part of the launch's name
  std::string item;    // kernel_finding: a fine-grained item (profiler::kernel_finding_items())
  std::string unit;    // kernel_limiter: SM, L1/TEX, L2 or DRAM
  // Phase and counter checks (over the trace's serving phases and counter tracks):
  std::string phase;        // phase_total: prefill, decode, mixed or idle (profiler/phases.h)
  std::string top_kernel;   // phase_total: a part of the phase's top kernel's (or op's) name
  std::string counter;      // counter: a counter track's name ("kv cache bytes", ...)
  bool trace() const;       // evaluated over a trace scenario's analysis, not a model run
  bool measured() const;    // faster_than and op_bound depend on timing
  std::string describe() const;  // "node_count at_most 12"
};
std::vector<std::string> check_kinds();
// The kinds of GpuFinding a `finding` check can name, and the totals `trace_total` can check.
const std::vector<std::string>& finding_kinds();
const std::vector<std::string>& trace_total_keys();
// The figures of one profiled launch `kernel_figure` can check (checks.cpp).
const std::vector<std::string>& kernel_figure_keys();
// The totals of one serving phase `phase_total` can check, and the figures of a counter track.
const std::vector<std::string>& phase_total_keys();
const std::vector<std::string>& counter_keys();

struct LookAt {
  std::string panel;  // "" or a panel name (graph, arena, trace, ops, compare, passes)
  std::string node;   // "" or a node of this step's graph
  std::string op;     // "" or an op type: its first node is selected
  // A trace scenario's: the n-th longest GPU-idle gap selected in the trace panel (trace.gap=N,
  // 0 = the longest; -1 none), and the op table's kernel grouping ("name" or "launcher").
  int gap = -1;
  std::string group;
  // With "kernels": the trace's kernel whose name holds this, selected in the op table (its
  // fine-grained figures shown).
  std::string kernel;
  // A trace scenario's: the serving phase whose ops the op table shows (ops.phase=NAME).
  std::string phase;
};

struct ScenarioStep {
  std::string title, text;
  nlohmann::json set = nlohmann::json::object();  // the settings this step changes, as given
  Settings settings;                               // resolved: the previous step's plus `set`
  LookAt look_at;
  std::vector<Check> checks;
};

struct Scenario {
  std::string path;  // the file it came from ("" when built in memory)
  std::string name, description;
  Settings settings;  // before the first step; model and inputs resolved against the file's folder
  // A trace scenario names a recorded GPU trace ("trace": FILE, or a FOLDER of one job's rank
  // traces, relative to the file) instead of a model: its steps run nothing, they look at the
  // trace and check its GPU analysis (with ranks: the straggler's, and the ranks side by side).
  std::string trace;  // resolved against the file's folder; "" for a model scenario
  bool is_trace() const { return !trace.empty(); }
  // A trace scenario may name an Nsight Compute export of its kernels ("kernels": FILE or FOLDER,
  // relative to the file): the kernel level beside the trace, read by the kernel_* checks.
  std::string kernels;
  std::vector<ScenarioStep> steps;  // at least one: a file without steps gets one, "the settings"
};

// Reads and validates a scenario file. Throws fusebox::Error "<path>: <pointer>: <what>".
Scenario load_scenario(const std::string& path);
// The same from JSON already read; `path` names it in errors and anchors relative paths.
Scenario parse_scenario(const nlohmann::json& json, const std::string& path);
// The current settings as a one-step scenario file's JSON (the UI's File > Save). A name, model
// or input path that is not valid UTF-8 throws fusebox::Error: JSON cannot hold it.
nlohmann::json scenario_json(const std::string& name, const Settings& settings);

struct OpenedTrace;
struct KernelLevel;

struct CheckResult {
  CheckResult() = default;
  CheckResult(const Check* c, bool ok, std::string text) : check(c), passed(ok), figures(std::move(text)) {}
  const Check* check = nullptr;
  bool passed = false;
  std::string figures;  // "12 nodes (want at most 12)", "1.84x faster than step 1 (want >= 1.5x)"
  // A measured check that did not hold on a run measured while the machine was busy
  // (noise.h: machine_busy): why ("other processes used 1.7 of 2 cores while it measured").
  // Such a check is neither passed nor failed: "not measurable", and --strict does not fail on
  // it. A measured check that holds on a busy machine still passes (load only slows a run).
  std::string not_measurable;
};

// The checks of step `step` over its result and the results of the steps before it (null where
// a step did not run). Throws fusebox::Error for a check naming a node or op the graph lacks.
// A trace scenario's checks read `trace` instead (its results are empty), and its kernel checks
// `kernels`, the kernel level opened from the scenario's "kernels".
std::vector<CheckResult> evaluate_checks(const Scenario& scenario, size_t step,
                                         const std::vector<std::shared_ptr<const RunResult>>& results,
                                         const OpenedTrace* trace = nullptr, const KernelLevel* kernels = nullptr);
// One of them: check `index` of step `step`.
CheckResult evaluate_check(const Scenario& scenario, size_t step, size_t index,
                           const std::vector<std::shared_ptr<const RunResult>>& results,
                           const OpenedTrace* trace = nullptr, const KernelLevel* kernels = nullptr);
// Checks a step's look_at against its result: a node the graph lacks throws, naming the path.
void validate_look_at(const Scenario& scenario, size_t step, const RunResult& result);
// The same for a trace scenario's step: a gap beyond the trace's listed gaps throws.
void validate_look_at(const Scenario& scenario, size_t step, const OpenedTrace& trace);

struct StepOutcome {
  std::shared_ptr<const RunResult> result;  // null for a trace scenario's step
  std::vector<CheckResult> checks;
};
struct ScenarioRun {
  const Scenario* scenario = nullptr;
  std::shared_ptr<const OpenedTrace> trace;  // a trace scenario's, opened once
  std::shared_ptr<const KernelLevel> kernels;  // its "kernels", opened once, or null
  std::vector<StepOutcome> steps;
  bool structural_ok() const;  // every structural check passed
  // Every measured check passed or was not measurable (CheckResult::not_measurable).
  bool measured_ok() const;
  size_t not_measurable() const;  // measured checks a busy machine left undecided
  std::string to_text() const;
  nlohmann::json to_json() const;
};

// Runs every step on `pipeline` (stages shared between steps, as the UI shares them) through a
// workbench::Walkthrough (walkthrough.h), the player fusebox-ui steps too. Throws fusebox::Error
// for a step that cannot run or a check naming what the graph lacks.
ScenarioRun run_scenario(const Scenario& scenario, Pipeline& pipeline);

}  // namespace fusebox::workbench
