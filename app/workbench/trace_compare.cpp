#include "app/workbench/trace_compare.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "core/base/strings.h"
#include "profiler/communication.h"
#include "profiler/trace_import.h"

namespace fusebox::workbench {

using exec::ActivityKind;
using exec::DeviceActivity;

const char* NameDelta::change() const {
  if (count_a == 0) return "appeared";
  if (count_b == 0) return "vanished";
  if (ns_b > ns_a) return "slower";
  if (ns_b < ns_a) return "faster";
  return "same";
}

namespace {

int64_t dur(int64_t s, int64_t e) {
  return std::max<int64_t>(0, e - s);
}

// Name -> (count, total) of kernels and of host ops.
struct Totals {
  std::map<std::string, std::pair<int64_t, int64_t>> kernels, ops;
  std::vector<double> steps_us;
};

Totals totals_of(const profiler::Recording& r) {
  Totals t;
  for (const DeviceActivity& x : r.device) {
    if (x.kind != ActivityKind::Kernel) continue;
    auto& v = t.kernels[x.name];
    v.first += 1, v.second += dur(x.start_ns, x.end_ns);
  }
  static const std::string step = "ProfilerStep#";
  for (const profiler::Span& s : r.spans) {
    if (s.kind == profiler::SpanKind::Op) {
      auto& v = t.ops[s.name];
      v.first += 1, v.second += dur(s.start_ns, s.end_ns);
    } else if (s.kind == profiler::SpanKind::Range && s.name.compare(0, step.size(), step) == 0) {
      t.steps_us.push_back(static_cast<double>(dur(s.start_ns, s.end_ns)) / 1e3);
    }
  }
  return t;
}

std::vector<NameDelta> deltas(const std::map<std::string, std::pair<int64_t, int64_t>>& a,
                              const std::map<std::string, std::pair<int64_t, int64_t>>& b) {
  std::map<std::string, NameDelta> by;
  for (const auto& [n, v] : a) {
    NameDelta& d = by[n];
    d.name = n, d.count_a = v.first, d.ns_a = v.second;
  }
  for (const auto& [n, v] : b) {
    NameDelta& d = by[n];
    d.name = n, d.count_b = v.first, d.ns_b = v.second;
  }
  std::vector<NameDelta> out;
  for (auto& [n, d] : by) out.push_back(std::move(d));
  std::stable_sort(out.begin(), out.end(), [](const NameDelta& x, const NameDelta& y) {
    const int64_t ax = x.delta_ns() < 0 ? -x.delta_ns() : x.delta_ns();
    const int64_t ay = y.delta_ns() < 0 ? -y.delta_ns() : y.delta_ns();
    return ax > ay;
  });
  return out;
}

int64_t device_sum(const profiler::GpuAnalysis& a, int64_t profiler::DeviceSplit::*f) {
  int64_t t = 0;
  for (const profiler::DeviceSplit& s : a.devices) t += s.*f;
  return t;
}

std::string dur_text(int64_t ns) {
  return format_duration_ns(static_cast<double>(ns));
}
std::string signed_text(int64_t ns) {
  return (ns > 0 ? "+" : ns < 0 ? "-" : "") + dur_text(ns < 0 ? -ns : ns);
}

}  // namespace

TraceComparison compare_traces(const OpenedTrace& a, const OpenedTrace& b) {
  TraceComparison c;
  c.file_a = a.path;
  c.file_b = b.path;
  const profiler::GpuAnalysis &ga = a.analysis, &gb = b.analysis;
  c.categories = {
      {"compute", ga.kernel_ns - ga.comm.kernel_ns, gb.kernel_ns - gb.comm.kernel_ns},
      {"communication", ga.comm.kernel_ns, gb.comm.kernel_ns},
      {"memcpy", ga.memcpy_ns, gb.memcpy_ns},
      {"memset", ga.memset_ns, gb.memset_ns},
      {"idle", device_sum(ga, &profiler::DeviceSplit::idle_ns),
       device_sum(gb, &profiler::DeviceSplit::idle_ns)},
      {"window", device_sum(ga, &profiler::DeviceSplit::window_ns),
       device_sum(gb, &profiler::DeviceSplit::window_ns)}};
  const Totals ta = totals_of(a.recording), tb = totals_of(b.recording);
  c.kernels = deltas(ta.kernels, tb.kernels);
  c.ops = deltas(ta.ops, tb.ops);
  c.steps_a = static_cast<int64_t>(ta.steps_us.size());
  c.steps_b = static_cast<int64_t>(tb.steps_us.size());
  if (c.steps_a >= 3 && c.steps_b >= 3) {
    c.step_latency_a = summarize(ta.steps_us);
    c.step_latency_b = summarize(tb.steps_us);
    c.step_verdict = judge(c.step_latency_a, c.step_latency_b);
  } else {
    c.no_verdict = "no noise verdict: it needs at least 3 ProfilerStep# ranges on each side (" +
                   std::to_string(c.steps_a) + " and " + std::to_string(c.steps_b) +
                   "); the deltas below are single measurements";
  }
  return c;
}

std::string TraceComparison::to_text(size_t max_list) const {
  std::ostringstream os;
  char line[512];
  os << "A: " << file_a << "\nB: " << file_b << "\n";
  if (step_verdict)
    os << "steps: " << step_latency_a.text() << " -> " << step_latency_b.text() << ": "
       << step_verdict->text() << "\n";
  else
    os << no_verdict << "\n";
  os << "\nby category (GPU time, summed over devices)\n";
  std::snprintf(line, sizeof line, "%-14s %11s %11s %12s\n", "category", "A", "B", "B - A");
  os << line;
  for (const CategoryDelta& d : categories) {
    std::snprintf(line, sizeof line, "%-14s %11s %11s %12s\n", d.category.c_str(),
                  dur_text(d.ns_a).c_str(), dur_text(d.ns_b).c_str(),
                  signed_text(d.ns_b - d.ns_a).c_str());
    os << line;
  }
  auto list = [&](const char* title, const std::vector<NameDelta>& v) {
    os << "\n" << title << " (largest change first)\n";
    std::snprintf(line, sizeof line, "%-9s %-48s %7s %7s %11s %11s %12s\n", "change", "name",
                  "n A", "n B", "A", "B", "B - A");
    os << line;
    size_t shown = 0;
    for (const NameDelta& d : v) {
      if (shown == max_list) break;
      if (d.delta_ns() == 0 && d.count_a == d.count_b) continue;
      const std::string n = d.name.size() > 48 ? d.name.substr(0, 45) + "..." : d.name;
      std::snprintf(line, sizeof line, "%-9s %-48s %7lld %7lld %11s %11s %12s\n", d.change(),
                    n.c_str(), static_cast<long long>(d.count_a), static_cast<long long>(d.count_b),
                    dur_text(d.ns_a).c_str(), dur_text(d.ns_b).c_str(),
                    signed_text(d.delta_ns()).c_str());
      os << line;
      ++shown;
    }
    if (shown == 0) os << "  no change\n";
  };
  list("kernels", kernels);
  list("host ops", ops);
  return os.str();
}

nlohmann::json TraceComparison::to_json() const {
  using nlohmann::json;
  auto names = [](const std::vector<NameDelta>& v) {
    json out = json::array();
    for (const NameDelta& d : v)
      out.push_back({{"name", d.name},
                     {"change", d.change()},
                     {"count_a", d.count_a},
                     {"count_b", d.count_b},
                     {"ns_a", d.ns_a},
                     {"ns_b", d.ns_b},
                     {"delta_ns", d.delta_ns()}});
    return out;
  };
  json cats = json::array();
  for (const CategoryDelta& d : categories)
    cats.push_back({{"category", d.category}, {"ns_a", d.ns_a}, {"ns_b", d.ns_b},
                    {"delta_ns", d.ns_b - d.ns_a}});
  json j = {{"a", file_a},        {"b", file_b},       {"categories", cats},
            {"kernels", names(kernels)}, {"ops", names(ops)}, {"steps_a", steps_a},
            {"steps_b", steps_b}};
  if (step_verdict)
    j["step_verdict"] = {{"verdict", verdict_name(step_verdict->verdict)},
                         {"p_value", step_verdict->p_value},
                         {"effect", step_verdict->effect},
                         {"text", step_verdict->text()}};
  else
    j["step_verdict"] = {{"verdict", nullptr}, {"text", no_verdict}};
  return j;
}

bool is_trace_file(const std::string& path) {
  if (!profiler::looks_like_trace(path)) return false;
  std::ifstream f(path, std::ios::binary);
  std::string head(64 * 1024, '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    return true;  // gzip'd: a kineto trace (recordings are written plain)
  if (head.rfind("SQLite format 3", 0) == 0) return true;
  return head.find("\"traceEvents\"") != std::string::npos;
}

}  // namespace fusebox::workbench
