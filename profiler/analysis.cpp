#include "profiler/analysis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/ir/op_schema.h"
#include "core/ir/shape.h"
#include "profiler/stats.h"

namespace fusebox::profiler {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}


double median_of(std::vector<double> v) { return make_stats(std::move(v)).median_ns; }

// The median run has to be a run the trace can show: with an even count, the lower of the middle
// two (the mean of two bimodal runs, 2 ms and 9 ms, is 5.5 ms, which no run took).
double lower_median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

struct RunView {
  const Span* run = nullptr;
  std::vector<const Span*> ops;  // direct op children, in order
};

std::vector<RunView> runs_of(const Recording& r, int64_t skip_runs) {
  std::vector<RunView> runs;
  std::map<int64_t, size_t> index;
  for (const Span& s : r.spans) {
    if (s.kind == SpanKind::Run) {
      if (s.run < skip_runs) continue;
      index[s.run] = runs.size();
      runs.push_back({&s, {}});
    } else if (s.kind == SpanKind::Op) {
      auto it = index.find(s.run);
      if (it != index.end()) runs[it->second].ops.push_back(&s);
    }
  }
  return runs;
}

// Each op span's time: on a GPU, the GPU time of the kernels it launched (the span itself only
// measures launching them); elsewhere the span.
class OpTimes {
 public:
  explicit OpTimes(const Recording& r) {
    std::map<uint32_t, int64_t> launched_at;  // correlation id -> runtime call's host start
    for (const exec::DeviceActivity& a : r.device)
      if (a.kind == exec::ActivityKind::Runtime) launched_at[a.correlation_id] = a.start_ns;
    if (launched_at.empty()) return;
    std::map<int32_t, std::vector<const Span*>> by_node;  // op spans of a node, by start time
    for (const Span& s : r.spans)
      if (s.kind == SpanKind::Op) by_node[s.node].push_back(&s);
    for (const exec::DeviceActivity& a : r.device) {
      if (a.kind != exec::ActivityKind::Kernel || a.node_index < 0) continue;
      const auto t = launched_at.find(a.correlation_id);
      const auto spans = by_node.find(a.node_index);
      if (t == launched_at.end() || spans == by_node.end()) continue;
      // The last span of that node starting at or before the launch, if the launch is inside it.
      const auto& v = spans->second;
      auto it = std::upper_bound(v.begin(), v.end(), t->second,
                                 [](int64_t when, const Span* s) { return when < s->start_ns; });
      if (it == v.begin()) continue;
      const Span* s = *std::prev(it);
      if (t->second <= s->end_ns) gpu_[s] += static_cast<double>(a.end_ns - a.start_ns);
    }
  }
  double operator()(const Span* s) const {
    const auto it = gpu_.find(s);
    return it != gpu_.end() ? it->second : static_cast<double>(s->end_ns - s->start_ns);
  }

 private:
  std::map<const Span*, double> gpu_;
};

std::string shapes_str(const std::vector<std::vector<int64_t>>& shapes) {
  std::string s;
  for (size_t i = 0; i < shapes.size(); ++i) s += (i ? "," : "") + ir::shape_str(shapes[i]);
  return s;
}

// An op's time and calls in each run (one entry per run, 0 where it did not run).
struct PerRun {
  std::vector<double> ns, calls;
  void add(size_t run, size_t runs, double d) {
    ns.resize(runs);
    calls.resize(runs);
    ns[run] += d;
    calls[run] += 1;
  }
  void merge(const PerRun& o) {  // another op's, into this sum
    ns.resize(std::max(ns.size(), o.ns.size()));
    calls.resize(ns.size());
    for (size_t i = 0; i < o.ns.size(); ++i) {
      ns[i] += o.ns[i];
      calls[i] += o.calls[i];
    }
  }
  void fill(OpRow& row, double median_run_ns) const {
    std::vector<double> sorted = ns;
    std::sort(sorted.begin(), sorted.end());
    row.run_p10_ns = percentile_sorted(sorted, 0.1);
    row.run_median_ns = percentile_sorted(sorted, 0.5);
    row.run_p90_ns = percentile_sorted(sorted, 0.9);
    row.calls_per_run = percentile(calls, 0.5);
    row.run_share = median_run_ns > 0 ? row.run_median_ns / median_run_ns : 0;
  }
};

}  // namespace

