#pragma once
// Pipeline: the stages of a run with each result cached on exactly the settings that feed it.
//
//   load      model, dims, seed, inputs (and the files' modification times)
//   optimize  load + passes and patterns off
//   plan      optimize + planner
//   compile   optimize + backend + isa + precision + gemm (kernels prepared, weights uploaded, packed)
//   bind      compile + plan + executor    (the executor and its arena)
//   measure   always: threads, warmup, iters, profile_runs
//
// So a planner flip reuses the optimized graph and the prepared kernels, an executor flip the
// plan and the kernels, and a thread flip only measures again. Backends live as long as the
// pipeline. A Pipeline is used by one thread at a time (the Runner's worker); what it returns is
// immutable and may be read from any thread.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "app/workbench/run_result.h"
#include "app/workbench/settings.h"
#include "core/backend/backend.h"
#include "profiler/roofline.h"

namespace fusebox::workbench {

// Where a run is: the stage, and within measure the call i of n. Written by the pipeline, read
// from any thread.
struct Progress {
  std::atomic<int> stage{0};  // a Stage
  std::atomic<int> done{0};
  std::atomic<int> total{0};
};

// Thrown by Pipeline::run when its cancel flag is raised.
struct Cancelled {};

class Pipeline {
 public:
  // The roofline the analysis classifies against, per backend name and instruction-set level
  // (as the backend resolved it: "avx2"; "" for a backend with none). The default reads the
  // machine cache (profiler::machine_roofline), measuring once when there is none.
  using RooflineSource = std::function<profiler::Roofline(const std::string& backend, const std::string& isa)>;
  explicit Pipeline(RooflineSource roofline = {});
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Runs `settings` up to and including stage `last`, reusing every stage whose inputs did not
  // change since a cached run (a result that stops early has no latency, recording or outputs,
  // and after Optimize no plan). `cancel` is polled between stages and between measured calls
  // (throws Cancelled); `progress` is updated as it goes. Throws fusebox::Error naming what is
  // wrong.
  std::shared_ptr<const RunResult> run(const Settings& settings, const std::atomic<bool>* cancel = nullptr,
                                       Progress* progress = nullptr, Stage last = Stage::Measure);

  // How many times each stage has really run (not reused), indexed by Stage.
  std::array<int64_t, kStageCount> executions() const;

 private:
  // Backends first: the cached programs and executors hold memory they allocated, so the caches
  // must go before them.
  std::map<std::string, std::unique_ptr<exec::Backend>> backends_;
  struct Caches;
  std::unique_ptr<Caches> caches_;
  RooflineSource roofline_;
  std::map<std::pair<std::string, std::string>, profiler::Roofline> rooflines_;  // (backend, isa)
  std::array<int64_t, kStageCount> executions_{};
  uint64_t sequence_ = 0;

  // run() in its steps: the cached stages up to Bind (false when `last` stops the run before
  // Measure), the measured calls, and the recorded ones.
  struct Run;
  bool prepare(Run& run);
  void measure(Run& run);
  void record(Run& run, const void* const* inputs, void* const* outputs);

  exec::Backend& backend(const std::string& name);
  const profiler::Roofline& roofline(const std::string& backend, const std::string& isa);
};

}  // namespace fusebox::workbench
