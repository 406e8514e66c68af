#pragma once
// CUPTI activity collection for the CUDA backend: kernels, memcpys, memsets and runtime API calls,
// each tagged with the graph node whose range launched it (CUPTI external correlation ids pushed
// in Backend::on_op_begin), turned into exec::DeviceActivity on the host's clock by
// host/cupti_records. CUPTI's activity API is process-wide, so this is one object.
#include <cstddef>
#include <string>
#include <vector>

#include "core/backend/device_activity.h"

namespace fusebox::cuda {

class CuptiCollector {
 public:
  static CuptiCollector& instance();
  // Enables the activity kinds (once). Returns "" when collecting, or one sentence saying why not
  // (e.g. another tool, such as Nsight Systems, holds CUPTI: then only NVTX ranges are recorded).
  std::string start();
  bool active() const { return active_; }
  // Kernels launched between push_op and pop_op carry node_index (no-ops when not active).
  void push_op(size_t node_index);
  void pop_op();
  // Everything recorded since the last call, on the host's monotonic clock, oldest first.
  std::vector<exec::DeviceActivity> take();

 private:
  CuptiCollector() = default;
  bool started_ = false;
  bool active_ = false;
  std::string note_;
};

}  // namespace fusebox::cuda
