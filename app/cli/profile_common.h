#pragma once
// What `fusebox profile` and `fusebox compare` share: build a session with the recorder (and
// NVTX ranges) attached, run it, and hand back the recording.
#include <string>

#include "app/cli/commands.h"
#include "profiler/recorder.h"

namespace fusebox::cli {

struct RecordResult {
  profiler::Recording recording;
  double plain_run_ns = 0;     // fastest run without any observer
  double recorded_run_ns = 0;  // fastest run with the recorder (and NVTX ranges) attached
  size_t ops_per_run = 0;
  // Extra cost of the hooks per op: (recorded - plain) / ops per run.
  double overhead_per_op_ns() const {
    return ops_per_run ? (recorded_run_ns - plain_run_ns) / static_cast<double>(ops_per_run) : 0;
  }
};

// Warm-up runs without hooks, `iters` timed runs without hooks (for the overhead figure), then
// `iters` recorded runs. Throws fusebox::Error for bad input.
RecordResult record_model(const SessionArgs& args, int iters, int warmup);

}  // namespace fusebox::cli