Stats make_stats(std::vector<double> v) {
  Stats s;
  s.count = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  for (double x : v) s.total_ns += x;
  s.mean_ns = s.total_ns / static_cast<double>(v.size());
  s.min_ns = v.front();
  s.max_ns = v.back();
  size_t m = v.size() / 2;
  s.median_ns = v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  return s;
}

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::Compute: return "compute-bound";
    case Bound::Memory: return "memory-bound";
    case Bound::Overhead: return "overhead-bound";
    case Bound::BelowRoofs: return "below-roofs";
    case Bound::Unknown: return "unknown";
  }
  return "unknown";
}

const char* below_reason_name(BelowReason r) {
  switch (r) {
    case BelowReason::None: return "";
    case BelowReason::Transcendental: return "transcendental";
    case BelowReason::Latency: return "latency";
    case BelowReason::Vectorisation: return "vectorisation";
    case BelowReason::Unexplained: return "unexplained";
  }
  return "";
}

namespace {

std::string pct(double fraction) { return fmt("%.0f", 100 * fraction) + "%"; }

}  // namespace

std::vector<std::string> transcendental_math(const ir::Node& node) { return ir::node_transcendentals(node); }

std::string OpRow::label() const {
  if (bound == Bound::Memory && !memory_level.empty() && memory_level != "memory") return memory_level + "-bound";
  if (bound != Bound::BelowRoofs) return bound_name(bound);
  std::string s = std::string(bound_name(bound)) + ": " + below_reason_name(reason);
  if (reason == BelowReason::Transcendental && !math.empty()) s += " (" + join(math, ", ") + ")";
  return s;
}

namespace {

// The compute roof an op runs under (analysis.h: "compute roof").
void place_compute(OpRow& row, const Roofline& roof, int threads) {
  const double gemm = roof.peak_gflops(threads), fma = roof.fma_peak_gflops(threads);
  row.compute_roof.clear();
  row.compute_roof_gflops = 0;
  if (gemm > 0 && row.gflops <= gemm) {
    row.compute_roof = "GEMM";
    row.compute_roof_gflops = gemm;
  } else if (fma > 0 && row.gflops <= fma) {
    row.compute_roof = "FMA peak";
    row.compute_roof_gflops = fma;
  }
}

// The memory level an op's bytes come from at least (analysis.h: "memory roof").
void place_memory(OpRow& row, const Roofline& roof, int threads) {
  row.memory_level.clear();
  row.memory_roof_gbs = 0;
  if (roof.levels.empty()) {
    if (roof.bandwidth_gbs > 0 && row.gbs <= roof.bandwidth_gbs) {
      row.memory_level = "memory";
      row.memory_roof_gbs = roof.bandwidth_gbs;
    }
    return;
  }
  const double per_thread = row.bytes / std::max(1, threads);
  size_t fastest = roof.levels.size() - 1;  // the first level its working set fits in
  for (size_t i = 0; i + 1 < roof.levels.size(); ++i) {
    const MemoryLevel& m = roof.levels[i];
    const bool per_core = m.name == "L1" || m.name == "L2";
    if (m.capacity_bytes > 0 && (per_core ? per_thread : row.bytes) <= m.capacity_bytes) {
      fastest = i;
      break;
    }
  }
  for (size_t i = roof.levels.size(); i-- > fastest;) {
    const double gbs = roof.level_gbs(i, threads);
    if (gbs > 0 && row.gbs <= gbs) {
      row.memory_level = roof.levels[i].name;
      row.memory_roof_gbs = gbs;
      return;
    }
  }
}

// "80% of the compute roof (GEMM, 80.0 of 100.0 GFLOP/s)", or why no roof fits.
std::string roof_text(double fraction, const char* kind, const std::string& roof, double achieved, double of,
                      const char* unit, const std::string& none) {
  if (roof.empty()) return none + " (" + fmt("%.1f", achieved) + " " + unit + ")";
  return pct(fraction) + " of the " + kind + " roof (" + (roof == "memory" ? "" : roof + ", ") + fmt("%.1f", achieved) +
         " of " + fmt("%.1f", of) + " " + unit + ")";
}

}  // namespace

