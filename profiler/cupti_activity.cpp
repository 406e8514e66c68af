#include "profiler/cupti_activity.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "core/base/error.h"

namespace fusebox::profiler {

namespace {

int64_t host_time(uint64_t cupti, const CuptiClock& clock) {
  return static_cast<int64_t>(cupti) - clock.cupti_ns + clock.host_ns;
}

void check_times(uint64_t start, uint64_t end, const std::string& what) {
  if (end < start)
    throw Error(what + " ends before it starts (start " + std::to_string(start) + " ns, end " +
                std::to_string(end) + " ns)");
}

// Index of the '<' or '(' that opens the group closing at `close` (a '>' or ')'), or npos.
size_t open_of(const std::string& s, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    const char c = s[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

}  // namespace

std::string memcpy_kind_name(uint8_t copy_kind) {
  static const char* const kNames[] = {"HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  if (copy_kind < 1 || copy_kind > 10)
    throw Error("unknown CUPTI memcpy kind " + std::to_string(copy_kind) + " (valid: 1..10)");
  return kNames[copy_kind - 1];
}

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::string kernel_short_name(const std::string& name) {
  std::string s = demangle(name);
  // Parameters: the group the name ends with ("(float const*, int)"), and any cv-qualifiers.
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (!s.empty() && s.back() == ')') {
    const size_t open = open_of(s, s.size() - 1);
    if (open != std::string::npos) s.erase(open);
  }
  // Template arguments of the function itself.
  while (!s.empty() && s.back() == '>') {
    const size_t open = open_of(s, s.size() - 1);
    if (open == std::string::npos) break;
    s.erase(open);
  }
  // Return type and enclosing scopes: what follows the last space or "::" outside any group.
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (depth != 0) continue;
    if (c == ' ') begin = i + 1;
    if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') begin = i + 2;
  }
  s = s.substr(begin);
  return s.empty() ? name : s;
}

exec::DeviceActivity to_activity(const CuptiKernelRecord& k, const CuptiClock& clock) {
  if (k.name.empty()) throw Error("kernel record " + std::to_string(k.correlationId) + " has no name");
  const std::string what = "kernel record '" + k.name + "' (correlation " + std::to_string(k.correlationId) + ")";
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

exec::DeviceActivity to_activity(const CuptiMemcpyRecord& m, const CuptiClock& clock) {
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
  return a;
}

exec::DeviceActivity to_activity(const CuptiApiRecord& r, const CuptiClock& clock) {
  if (r.name.empty())
    throw Error("runtime API record " + std::to_string(r.correlationId) + " (cbid " + std::to_string(r.cbid) +
                ") has no name");
  check_times(r.start, r.end, "runtime API record '" + r.name + "'");
  exec::DeviceActivity a;
  a.kind = exec::ActivityKind::Runtime;
  a.name = r.name;
  // "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the suffix is the API version it came in.
  const size_t v = a.name.rfind("_v");
  if (v != std::string::npos && v + 2 < a.name.size() &&
      a.name.find_first_not_of("0123456789", v + 2) == std::string::npos)
    a.name.erase(v);
  a.start_ns = host_time(r.start, clock);
  a.end_ns = host_time(r.end, clock);
  a.correlation_id = r.correlationId;
  a.thread_id = r.threadId;
  return a;
}

}  // namespace fusebox::profiler
