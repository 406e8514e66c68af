#pragma once
// The two levels of the top-down workflow joined: a trace's kernels (kineto, nsys: where the GPU's
// time went) and an Nsight Compute export of some of their launches (why one kernel takes the
// time it takes). Nsight Systems and Nsight Compute are separate applications and HTA reads no ncu
// data; here `fusebox trace T --kernels NCU` answers "GPU busy -> top kernels -> their limiter".
//
// The trace's kernels are grouped by name and launch geometry (grid, block): one row per group,
// by GPU time, largest first. Each ncu launch is matched to one group:
//   exact             the same name once the return type, namespace and class qualifiers and
//                     spaces are dropped (kineto writes "void at::native::f<4, at::native::G>
//                     (int)", ncu "f<4, G>(int)"), and the same grid and block;
//   name and launch   the same base name (the function's own identifier, without its namespace,
//                     template arguments or parameters) and the same grid and block;
//   name              the same base name, another launch geometry (or the trace has none): the
//                     same kernel, profiled on another input size; its figures are shown marked so.
// The first kind that matches wins. An ncu launch that matches no group is counted and named.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/device_activity.h"
#include "profiler/ncu_report.h"

namespace fusebox::profiler {

// A kernel name's own identifier: "void at::native::vectorized_elementwise_kernel<4, F>(int, F)"
// -> "vectorized_elementwise_kernel"; "enable_if<!T7, void>::type kernel<int>(...)" -> "kernel".
std::string kernel_base_name(const std::string& name);
// The name exact matches compare: a leading "void ", qualifiers ("at::native::") and spaces dropped.
std::string kernel_full_name(const std::string& name);

struct KernelLink {
  std::string name;         // as the trace names it
  std::string grid, block;  // "(80, 1, 1)" as ncu writes it; "" when the trace has none
  int64_t launches = 0;
  int64_t total_ns = 0;     // GPU time in the trace
  double share = 0;         // of all kernel time in the trace
  std::vector<size_t> ncu;  // indices into NcuReport::kernels matched to this group
  std::string match;        // "exact", "name and launch", "name", or "" (no ncu launch)
};

struct KernelLinks {
  std::vector<KernelLink> groups;      // by total_ns, largest first
  int64_t trace_kernel_ns = 0;         // all kernel time in the trace
  int64_t linked_ns = 0;               // of it, in groups with an ncu launch
  size_t ncu_launches = 0, ncu_matched = 0;
  std::vector<std::string> unmatched;  // names of the ncu launches no group matched
};

KernelLinks link_kernels(const std::vector<exec::DeviceActivity>& device, const NcuReport& ncu);

// The kernel level's section of `fusebox trace --kernels`: the match counts, then the top
// `max_groups` groups with their ncu figures (limiter, SOL, occupancy, DRAM) where matched.
std::string kernel_links_text(const KernelLinks& links, const NcuReport& ncu, size_t max_groups = 10);
nlohmann::json kernel_links_json(const KernelLinks& links, const NcuReport& ncu);

}  // namespace fusebox::profiler
