#pragma once
// Measuring a session: latency over many calls, and the report both front ends show
// (`fusebox run` prints it; --json emits it as one object).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/exec/session.h"

namespace fusebox::workbench {

struct Latency {
  double median_us = 0, min_us = 0, p90_us = 0, mean_us = 0;
  std::vector<double> samples_us;
};

// Runs `warmup` untimed calls, then `iters` timed ones through the allocation-free path.
Latency measure_latency(exec::Session& session, const std::vector<ir::Tensor>& inputs, int iters, int warmup);
Latency summarize(std::vector<double> samples_us);

struct OutputSummary {
  std::string name;
  ir::Shape shape;
  double checksum = 0;  // sum of all elements, in double
};
OutputSummary summarize_output(const std::string& name, const ir::Tensor& t);

struct RunReport {
  std::string model;
  std::string executor;
  std::string backend;
  std::string planner;
  std::string passes;
  int threads = 1;
  size_t nodes = 0;           // after passes
  size_t nodes_original = 0;  // before passes
  std::map<std::string, int> op_histogram;
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;
  Latency latency;
  std::vector<OutputSummary> outputs;
  nlohmann::json pass_log;  // [{pass, enabled, changed, nodes_before, nodes_after, millis, rewrites, near_misses}]

  nlohmann::json to_json() const;
  std::string to_text() const;
};

RunReport make_report(const std::string& model, exec::Session& session, const Latency& latency,
                      const std::vector<ir::Tensor>& outputs);

}  // namespace fusebox::workbench
