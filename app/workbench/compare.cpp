#include "app/workbench/compare.h"

#include <cstdio>

namespace fusebox::workbench {

RunComparison compare(const RunResult& a, const RunResult& b) {
  RunComparison c;
  if (a.recording && b.recording) c.ops = profiler::compare(*a.recording, *b.recording);
  c.ops.label_a = a.settings.model + " " + a.settings.label();
  c.ops.label_b = b.settings.model + " " + b.settings.label();
  c.ops.nodes_a = a.graph().nodes.size();
  c.ops.nodes_b = b.graph().nodes.size();
  c.ops.arena_a = a.plan->arena_bytes;
  c.ops.arena_b = b.plan->arena_bytes;
  c.latency_us_a = a.latency.median_us;
  c.latency_us_b = b.latency.median_us;
  c.lower_bound_a = a.plan->lower_bound_bytes;
  c.lower_bound_b = b.plan->lower_bound_bytes;
  return c;
}

std::string RunComparison::to_text(size_t max_list) const {
  char line[256];
  std::snprintf(line, sizeof line, "latency (median, no hooks): A %.1f us, B %.1f us, A/B %.2fx\n", latency_us_a,
                latency_us_b, speedup());
  std::string out = line;
  std::snprintf(line, sizeof line, "arena lower bound: A %zu, B %zu bytes\n\n", lower_bound_a, lower_bound_b);
  return out + line + ops.to_text(max_list);
}

nlohmann::json RunComparison::to_json() const {
  nlohmann::json j = ops.to_json();
  j["latency_us_a"] = latency_us_a;
  j["latency_us_b"] = latency_us_b;
  j["speedup"] = speedup();
  j["lower_bound_a"] = lower_bound_a;
  j["lower_bound_b"] = lower_bound_b;
  return j;
}

}  // namespace fusebox::workbench
