#pragma once
// Host and GPU clocks that disagree. A trace stamps host calls on the host's clock and GPU work
// on the GPU's, converted by the tracer (CUPTI, roctracer); where the conversion is off, a
// kernel appears to start before the call that launched it, or an idle GPU appears to take
// milliseconds to start a kernel. Figures comparing the two sides (launch and queue delays,
// idle causes, the host activity during a gap) are then wrong, so the offset is detected,
// reported, and the host side shifted by it for those figures. The GPU-only figures (windows,
// busy, idle, kernel time) do not compare the two clocks and are never changed.
//
// Definition (the causality the CUDA and HIP launch APIs guarantee):
//  - A kernel cannot start before its launch call starts. Every kernel with a correlated launch
//    call whose start is before the call's start is a skew witness; with any, the offset is the
//    most negative (kernel start - call start), and shifting the host's times by it makes every
//    launch delay >= 0.
//  - A kernel waits in its queue only while work ahead of it runs: between its call's return
//    and its start, its device is busy, but for the launch latency (NVIDIA documents a few
//    microseconds). Before a device's first GPU work in the trace it counts as idle (the
//    profiler records whatever ran while it collected). When some kernel waited while its
//    device sat idle for more than `kMaxLaunchLatencyNs` (1 ms, two to three orders of
//    magnitude above a launch), and every kernel that starts a busy period of its device
//    (nothing of the device runs when it starts) began more than that after its call returned,
//    the GPU clock runs ahead of the host's: the offset is the least (kernel start - call end)
//    over those busy-period starts, the most the host can be shifted without a kernel starting
//    before its call; shifting by it makes that kernel's queue delay 0. A deep queue at the
//    trace's start is not mistaken for an offset: its device is busy while the kernels wait.
//    (A kernel held by a dependency the trace does not show, e.g. an event from another
//    process, is the case the two conditions together leave out only when it is alone.)
//  - A kernel starting after its call started but before the call returned is not skew (the
//    call returns after the GPU has taken the work); its queue delay is negative and reported
//    as such.
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/device_activity.h"

namespace fusebox::profiler {

constexpr int64_t kMaxLaunchLatencyNs = 1000000;

struct ClockSkew {
  int64_t host_shift_ns = 0;       // add to host times to line them up with the GPU's
  int64_t before_call = 0;         // kernels starting before their launch call started
  int64_t worst_before_ns = 0;     // the most negative kernel start - call start (<= 0)
  int64_t idle_starts = 0;         // kernels starting a busy period, with a launch call
  int64_t least_idle_start_ns = 0; // their least (kernel start - call end)
  int64_t most_idle_wait_ns = 0;   // the most a kernel waited while its device sat idle
  bool detected() const { return host_shift_ns != 0; }
  // One sentence for the warnings; "" when none was detected.
  std::string warning() const;
};

// Over the recording's device activity (launch calls are Runtime records matched by
// correlation id).
ClockSkew detect_clock_skew(const std::vector<exec::DeviceActivity>& device);

// t + shift, saturating at the int64 range.
int64_t shifted(int64_t t, int64_t shift);

}  // namespace fusebox::profiler
