#include "profiler/kernel_findings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "profiler/ncu_report.h"

namespace fusebox::profiler {

std::optional<double> ncu_in_base(const NcuMetric* m) {
  if (!m || !m->value) return std::nullopt;
  static const std::map<std::string, double> kScale = {
      {"ns", 1},        {"nsecond", 1},   {"us", 1e3},          {"usecond", 1e3},        {"ms", 1e6},
      {"msecond", 1e6}, {"s", 1e9},       {"second", 1e9},      {"byte", 1},             {"Kbyte", 1e3},
      {"Mbyte", 1e6},   {"Gbyte", 1e9},   {"Tbyte", 1e12},      {"byte/s", 1},           {"Kbyte/s", 1e3},
      {"Mbyte/s", 1e6}, {"Gbyte/s", 1e9}, {"Tbyte/s", 1e12},    {"hz", 1},               {"Hz", 1},
      {"Khz", 1e3},     {"Mhz", 1e6},     {"Ghz", 1e9},         {"cycle/second", 1},     {"cycle/usecond", 1e6},
      {"cycle/nsecond", 1e9}};
  auto it = kScale.find(m->unit);
  return it == kScale.end() ? *m->value : *m->value * it->second;
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A value in base units, from the first of `names` the kernel has (any section).
std::optional<double> first_of(const NcuKernel& k, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (std::optional<double> v = ncu_in_base(k.find(n))) return v;
  return std::nullopt;
}

// The sum of two counters when both are there ("_ld" and "_st", "_atom" and "_red").
std::optional<double> pair_sum(const NcuKernel& k, const std::string& a, const std::string& b) {
  const std::optional<double> x = ncu_in_base(k.find(a)), y = ncu_in_base(k.find(b));
  if (!x || !y) return std::nullopt;
  return *x + *y;
}

// Blocks in a grid written "(224, 1, 1)"; 0 when it is not in that form.
double grid_blocks(const std::string& grid) {
  double n = 1;
  int dims = 0;
  const char* p = grid.c_str();
  while (*p) {
    if (*p >= '0' && *p <= '9') {
      char* end = nullptr;
      n *= std::strtod(p, &end);
      p = end;
      ++dims;
    } else {
      ++p;
    }
  }
  return dims == 3 ? n : 0;
}

// ncu's largest estimated speedup among the rules named.
std::optional<double> rule_gain(const KernelFigures& f, std::initializer_list<const char*> names, std::string& which) {
  std::optional<double> best;
  for (const NcuRule& r : f.rules)
    for (const char* n : names)
      if (r.name == n && r.speedup && (!best || *r.speedup > *best)) best = r.speedup, which = "ncu " + r.name;
  return best;
}

KernelFinding missing(const char* item, const std::string& needs) {
  return {item, false, "not in this report (needs " + needs + ")", std::nullopt, "", needs};
}

KernelFinding occupancy(const KernelFigures& f) {
  if (!f.theoretical_occupancy_pct && !f.achieved_occupancy_pct) return missing("occupancy", "section Occupancy");
  KernelFinding x{"occupancy", true, "", std::nullopt, "", ""};
  if (f.theoretical_occupancy_pct) {
    x.text = "theoretical " + fmt("%.2f%%", *f.theoretical_occupancy_pct);
    x.text += f.occupancy_limiter.empty()
                  ? " (the hardware's warp maximum)"
                  : " (limited by " + f.occupancy_limiter + ": " + fmt("%.0f", f.occupancy_limit_blocks.value_or(0)) +
                        (f.occupancy_limit_blocks.value_or(0) == 1 ? " block" : " blocks") + " per SM)";
  }
  if (f.achieved_occupancy_pct) x.text += (x.text.empty() ? "" : ", ") + ("achieved " + fmt("%.2f%%", *f.achieved_occupancy_pct));
  x.gain_pct = rule_gain(f, {"TheoreticalOccupancy", "AchievedOccupancy"}, x.gain_source);
  return x;
}

KernelFinding latency(const KernelFigures& f) {
  if (!f.no_eligible_pct) return missing("latency", "section SchedulerStats");
  KernelFinding x{"latency", true, "", std::nullopt, "", ""};
  x.text = "no warp ready to issue in " + fmt("%.2f%%", *f.no_eligible_pct) + " of cycles";
  if (f.issued_warps) x.text += "; " + fmt("%.2f", *f.issued_warps) + " instructions issued per scheduler per cycle (peak 1)";
  x.text += "; the stall reasons need section WarpStateStats";
  x.gain_pct = rule_gain(f, {"IssueSlotUtilization"}, x.gain_source);
  return x;
}

KernelFinding wave_tail(const NcuKernel& k, const KernelFigures& f) {
  std::optional<double> waves = first_of(k, {"Waves Per SM", "launch__waves_per_multiprocessor"});
  const std::optional<double> sms = first_of(k, {"# SMs", "launch__sm_count", "device__attribute_multiprocessor_count"});
  const double blocks = grid_blocks(f.grid);
  if (!waves && sms && *sms > 0 && f.occupancy_limit_blocks && *f.occupancy_limit_blocks > 0 && blocks > 0)
    waves = blocks / (*f.occupancy_limit_blocks * *sms);
  if (!waves || *waves <= 0) return missing("wave tail", "section LaunchStats: # SMs or Waves Per SM");
  if (!std::isfinite(*waves)) return missing("wave tail", "a finite wave count (the report's grid and SM figures give none)");
  KernelFinding x{"wave tail", true, "", std::nullopt, "ours: wave tail", ""};
  const double w = *waves;
  if (w < 1) {
    x.gain_pct = 100 * (1 - w);
    x.text = "the grid fills " + fmt("%.2f", w) + " of one wave: " + fmt("%.1f%%", *x.gain_pct) +
             " of the SMs' block slots stay empty all kernel long";
  } else {
    const double full = std::ceil(w);
    x.gain_pct = 100 * (full - w) / full;
    x.text = fmt("%.2f waves", w) + (x.gain_pct > 0 ? ": the last one " + fmt("%.0f%%", 100 * (w - std::floor(w))) +
                                                          " full, " + fmt("%.1f%%", *x.gain_pct) + " of all slots empty"
                                                    : std::string(": whole waves, no tail"));
  }
  return x;
}

KernelFinding l2_misses(const NcuKernel& k, const KernelFigures& f) {
  if (!f.l2_hit_pct) return missing("L2 misses", "section MemoryWorkloadAnalysis");
  KernelFinding x{"L2 misses", true, "", std::nullopt, "", ""};
  x.text = fmt("%.2f%%", 100 - *f.l2_hit_pct) + " of L2 requests miss to DRAM (hit " + fmt("%.2f%%", *f.l2_hit_pct) + ")";
  if (const std::optional<double> read = first_of(k, {"dram__bytes_read.sum"}))
    x.text += "; " + fmt("%.2f MB", *read / 1e6) + " read from DRAM";
  return x;
}

KernelFinding bank_conflicts(const NcuKernel& k) {
  const std::string base = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_";
  const std::optional<double> conflicts = pair_sum(k, base + "ld.sum", base + "st.sum");
  if (!conflicts)
    return missing("bank conflicts", "section MemoryWorkloadAnalysis_Tables, or --metrics " + base + "{ld,st}.sum");
  KernelFinding x{"bank conflicts", true, fmt("%.0f shared-memory bank conflicts", *conflicts), std::nullopt, "", ""};
  const std::string wf = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_";
  if (const std::optional<double> wavefronts = pair_sum(k, wf + "ld.sum", wf + "st.sum"); wavefronts && *wavefronts > 0)
    x.text += " in " + fmt("%.0f", *wavefronts) + " shared wavefronts (" + fmt("%.1f%%", 100 * *conflicts / *wavefronts) + ")";
  return x;
}

KernelFinding spills(const NcuKernel& k) {
  const std::string base = "l1tex__t_bytes_pipe_lsu_mem_local_op_";
  const std::optional<double> bytes = pair_sum(k, base + "ld.sum", base + "st.sum");
  if (!bytes)
    return missing("spills", "section MemoryWorkloadAnalysis_Tables, or --metrics " + base + "{ld,st}.sum");
  return {"spills", true,
          *bytes > 0 ? fmt("%.0f bytes", *bytes) + " of local-memory traffic: registers spilled" : "no local-memory traffic",
          std::nullopt, "", ""};
}

KernelFinding atomics(const NcuKernel& k) {
  const std::string base = "l1tex__t_requests_pipe_lsu_mem_global_op_";
  const std::optional<double> n = pair_sum(k, base + "atom.sum", base + "red.sum");
  if (!n) return missing("atomics", "section MemoryWorkloadAnalysis_Tables, or --metrics " + base + "{atom,red}.sum");
  return {"atomics", true, fmt("%.0f global atomic and reduction requests", *n), std::nullopt, "", ""};
}

KernelFinding inter_sm(const NcuKernel& k) {
  const std::optional<double> n = pair_sum(k, "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum");
  if (!n) return missing("inter-SM traffic", "--metrics lts__t_sectors_op_{atom,red}.sum");
  return {"inter-SM traffic", true, fmt("%.0f L2 sectors of atomics and reductions", *n) + " (what SMs exchange meets in L2)",
          std::nullopt, "", ""};
}

KernelFinding divergence(const NcuKernel& k) {
  const std::optional<double> active =
      first_of(k, {"Avg. Active Threads Per Warp", "smsp__thread_inst_executed_per_inst_executed.ratio"});
  if (!active) return missing("divergence", "section WarpStateStats: Avg. Active Threads Per Warp");
  return {"divergence", true, fmt("%.1f of 32 threads active per warp instruction", *active), std::nullopt, "", ""};
}

}  // namespace

GpuRoofline gpu_roofline(const NcuKernel& k) {
  GpuRoofline r;
  const std::string chart = "GPU Speed Of Light Roofline Chart";
  auto get = [&](const char* name) { return ncu_in_base(k.find(name, chart)); };
  const std::optional<double> sm_hz = get("SM Frequency"), dram_hz = get("DRAM Frequency");
  const std::optional<double> peak_ops = get("Theoretical Predicated-On FFMA Operations");
  const std::optional<double> dram_bytes_per_cycle = get("Theoretical DRAM Bytes Accessible");
  const std::optional<double> ffma = get("Predicated-On FFMA Operations Per Cycle");
  const std::optional<double> fadd = get("Predicated-On FADD Thread Instructions Executed Per Cycle");
  const std::optional<double> fmul = get("Predicated-On FMUL Thread Instructions Executed Per Cycle");
  r.dram_bytes_per_s = get("DRAM Bandwidth");
  if (!sm_hz || !peak_ops || !ffma || !fadd || !fmul) {
    r.note = "not in this report (needs section SpeedOfLight_RooflineChart)";
    return r;
  }
  r.peak_flops = *peak_ops * *sm_hz;
  r.achieved_flops = (*ffma + *fadd + *fmul) * *sm_hz;
  if (dram_hz && dram_bytes_per_cycle) r.dram_peak_bytes_per_s = *dram_bytes_per_cycle * *dram_hz;
  // A report's figures out of any range (a product past a double, a negative rate) place nothing.
  for (const std::optional<double>& v : {r.peak_flops, r.achieved_flops, r.dram_peak_bytes_per_s, r.dram_bytes_per_s})
    if (v && (!std::isfinite(*v) || *v < 0)) {
      r.note = "the roofline chart's figures are out of range (a rate not finite or negative): not placed";
      return r;
    }
  if (*r.achieved_flops <= 0) {
    r.note = "no FP32 FMA, ADD or MUL work: not on the FP32 chart (tensor-core, half-precision and integer work are not in it)";
    return r;
  }
  if (!r.dram_bytes_per_s || *r.dram_bytes_per_s <= 0 || !r.dram_peak_bytes_per_s || *r.dram_peak_bytes_per_s <= 0) {
    r.note = "no DRAM traffic measured: its intensity at DRAM is unbounded";
    return r;
  }
  if (*r.dram_bytes_per_s > *r.dram_peak_bytes_per_s || *r.achieved_flops > *r.peak_flops) {
    r.note = "the achieved figures exceed the report's own peaks: not placed";
    return r;
  }
  r.intensity = *r.achieved_flops / *r.dram_bytes_per_s;
  r.roof_flops = std::min(*r.peak_flops, *r.intensity * *r.dram_peak_bytes_per_s);
  r.pct_of_roof = 100 * *r.achieved_flops / *r.roof_flops;
  r.bound = *r.intensity < *r.peak_flops / *r.dram_peak_bytes_per_s ? "memory" : "compute";
  for (const NcuMetric& m : k.metrics)
    if (m.name.rfind("sm__ops_path_tensor_", 0) == 0 && m.value && *m.value > 0)
      r.note = "its tensor-core work (" + m.name + ") is not on the FP32 chart";
  return r;
}

const std::vector<std::string>& kernel_finding_items() {
  static const std::vector<std::string> items = {"occupancy", "latency", "wave tail", "tile quantization",
                                                 "L2 misses", "bank conflicts", "spills", "atomics",
                                                 "inter-SM traffic", "divergence"};
  return items;
}

std::vector<KernelFinding> kernel_findings(const NcuKernel& k, const KernelFigures& f) {
  std::vector<KernelFinding> all = {occupancy(f),       latency(f),          wave_tail(k, f),
                                    missing("tile quantization", "the GEMM's M, N, K against its tile: no ncu section holds them"),
                                    l2_misses(k, f),    bank_conflicts(k),   spills(k),
                                    atomics(k),         inter_sm(k),         divergence(k)};
  auto rank = [](const KernelFinding& x) { return !x.measured ? 2 : x.gain_pct ? 0 : 1; };
  std::stable_sort(all.begin(), all.end(), [&](const KernelFinding& a, const KernelFinding& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return rank(a) == 0 && *a.gain_pct > *b.gain_pct;
  });
  return all;
}

}  // namespace fusebox::profiler