void classify(OpRow& row, double time_ns, const Roofline& roof, int threads, const AnalysisOptions& o) {
  row.threads = threads;
  row.gflops = time_ns > 0 ? row.flops / time_ns : 0;
  row.gbs = time_ns > 0 ? row.bytes / time_ns : 0;
  row.intensity = row.bytes > 0 ? row.flops / row.bytes : 0;
  place_compute(row, roof, threads);
  place_memory(row, roof, threads);
  const double peak = row.compute_roof_gflops;
  const double bw = row.memory_roof_gbs;
  const bool memory_known = !row.memory_level.empty();
  // The balance point of the op's own level (the DRAM one when it has none).
  const double level_bw = memory_known ? bw : roof.bandwidth_gbs;
  const double balance = level_bw > 0 ? (peak > 0 ? peak : roof.peak_gflops(threads)) / level_bw : 0;
  row.roof_gflops = memory_known && peak > 0 ? std::min(peak, row.intensity * bw) : peak;
  row.compute_fraction = peak > 0 ? row.gflops / peak : 0;
  row.memory_fraction = bw > 0 ? row.gbs / bw : 0;
  // gflops / min(peak, AI x bw) = max(gflops / peak, gbs / bw): the binding roof's share.
  row.efficiency = std::max(row.compute_fraction, row.memory_fraction);
  row.reason = BelowReason::None;
  row.reasons.clear();
  const std::string both =
      roof_text(row.compute_fraction, "compute", row.compute_roof, row.gflops, peak, "GFLOP/s",
                "above the FMA peak: its FLOP count overstates its work") +
      ", " +
      roof_text(row.memory_fraction, "memory", row.memory_level, row.gbs, bw, "GB/s",
                "faster than any level its working set fits in: it reads less than its byte count");
  const double floor = roof.dispatch_floor_ns;
  const bool have_roofs = roof.peak_gflops(threads) > 0 && (roof.bandwidth_gbs > 0 || !roof.levels.empty());
  if (time_ns <= 0) {
    row.bound = Bound::Unknown;
    row.why = "no time recorded";
  } else if (floor > 0 && time_ns < o.overhead_factor * floor) {
    row.bound = Bound::Overhead;
    row.why = format_duration_ns(time_ns) + " per call < " + fmt("%.0f", o.overhead_factor) +
              " x dispatch floor " + format_duration_ns(floor) + " (" + fmt("%.1f", time_ns / floor) + "x)";
  } else if (row.flops <= 0 && row.bytes <= 0) {
    row.bound = Bound::Overhead;
    row.why = "no FLOPs or bytes: all of its " + format_duration_ns(time_ns) + " is dispatch";
  } else if (have_roofs && memory_known && !row.compute_roof.empty() && row.efficiency < o.below_fraction) {
    row.bound = Bound::BelowRoofs;
    std::vector<std::string> causes;
    if (!row.math.empty()) {
      row.reasons.push_back(BelowReason::Transcendental);
      causes.push_back("transcendental math: " + join(row.math, ", ") +
                       " per element, counted as 1 FLOP");
    }
    if (floor > 0 && time_ns < o.latency_factor * floor) {
      row.reasons.push_back(BelowReason::Latency);
      causes.push_back("latency: " + format_duration_ns(time_ns) + " per call < " +
                       fmt("%.0f", o.latency_factor) + " x dispatch floor " + format_duration_ns(floor));
    }
    if (roof.isa == "portable") {
      row.reasons.push_back(BelowReason::Vectorisation);
      causes.push_back("vectorisation: the portable (scalar) kernels ran");
    }
    if (row.reasons.empty()) {
      row.reasons.push_back(BelowReason::Unexplained);
      causes.push_back("unexplained: no transcendental math, not near the dispatch floor");
    }
    row.reason = row.reasons.front();
    row.why = "below both roofs: " + both + "; under " + pct(o.below_fraction) +
              " of the roof at AI " + fmt("%.3f", row.intensity) + " FLOP/B; " + join(causes, "; ");
  } else if (memory_known && row.intensity >= balance) {
    row.bound = Bound::Compute;
    row.why = "AI " + fmt("%.2f", row.intensity) + " FLOP/B >= balance " + fmt("%.2f", balance) +
              (row.memory_level == "memory" ? "" : " at " + row.memory_level) + "; " + both;
  } else {
    row.bound = Bound::Memory;
    row.why = memory_known ? "AI " + fmt("%.3f", row.intensity) + " FLOP/B < balance " + fmt("%.2f", balance) +
                                 (row.memory_level == "memory" ? "" : " at " + row.memory_level) + "; " + both
                           : both;
  }
}

