#pragma once
// CUPTI activity records -> exec::DeviceActivity, as pure functions over CUPTI's own record types
// (the CUDA toolkit's cupti_activity.h; only its types are used, so nothing links CUPTI and this
// builds and is tested wherever the toolkit's headers are, with records built in the tests). The
// CUDA plugin's collector (ops/cuda/cupti_collector.cpp) calls these on the records in CUPTI's
// buffers. Kernel names arrive mangled: demangled here for the trace and for nsys's shortName.
#include <cupti_activity.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/backend/device_activity.h"

namespace fusebox::cuda {

// CUPTI's clock against the host's monotonic clock, read at one instant (cuptiGetTimestamp and
// steady_clock): a record's host time is cupti_time - cupti_ns + host_ns.
struct CuptiClock {
  int64_t cupti_ns = 0;
  int64_t host_ns = 0;
};

// Conversions. Throw fusebox::Error for a record that ends before it starts, has no name, a
// non-positive grid or block dimension, or an unknown copy kind.
exec::DeviceActivity to_activity(const CUpti_ActivityKernel10& k, const CuptiClock& clock);
exec::DeviceActivity to_activity(const CUpti_ActivityMemcpy6& m, const CuptiClock& clock);
exec::DeviceActivity to_activity(const CUpti_ActivityMemset4& m, const CuptiClock& clock);
// `name` is what cuptiGetCallbackName gives for the record's cbid ("cudaLaunchKernel_v7000"); the
// activity drops the version suffix ("cudaLaunchKernel", as PyTorch's traces name it).
exec::DeviceActivity to_activity(const CUpti_ActivityAPI& a, const std::string& name, const CuptiClock& clock);

// "HtoD", "DtoH", ... for a CUpti_ActivityMemcpyKind; throws fusebox::Error for others.
std::string memcpy_kind_name(uint8_t copy_kind);

// Gives each activity the node its correlation id's external id names (CUPTI external
// correlation records: correlation id -> the id pushed around the launch, our graph node index +
// 1, so that 0 names no node; -1 stays for work launched outside an op, such as the input
// copies), then sorts them by start time.
void attach_nodes(std::vector<exec::DeviceActivity>& activity, const std::unordered_map<uint32_t, uint64_t>& external);

}  // namespace fusebox::cuda
