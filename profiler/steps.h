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
#include <vector>

#include "profiler/recording.h"

namespace fusebox::profiler {

struct StepWork {
  std::vector<const exec::DeviceActivity*> kernels;  // in launch order
  std::vector<const exec::DeviceActivity*> work;     // kernels, copies and memsets
  int64_t first_ns = 0, last_ns = 0;                 // first start, last end of the work
};

// The recording's GPU work sorted once by launch time (its launch call's start, by correlation
// id, else its own start), so each step's work is a binary search: O(log n + its items), not a
// scan of the whole recording per step.
class StepIndex {
 public:
  explicit StepIndex(const Recording& r);
  StepWork in(int64_t start, int64_t end) const;  // launched in [start, end)
  StepWork all() const;                           // every GPU item

 private:
  StepWork collect(size_t from, size_t to) const;
  std::vector<std::pair<int64_t, const exec::DeviceActivity*>> by_launch_;
};

}  // namespace fusebox::profiler