std::map<int32_t, int> threads_by_node(const Recording& r) {
  std::map<int32_t, std::set<int32_t>> tids;
  bool any = false;
  for (const Span& s : r.spans)
    if (s.kind == SpanKind::Worker) {
      any = true;
      tids[s.node].insert(s.tid);
    }
  std::map<int32_t, int> out;
  if (!any) return out;
  for (size_t i = 0; i < r.nodes.size(); ++i) out[static_cast<int32_t>(i)] = 1;
  for (const auto& [node, t] : tids) out[node] = std::max<int>(1, static_cast<int>(t.size()));
  return out;
}

Analysis analyze(const Recording& r, const Roofline& roof, const AnalysisOptions& o) {
  Analysis a;
  const std::map<int32_t, int> used = threads_by_node(r);
  auto threads_of = [&](int32_t node) {
    const auto it = used.find(node);
    return it == used.end() ? r.threads : std::min(it->second, std::max(1, r.threads));
  };
  auto say_threads = [&](OpRow& row) {
    if (row.threads < r.threads)
      row.why += "; roofs at " + std::to_string(row.threads) + " thread" + (row.threads == 1 ? "" : "s") +
                 ": its kernel ran on " + std::to_string(row.threads) + " of the run's " + std::to_string(r.threads);
  };
  a.roofline = roof;
  a.threads = r.threads;
  a.below_fraction = o.below_fraction;
  std::vector<RunView> runs = runs_of(r, o.skip_runs);
  const OpTimes op_time(r);
  std::map<int32_t, std::vector<double>> node_samples;
  std::map<int32_t, PerRun> node_runs;
  std::vector<double> run_ns, kernel_ns, gap_ns, edge_ns;
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    const RunView& rv = runs[ri];
    double k = 0, g = 0;
    for (size_t i = 0; i < rv.ops.size(); ++i) {
      const Span* s = rv.ops[i];
      const double d = op_time(s);
      k += d;
      if (i > 0) g += static_cast<double>(s->start_ns - rv.ops[i - 1]->end_ns);
      node_samples[s->node].push_back(d);
      node_runs[s->node].add(ri, runs.size(), d);
    }
    double total = static_cast<double>(rv.run->end_ns - rv.run->start_ns);
    run_ns.push_back(total);
    kernel_ns.push_back(k);
    gap_ns.push_back(g);
    edge_ns.push_back(std::max(0.0, total - k - g));
    a.breakdown.ops_per_run = std::max<int64_t>(a.breakdown.ops_per_run, static_cast<int64_t>(rv.ops.size()));
  }
  for (const NodeInfo& n : r.nodes) a.breakdown.flops_per_run += n.flops;
  a.breakdown.runs = static_cast<int64_t>(runs.size());
  a.breakdown.run_ns = lower_median(run_ns);
  a.breakdown.kernel_ns = lower_median(kernel_ns);
  a.breakdown.gap_ns = lower_median(gap_ns);
  a.breakdown.edge_ns = lower_median(edge_ns);

  double all_kernel = 0;
  for (const auto& [node, v] : node_samples)
    for (double x : v) all_kernel += x;

  struct TypeAcc {
    PerRun runs;
    std::vector<double> samples;
    std::vector<double> node_medians;
    double flops = 0, bytes = 0;
    int64_t instances = 0;
    std::vector<std::string> math;  // every node's, without repeats
    int threads = 1;                // the most any of its nodes ran on
  };
  std::map<std::string, TypeAcc> types;
  for (const auto& [node, v] : node_samples) {
    if (node < 0 || static_cast<size_t>(node) >= r.nodes.size()) continue;
    const NodeInfo& n = r.nodes[static_cast<size_t>(node)];
    OpRow row;
    row.key = n.name;
    row.op = n.op;
    row.node = node;
    row.instances = 1;
    row.stats = make_stats(v);
    row.flops = n.flops;
    row.bytes = n.bytes;
    row.math = n.math;
    row.share = all_kernel > 0 ? row.stats.total_ns / all_kernel : 0;
    node_runs[node].fill(row, a.breakdown.run_ns);
    classify(row, row.stats.median_ns, roof, threads_of(node), o);
    say_threads(row);
    a.by_node.push_back(row);
    TypeAcc& t = types[n.op];
    t.threads = std::max(t.threads, row.threads);
    t.runs.merge(node_runs[node]);
    t.samples.insert(t.samples.end(), v.begin(), v.end());
    t.node_medians.push_back(row.stats.median_ns);
    t.flops += n.flops;
    t.bytes += n.bytes;
    t.instances += 1;
    for (const std::string& f : n.math)
      if (std::find(t.math.begin(), t.math.end(), f) == t.math.end()) t.math.push_back(f);
  }
  for (auto& [op, t] : types) {
    OpRow row;
    row.key = op;
    row.op = op;
    row.instances = t.instances;
    row.stats = make_stats(t.samples);
    row.flops = t.flops / static_cast<double>(t.instances);
    row.bytes = t.bytes / static_cast<double>(t.instances);
    row.share = all_kernel > 0 ? row.stats.total_ns / all_kernel : 0;
    t.runs.fill(row, a.breakdown.run_ns);
    double mean_median = 0;
    for (double m : t.node_medians) mean_median += m;
    mean_median /= static_cast<double>(t.node_medians.size());
    row.math = t.math;
    classify(row, mean_median, roof, t.threads, o);
    say_threads(row);
    a.by_type.push_back(row);
  }
  auto by_run_median = [](const OpRow& x, const OpRow& y) {
    return x.run_median_ns > y.run_median_ns;
  };
  std::stable_sort(a.by_type.begin(), a.by_type.end(), by_run_median);
  std::stable_sort(a.by_node.begin(), a.by_node.end(), by_run_median);
  return a;
}

