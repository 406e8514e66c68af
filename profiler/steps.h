#pragma once
// A step of a recording: a host range (a profiler step, an engine's forward pass) and the GPU
// work it launched. Shared by the rank analysis (ranks.h) and the serving phases (phases.h).
// Times are nanoseconds.
//
// Definition: a step's GPU work is the kernels, copies and memsets whose launch call (the
// runtime record with their correlation id) started inside the step's host range [start, end),
// or, with no launch call in the trace, that started inside it. Launch time decides, not run
// time: a step's kernels often run after its host range ends (the host queues ahead).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "profiler/recorder.h"

namespace fusebox::profiler {

// Launch calls by correlation id (the first runtime record of each id).
class LaunchIndex {
 public:
  explicit LaunchIndex(const Recording& r);
  // The start of the call that launched x, or x's own start.
  int64_t launched_at(const exec::DeviceActivity& x) const;

 private:
  std::unordered_map<uint32_t, int64_t> start_of_;
};

struct StepWork {
  std::vector<const exec::DeviceActivity*> kernels;  // in record order
  std::vector<const exec::DeviceActivity*> work;     // kernels, copies and memsets
  int64_t first_ns = 0, last_ns = 0;                 // first start, last end of the work
};

// The GPU work launched in [start, end); whole = every GPU item of the recording.
StepWork step_work(const Recording& r, const LaunchIndex& calls, int64_t start, int64_t end,
                   bool whole = false);

}  // namespace fusebox::profiler
