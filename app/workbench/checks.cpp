#include "app/workbench/checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/workbench/noise.h"
#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::workbench {
namespace {

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// " key=value", the shape of every parameter in a description.
std::string param(const std::string& key, const std::string& value) {
  return " " + key + "=" + value;
}

const passes::PassLogEntry* log_entry(const RunResult& r, const std::string& pass) {
  for (const auto& e : r.optimized->log.entries)
    if (e.pass == pass) return &e;
  return nullptr;
}

std::string describe_step_ratio(const Check& c) {
  return param("step", std::to_string(c.step)) + param("ratio", fmt("%g", c.ratio));
}

CheckResult node_count(const CheckInput& in) {
  const Check& c = in.check;
  const auto n = static_cast<int64_t>(in.result->graph().nodes.size());
  const bool passed = (!c.equals || n == *c.equals) && (!c.at_most || n <= *c.at_most) &&
                      (!c.at_least || n >= *c.at_least);
  return {&c, passed, std::to_string(n) + " nodes"};
}

CheckResult op_count(const CheckInput& in, bool present) {
  const Check& c = in.check;
  const ir::Graph& g = in.result->graph();
  const auto n = std::count_if(g.nodes.begin(), g.nodes.end(),
                               [&](const ir::Node& x) { return x.op == c.op; });
  return {&c, present ? n > 0 : n == 0,
          std::to_string(n) + " " + c.op + " node" + (n == 1 ? "" : "s")};
}

CheckResult arena_within_bound(const CheckInput& in) {
  const Check& c = in.check;
  const auto& plan = *in.result->plan;
  const bool passed =
      static_cast<double>(plan.arena_bytes) <= plan.lower_bound_bytes * (1 + c.percent / 100) + 0.5;
  return {&c, passed,
          "arena " + format_bytes(static_cast<double>(plan.arena_bytes)) + " = " +
              fmt("%.3fx", plan.ratio()) + " the lower bound " +
              format_bytes(static_cast<double>(plan.lower_bound_bytes)) + " (" + plan.strategy +
              ")"};
}

CheckResult arena_at_most(const CheckInput& in) {
  const Check& c = in.check;
  const RunResult& other = in.earlier(c.step);
  const double a = static_cast<double>(in.result->plan->arena_bytes),
               b = static_cast<double>(other.plan->arena_bytes);
  return {&c, a <= c.ratio * b + 0.5,
          "arena " + format_bytes(a) + " vs " + format_bytes(b) + " at step " +
              std::to_string(c.step) + fmt(" (%.3fx)", b > 0 ? a / b : 0)};
}

CheckResult pass_changed(const CheckInput& in) {
  const Check& c = in.check;
  const auto* e = log_entry(*in.result, c.pass);
  const bool changed = e && e->enabled && e->changed;
  return {&c, changed == c.changed,
          !e || !e->enabled ? c.pass + " is off"
          : changed         ? c.pass + fmt(" changed the graph: %.0f -> %.0f nodes",
                                           static_cast<double>(e->nodes_before),
                                           static_cast<double>(e->nodes_after))
                            : c.pass + " did not change the graph"};
}

CheckResult outputs_match_previous(const CheckInput& in) {
  const Check& c = in.check;
  const RunResult& r = *in.result;
  const RunResult& prev = in.earlier(static_cast<int>(in.step) - 1);
  CheckResult out{&c, false, ""};
  if (prev.outputs.size() != r.outputs.size()) {
    out.figures =
        std::to_string(r.outputs.size()) + " outputs vs " + std::to_string(prev.outputs.size());
    return out;
  }
  double max_diff = 0, max_abs = 0;
  bool shapes = true;
  for (size_t o = 0; o < r.outputs.size() && shapes; ++o) {
    const ir::Tensor& a = r.outputs[o];
    const ir::Tensor& b = prev.outputs[o];
    if (a.shape() != b.shape()) {
      shapes = false;
      break;
    }
    for (int64_t i = 0; i < a.numel(); ++i) {
      const double x = a.data<float>()[i], y = b.data<float>()[i];
      max_diff = std::max(max_diff, std::isnan(x) != std::isnan(y) ? INFINITY : std::fabs(x - y));
      max_abs = std::max(max_abs, std::fabs(y));
    }
  }
  out.passed = shapes && max_diff <= c.tolerance * std::max(1.0, max_abs);
  out.figures = shapes ? fmt("max |diff| %.3g, largest |value| %.3g", max_diff, max_abs)
                       : "output shapes differ";
  return out;
}

CheckResult faster_than(const CheckInput& in) {
  const Check& c = in.check;
  const RunResult& r = *in.result;
  const RunResult& other = in.earlier(c.step);
  const double speedup =
      r.latency.median_us > 0 ? other.latency.median_us / r.latency.median_us : 0;
  const LatencyVerdict v = judge(other.latency, r.latency);
  std::string figures = fmt("%.2fx faster than step %.0f", speedup, c.step) + " (" +
                        r.latency.text() + " vs " + other.latency.text() + "); " + v.text();
  // A ratio below 1 claims "not much slower": only a measured slowdown past it refutes that.
  if (c.ratio < 1) return {&c, speedup >= c.ratio || v.verdict != Verdict::Slower, figures};
  // A ratio of 1 or more claims "faster": it has to be measurably so, and by the ratio.
  const bool faster = v.verdict == Verdict::Faster;
  if (!faster) figures = "not measurably faster: " + figures;
  return {&c, faster && speedup >= c.ratio, figures};
}

CheckResult op_bound(const CheckInput& in) {
  const Check& c = in.check;
  const RunResult& r = *in.result;
  CheckResult out{&c, false, ""};
  if (!r.analysis) {
    out.figures = "no recorded runs (profile_runs = 0)";
    return out;
  }
  if (!c.node.empty() && !has_node(r.graph(), c.node))
    throw_no_node(in.scenario, c.pointer + "/node", c.node, r.graph());
  const auto& rows = c.node.empty() ? r.analysis->by_type : r.analysis->by_node;
  const std::string key = c.node.empty() ? c.op : c.node;
  auto it = std::find_if(rows.begin(), rows.end(),
                         [&](const profiler::OpRow& row) { return row.key == key; });
  if (it == rows.end()) {
    out.figures = "no " + key + " in the recorded runs";
    return out;
  }
  const std::string got = profiler::bound_name(it->bound);
  out.passed = got.rfind(c.bound, 0) == 0 && (c.level.empty() || it->memory_level == c.level);
  out.figures = key + " is " + it->label() + ": " + it->why;
  return out;
}

// --- Trace checks: over a trace scenario's GpuAnalysis ------------------------------------------

const profiler::GpuAnalysis& analysis_of(const CheckInput& in) { return in.trace->analysis; }

bool within(double got, double want, double tolerance) {
  return std::fabs(got - want) <= tolerance * std::fabs(want) + 1e-9;
}

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// Every device's listed gaps, longest first: the order trace.gap=N counts in (trace_panel.cpp).
std::vector<profiler::IdleGap> sorted_gaps(const profiler::GpuAnalysis& a) {
  std::vector<profiler::IdleGap> gaps;
  for (const auto& d : a.devices) gaps.insert(gaps.end(), d.longest_gaps.begin(), d.longest_gaps.end());
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const auto& x, const auto& y) { return x.duration_ns > y.duration_ns; });
  return gaps;
}

