#pragma once
// Two recorded traces side by side (a baseline and a change: another commit, another batch size,
// another GPU): what appeared, vanished, got faster or slower, by kernel and host op name and by
// category, and whether the steps moved beyond their noise. `fusebox compare A.json.gz B.json.gz`
// prints it. HTA's trace_diff is the reference (its ops diff sorts names into added, deleted,
// increased, decreased and unchanged by count; here by time as well, since a kernel that ran as
// often but longer is the usual regression).
//
// Definitions:
//  - By name: a kernel's (or host op's) count and summed duration on each side. Appeared: only
//    in B; vanished: only in A; slower / faster: in both, B's total time above / below A's.
//  - Categories (sums over the devices, the GPU analysis's definitions): compute and
//    communication kernel time (communication.h), memcpy, memset, GPU idle (window - busy), and
//    each side's GPU window.
//  - Noise: where both sides repeat a step (ProfilerStep#N ranges, at least 3 each), their step
//    durations are judged by workbench/noise.h's rule (Mann-Whitney U, p < 0.01, a change of
//    at least 3%, beyond the spread when a side is noisy); otherwise no verdict is given and
//    the report says why.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/workbench/noise.h"
#include "app/workbench/opened_trace.h"

namespace fusebox::workbench {

struct NameDelta {
  std::string name;
  int64_t count_a = 0, count_b = 0;
  int64_t ns_a = 0, ns_b = 0;
  int64_t delta_ns() const { return ns_b - ns_a; }
  // "appeared", "vanished", "slower", "faster", "same"
  const char* change() const;
};

struct CategoryDelta {
  std::string category;  // "compute", "communication", "memcpy", "memset", "idle", "window"
  int64_t ns_a = 0, ns_b = 0;
};

struct TraceComparison {
  std::string file_a, file_b;
  std::vector<CategoryDelta> categories;
  std::vector<NameDelta> kernels;  // by |delta|, largest first
  std::vector<NameDelta> ops;      // host ops, likewise
  int64_t steps_a = 0, steps_b = 0;
  std::optional<LatencyVerdict> step_verdict;  // B's steps against A's
  std::string no_verdict;                      // why there is none
  Latency step_latency_a, step_latency_b;

  std::string to_text(size_t max_list = 12) const;
  nlohmann::json to_json() const;
};

TraceComparison compare_traces(const OpenedTrace& a, const OpenedTrace& b);

// Whether `path` is a trace to compare as one (a kineto or nsys file), not a fusebox recording
// (profile.json): plain JSON counts as a trace when "traceEvents" appears in its first 64 KiB.
bool is_trace_file(const std::string& path);

}  // namespace fusebox::workbench
