#include "app/workbench/run_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/base/strings.h"

namespace fusebox::workbench {

Latency summarize(std::vector<double> s) {
  Latency l;
  l.samples_us = s;
  if (s.empty()) return l;
  std::sort(s.begin(), s.end());
  l.min_us = s.front();
  l.median_us = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
  l.p90_us = s[std::min(s.size() - 1, static_cast<size_t>(0.9 * static_cast<double>(s.size())))];
  double sum = 0;
  for (double x : s) sum += x;
  l.mean_us = sum / static_cast<double>(s.size());
  return l;
}

Latency measure_latency(exec::Session& session, const std::vector<ir::Tensor>& inputs, int iters, int warmup) {
  const ir::Graph& g = session.graph();
  std::vector<const void*> in;
  for (const auto& t : inputs) in.push_back(t.bytes());
  std::vector<ir::Tensor> outs;
  std::vector<void*> out;
  for (const auto& name : g.outputs) {
    outs.emplace_back(g.tensor(name).dtype, g.tensor(name).shape);
    out.push_back(outs.back().bytes());
  }
  for (int i = 0; i < warmup; ++i) session.run_raw(in.data(), out.data());
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    session.run_raw(in.data(), out.data());
    auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return summarize(std::move(samples));
}

OutputSummary summarize_output(const std::string& name, const ir::Tensor& t) {
  OutputSummary s{name, t.shape(), 0};
  for (int64_t i = 0; i < t.numel(); ++i)
    s.checksum += t.dtype() == ir::DType::f32 ? t.data<float>()[i] : static_cast<double>(t.data<int64_t>()[i]);
  return s;
}

RunReport make_report(const std::string& model, exec::Session& session, const Latency& latency,
                      const std::vector<ir::Tensor>& outputs) {
  RunReport r;
  const auto& opt = session.options();
  r.model = model;
  r.executor = opt.executor;
  r.backend = opt.backend;
  r.planner = opt.planner;
  r.passes = opt.passes;
  r.threads = opt.threads;
  r.nodes = session.graph().nodes.size();
  r.nodes_original = session.original_graph().nodes.size();
  r.op_histogram = session.graph().op_histogram();
  r.arena_bytes = session.plan().arena_bytes;
  r.lower_bound_bytes = session.plan().lower_bound_bytes;
  r.latency = latency;
  for (size_t i = 0; i < outputs.size(); ++i) r.outputs.push_back(summarize_output(session.graph().outputs[i], outputs[i]));
  r.pass_log = nlohmann::json::array();
  for (const auto& e : session.pass_log().entries) {
    r.pass_log.push_back({{"pass", e.pass},
                          {"enabled", e.enabled},
                          {"changed", e.changed},
                          {"nodes_before", e.nodes_before},
                          {"nodes_after", e.nodes_after},
                          {"millis", e.millis},
                          {"rewrites", e.rewrites},
                          {"near_misses", e.near_misses}});
  }
  return r;
}

nlohmann::json RunReport::to_json() const {
  nlohmann::json j;
  j["model"] = model;
  j["nodes"] = nodes;
  j["nodes_original"] = nodes_original;
  j["op_histogram"] = op_histogram;
  j["executor"] = executor;
  j["backend"] = backend;
  j["threads"] = threads;
  j["latency_us"] = {{"median", latency.median_us}, {"min", latency.min_us}, {"p90", latency.p90_us},
                     {"mean", latency.mean_us}, {"iters", latency.samples_us.size()}};
  j["arena_bytes"] = arena_bytes;
  j["lower_bound_bytes"] = lower_bound_bytes;
  j["planner"] = planner;
  j["passes"] = pass_log;
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : outputs) j["outputs"].push_back({{"name", o.name}, {"shape", o.shape}, {"checksum", o.checksum}});
  return j;
}

std::string RunReport::to_text() const {
  std::ostringstream out;
  char line[256];
  out << "model      " << model << "\n";
  out << "backend    " << backend << ", executor " << executor << ", " << threads << " thread(s)\n";
  out << "passes     " << passes << " (" << nodes_original << " -> " << nodes << " nodes)\n";
  out << "nodes      ";
  bool first = true;
  for (const auto& [op, n] : op_histogram) {
    out << (first ? "" : ", ") << op << " x" << n;
    first = false;
  }
  out << "\n";
  std::snprintf(line, sizeof line, "arena      %s (%zu bytes; lower bound %zu, %.3fx) planner %s\n",
                format_bytes(static_cast<double>(arena_bytes)).c_str(), arena_bytes, lower_bound_bytes,
                lower_bound_bytes ? static_cast<double>(arena_bytes) / static_cast<double>(lower_bound_bytes) : 1.0,
                planner.c_str());
  out << line;
  std::snprintf(line, sizeof line, "latency    median %.1f us, min %.1f us, p90 %.1f us over %zu calls\n",
                latency.median_us, latency.min_us, latency.p90_us, latency.samples_us.size());
  out << line;
  for (const auto& o : outputs) {
    std::snprintf(line, sizeof line, "output     %s %s checksum %.9g\n", o.name.c_str(), ir::shape_str(o.shape).c_str(),
                  o.checksum);
    out << line;
  }
  return out.str();
}

}  // namespace fusebox::workbench
