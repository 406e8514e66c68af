#include "profiler/steps.h"

#include <algorithm>
#include <limits>

namespace fusebox::profiler {

using exec::ActivityKind;
using exec::DeviceActivity;

LaunchIndex::LaunchIndex(const Recording& r) {
  for (const DeviceActivity& x : r.device)
    if (x.kind == ActivityKind::Runtime && x.correlation_id)
      start_of_.try_emplace(x.correlation_id, x.start_ns);
}

int64_t LaunchIndex::launched_at(const DeviceActivity& x) const {
  const auto c = x.correlation_id ? start_of_.find(x.correlation_id) : start_of_.end();
  return c != start_of_.end() ? c->second : x.start_ns;
}

StepWork step_work(const Recording& r, const LaunchIndex& calls, int64_t start, int64_t end,
                   bool whole) {
  StepWork w;
  w.first_ns = std::numeric_limits<int64_t>::max();
  w.last_ns = std::numeric_limits<int64_t>::min();
  for (const DeviceActivity& x : r.device) {
    if (x.kind != ActivityKind::Kernel && x.kind != ActivityKind::Memcpy &&
        x.kind != ActivityKind::Memset)
      continue;
    if (!whole) {
      const int64_t t = calls.launched_at(x);
      if (t < start || t >= end) continue;
    }
    w.work.push_back(&x);
    if (x.kind == ActivityKind::Kernel) w.kernels.push_back(&x);
    w.first_ns = std::min(w.first_ns, x.start_ns);
    w.last_ns = std::max(w.last_ns, x.end_ns);
  }
  if (w.work.empty()) w.first_ns = w.last_ns = 0;
  return w;
}

}  // namespace fusebox::profiler