double Analysis::fma_fraction() const {
  const double peak = roofline.fma_peak_gflops(threads);
  return peak > 0 ? breakdown.run_gflops() / peak : 0;
}

double Analysis::gemm_fraction() const {
  const double peak = roofline.peak_gflops(threads);
  return peak > 0 ? breakdown.run_gflops() / peak : 0;
}

namespace {
// "62%", or "n/a" where no roof fits (analysis.h): a table cell of at most 6 characters.
std::string roof_cell(double fraction, bool known) { return known ? fmt("%.0f", 100 * fraction) + "%" : "n/a"; }
}  // namespace

std::string Analysis::to_text(size_t max_nodes) const {
  std::ostringstream os;
  char buf[512];
  os << "roofline: peak " << fmt("%.1f", roofline.peak_gflops(threads)) << " GFLOP/s (" << threads
     << " thread" << (threads == 1 ? "" : "s") << "), " << fmt("%.2f", roofline.bandwidth_gbs)
     << " GB/s, balance " << fmt("%.2f", roofline.balance(threads)) << " FLOP/B, dispatch floor "
     << format_duration_ns(roofline.dispatch_floor_ns) << "/op\n";
  if (!roofline.levels.empty()) {
    os << "memory roofs (read GB/s at " << threads << " thread" << (threads == 1 ? "" : "s") << "):";
    for (size_t i = 0; i < roofline.levels.size(); ++i)
      os << " " << roofline.levels[i].name << " " << fmt("%.1f", roofline.level_gbs(i, threads));
    os << "\n";
  }
  os << "%comp, %mem: achieved GFLOP/s of the compute roof (GEMM, else the FMA peak), GB/s of the roof of "
        "the level its bytes come from (the bound names it; n/a: no roof fits); below-roofs: under "
     << pct(below_fraction) << " of both (profiler/analysis.h)\n\n";
  auto table = [&](const std::vector<OpRow>& rows, bool nodes, size_t limit) {
    std::snprintf(buf, sizeof buf,
                  "%-34s %5s %9s %10s %10s %10s %6s %10s %8s %8s %7s %6s %6s  %-32s %s\n",
                  nodes ? "node" : "op type", "n", "calls/run", "per run", "p10", "p90", "% run",
                  "per call", "GFLOP/s", "GB/s", "AI", "%comp", "%mem", "bound", "why");
    os << buf;
    size_t shown = 0;
    for (const OpRow& r : rows) {
      if (shown++ >= limit) {
        os << "  ... " << rows.size() - limit << " more\n";
        break;
      }
      std::string key = nodes ? r.op + " " + r.key : r.key;
      if (key.size() > 34) key = key.substr(0, 31) + "...";
      std::snprintf(buf, sizeof buf,
                    "%-34s %5lld %9.4g %10s %10s %10s %5.1f%% %10s %8.2f %8.2f %7.2f %6s %6s  "
                    "%-32s %s\n",
                    key.c_str(), static_cast<long long>(r.instances), r.calls_per_run,
                    format_duration_ns(r.run_median_ns).c_str(),
                    format_duration_ns(r.run_p10_ns).c_str(),
                    format_duration_ns(r.run_p90_ns).c_str(), 100 * r.run_share,
                    format_duration_ns(r.stats.median_ns).c_str(), r.gflops, r.gbs, r.intensity,
                    roof_cell(r.compute_fraction, !r.compute_roof.empty()).c_str(),
                    roof_cell(r.memory_fraction, !r.memory_level.empty()).c_str(), r.label().c_str(),
                    r.why.c_str());
      os << buf;
    }
  };
  os << "per op type (median per run over " << breakdown.runs
     << " runs, p10 and p90 of it; % of the median run " << format_duration_ns(breakdown.run_ns)
     << "):\n";
  table(by_type, false, by_type.size());
  os << "\nper node (top " << std::min(max_nodes, by_node.size()) << " of " << by_node.size() << "):\n";
  table(by_node, true, max_nodes);
  const Breakdown& b = breakdown;
  os << "\nrun breakdown (median over " << b.runs << " runs, " << b.ops_per_run << " ops per run):\n";
  std::snprintf(buf, sizeof buf,
                "  run              %10s  100.0%%\n"
                "  kernels          %10s  %5.1f%%\n"
                "  between kernels  %10s  %5.1f%%   (dispatch: %s per op gap)\n"
                "  edges            %10s  %5.1f%%   (copy inputs in, outputs out, sync)\n",
                format_duration_ns(b.run_ns).c_str(), format_duration_ns(b.kernel_ns).c_str(), 100 * b.kernel_fraction(),
                format_duration_ns(b.gap_ns).c_str(), 100 * b.gap_fraction(),
                format_duration_ns(b.ops_per_run > 1 ? b.gap_ns / static_cast<double>(b.ops_per_run - 1) : 0).c_str(),
                format_duration_ns(b.edge_ns).c_str(), 100 * b.edge_fraction());
  os << buf;
  std::snprintf(buf, sizeof buf,
                "  compute          %10.1f GFLOP/s = %.0f%% of the FMA peak (%.1f GFLOP/s at %d thread%s), "
                "%.0f%% of the GEMM roof\n",
                b.run_gflops(), 100 * fma_fraction(), roofline.fma_peak_gflops(threads), threads,
                threads == 1 ? "" : "s", 100 * gemm_fraction());
  os << buf;
  return os.str();
}

