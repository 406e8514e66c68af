#pragma once
// Baseline vs current: latency, nodes, arena and per-op deltas between two results. The UI's
// compare panel, the scenario checks and `fusebox compare MODEL --a ... --b ...` all call this.
#include <nlohmann/json.hpp>
#include <string>

#include "app/workbench/noise.h"
#include "app/workbench/run_result.h"
#include "profiler/analysis.h"

namespace fusebox::workbench {

struct RunComparison {
  // Per op type and per node, from the two recordings (run and kernel medians, new, vanished and
  // changed ops); nodes and arena are filled from the results when a side recorded nothing.
  profiler::Comparison ops;
  double latency_us_a = 0, latency_us_b = 0;  // median of the calls without hooks
  Latency latency_a, latency_b;               // the whole of each side's timed loop
  LatencyVerdict verdict;                     // B against A: faster, slower or within noise
  size_t lower_bound_a = 0, lower_bound_b = 0;
  double speedup() const { return latency_us_b > 0 ? latency_us_a / latency_us_b : 0; }  // A / B
  // Set apart from the two latencies so a test can judge recorded sample sets.
  static RunComparison of_latencies(const Latency& a, const Latency& b, const NoiseRule& rule = {});

  std::string to_text(size_t max_list = 20) const;
  nlohmann::json to_json() const;
};

RunComparison compare(const RunResult& baseline, const RunResult& current);

}  // namespace fusebox::workbench
