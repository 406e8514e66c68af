#pragma once
// The files other tools open, each written atomically (temp file, then rename: an existing file
// is replaced only when the whole export succeeded). All throw fusebox::Error naming the path,
// or what is wrong with the recording (check_recording) before anything is written.
//  - Chrome trace JSON, laid out like PyTorch's profiler (Perfetto, chrome://tracing, HTA);
//  - NVTXT, NVIDIA's NVTX text format (`ImportNvtxt --cmd create` makes a .nsys-rep of it);
//  - SQLite in the `nsys export` schema (2022.4), for `nsys stats` and nsys scripts.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/recording.h"

namespace fusebox::profiler {

// {"traceEvents": [...]}: X events per thread (cat cpu_op for ops, user_annotation for runs and
// stages), C events for the arena counter, M events naming processes and threads; device
// activity on pid = device, tid = stream (cat kernel / gpu_memcpy / gpu_memset / cuda_sync),
// runtime calls (cat cuda_runtime) on their host thread, linked by ac2g flow events, and the
// recording's GPUs as a top-level "deviceProperties" when it has any (kineto's layout). Times in microseconds
// from the recording's origin.
nlohmann::json chrome_trace(const Recording& r);
void write_chrome_trace(const Recording& r, const std::string& path);

enum class NvtxtTimeBase {
  Manual,             // absolute CLOCK_MONOTONIC_RAW nanoseconds, read as-is: `--cmd create`
  ClockMonotonicRaw,  // the same numbers, declared as the target's raw clock: `--cmd merge`
};
std::string nvtxt(const Recording& r, NvtxtTimeBase time_base = NvtxtTimeBase::Manual);
void write_nvtxt(const Recording& r, const std::string& path, NvtxtTimeBase time_base = NvtxtTimeBase::Manual);
// Ranges (push/pop pairs) an NVTXT of `r` contains: stages + runs + ops.
size_t nvtxt_range_count(const Recording& r);

// NVTX_EVENTS (domain "fusebox", push/pop ranges, eventType 59; domain row 75; thread name 39),
// StringIds, ThreadNames, PROCESSES, TARGET_INFO_SESSION_START_TIME, TARGET_INFO_GPU,
// EXPORT_META_DATA, CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET / RUNTIME. globalTid =
// pid << 24 | tid, globalPid = pid << 24, times in ns from the recording's origin.
void write_nsys_sqlite(const Recording& r, const std::string& path);

// Memory kinds in the nsys schema (ENUM_CUDA_MEM_KIND: 0 pageable, 1 pinned, 2 device, 3 array,
// 4 managed, 5 device static, 6 managed static, 7 unknown) differ from CUPTI's, which
// DeviceActivity keeps (0 unknown, 1 pageable, ... 7 managed static): one step apart.
constexpr int nsys_memory_kind(uint8_t cupti_kind) { return cupti_kind >= 1 && cupti_kind <= 7 ? cupti_kind - 1 : 7; }
constexpr uint8_t cupti_memory_kind(int64_t nsys_kind) {
  return nsys_kind >= 0 && nsys_kind <= 6 ? static_cast<uint8_t>(nsys_kind + 1) : 0;
}

}  // namespace fusebox::profiler
