#include "profiler/clock_skew.h"

#include <algorithm>
#include <limits>
#include <map>

#include "core/base/checked.h"
#include "core/base/sorted.h"
#include "core/base/strings.h"
#include "profiler/correlation.h"
#include "profiler/intervals.h"

namespace fusebox::profiler {

using exec::ActivityKind;
using exec::DeviceActivity;

int64_t shifted(int64_t t, int64_t shift) { return saturating_add(t, shift); }

namespace {
// a - b, saturating.
int64_t diff(int64_t a, int64_t b) { return saturating_sub(a, b); }
}  // namespace

ClockSkew detect_clock_skew(const std::vector<DeviceActivity>& device) {
  ClockSkew s;
  const CorrelationIndex calls(device);
  // GPU work per device in start order, to know which kernels start a busy period.
  std::map<int32_t, std::vector<const DeviceActivity*>> work;
  for (const DeviceActivity& x : device)
    if (x.kind == ActivityKind::Kernel || x.kind == ActivityKind::Memcpy ||
        x.kind == ActivityKind::Memset)
      work[x.device].push_back(&x);
  // The trace's start: before its first GPU work a device was idle as far as the trace knows
  // (the profiler records whatever ran on the GPU while it collected).
  int64_t trace_start = std::numeric_limits<int64_t>::max();
  for (const DeviceActivity& x : device) trace_start = std::min(trace_start, x.start_ns);
  bool any_idle_start = false;
  for (auto& [d, items] : work) {
    CoverIndex busy;
    for (const DeviceActivity* x : items) busy.add(x->start_ns, x->end_ns);
    busy.build();
    const auto by_start = [](const DeviceActivity* a, const DeviceActivity* b) {
      return a->start_ns < b->start_ns;
    };
    stable_sort_unless_sorted(items.begin(), items.end(), by_start);
    int64_t busy_until = std::numeric_limits<int64_t>::min();
    for (const DeviceActivity* x : items) {
      const bool idle_start = x->start_ns >= busy_until;
      busy_until = std::max(busy_until, x->end_ns);
      if (x->kind != ActivityKind::Kernel || !x->correlation_id) continue;
      const DeviceActivity* call = calls.launch_of(*x);
      if (!call) continue;
      const int64_t before = diff(x->start_ns, call->start_ns);
      if (before < 0) {
        s.before_call += 1;
        s.worst_before_ns = std::min(s.worst_before_ns, before);
      }
      // The device idle between the call's return and the kernel's start: a kernel waits in
      // the queue only while work ahead of it runs.
      const int64_t from = std::max(call->end_ns, trace_start);
      if (x->start_ns > from)
        s.most_idle_wait_ns = std::max(s.most_idle_wait_ns,
                                       (x->start_ns - from) - busy.covered(from, x->start_ns));
      if (idle_start) {
        const int64_t q = diff(x->start_ns, call->end_ns);
        s.least_idle_start_ns = any_idle_start ? std::min(s.least_idle_start_ns, q) : q;
        any_idle_start = true;
        s.idle_starts += 1;
      }
    }
  }
  if (s.before_call > 0)
    s.host_shift_ns = s.worst_before_ns;
  else if (any_idle_start && s.least_idle_start_ns > kMaxLaunchLatencyNs &&
           s.most_idle_wait_ns > kMaxLaunchLatencyNs)
    s.host_shift_ns = s.least_idle_start_ns;
  return s;
}

std::string ClockSkew::warning() const {
  if (!detected()) return "";
  const std::string shift = (host_shift_ns > 0 ? "+" : "-") +
                            format_duration_ns(static_cast<double>(host_shift_ns > 0 ? host_shift_ns : -host_shift_ns));
  if (before_call > 0)
    return "host/GPU clock skew: " + std::to_string(before_call) +
           " kernels start before their launch call (by up to " +
           format_duration_ns(static_cast<double>(-worst_before_ns)) + "); host times shifted by " +
           shift + " for launch delays and idle causes";
  return "host/GPU clock offset: every one of " + std::to_string(idle_starts) +
         " kernels starting on an idle GPU began at least " +
         format_duration_ns(static_cast<double>(least_idle_start_ns)) +
         " after its launch call returned, and one waited while its GPU sat idle for " +
         format_duration_ns(static_cast<double>(most_idle_wait_ns)) +
         " (a launch takes microseconds); host times shifted by " + shift +
         " for launch delays and idle causes";
}

}  // namespace fusebox::profiler
