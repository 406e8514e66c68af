#pragma once
// CUPTI activity records -> exec::DeviceActivity, as pure functions compiled without CUDA. The
// CUDA plugin (ops/cuda/cupti_collector.cpp) copies the fields it uses out of CUPTI's buffers
// (CUpti_ActivityKernel*, CUpti_ActivityMemcpy*, CUpti_ActivityMemset*, CUpti_ActivityAPI,
// CUpti_ActivityExternalCorrelation) into these plain structs, which mirror those
// fields with CUPTI's names and types; everything after that is here, tested with records
// built in the tests. Kernel names arrive mangled (as CUPTI gives them): demangled here for the
// trace and for nsys's shortName / demangledName.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/exec/device_activity.h"

namespace fusebox::cuda {

// CUpti_ActivityKernel (the fields we use).
struct CuptiKernelRecord {
  uint64_t start = 0, end = 0;  // ns, CUPTI's clock
  uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
  int32_t gridX = 0, gridY = 0, gridZ = 0;
  int32_t blockX = 0, blockY = 0, blockZ = 0;
  uint16_t registersPerThread = 0;
  int32_t staticSharedMemory = 0, dynamicSharedMemory = 0;
  std::string name;  // mangled, as CUPTI reports it ("_Z4gemmIfEvPKfPfi"); extern "C" names as-is
};

// CUpti_ActivityMemcpy (the fields we use). copyKind: CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH,
// 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA, 8 DtoD, 9 HtoH, 10 PtoP).
struct CuptiMemcpyRecord {
  uint8_t copyKind = 0;
  uint64_t bytes = 0;
  uint64_t start = 0, end = 0;
  uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
};

// CUpti_ActivityMemset (the fields we use).
struct CuptiMemsetRecord {
  uint32_t value = 0;
  uint64_t bytes = 0;
  uint64_t start = 0, end = 0;
  uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
};

// CUpti_ActivityAPI for the runtime API (CUPTI_ACTIVITY_KIND_RUNTIME). `name` is what
// cuptiGetCallbackName gives for cbid ("cudaLaunchKernel_v7000"); the activity drops the
// version suffix ("cudaLaunchKernel", as PyTorch's traces name it).
struct CuptiApiRecord {
  uint32_t cbid = 0;
  std::string name;
  uint64_t start = 0, end = 0;
  uint32_t processId = 0, threadId = 0, correlationId = 0;
};

// CUPTI's clock against the host's monotonic clock, read at one instant (cuptiGetTimestamp and
// steady_clock): a record's host time is cupti_time - cupti_ns + host_ns.
struct CuptiClock {
  int64_t cupti_ns = 0;
  int64_t host_ns = 0;
};

// Conversions. Throw fusebox::Error for a record that ends before it starts, has no name, a
// non-positive grid or block dimension, or an unknown copy kind.
exec::DeviceActivity to_activity(const CuptiKernelRecord& k, const CuptiClock& clock);
exec::DeviceActivity to_activity(const CuptiMemcpyRecord& m, const CuptiClock& clock);
exec::DeviceActivity to_activity(const CuptiMemsetRecord& m, const CuptiClock& clock);
exec::DeviceActivity to_activity(const CuptiApiRecord& a, const CuptiClock& clock);

// What one flush of CUPTI's buffers gave, plus its external correlation records: CUPTI
// correlation id -> the external id pushed around the launch (our graph node index + 1, so that
// 0 never names a node).
struct CuptiBatch {
  std::vector<CuptiKernelRecord> kernels;
  std::vector<CuptiMemcpyRecord> memcpys;
  std::vector<CuptiMemsetRecord> memsets;
  std::vector<CuptiApiRecord> apis;
  std::unordered_map<uint32_t, uint64_t> external;
};

// Every record as DeviceActivity, each given the node_index its correlation id's external id
// names (-1 when none: work launched outside an op, such as the input copies), sorted by start
// time. Throws like to_activity for a bad record.
std::vector<exec::DeviceActivity> to_activities(const CuptiBatch& batch, const CuptiClock& clock);

// "HtoD", "DtoH", ... for a CUpti_ActivityMemcpyKind; throws fusebox::Error for others.
std::string memcpy_kind_name(uint8_t copy_kind);

}  // namespace fusebox::cuda