double device_sum(const profiler::GpuAnalysis& a, int64_t profiler::DeviceSplit::*field) {
  double sum = 0;
  for (const auto& d : a.devices) sum += static_cast<double>(d.*field);
  return sum;
}

// trace_total's keys and how each is read, in the order the schema lists them.
const std::vector<std::pair<std::string, std::function<double(const profiler::GpuAnalysis&)>>>& totals() {
  using A = profiler::GpuAnalysis;
  using D = profiler::DeviceSplit;
  static const std::vector<std::pair<std::string, std::function<double(const A&)>>> t = {
      {"device_count", [](const A& a) { return static_cast<double>(a.devices.size()); }},
      {"kernel_count", [](const A& a) { return static_cast<double>(a.kernel_count); }},
      {"kernel_ms", [](const A& a) { return ms(a.kernel_ns); }},
      {"memcpy_count", [](const A& a) { return static_cast<double>(a.memcpy_count); }},
      {"memcpy_ms", [](const A& a) { return ms(a.memcpy_ns); }},
      {"memcpy_mb", [](const A& a) { return static_cast<double>(a.memcpy_bytes) / 1e6; }},
      {"memset_count", [](const A& a) { return static_cast<double>(a.memset_count); }},
      {"window_ms", [](const A& a) { return device_sum(a, &D::window_ns) / 1e6; }},
      {"busy_ms", [](const A& a) { return device_sum(a, &D::busy_ns) / 1e6; }},
      {"idle_ms", [](const A& a) { return device_sum(a, &D::idle_ns) / 1e6; }},
      {"idle_percent",
       [](const A& a) {
         const double w = device_sum(a, &D::window_ns);
         return w > 0 ? 100 * device_sum(a, &D::idle_ns) / w : 0;
       }},
      {"idle_host_bound_ms", [](const A& a) { return device_sum(a, &D::idle_host_bound_ns) / 1e6; }},
      {"idle_sync_ms", [](const A& a) { return device_sum(a, &D::idle_sync_ns) / 1e6; }},
      {"idle_copy_wait_ms", [](const A& a) { return device_sum(a, &D::idle_copy_wait_ns) / 1e6; }},
      {"idle_other_ms", [](const A& a) { return device_sum(a, &D::idle_other_ns) / 1e6; }},
      {"gap_count", [](const A& a) { return device_sum(a, &D::gap_count); }},
      {"sync_count", [](const A& a) { return device_sum(a, &D::sync_count); }},
      {"sync_ms", [](const A& a) { return device_sum(a, &D::sync_ns) / 1e6; }},
      {"launch_bound", [](const A& a) { return static_cast<double>(a.launch.launch_bound); }},
      {"launch_bound_lost_ms", [](const A& a) { return ms(a.launch.launch_bound_lost_ns); }},
      {"launch_calls_ms", [](const A& a) { return ms(a.launch.launch_call_total_ns); }},
      {"pageable_copy_count",
       [](const A& a) {
         double n = 0;
         for (const auto& c : a.copies) n += c.pageable ? static_cast<double>(c.count) : 0;
         return n;
       }},
      {"pageable_copy_ms",
       [](const A& a) {
         double t = 0;
         for (const auto& c : a.copies) t += c.pageable ? ms(c.total_ns) : 0;
         return t;
       }},
      {"graph_length",
       [](const A& a) {
         return a.graph_candidates.empty() ? 0.0 : static_cast<double>(a.graph_candidates[0].kernels.size());
       }},
      {"graph_repetitions",
       [](const A& a) {
         return a.graph_candidates.empty() ? 0.0 : static_cast<double>(a.graph_candidates[0].repetitions);
       }},
      {"graph_launch_ms",
       [](const A& a) { return a.graph_candidates.empty() ? 0.0 : ms(a.graph_candidates[0].launch_ns); }},
      {"graph_saving_ms",
       [](const A& a) { return a.graph_candidates.empty() ? 0.0 : ms(a.graph_candidates[0].saving_ns); }},
      {"replay_count", [](const A& a) { return static_cast<double>(a.graphs.replays); }},
      {"replay_kernel_count", [](const A& a) { return static_cast<double>(a.graphs.kernels); }},
      {"replay_kernel_ms", [](const A& a) { return ms(a.graphs.kernel_ns); }},
      {"outside_kernel_count", [](const A& a) { return static_cast<double>(a.graphs.outside_kernels); }},
      {"outside_kernel_ms", [](const A& a) { return ms(a.graphs.outside_kernel_ns); }},
      {"comm_kernel_count", [](const A& a) { return static_cast<double>(a.comm.kernel_count); }},
      {"comm_ms", [](const A& a) { return ms(a.comm.kernel_ns); }},
      {"comm_exposed_ms", [](const A& a) { return ms(a.comm.exposed_ns); }},
  };
  return t;
}

