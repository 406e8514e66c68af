#pragma once
// Where the CUPTI collector (ops/cuda/cupti_collector.cpp) keeps what CUPTI's buffer callbacks
// hand over until Backend::end_recording() takes it, as plain logic over CUPTI's record types
// (tested with records built by hand in tests/cuda/activity_store_test.cpp):
//  - every record is converted when it arrives (a kernel's name lives in CUPTI's buffer, which is
//    freed once read); one that does not convert is counted as dropped, never thrown (the
//    callbacks run on CUPTI's threads);
//  - runtime-API and driver-API records alike: cuBLAS launches its kernels through the driver
//    (cuLaunchKernelEx), so those kernels share a correlation id with a driver record only, and
//    CUPTI's external-correlation record for that driver call is what ties them to their op;
//  - bounded: past `max_records` records (activity and correlations together) the rest are
//    counted as dropped, so a collector nobody takes from cannot grow without end.
#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/backend/device_activity.h"
#include "ops/cuda/host/cupti_records.h"

namespace fusebox::cuda {

inline constexpr size_t kMaxPendingRecords = size_t{1} << 18;

// The name of an API record's callback id: kind is CUPTI_ACTIVITY_KIND_RUNTIME or _DRIVER
// (cuptiGetCallbackName with the matching domain); "" when unknown.
using ApiNameFn = std::function<std::string(CUpti_ActivityKind kind, uint32_t cbid)>;

struct TakenActivity {
  std::vector<exec::DeviceActivity> activity;  // oldest first, each with its node where known
  size_t dropped = 0;                          // records lost since the last take
};

class ActivityStore {
 public:
  explicit ActivityStore(size_t max_records = kMaxPendingRecords) : max_records_(max_records) {}
  // CUPTI's clock against the host's, read when collection starts (before any record arrives).
  void set_clock(const CuptiClock& clock);
  // One record from CUPTI's buffer. Thread-safe; never throws.
  void add(const CUpti_Activity& record, const ApiNameFn& api_name);
  // Records CUPTI itself reports as dropped.
  void add_dropped(size_t n);
  // Everything since the last take, each activity tied to the op whose external correlation id
  // its correlation id maps to (attach_nodes), sorted by start time. Empties the store.
  TakenActivity take();
  // Forgets everything (collection stopped with nobody to take it).
  void clear();
  size_t pending() const;

 private:
  bool full_locked() const { return activity_.size() + external_.size() >= max_records_; }
  const size_t max_records_;
  mutable std::mutex mu_;
  CuptiClock clock_;
  std::vector<exec::DeviceActivity> activity_;
  std::unordered_map<uint32_t, uint64_t> external_;  // correlation id -> external id (node + 1)
  size_t dropped_ = 0;
};

}  // namespace fusebox::cuda
