#include "app/workbench/report.h"

#include <cstdio>
#include <sstream>

#include "core/base/strings.h"

namespace fusebox::workbench {

nlohmann::json to_json(const passes::PassLog& log) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : log.entries) {
    nlohmann::json rewrites = nlohmann::json::array(), misses = nlohmann::json::array();
    for (const auto& r : e.rewrites)
      rewrites.push_back(
          {{"pattern", r.pattern}, {"removed", r.removed}, {"added", r.added}, {"changed", r.changed}, {"text", r.text}});
    for (const auto& m : e.near_misses) misses.push_back({{"pattern", m.pattern}, {"node", m.node}, {"text", m.text}});
    out.push_back({{"pass", e.pass},
                   {"enabled", e.enabled},
                   {"changed", e.changed},
                   {"nodes_before", e.nodes_before},
                   {"nodes_after", e.nodes_after},
                   {"millis", e.millis},
                   {"rewrites", rewrites},
                   {"near_misses", misses}});
  }
  return out;
}

nlohmann::json to_json(const planner::ExecutionPlan& plan, const planner::PlanIndex* index) {
  nlohmann::json j;
  j["planner"] = plan.strategy;
  j["tried"] = nlohmann::json::array();
  for (const auto& [name, bytes] : plan.tried) j["tried"].push_back({{"planner", name}, {"arena_bytes", bytes}});
  j["arena_bytes"] = plan.arena_bytes;
  j["lower_bound_bytes"] = plan.lower_bound_bytes;
  j["ratio"] = plan.ratio();
  j["live_bytes"] = plan.live_bytes;
  j["buffers"] = nlohmann::json::array();
  for (size_t b = 0; b < plan.placements.size(); ++b) {
    const auto& p = plan.placements[b];
    nlohmann::json buf = {{"name", p.buffer.name},         {"offset", p.offset},
                          {"bytes", p.buffer.bytes},       {"first_step", p.buffer.first},
                          {"last_step", p.buffer.last},    {"scratch", p.buffer.scratch}};
    if (index && b < index->buffers.size()) {
      buf["tensors"] = index->buffers[b].tensors;
      buf["producers"] = index->buffers[b].producers;
      buf["consumers"] = index->buffers[b].consumers;
    }
    j["buffers"].push_back(std::move(buf));
  }
  return j;
}

nlohmann::json to_json(const Latency& l) {
  nlohmann::json j = {{"median", l.median_us}, {"p10", l.p10_us},   {"p90", l.p90_us},
                      {"min", l.min_us},       {"mean", l.mean_us}, {"iters", l.samples_us.size()}};
  if (const std::string noisy = l.noise_warning(); !noisy.empty()) j["noisy"] = noisy;
  return j;
}

nlohmann::json to_json(const RunResult& r, bool detail) {
  const Settings& s = r.settings;
  nlohmann::json j;
  j["model"] = s.model;
  j["settings"] = to_json(s);
  j["nodes"] = r.graph().nodes.size();
  j["nodes_original"] = r.model->graph.nodes.size();
  j["op_histogram"] = r.graph().op_histogram();
  j["executor"] = s.executor;
  j["backend"] = s.backend;
  j["threads"] = s.threads;
  j["isa"] = r.isa;  // the level that ran (settings.isa: what was asked, e.g. "auto")
  // Asked for, and whether it applied: a setting that does not apply is said so, with why.
  j["capture"] = {{"asked", s.capture}, {"applied", s.capture && r.capture_note.empty()}};
  if (!r.capture_note.empty()) j["capture"]["not_applicable"] = r.capture_note;
  if (!r.captured.empty()) j["capture"]["captured"] = r.captured;
  j["latency_us"] = to_json(r.latency);
  j["arena_bytes"] = r.plan->arena_bytes;
  j["lower_bound_bytes"] = r.plan->lower_bound_bytes;
  j["planner"] = r.plan->strategy;
  j["passes"] = to_json(r.optimized->log);
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : r.output_summaries)
    j["outputs"].push_back({{"name", o.name}, {"shape", o.shape}, {"checksum", o.checksum}});
  j["stages"] = nlohmann::json::array();
  for (const auto& st : r.stages)
    j["stages"].push_back({{"stage", stage_name(st.stage)}, {"millis", st.millis}, {"cached", st.cached}});
  if (detail) {
    j["plan"] = to_json(*r.plan, r.plan_index.get());
    if (r.analysis) j["analysis"] = r.analysis->to_json();
  }
  return j;
}

std::string report_text(const RunResult& r) {
  const Settings& s = r.settings;
  const ir::Graph& g = r.graph();
  const planner::ExecutionPlan& plan = *r.plan;
  std::ostringstream out;
  char line[256];
  out << "model      " << s.model << "\n";
  out << "backend    " << s.backend << (r.isa.empty() ? "" : " (" + r.isa + ")") << ", executor " << s.executor
      << ", " << s.threads << " thread(s)\n";
  out << "passes     " << s.passes_text() << " (" << r.model->graph.nodes.size() << " -> " << g.nodes.size()
      << " nodes)\n";
  if (!s.patterns_off.empty()) out << "patterns   off: " << join(s.patterns_off, ", ") << "\n";
  if (s.capture)
    out << "capture    "
        << (r.capture_note.empty() ? "on: one run captured, every later run a replay" +
                                         (r.captured.empty() ? std::string() : " (" + r.captured + ")")
                                   : "not applicable: " + r.capture_note)
        << "\n";
  out << "nodes      ";
  bool first = true;
  for (const auto& [op, n] : g.op_histogram()) {
    out << (first ? "" : ", ") << op << " x" << n;
    first = false;
  }
  out << "\n";
  std::snprintf(line, sizeof line, "arena      %s (%zu bytes; lower bound %zu, %.3fx) planner %s\n",
                format_bytes(static_cast<double>(plan.arena_bytes)).c_str(), plan.arena_bytes,
                plan.lower_bound_bytes, plan.ratio(), plan.strategy.c_str());
  out << line;
  out << "latency    median " << r.latency.text() << ", min "
      << format_duration_ns(r.latency.min_us * 1e3) << " over " << r.latency.samples_us.size()
      << " calls\n";
  if (const std::string noisy = r.latency.noise_warning(); !noisy.empty())
    out << "           " << noisy << "\n";
  if (r.recording)
    if (const std::string workers = profiler::worker_utilisation_line(*r.recording); !workers.empty())
      out << "threads    " << workers << "\n";
  for (const auto& o : r.output_summaries) {
    std::snprintf(line, sizeof line, "output     %s %s checksum %.9g\n", o.name.c_str(),
                  ir::shape_str(o.shape).c_str(), o.checksum);
    out << line;
  }
  return out.str();
}

}  // namespace fusebox::workbench