namespace {
nlohmann::json reasons_json(const std::vector<BelowReason>& reasons) {
  nlohmann::json a = nlohmann::json::array();
  for (BelowReason r : reasons) a.push_back(below_reason_name(r));
  return a;
}
}  // namespace

nlohmann::json Analysis::to_json() const {
  auto rows = [](const std::vector<OpRow>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const OpRow& r : v)
      a.push_back({{"key", r.key},
                   {"op", r.op},
                   {"node", r.node},
                   {"instances", r.instances},
                   {"count", r.stats.count},
                   {"total_ns", r.stats.total_ns},
                   {"mean_ns", r.stats.mean_ns},
                   {"min_ns", r.stats.min_ns},
                   {"median_ns", r.stats.median_ns},
                   {"max_ns", r.stats.max_ns},
                   {"flops", r.flops},
                   {"bytes", r.bytes},
                   {"gflops", r.gflops},
                   {"gbs", r.gbs},
                   {"intensity", r.intensity},
                   {"roof_gflops", r.roof_gflops},
                   {"efficiency", r.efficiency},
                   {"compute_fraction", r.compute_fraction},
                   {"memory_fraction", r.memory_fraction},
                   {"compute_roof", r.compute_roof},
                   {"compute_roof_gflops", r.compute_roof_gflops},
                   {"memory_level", r.memory_level},
                   {"memory_roof_gbs", r.memory_roof_gbs},
                   {"math", r.math},
                   {"bound", bound_name(r.bound)},
                   {"reason", below_reason_name(r.reason)},
                   {"reasons", reasons_json(r.reasons)},
                   {"label", r.label()},
                   {"why", r.why},
                   {"share", r.share},
                   {"calls_per_run", r.calls_per_run},
                   {"run_median_ns", r.run_median_ns},
                   {"run_p10_ns", r.run_p10_ns},
                   {"run_p90_ns", r.run_p90_ns},
                   {"run_share", r.run_share}});
    return a;
  };
  const Breakdown& b = breakdown;
  return {{"roofline", roofline.to_json()},
          {"threads", threads},
          {"below_fraction", below_fraction},
          {"by_type", rows(by_type)},
          {"by_node", rows(by_node)},
          {"breakdown",
           {{"runs", b.runs}, {"run_ns", b.run_ns}, {"kernel_ns", b.kernel_ns}, {"gap_ns", b.gap_ns},
            {"edge_ns", b.edge_ns}, {"kernel_fraction", b.kernel_fraction()}, {"gap_fraction", b.gap_fraction()},
            {"edge_fraction", b.edge_fraction()}, {"ops_per_run", b.ops_per_run},
            {"flops_per_run", b.flops_per_run}, {"run_gflops", b.run_gflops()},
            {"fma_fraction", fma_fraction()}, {"gemm_fraction", gemm_fraction()}}}};
}