// trace_total's keys over several ranks (ranks.h), sums over the steps every rank has: the
// ranks given and their common steps, the straggler, its computation and communication, the
// most communication any rank spends, and the others' wait for the straggler.
const std::vector<std::pair<std::string, std::function<double(const profiler::RankAnalysis&)>>>& rank_totals() {
  using R = profiler::RankAnalysis;
  auto straggler = [](const R& r) -> const profiler::RankSummary* {
    for (const auto& s : r.ranks)
      if (s.rank == r.straggler) return &s;
    return nullptr;
  };
  static const std::vector<std::pair<std::string, std::function<double(const R&)>>> t = {
      {"rank_count", [](const R& r) { return static_cast<double>(r.ranks.size()); }},
      {"common_steps", [](const R& r) { return static_cast<double>(r.steps.size()); }},
      {"straggler_rank", [](const R& r) { return static_cast<double>(r.straggler); }},
      {"straggler_compute_ms", [=](const R& r) { return straggler(r) ? ms(straggler(r)->compute_ns) : 0.0; }},
      {"straggler_comm_ms", [=](const R& r) { return straggler(r) ? ms(straggler(r)->comm_ns) : 0.0; }},
      {"max_comm_ms",
       [](const R& r) {
         int64_t most = 0;
         for (const auto& s : r.ranks) most = std::max(most, s.comm_ns);
         return ms(most);
       }},
      {"others_wait_ms", [](const R& r) { return ms(r.others_wait_ns); }},
  };
  return t;
}

