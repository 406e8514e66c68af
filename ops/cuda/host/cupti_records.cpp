#include "ops/cuda/host/cupti_records.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/base/symbols.h"

namespace fusebox::cuda {

namespace {

int64_t host_time(uint64_t cupti, const CuptiClock& clock) {
  return static_cast<int64_t>(cupti) - clock.cupti_ns + clock.host_ns;
}

void check_times(uint64_t start, uint64_t end, const std::string& what) {
  if (end < start)
    throw Error(what + " ends before it starts (start " + std::to_string(start) + " ns, end " +
                std::to_string(end) + " ns)");
}

}  // namespace

std::string memcpy_kind_name(uint8_t copy_kind) {
  if (copy_kind < 1 || copy_kind > 10)
    throw Error("unknown CUPTI memcpy kind " + std::to_string(copy_kind) + " (valid: 1..10)");
  return exec::copy_kind_name(copy_kind);
}

exec::DeviceActivity to_activity(const CUpti_ActivityKernel10& k, const CuptiClock& clock) {
  if (!k.name || !*k.name) throw Error("kernel record " + std::to_string(k.correlationId) + " has no name");
  const std::string what = "kernel record '" + std::string(k.name) + "' (correlation " + std::to_string(k.correlationId) + ")";
  check_times(k.start, k.end, what);
  for (int32_t d : {k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ})
    if (d <= 0)
      throw Error(what + " has grid (" + std::to_string(k.gridX) + "," + std::to_string(k.gridY) + "," +
                  std::to_string(k.gridZ) + ") block (" + std::to_string(k.blockX) + "," +
                  std::to_string(k.blockY) + "," + std::to_string(k.blockZ) + "): every dimension must be >= 1");
  exec::DeviceActivity a;
  a.kind = exec::ActivityKind::Kernel;
  a.name = demangle(k.name);
  a.start_ns = host_time(k.start, clock);
  a.end_ns = host_time(k.end, clock);
  a.device = static_cast<int32_t>(k.deviceId);
  a.stream = static_cast<int32_t>(k.streamId);
  a.correlation_id = k.correlationId;
  a.grid[0] = k.gridX, a.grid[1] = k.gridY, a.grid[2] = k.gridZ;
  a.block[0] = k.blockX, a.block[1] = k.blockY, a.block[2] = k.blockZ;
  a.shared_memory = k.staticSharedMemory + k.dynamicSharedMemory;
  a.registers = k.registersPerThread;
  return a;
}

exec::DeviceActivity to_activity(const CUpti_ActivityMemcpy6& m, const CuptiClock& clock) {
  exec::DeviceActivity a;
  a.kind = exec::ActivityKind::Memcpy;
  a.name = memcpy_kind_name(m.copyKind);
  check_times(m.start, m.end, "memcpy record (correlation " + std::to_string(m.correlationId) + ")");
  a.start_ns = host_time(m.start, clock);
  a.end_ns = host_time(m.end, clock);
  a.device = static_cast<int32_t>(m.deviceId);
  a.stream = static_cast<int32_t>(m.streamId);
  a.correlation_id = m.correlationId;
  a.bytes = m.bytes;
  a.copy_kind = m.copyKind;
  a.src_kind = m.srcKind;
  a.dst_kind = m.dstKind;
  return a;
}

exec::DeviceActivity to_activity(const CUpti_ActivityMemset4& m, const CuptiClock& clock) {
  check_times(m.start, m.end, "memset record (correlation " + std::to_string(m.correlationId) + ")");
  exec::DeviceActivity a;
  a.kind = exec::ActivityKind::Memset;
  a.name = "Memset";
  a.start_ns = host_time(m.start, clock);
  a.end_ns = host_time(m.end, clock);
  a.device = static_cast<int32_t>(m.deviceId);
  a.stream = static_cast<int32_t>(m.streamId);
  a.correlation_id = m.correlationId;
  a.bytes = m.bytes;
  return a;
}

exec::DeviceActivity to_activity(const CUpti_ActivityAPI& r, const std::string& name, const CuptiClock& clock) {
  if (name.empty())
    throw Error("runtime API record " + std::to_string(r.correlationId) + " (cbid " + std::to_string(r.cbid) +
                ") has no name");
  check_times(r.start, r.end, "runtime API record '" + name + "'");
  exec::DeviceActivity a;
  a.kind = exec::ActivityKind::Runtime;
  // "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the suffix is the API version it came in.
  const size_t v = name.rfind("_v");
  if (v != std::string::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string::npos)
    a.name = std::string_view(name).substr(0, v);
  else
    a.name = name;
  a.start_ns = host_time(r.start, clock);
  a.end_ns = host_time(r.end, clock);
  a.correlation_id = r.correlationId;
  a.thread_id = r.threadId;
  return a;
}

void attach_nodes(std::vector<exec::DeviceActivity>& activity, const std::unordered_map<uint32_t, uint64_t>& external) {
  for (auto& a : activity) {
    const auto it = external.find(a.correlation_id);
    if (it != external.end() && it->second > 0) a.node_index = static_cast<int32_t>(it->second - 1);
  }
  std::stable_sort(activity.begin(), activity.end(),
                   [](const exec::DeviceActivity& x, const exec::DeviceActivity& y) { return x.start_ns < y.start_ns; });
}

}  // namespace fusebox::cuda
