#include "core/backend/device_activity.h"

#include <set>

namespace fusebox::exec {

namespace {
constexpr size_t kNamedUncorrelated = 3;
}  // namespace

const char* activity_kind_name(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::Kernel: return "kernel";
    case ActivityKind::Memcpy: return "memcpy";
    case ActivityKind::Memset: return "memset";
    case ActivityKind::Runtime: return "runtime";
    case ActivityKind::Sync: return "sync";
  }
  return "?";
}

const char* copy_kind_name(uint8_t copy_kind) {
  static const char* const kNames[] = {"HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return copy_kind >= 1 && copy_kind <= 10 ? kNames[copy_kind - 1] : "?";
}

const char* memory_kind_name(uint8_t memory_kind) {
  static const char* const kNames[] = {"unknown", "pageable", "pinned", "device",
                                       "array",   "managed",  "device static", "managed static"};
  return memory_kind <= 7 ? kNames[memory_kind] : "?";
}

KernelCorrelation check_kernel_correlation(const std::vector<DeviceActivity>& activity, size_t node_count) {
  KernelCorrelation c;
  std::set<int32_t> nodes;
  for (const DeviceActivity& a : activity) {
    if (a.kind != ActivityKind::Kernel) continue;
    ++c.kernels;
    if (a.node_index >= 0 && static_cast<size_t>(a.node_index) < node_count) {
      ++c.correlated;
      nodes.insert(a.node_index);
    } else if (c.uncorrelated.size() < kNamedUncorrelated) {
      c.uncorrelated.push_back(a.name);
    }
  }
  c.ops_with_kernels = nodes.size();
  return c;
}

std::string KernelCorrelation::summary() const {
  if (kernels == 0) return "no kernel records";
  const std::string ops = std::to_string(ops_with_kernels) + " op" + (ops_with_kernels == 1 ? "" : "s");
  if (ok()) return std::to_string(kernels) + " kernels, all tied to " + ops;
  std::string s = std::to_string(kernels - correlated) + " of " + std::to_string(kernels) +
                  " kernels are tied to no op of the graph (";
  for (size_t i = 0; i < uncorrelated.size(); ++i) s += (i ? ", " : "") + uncorrelated[i];
  return s + (kernels - correlated > uncorrelated.size() ? ", ...)" : ")");
}

}  // namespace fusebox::exec
