#pragma once
// Runner: the pipeline on a worker thread, so a front end never blocks. request() hands it new
// settings and returns at once; a request arriving while a run is in flight cancels that run at
// its next stage or measured call, and the newest settings run next (requests in between are
// dropped: only the latest matters). Results are published as shared_ptr<const RunResult>,
// twice per run: once the executor is bound (graph, pass log and plan; not measured()), and again
// with the measured figures. A run that fails leaves the last good result published with the
// error beside it; a run cancelled while measuring leaves its unmeasured result.
//
//   Runner runner;
//   runner.request(settings);
//   ... each frame: Runner::Snapshot s = runner.snapshot(); draw s.result, s.error, s.progress
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "app/workbench/pipeline.h"
#include "app/workbench/run_result.h"
#include "app/workbench/settings.h"

namespace fusebox::workbench {

class Runner {
 public:
  explicit Runner(Pipeline::RooflineSource roofline = {});
  // How long the destructor waits for the run in flight to notice its cancel flag.
  static constexpr std::chrono::milliseconds kShutdownWait{400};

  // Cancels what is in flight and joins the worker; a run that does not stop within
  // kShutdownWait (a stage that cannot look at the flag: a model file whose open blocks, one
  // very long pass) is left to end on its own thread, which owns all it uses.
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Thread-safe. Returns the request's number (1, 2, ...).
  uint64_t request(const Settings& settings);
  // Cancels the run in flight and any pending request; the published result stays.
  void cancel();
  // Waits until no run is in flight or pending; false on timeout.
  bool wait_idle(std::chrono::milliseconds timeout = std::chrono::milliseconds::max());

  struct Snapshot {
    std::shared_ptr<const RunResult> result;  // last good result (null before the first); while
                                              // a run measures, its unmeasured result
    std::shared_ptr<const RunError> error;    // the last run's error, when it failed
    bool busy = false;                        // a run is in flight or pending
    Stage stage = Stage::Load;                // of the run in flight
    int done = 0, total = 0;                  // measured calls of the run in flight
    uint64_t requested = 0;                   // requests so far
    uint64_t finished = 0;                    // runs that ended (ok, failed or cancelled)
  };
  Snapshot snapshot() const;
  std::shared_ptr<const RunResult> result() const { return snapshot().result; }

  // Pins the current result as the baseline that compare() is asked against. Throws
  // fusebox::Error when there is no measured result to pin.
  void pin_baseline();
  void clear_baseline();
  std::shared_ptr<const RunResult> baseline() const;

  // How many times each stage really ran (for tests and the status line).
  std::array<int64_t, kStageCount> executions() const;

 private:
  // Everything the worker touches, owned jointly by the Runner and its worker thread: a worker
  // left running at shutdown (see ~Runner) still has it after the Runner is gone.
  struct State {
    explicit State(Pipeline::RooflineSource roofline) : pipeline(std::move(roofline)) {}
    Pipeline pipeline;
    mutable std::mutex mu;
    std::condition_variable wake;  // the worker waits for a request
    std::condition_variable idle;  // wait_idle and ~Runner wait for the worker
    std::optional<Settings> pending;
    bool running = false;
    bool stop = false;
    bool exited = false;  // the worker returned (after stop)
    uint64_t requested = 0, finished = 0;
    std::shared_ptr<const RunResult> result, baseline;
    std::shared_ptr<const RunError> error;
    std::array<int64_t, kStageCount> executions{};
    std::atomic<bool> cancel{false};
    Progress progress;
  };
  static void work(State& s);

  std::shared_ptr<State> s_;
  std::thread worker_;  // last: starts once the state exists
};

}  // namespace fusebox::workbench
