#pragma once
// RunResult: everything one run of the pipeline produced, immutable once published. The UI
// panels, the scenario runner and the CLI read it; nothing in it is JSON (result_json.h writes
// it out). Stage results are shared with the pipeline's caches, so a flip that reuses a stage
// shares that stage's objects with the previous result.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/workbench/settings.h"
#include "core/exec/stages.h"
#include "core/ir/graph.h"
#include "core/planner/plan.h"
#include "core/planner/plan_index.h"
#include "profiler/analysis.h"
#include "profiler/recording.h"

namespace fusebox::workbench {

// The pipeline's stages, in order.
enum class Stage : uint8_t { Load, Optimize, Plan, Compile, Bind, Measure };
inline constexpr size_t kStageCount = 6;
const char* stage_name(Stage stage);  // "load", "optimize", "plan", "compile", "bind", "measure"

// A model as loaded, with the inputs its runs use (seeded random, or read from .npy files).
struct LoadedModel {
  ir::Graph graph;
};

// The run's latency: the timed loop, `iters` calls without profiling hooks. Its one figure is the
// median, its spread p10 .. p90 (percentiles interpolated between ranks, profiler/stats.h). The
// status line, the compare panel, the text report and the JSON all show it through text().
struct Latency {
  double median_us = 0, min_us = 0, p10_us = 0, p90_us = 0, mean_us = 0;
  std::vector<double> samples_us;
  double spread() const { return p10_us > 0 ? p90_us / p10_us : 0; }  // p90 / p10
  std::string text() const;  // "5.19 ms (p10 4.90 ms, p90 5.60 ms)"
  // "noisy: p90 is 1.6x p10; the machine was busy" when spread() > kNoisySpread, else "".
  std::string noise_warning() const;
};
// Past this p90/p10 the samples say more about the machine than about the model: a quiet machine
// keeps a run-to-run spread of a few percent.
inline constexpr double kNoisySpread = 1.3;
Latency summarize(std::vector<double> samples_us);

// What else the machine ran while a run measured (its timed and recorded calls): other
// processes' CPU time, from /proc/stat's non-idle time of all CPUs less this process's own
// (getrusage), over the measuring wall time, in cores. A Latency's spread misses a steady load
// (every call slowed alike); this does not.
struct MachineLoad {
  double other_cores = -1;  // -1: not known (no /proc/stat)
  unsigned cores = 0;       // online CPUs
  double wall_s = 0;
  // "other processes used 1.7 of 2 cores while it measured"; "" when not known.
  std::string text() const;
};

struct OutputSummary {
  std::string name;
  ir::Shape shape;
  double checksum = 0;  // sum of all elements, in double
};
OutputSummary summarize_output(const std::string& name, const ir::Tensor& t);

struct StageRun {
  Stage stage = Stage::Load;
  double millis = 0;    // 0 when cached
  bool cached = false;  // reused from an earlier run with the same inputs to this stage
};

struct RunResult {
  Settings settings;  // what it ran with
  std::shared_ptr<const LoadedModel> model;                 // the graph as loaded
  // In graph.inputs order; made only once the plan shows arena, weights and inputs fit the memory
  // budget (a 10 GB input is refused before it is made). Null when the run stopped before.
  std::shared_ptr<const std::vector<ir::Tensor>> inputs;
  std::shared_ptr<const exec::OptimizedGraph> optimized;   // graph after passes + the pass log
  std::shared_ptr<const planner::ExecutionPlan> plan;
  std::shared_ptr<const planner::PlanIndex> plan_index;    // buffer <-> tensors <-> nodes
  std::string backend_description;
  std::string isa;  // the CPU instruction-set level the kernels ran ("avx2"); "" on a backend with none
  // When settings.capture is on but does not apply here: why ("backend 'cpu' cannot capture a
  // run (it has no graph capture)"); "" when it is off or applies (the runs were replays).
  std::string capture_note;
  // When the runs were replays: what was captured ("a CUDA graph of 42 nodes, ..."), else "".
  std::string captured;
  Latency latency;                                          // `iters` runs without hooks
  MachineLoad load;                                         // what else ran meanwhile
  std::optional<profiler::Recording> recording;             // `profile_runs` recorded runs
  std::optional<profiler::Analysis> analysis;               // of the recording
  std::vector<ir::Tensor> outputs;                          // of the last run
  std::vector<OutputSummary> output_summaries;
  std::vector<StageRun> stages;                             // in order, one per stage
  uint64_t sequence = 0;                                    // the pipeline's run counter

  const ir::Graph& graph() const { return optimized->graph; }  // the graph that ran
  // Whether the run went through Stage::Measure (latency, recording and outputs are there). The
  // Runner publishes each run unmeasured first, as soon as its executor is bound.
  bool measured() const { return !stages.empty() && stages.back().stage == Stage::Measure; }
};

struct RefusedModel;  // refused_model.h

// A run that failed: the message (naming what and where) and the settings that caused it.
struct RunError {
  std::string message;
  Settings settings;
  // When the model is a .onnx file the importer refused for its ops: the file's outline, which
  // the graph panel draws with the unsupported nodes marked. Null for any other failure.
  std::shared_ptr<const RefusedModel> refused = nullptr;
};

}  // namespace fusebox::workbench
