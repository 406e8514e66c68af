#pragma once
// Worker activity records: what each intra-op thread of a host backend (the CPU's OpenMP teams)
// was busy with, as plain data, like device_activity.h is for a GPU. The CPU backend fills them
// from its parallel regions without knowing the profiler; the profiler ties each one to the op
// whose kernel forked the region (by time, on the thread that forked it) and draws one track per
// worker thread. Times are nanoseconds on CLOCK_MONOTONIC_RAW (the recorder's clock).
#include <cstdint>

namespace fusebox::exec {

struct WorkerSpan {
  int64_t start_ns = 0;    // the thread began its chunk
  int64_t end_ns = 0;      // and finished it (before the region's closing barrier)
  int64_t items = 0;       // loop items in its chunk
  int32_t tid = 0;         // the kernel thread id that did the work
  int32_t caller_tid = 0;  // the thread that forked the region (it runs the op; team member 0)
  int32_t worker = 0;      // its index in the team, 0 = the calling thread
  int32_t team = 1;        // threads the region really ran with (1: the loop ran inline)
};

}  // namespace fusebox::exec
