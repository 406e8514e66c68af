#pragma once
// Device activity records: what a GPU did and when, as plain data. A GPU backend fills them
// (from CUPTI) without knowing the profiler; the profiler turns them into tracks and export rows
// without knowing CUDA. Times are nanoseconds on the host's monotonic clock.
#include <cstdint>
#include <string>

namespace fusebox::exec {

enum class ActivityKind : uint8_t { Kernel, Memcpy, Memset, Runtime };

struct DeviceActivity {
  ActivityKind kind = ActivityKind::Kernel;
  std::string name;  // kernel name, "cudaLaunchKernel", "HtoD"...
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int32_t device = 0;
  int32_t stream = 0;
  uint32_t correlation_id = 0;  // links a runtime call to the kernel or copy it launched
  uint32_t thread_id = 0;       // host thread (runtime records)
  // Kernel launch geometry (Kernel records).
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t shared_memory = 0;
  int32_t registers = 0;
  uint64_t bytes = 0;       // Memcpy/Memset records
  uint8_t copy_kind = 0;    // CUPTI_ACTIVITY_MEMCPY_KIND_* for Memcpy records
  int32_t node_index = -1;  // graph node whose range launched it, when known
};

}  // namespace fusebox::exec