// ---- comparison -------------------------------------------------------------------------------

Comparison compare(const Recording& a, const Recording& b, int64_t skip_runs) {
  Comparison c;
  c.label_a = a.model + " " + a.label;
  c.label_b = b.model + " " + b.label;
  c.nodes_a = a.nodes.size();
  c.nodes_b = b.nodes.size();
  c.arena_a = a.arena_bytes;
  c.arena_b = b.arena_bytes;
  std::map<std::string, OpTypeDiff> types;
  auto side = [&](const Recording& r, bool is_a, double& run_ns, double& kernel_ns) {
    std::vector<RunView> runs = runs_of(r, skip_runs);
    const OpTimes op_time(r);
    std::vector<double> rn, kn;
    std::map<std::string, double> type_total;
    for (const RunView& rv : runs) {
      double k = 0;
      for (const Span* s : rv.ops) {
        const double d = op_time(s);
        k += d;
        if (s->node >= 0 && static_cast<size_t>(s->node) < r.nodes.size()) type_total[r.nodes[static_cast<size_t>(s->node)].op] += d;
      }
      rn.push_back(static_cast<double>(rv.run->end_ns - rv.run->start_ns));
      kn.push_back(k);
    }
    run_ns = median_of(rn);
    kernel_ns = median_of(kn);
    for (const NodeInfo& n : r.nodes) {
      OpTypeDiff& d = types[n.op];
      d.op = n.op;
      (is_a ? d.nodes_a : d.nodes_b) += 1;
    }
    for (const auto& [op, t] : type_total) {
      OpTypeDiff& d = types[op];
      d.op = op;
      (is_a ? d.ns_per_run_a : d.ns_per_run_b) = runs.empty() ? 0 : t / static_cast<double>(runs.size());
    }
  };
  side(a, true, c.run_ns_a, c.kernel_ns_a);
  side(b, false, c.run_ns_b, c.kernel_ns_b);
  for (auto& [op, d] : types) c.op_types.push_back(d);
  std::sort(c.op_types.begin(), c.op_types.end(), [](const OpTypeDiff& x, const OpTypeDiff& y) {
    return std::fabs(x.ns_per_run_b - x.ns_per_run_a) > std::fabs(y.ns_per_run_b - y.ns_per_run_a);
  });
  std::map<std::string, size_t> in_a, in_b;
  for (size_t i = 0; i < a.nodes.size(); ++i) in_a[a.nodes[i].name] = i;
  for (size_t i = 0; i < b.nodes.size(); ++i) in_b[b.nodes[i].name] = i;
  for (size_t i = 0; i < b.nodes.size(); ++i)
    if (!in_a.count(b.nodes[i].name)) c.new_ops.push_back(op_range_name(b.nodes[i].op, i, b.nodes[i].name));
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeInfo& na = a.nodes[i];
    auto it = in_b.find(na.name);
    if (it == in_b.end()) {
      c.vanished_ops.push_back(op_range_name(na.op, i, na.name));
      continue;
    }
    const NodeInfo& nb = b.nodes[it->second];
    std::string what;
    if (na.op != nb.op) what += "op " + na.op + " -> " + nb.op;
    if (na.input_shapes != nb.input_shapes || na.output_shapes != nb.output_shapes)
      what += std::string(what.empty() ? "" : "; ") + "shapes " + shapes_str(na.input_shapes) + "->" +
              shapes_str(na.output_shapes) + " became " + shapes_str(nb.input_shapes) + "->" + shapes_str(nb.output_shapes);
    else if (na.inputs != nb.inputs)
      what += std::string(what.empty() ? "" : "; ") + "inputs rewired";
    if (!what.empty()) c.changed_ops.push_back({na.name, what});
  }
  return c;
}