CheckResult finding(const CheckInput& in) {
  const Check& c = in.check;
  const auto& findings = analysis_of(in).findings;
  for (size_t i = 0; i < findings.size(); ++i) {
    const profiler::GpuFinding& f = findings[i];
    if (f.kind != c.finding) continue;
    const auto rank = static_cast<int64_t>(i + 1);
    const double lost = ms(f.time_lost_ns);
    const bool passed = (!c.rank_at_most || rank <= *c.rank_at_most) &&
                        (!c.time_lost_ms || within(lost, *c.time_lost_ms, c.tolerance));
    return {&c, passed,
            fmt("rank %.0f of %.0f, %.3f ms lost: ", static_cast<double>(rank),
                static_cast<double>(findings.size()), lost) +
                f.sentence};
  }
  return {&c, false,
          "no " + c.finding + " finding (" + std::to_string(findings.size()) + " findings)"};
}

CheckResult trace_total(const CheckInput& in) {
  const Check& c = in.check;
  for (const auto& [key, read] : totals()) {
    if (key != c.key) continue;
    const double got = read(analysis_of(in));
    return {&c, within(got, *c.value, c.tolerance),
            c.key + fmt(" = %.6g (want %.6g within %g%%)", got, *c.value, c.tolerance * 100)};
  }
  for (const auto& [key, read] : rank_totals()) {
    if (key != c.key) continue;
    if (!in.trace->ranks) return {&c, false, c.key + ": the trace is one rank (open a folder of one job's ranks)"};
    const double got = read(*in.trace->ranks);
    return {&c, within(got, *c.value, c.tolerance),
            c.key + fmt(" = %.6g (want %.6g within %g%%)", got, *c.value, c.tolerance * 100)};
  }
  return {&c, false, "no total " + c.key};
}

// phase_total's keys, over one serving phase of the trace (profiler/phases.h), in the order the
// schema lists them. The top kernel is the phase's op table's first row (most time).
const std::vector<std::pair<std::string, std::function<double(const profiler::Phase&)>>>&
phase_totals() {
  using P = profiler::Phase;
  static const std::vector<std::pair<std::string, std::function<double(const P&)>>> t = {
      {"steps", [](const P& p) { return static_cast<double>(p.steps); }},
      {"tokens", [](const P& p) { return static_cast<double>(p.tokens); }},
      {"host_ms", [](const P& p) { return ms(p.host_ns); }},
      {"step_ms", [](const P& p) { return ms(p.step_ns); }},
      {"kernel_count", [](const P& p) { return static_cast<double>(p.kernel_count); }},
      {"kernel_ms", [](const P& p) { return ms(p.kernel_ns); }},
      {"kv_write_ms", [](const P& p) { return ms(p.kv_write_ns); }},
      {"tokens_per_s", [](const P& p) { return p.tokens_per_s; }},
      {"top_kernel_count",
       [](const P& p) {
         return p.kernels.empty() ? 0.0 : static_cast<double>(p.kernels[0].count);
       }},
      {"top_kernel_ms",
       [](const P& p) { return p.kernels.empty() ? 0.0 : ms(p.kernels[0].total_ns); }},
  };
  return t;
}

// counter's keys, over one counter track's samples in the window (profiler/counters.h).
const std::vector<std::pair<std::string, std::function<double(const profiler::CounterSummary&)>>>&
counter_totals() {
  using C = profiler::CounterSummary;
  static const std::vector<std::pair<std::string, std::function<double(const C&)>>> t = {
      {"samples", [](const C& c) { return static_cast<double>(c.samples); }},
      {"first", [](const C& c) { return c.first; }},
      {"last", [](const C& c) { return c.last; }},
      {"low", [](const C& c) { return c.low; }},
      {"peak", [](const C& c) { return c.peak; }},
  };
  return t;
}

