#pragma once
// CUPTI activity collection for the CUDA backend: kernels, memcpys, memsets, and runtime- and
// driver-API calls, each tagged with the graph node whose range launched it (CUPTI external
// correlation ids pushed in Backend::on_op_begin), turned into exec::DeviceActivity on the host's
// clock (host/activity_store.h). CUPTI's activity API is process-wide, so this is one object.
//
// CUPTI is loaded only when a recording begins (dlopen; host/cupti_library.h says where it looks),
// so a machine without it, or with it only under extras/CUPTI, still runs the backend, and the
// backend says tracing is unavailable. Collection is on only between begin_recording() and
// end_recording() (counted: several backends may record at once), so an unrecorded run pays
// nothing for it; what is collected waits, bounded, in a store that is never destroyed (CUPTI
// may deliver a last buffer from its own exit handler).
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend/device_activity.h"

namespace fusebox::cuda {

class CuptiCollector {
 public:
  static CuptiCollector& instance();
  // Starts collecting (loading CUPTI and enabling the activity kinds when no recording is on).
  // Returns "" when collecting, or one sentence saying why not (CUPTI not found, or another tool,
  // such as Nsight Systems, holds it: then only NVTX ranges are recorded).
  std::string begin_recording();
  // Ends one begin_recording() that returned "": the last one flushes CUPTI's buffers, disables
  // the activity kinds and forgets what nobody took.
  void end_recording();
  bool active() const { return active_; }
  // Kernels launched between push_op and pop_op carry node_index (no-ops when not active).
  void push_op(size_t node_index);
  void pop_op();
  // Everything recorded since the last call, on the host's monotonic clock, oldest first.
  std::vector<exec::DeviceActivity> take();
  // Records lost (CUPTI's own drops, the store's bound, records that did not convert) in the
  // last take().
  size_t last_dropped() const { return last_dropped_; }

 private:
  CuptiCollector() = default;
  std::mutex mu_;
  int recordings_ = 0;
  bool callbacks_registered_ = false;
  std::atomic<bool> active_{false};  // read on every op begin/end without the lock
  size_t last_dropped_ = 0;
};

}  // namespace fusebox::cuda
