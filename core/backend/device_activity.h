#pragma once
// Device activity records: what a GPU did and when, as plain data. A GPU backend fills them
// (from CUPTI) without knowing the profiler; the profiler turns them into tracks and export rows
// without knowing CUDA. Times are nanoseconds on the host's monotonic clock.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/name.h"

namespace fusebox::exec {

// Runtime is a host-side API call (runtime or driver API: cudaLaunchKernel, cuLaunchKernelEx...);
// Sync is the time a device, stream or event synchronisation held the host (CUPTI's
// SYNCHRONIZATION records, kineto's cuda_sync), kept on its stream's track.
enum class ActivityKind : uint8_t { Kernel, Memcpy, Memset, Runtime, Sync };
const char* activity_kind_name(ActivityKind kind);  // "kernel", "memcpy", "memset", "runtime", "sync"

// CUPTI's copy kinds (CUpti_ActivityMemcpyKind 1..10): "HtoD", "DtoH", ... "PtoP"; "?" for others.
const char* copy_kind_name(uint8_t copy_kind);
// CUPTI's memory kinds (CUpti_ActivityMemoryKind 0..7): "unknown", "pageable", "pinned",
// "device", "array", "managed", "device static", "managed static"; "?" for others.
const char* memory_kind_name(uint8_t memory_kind);
constexpr uint8_t kMemoryKindPageable = 1;

// Laid out largest first, so a record is 88 bytes (it was 120 with a std::string name and the
// kind first): a 10-million-event trace holds millions of them.
struct DeviceActivity {
  Name name;  // kernel name, "cudaLaunchKernel", "HtoD"... (interned: core/base/name.h)
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t bytes = 0;  // Memcpy/Memset records
  int32_t device = 0;
  int32_t stream = 0;
  uint32_t correlation_id = 0;  // links a runtime call to the kernel or copy it launched
  uint32_t thread_id = 0;       // host thread (runtime records)
  // Kernel launch geometry (Kernel records).
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t shared_memory = 0;
  int32_t registers = 0;
  int32_t node_index = -1;  // graph node whose range launched it, when known
  ActivityKind kind = ActivityKind::Kernel;
  uint8_t copy_kind = 0;    // CUPTI_ACTIVITY_MEMCPY_KIND_* for Memcpy records
  uint8_t src_kind = 0;     // CUPTI_ACTIVITY_MEMORY_KIND_* of a copy's source and destination
  uint8_t dst_kind = 0;     //   (0 = unknown; 1 = pageable host memory: a staged, slower copy)
};
static_assert(sizeof(DeviceActivity) == 88, "a device record's size is a budget: see above");

// Whether a trace's kernels are tied to the ops that launched them (CUPTI external correlation):
// every kernel must name a node of the graph it ran (0 <= node_index < node_count).
struct KernelCorrelation {
  size_t kernels = 0;          // Kernel records
  size_t correlated = 0;       // of those, naming a node of the graph
  size_t ops_with_kernels = 0; // distinct nodes named
  std::vector<std::string> uncorrelated;  // names of the kernels that name no node (first few)
  bool ok() const { return kernels > 0 && correlated == kernels; }
  // "412 kernels, all tied to 38 ops" or what is wrong.
  std::string summary() const;
};
KernelCorrelation check_kernel_correlation(const std::vector<DeviceActivity>& activity, size_t node_count);

}  // namespace fusebox::exec