template <typename T>
CheckResult keyed_total(
    const Check& c, const std::string& subject,
    const std::vector<std::pair<std::string, std::function<double(const T&)>>>& keys, const T& of) {
  for (const auto& [key, read] : keys) {
    if (key != c.key) continue;
    const double got = read(of);
    return {&c, within(got, *c.value, c.tolerance),
            subject + " " + c.key +
                fmt(" = %.10g (want %.10g within %g%%)", got, *c.value, c.tolerance * 100)};
  }
  return {&c, false, "no total " + c.key};
}

CheckResult phase_total(const CheckInput& in) {
  const Check& c = in.check;
  const profiler::Phases& phases = analysis_of(in).phases;
  std::vector<std::string> names;
  for (const profiler::Phase& p : phases.phases) {
    names.push_back(p.name);
    if (p.name != c.phase) continue;
    CheckResult r = keyed_total(c, c.phase, phase_totals(), p);
    if (c.top_kernel.empty()) return r;
    const std::string top = p.kernels.empty() ? "" : p.kernels[0].name;
    r.passed = r.passed && top.find(c.top_kernel) != std::string::npos;
    r.figures += "; its top " + std::string(phases.work == "cpu" ? "op" : "kernel") + ": " +
                 (top.empty() ? "none" : top);
    return r;
  }
  return {&c, false,
          "no " + c.phase + " phase in this trace (" +
              (names.empty() ? "it has none: " + phases.rule : "it has " + join(names, ", ")) +
              ")"};
}

CheckResult counter(const CheckInput& in) {
  const Check& c = in.check;
  std::vector<std::string> names;
  for (const profiler::CounterSummary& s : analysis_of(in).counters) {
    names.push_back(s.name);
    if (s.name == c.counter) return keyed_total(c, "'" + c.counter + "'", counter_totals(), s);
  }
  return {&c, false,
          "no counter track '" + c.counter + "' (" +
              (names.empty() ? "the trace has none" : join(names, ", ")) + ")"};
}

CheckResult gap(const CheckInput& in) {
  const Check& c = in.check;
  const auto gaps = sorted_gaps(analysis_of(in));
  if (static_cast<size_t>(c.gap) >= gaps.size())
    return {&c, false, "no gap " + std::to_string(c.gap) + " (" + std::to_string(gaps.size()) + " listed)"};
  const profiler::IdleGap& g = gaps[c.gap];
  const std::string cause = profiler::idle_cause_name(g.cause);
  bool host_seen = c.host.empty();
  std::string host;
  for (const auto& h : g.host) {
    host_seen |= h.name.find(c.host) != std::string::npos;
    host += (host.empty() ? "" : ", ") + h.name + fmt(" %.3f ms", ms(h.overlap_ns));
  }
  return {&c, (c.cause.empty() || c.cause == cause) && host_seen,
          fmt("gap %.0f: %.3f ms on GPU %.0f, ", c.gap, ms(g.duration_ns), g.device) + cause +
              "; host: " + (host.empty() ? "nothing recorded" : host)};
}

// The figures kernel_figure reads from one profiled launch, in the order the schema lists them.
using FigureRead = std::optional<double> (*)(const profiler::KernelFigures&);
const std::vector<std::pair<std::string, FigureRead>>& figure_reads() {
  using F = profiler::KernelFigures;
  static const std::vector<std::pair<std::string, FigureRead>> t = {
      {"duration_us", [](const F& f) { return f.duration_ns ? std::optional<double>(*f.duration_ns / 1e3) : std::nullopt; }},
      {"sm_throughput_pct", [](const F& f) { return f.sm_throughput_pct; }},
      {"memory_throughput_pct", [](const F& f) { return f.memory_throughput_pct; }},
      {"l1_throughput_pct", [](const F& f) { return f.l1_throughput_pct; }},
      {"l2_throughput_pct", [](const F& f) { return f.l2_throughput_pct; }},
      {"dram_throughput_pct", [](const F& f) { return f.dram_throughput_pct; }},
      {"theoretical_occupancy_pct", [](const F& f) { return f.theoretical_occupancy_pct; }},
      {"achieved_occupancy_pct", [](const F& f) { return f.achieved_occupancy_pct; }},
      {"occupancy_limit_blocks", [](const F& f) { return f.occupancy_limit_blocks; }},
      {"l1_hit_pct", [](const F& f) { return f.l1_hit_pct; }},
      {"l2_hit_pct", [](const F& f) { return f.l2_hit_pct; }},
      {"dram_gbytes_per_s", [](const F& f) { return f.dram_gbytes_per_s; }},
      {"no_eligible_pct", [](const F& f) { return f.no_eligible_pct; }},
      {"roof_pct", [](const F& f) { return f.roofline.pct_of_roof; }},
      {"intensity", [](const F& f) { return f.roofline.intensity; }},
  };
  return t;
}