std::string Comparison::to_text(size_t max_list) const {
  std::ostringstream os;
  char buf[512];
  auto pct = [](double a, double b) { return a > 0 ? 100.0 * (b - a) / a : 0.0; };
  os << "A: " << label_a << "\nB: " << label_b << "\n\n";
  std::snprintf(buf, sizeof buf, "%-22s %14s %14s %14s %8s\n", "", "A", "B", "B-A", "change");
  os << buf;
  std::snprintf(buf, sizeof buf, "%-22s %14s %14s %14s %+7.1f%%\n", "run (median)", format_duration_ns(run_ns_a).c_str(),
                format_duration_ns(run_ns_b).c_str(), format_duration_ns(run_ns_b - run_ns_a).c_str(), pct(run_ns_a, run_ns_b));
  os << buf;
  std::snprintf(buf, sizeof buf, "%-22s %14s %14s %14s %+7.1f%%\n", "kernels (median)", format_duration_ns(kernel_ns_a).c_str(),
                format_duration_ns(kernel_ns_b).c_str(), format_duration_ns(kernel_ns_b - kernel_ns_a).c_str(), pct(kernel_ns_a, kernel_ns_b));
  os << buf;
  std::snprintf(buf, sizeof buf, "%-22s %14zu %14zu %+14lld %+7.1f%%\n", "nodes", nodes_a, nodes_b,
                static_cast<long long>(nodes_b) - static_cast<long long>(nodes_a),
                pct(static_cast<double>(nodes_a), static_cast<double>(nodes_b)));
  os << buf;
  std::snprintf(buf, sizeof buf, "%-22s %14zu %14zu %+14lld %+7.1f%%\n", "arena bytes", arena_a, arena_b,
                static_cast<long long>(arena_b) - static_cast<long long>(arena_a),
                pct(static_cast<double>(arena_a), static_cast<double>(arena_b)));
  os << buf << "\nper op type (time per run, mean):\n";
  std::snprintf(buf, sizeof buf, "  %-22s %7s %7s %12s %12s %12s\n", "op type", "nodes A", "nodes B", "A", "B", "B-A");
  os << buf;
  for (const OpTypeDiff& d : op_types) {
    std::snprintf(buf, sizeof buf, "  %-22s %7lld %7lld %12s %12s %12s\n", d.op.c_str(), static_cast<long long>(d.nodes_a),
                  static_cast<long long>(d.nodes_b), format_duration_ns(d.ns_per_run_a).c_str(), format_duration_ns(d.ns_per_run_b).c_str(),
                  ((d.ns_per_run_b >= d.ns_per_run_a ? "+" : "-") + format_duration_ns(std::fabs(d.ns_per_run_b - d.ns_per_run_a))).c_str());
    os << buf;
  }
  auto list = [&](const char* title, const std::vector<std::string>& v) {
    os << "\n" << title << " (" << v.size() << "):\n";
    for (size_t i = 0; i < v.size() && i < max_list; ++i) os << "  " << v[i] << "\n";
    if (v.size() > max_list) os << "  ... " << v.size() - max_list << " more\n";
  };
  list("new ops, in B only", new_ops);
  list("vanished ops, in A only", vanished_ops);
  os << "\nchanged ops (" << changed_ops.size() << "):\n";
  for (size_t i = 0; i < changed_ops.size() && i < max_list; ++i)
    os << "  " << changed_ops[i].name << ": " << changed_ops[i].what << "\n";
  if (changed_ops.size() > max_list) os << "  ... " << changed_ops.size() - max_list << " more\n";
  return os.str();
}

nlohmann::json Comparison::to_json() const {
  nlohmann::json types = nlohmann::json::array();
  for (const OpTypeDiff& d : op_types)
    types.push_back({{"op", d.op}, {"nodes_a", d.nodes_a}, {"nodes_b", d.nodes_b}, {"ns_per_run_a", d.ns_per_run_a},
                     {"ns_per_run_b", d.ns_per_run_b}});
  nlohmann::json changed = nlohmann::json::array();
  for (const NodeChange& n : changed_ops) changed.push_back({{"name", n.name}, {"what", n.what}});
  return {{"a", label_a}, {"b", label_b}, {"run_ns_a", run_ns_a}, {"run_ns_b", run_ns_b},
          {"kernel_ns_a", kernel_ns_a}, {"kernel_ns_b", kernel_ns_b}, {"nodes_a", nodes_a}, {"nodes_b", nodes_b},
          {"arena_a", arena_a}, {"arena_b", arena_b}, {"op_types", types}, {"new_ops", new_ops},
          {"vanished_ops", vanished_ops}, {"changed_ops", changed}};
}

}  // namespace fusebox::profiler
