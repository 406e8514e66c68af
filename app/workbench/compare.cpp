#include "app/workbench/compare.h"

#include <cstdio>

#include "app/workbench/report.h"

namespace fusebox::workbench {

RunComparison RunComparison::of_latencies(const Latency& a, const Latency& b,
                                          const NoiseRule& rule) {
  RunComparison c;
  c.latency_a = a;
  c.latency_b = b;
  c.latency_us_a = a.median_us;
  c.latency_us_b = b.median_us;
  c.verdict = judge(a, b, rule);
  return c;
}

RunComparison compare(const RunResult& a, const RunResult& b) {
  RunComparison c = RunComparison::of_latencies(a.latency, b.latency);
  if (a.recording && b.recording) c.ops = profiler::compare(*a.recording, *b.recording);
  c.ops.label_a = a.settings.model + " " + a.settings.label();
  c.ops.label_b = b.settings.model + " " + b.settings.label();
  c.ops.nodes_a = a.graph().nodes.size();
  c.ops.nodes_b = b.graph().nodes.size();
  c.ops.arena_a = a.plan->arena_bytes;
  c.ops.arena_b = b.plan->arena_bytes;
  c.lower_bound_a = a.plan->lower_bound_bytes;
  c.lower_bound_b = b.plan->lower_bound_bytes;
  return c;
}

std::string RunComparison::to_text(size_t max_list) const {
  char line[256];
  std::string out = "latency (no hooks): A " + latency_a.text() + ", B " + latency_b.text() + "\n";
  std::snprintf(line, sizeof line, "B against A: %s; A/B %.2fx\n", verdict.text().c_str(),
                speedup());
  out += line;
  for (const Latency* l : {&latency_a, &latency_b})
    if (const std::string noisy = l->noise_warning(); !noisy.empty())
      out += (l == &latency_a ? "A " : "B ") + noisy + "\n";
  std::snprintf(line, sizeof line, "arena lower bound: A %zu, B %zu bytes\n\n", lower_bound_a, lower_bound_b);
  return out + line + ops.to_text(max_list);
}

nlohmann::json RunComparison::to_json() const {
  nlohmann::json j = ops.to_json();
  j["latency_us_a"] = latency_us_a;
  j["latency_us_b"] = latency_us_b;
  j["speedup"] = speedup();
  j["latency_a"] = workbench::to_json(latency_a);
  j["latency_b"] = workbench::to_json(latency_b);
  j["verdict"] = {{"verdict", verdict_name(verdict.verdict)},
                  {"p_value", verdict.p_value},
                  {"effect", verdict.effect},
                  {"alpha", verdict.rule.alpha},
                  {"min_effect", verdict.rule.min_effect},
                  {"test", "Mann-Whitney U, two-sided, normal approximation with tie correction"}};
  j["lower_bound_a"] = lower_bound_a;
  j["lower_bound_b"] = lower_bound_b;
  return j;
}

}  // namespace fusebox::workbench