// The launch a kernel check names, or a failed result saying why.
const profiler::KernelFigures* launch_of(const CheckInput& in, CheckResult& failed) {
  std::string why;
  const profiler::KernelFigures* f = launch_named(*in.kernels, in.check.kernel, why);
  if (!f) failed = {&in.check, false, why};
  return f;
}

CheckResult kernel_figure(const CheckInput& in) {
  const Check& c = in.check;
  CheckResult failed;
  const profiler::KernelFigures* f = launch_of(in, failed);
  if (!f) return failed;
  for (const auto& [key, read] : figure_reads()) {
    if (key != c.key) continue;
    const std::optional<double> got = read(*f);
    // The kernel part is in the check's description; the figures start at the figure.
    if (!got) return {&c, false, c.key + " is not in its report"};
    return {&c, within(*got, *c.value, c.tolerance), c.key + fmt(" = %.6g (want %.6g within %g%%)", *got, *c.value, c.tolerance * 100)};
  }
  return {&c, false, "no kernel figure " + c.key};
}

CheckResult kernel_finding(const CheckInput& in) {
  const Check& c = in.check;
  CheckResult failed;
  const profiler::KernelFigures* f = launch_of(in, failed);
  if (!f) return failed;
  for (size_t i = 0; i < f->findings.size(); ++i) {
    const profiler::KernelFinding& x = f->findings[i];
    if (x.item != c.item) continue;
    const auto rank = static_cast<int64_t>(i + 1);
    return {&c, x.measured && (!c.rank_at_most || rank <= *c.rank_at_most),
            fmt("rank %.0f of %.0f: ", static_cast<double>(rank),
                                                      static_cast<double>(f->findings.size())) +
                x.item + ": " + x.text + (x.gain_pct ? fmt(" [est. %.1f%%, ", *x.gain_pct) + x.gain_source + "]" : "")};
  }
  return {&c, false, "no fine-grained item " + c.item};
}

CheckResult kernel_limiter(const CheckInput& in) {
  const Check& c = in.check;
  CheckResult failed;
  const profiler::KernelFigures* f = launch_of(in, failed);
  if (!f) return failed;
  return {&c, f->limiter == c.unit,
          "nearest its peak: " + (f->limiter.empty() ? "no SOL section" : f->limiter)};
}

std::string no_rule(const Check&, size_t) {
  return "";
}

