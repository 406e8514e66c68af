#include "profiler/steps.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace fusebox::profiler {

using exec::ActivityKind;
using exec::DeviceActivity;

StepIndex::StepIndex(const Recording& r) {
  std::unordered_map<uint32_t, int64_t> call_start;
  for (const DeviceActivity& x : r.device)
    if (x.kind == ActivityKind::Runtime && x.correlation_id)
      call_start.try_emplace(x.correlation_id, x.start_ns);
  for (const DeviceActivity& x : r.device) {
    if (x.kind != ActivityKind::Kernel && x.kind != ActivityKind::Memcpy &&
        x.kind != ActivityKind::Memset)
      continue;
    const auto c = x.correlation_id ? call_start.find(x.correlation_id) : call_start.end();
    by_launch_.push_back({c != call_start.end() ? c->second : x.start_ns, &x});
  }
  std::stable_sort(by_launch_.begin(), by_launch_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

StepWork StepIndex::collect(size_t from, size_t to) const {
  StepWork w;
  w.first_ns = std::numeric_limits<int64_t>::max();
  w.last_ns = std::numeric_limits<int64_t>::min();
  for (size_t i = from; i < to; ++i) {
    const DeviceActivity* x = by_launch_[i].second;
    w.work.push_back(x);
    if (x->kind == ActivityKind::Kernel) w.kernels.push_back(x);
    w.first_ns = std::min(w.first_ns, x->start_ns);
    w.last_ns = std::max(w.last_ns, x->end_ns);
  }
  if (w.work.empty()) w.first_ns = w.last_ns = 0;
  return w;
}

StepWork StepIndex::in(int64_t start, int64_t end) const {
  auto at = [&](int64_t t) {
    return static_cast<size_t>(
        std::lower_bound(by_launch_.begin(), by_launch_.end(), t,
                         [](const auto& item, int64_t v) { return item.first < v; }) -
        by_launch_.begin());
  };
  return end > start ? collect(at(start), at(end)) : StepWork{};
}

StepWork StepIndex::all() const {
  return collect(0, by_launch_.size());
}

}  // namespace fusebox::profiler
