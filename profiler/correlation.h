#pragma once
// The runtime call a correlation id names: CUPTI (and kineto, nsys after it) gives a launch call
// and the GPU work it started one id, and the analyses join them by it millions of times.
//
// The first runtime record carrying an id names it (record order), as a hash map's try_emplace
// would. Ids are mostly small and dense (CUPTI counts them up from 1 per process), so when the
// largest id is within a few times the number of calls the index is a table by id, 4 bytes an id:
// a lookup is an array read. Otherwise (ids from a file that scatters them) a hash map. Records
// are indexed as 32-bit numbers: a recording holds far fewer than 2^32 (a record is 88 bytes,
// and the memory budget refuses a trace long before).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/backend/device_activity.h"

namespace fusebox::profiler {

class CorrelationIndex {
 public:
  explicit CorrelationIndex(const std::vector<exec::DeviceActivity>& device) : device_(&device) {
    uint32_t most = 0;
    size_t calls = 0;
    for (const exec::DeviceActivity& x : device)
      if (is_call(x)) most = std::max(most, x.correlation_id), calls += 1;
    if (calls == 0) return;
    // Dense when the table is at most 4 entries a call (and a small one always).
    if (most / 4 <= calls || most < 4096) {
      slot_.assign(size_t{most} + 1, kNone);
      for (size_t i = 0; i < device.size(); ++i)
        if (is_call(device[i]) && slot_[device[i].correlation_id] == kNone)
          slot_[device[i].correlation_id] = static_cast<uint32_t>(i);
      return;
    }
    sparse_.reserve(calls);
    for (size_t i = 0; i < device.size(); ++i)
      if (is_call(device[i]))
        sparse_.try_emplace(device[i].correlation_id, static_cast<uint32_t>(i));
  }

  // The call record correlation id `id` names, or nullptr (id 0 names none).
  const exec::DeviceActivity* call(uint32_t id) const {
    if (id == 0) return nullptr;
    if (!slot_.empty()) {
      if (id >= slot_.size() || slot_[id] == kNone) return nullptr;
      return &(*device_)[slot_[id]];
    }
    const auto f = sparse_.find(id);
    return f == sparse_.end() ? nullptr : &(*device_)[f->second];
  }
  // The call that launched x (a kernel, copy or memset), or nullptr.
  const exec::DeviceActivity* launch_of(const exec::DeviceActivity& x) const {
    return call(x.correlation_id);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static bool is_call(const exec::DeviceActivity& x) {
    return x.kind == exec::ActivityKind::Runtime && x.correlation_id != 0;
  }
  const std::vector<exec::DeviceActivity>* device_;
  std::vector<uint32_t> slot_;                     // by id: the record's index, or kNone
  std::unordered_map<uint32_t, uint32_t> sparse_;  // id -> record index
};

}  // namespace fusebox::profiler