Registry<CheckKind> make_registry() {
  Registry<CheckKind> kinds("check");
  kinds.add("node_count", {{},
                           {"equals", "at_most", "at_least"},
                           false,
                           "the graph has this many nodes",
                           [](const Check& c, size_t) {
                             return !c.equals && !c.at_most && !c.at_least
                                        ? "node_count needs equals, at_most or at_least"
                                        : "";
                           },
                           node_count,
                           [](const Check& c) {
                             std::string s;
                             if (c.equals) s += param("equals", std::to_string(*c.equals));
                             if (c.at_most) s += param("at_most", std::to_string(*c.at_most));
                             if (c.at_least) s += param("at_least", std::to_string(*c.at_least));
                             return s;
                           }});
  kinds.add("op_present", {{"op"},
                           {},
                           false,
                           "a node of this op type is in the graph",
                           no_rule,
                           [](const CheckInput& in) { return op_count(in, true); },
                           [](const Check& c) { return param("op", c.op); }});
  kinds.add("op_absent", {{"op"},
                          {},
                          false,
                          "no node of this op type is in the graph",
                          no_rule,
                          [](const CheckInput& in) { return op_count(in, false); },
                          [](const Check& c) { return param("op", c.op); }});
  kinds.add("arena_within_bound",
            {{"percent"},
             {},
             false,
             "the arena is within percent% of its lower bound",
             no_rule,
             arena_within_bound,
             [](const Check& c) { return param("percent", fmt("%g", c.percent)); }});
  kinds.add("arena_at_most", {{"step"},
                              {"ratio"},
                              false,
                              "the arena is at most ratio x that step's arena",
                              no_rule,
                              arena_at_most,
                              describe_step_ratio});
  kinds.add("pass_changed", {{"pass"},
                             {"changed"},
                             false,
                             "the pass changed the graph (or, changed: false, did not)",
                             no_rule,
                             pass_changed,
                             [](const Check& c) {
                               return param("pass", c.pass) +
                                      (c.changed ? "" : param("changed", "false"));
                             }});
  kinds.add("outputs_match_previous",
            {{},
             {"tolerance"},
             false,
             "the outputs equal the previous step's, within tolerance x the largest |value|",
             [](const Check&, size_t step) {
               return step == 0 ? "outputs_match_previous needs a previous step" : "";
             },
             outputs_match_previous,
             [](const Check& c) { return param("tolerance", fmt("%g", c.tolerance)); }});
  kinds.add("faster_than", {{"step"},
                            {"ratio"},
                            true,
                            "the median latency is at least ratio x lower than that step's, and "
                            "measurably so (noise.h: Mann-Whitney p < 0.01, >= 3% change); a ratio "
                            "below 1 (not much slower) fails only on a measured slowdown past it",
                            no_rule,
                            faster_than,
                            describe_step_ratio});
  kinds.add("op_bound", {{"bound"},
                         {"op", "node", "level"},
                         true,
                         "the op (or node) is compute-, memory- or overhead-bound, or below both roofs "
                         "(under 50% of each; profiler/analysis.h); memory-bound under this level "
                         "(L1, L2, L3, DRAM: the level its bytes are placed at)",
                         [](const Check& c, size_t) -> std::string {
                           if (c.op.empty() == c.node.empty()) return "op_bound needs exactly one of \"op\" and \"node\"";
                           if (!c.level.empty() && c.bound != "memory")
                             return "op_bound's \"level\" names the memory level of a memory-bound op: it needs \"bound\": \"memory\"";
                           return "";
                         },
                         op_bound,
                         [](const Check& c) {
                           return (c.op.empty() ? "" : param("op", c.op)) +
                                  (c.node.empty() ? "" : param("node", c.node)) +
                                  param("bound", c.bound) + (c.level.empty() ? "" : param("level", c.level));
                         }});
  // Trace checks: a trace scenario's (CheckKind::trace), over its OpenedTrace's GpuAnalysis.
  // Structural: the trace does not change, so a figure holds or it does not.
  CheckKind k;
  k = {{"kind"},
       {"rank_at_most", "time_lost_ms", "tolerance"},
       false,
       "the trace's GPU analysis has a finding of this kind (ranked at most rank_at_most, 1 = the "
       "top; costing time_lost_ms within tolerance, relative)",
       no_rule,
       finding,
       [](const Check& c) {
         std::string s = param("kind", c.finding);
         if (c.rank_at_most) s += param("rank_at_most", std::to_string(*c.rank_at_most));
         if (c.time_lost_ms) s += param("time_lost_ms", fmt("%.10g", *c.time_lost_ms)) + param("tolerance", fmt("%g", c.tolerance));
         return s;
       },
       true};
  kinds.add("finding", k);
  k = {{"key", "equals"},
       {"tolerance"},
       false,
       "a total of the trace's GPU analysis equals this, within tolerance (relative)",
       no_rule,
       trace_total,
       [](const Check& c) {
         return param("key", c.key) + param("equals", fmt("%.10g", *c.value)) + param("tolerance", fmt("%g", c.tolerance));
       },
       true};
  kinds.add("trace_total", k);
  k = {{"phase", "key", "equals"},
       {"tolerance", "top_kernel"},
       false,
       "a total of one serving phase (prefill, decode, mixed, idle: profiler/phases.h) equals "
       "this, within "
       "tolerance (relative); with top_kernel, the phase's top kernel (or op) also has it in its "
       "name",
       no_rule,
       phase_total,
       [](const Check& c) {
         return param("phase", c.phase) + param("key", c.key) +
                param("equals", fmt("%.10g", *c.value)) +
                param("tolerance", fmt("%g", c.tolerance)) +
                (c.top_kernel.empty() ? "" : param("top_kernel", c.top_kernel));
       },
       true};
  kinds.add("phase_total", k);
  k = {{"counter", "key", "equals"},
       {"tolerance"},
       false,
       "a figure of one counter track's samples (first, last, low, peak, samples: "
       "profiler/counters.h) "
       "equals this, within tolerance (relative)",
       no_rule,
       counter,
       [](const Check& c) {
         return param("counter", c.counter) + param("key", c.key) +
                param("equals", fmt("%.10g", *c.value)) +
                param("tolerance", fmt("%g", c.tolerance));
       },
       true};
  kinds.add("counter", k);
  k = {{"gap"},
       {"cause", "host"},
       false,
       "the n-th longest GPU-idle gap (0 = the longest) has this cause and this host activity",
       no_rule,
       gap,
       [](const Check& c) {
         return param("gap", std::to_string(c.gap)) + (c.cause.empty() ? "" : param("cause", c.cause)) +
                (c.host.empty() ? "" : param("host", c.host));
       },
       true};
  kinds.add("gap", k);
  // Kernel checks: over the scenario's Nsight Compute export (KernelLevel), one profiled launch
  // named by a part of its name. Structural, as the export does not change.
  k = {{"kernel", "key", "equals"},
       {"tolerance"},
       false,
       "a figure of the profiled launch whose name holds `kernel` equals this, within tolerance (relative)",
       no_rule,
       kernel_figure,
       [](const Check& c) {
         return param("kernel", c.kernel) + param("key", c.key) + param("equals", fmt("%.10g", *c.value)) +
                param("tolerance", fmt("%g", c.tolerance));
       },
       true};
  kinds.add("kernel_figure", k);
  k = {{"kernel", "item"},
       {"rank_at_most"},
       false,
       "the launch's report measures this fine-grained item, ranked at most rank_at_most by estimated gain",
       no_rule,
       kernel_finding,
       [](const Check& c) {
         return param("kernel", c.kernel) + param("item", c.item) +
                (c.rank_at_most ? param("rank_at_most", std::to_string(*c.rank_at_most)) : "");
       },
       true};
  kinds.add("kernel_finding", k);
  k = {{"kernel", "unit"},
       {},
       false,
       "the launch's Speed Of Light unit nearest its peak is this one (SM, L1/TEX, L2, DRAM)",
       no_rule,
       kernel_limiter,
       [](const Check& c) { return param("kernel", c.kernel) + param("unit", c.unit); },
       true};
  kinds.add("kernel_limiter", k);
  return kinds;
}

}  // namespace

const RunResult& CheckInput::earlier(int s) const {
  if (s < 0 || static_cast<size_t>(s) >= results.size() || !results[s])
    throw Error(scenario.path + ": " + check.pointer + ": step " + std::to_string(s) +
                " has no result");
  return *results[s];
}

const std::vector<std::string>& finding_kinds() {
  static const std::vector<std::string> kinds = {
      "gpu_bound",   "communication", "gpu_idle",     "gpu_gaps",     "pageable_copy",
      "memcpy_sync", "api_sync",      "launch_bound", "graph_outside", "cuda_graph"};
  return kinds;
}

const std::vector<std::string>& trace_total_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& [key, read] : totals()) k.push_back(key);
    for (const auto& [key, read] : rank_totals()) k.push_back(key);
    return k;
  }();
  return keys;
}

const std::vector<std::string>& phase_total_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& [key, read] : phase_totals()) k.push_back(key);
    return k;
  }();
  return keys;
}

const std::vector<std::string>& counter_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& [key, read] : counter_totals()) k.push_back(key);
    return k;
  }();
  return keys;
}

const std::vector<std::string>& kernel_figure_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& [key, read] : figure_reads()) k.push_back(key);
    return k;
  }();
  return keys;
}

const Registry<CheckKind>& check_kinds_registry() {
  static const Registry<CheckKind> kinds = make_registry();
  return kinds;
}

bool has_node(const ir::Graph& g, const std::string& name) {
  return std::any_of(g.nodes.begin(), g.nodes.end(),
                     [&](const ir::Node& n) { return n.name == name; });
}

void throw_no_node(const Scenario& sc, const std::string& pointer, const std::string& node,
                   const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  const std::string guess = closest(node, names);
  throw Error(
      sc.path + ": " + pointer + ": no node '" + node + "' in this step's graph (" +
      (guess.empty() ? std::to_string(names.size()) + " nodes" : "did you mean '" + guess + "'?") +
      ")");
}

}  // namespace fusebox::workbench
