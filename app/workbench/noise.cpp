#include "app/workbench/noise.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "profiler/stats.h"

namespace fusebox::workbench {

const char* verdict_name(Verdict v) {
  static constexpr const char* kNames[] = {"faster", "slower", "within noise"};  // Verdict's order
  return kNames[static_cast<size_t>(v)];
}

LatencyVerdict judge(const Latency& baseline, const Latency& current, const NoiseRule& rule) {
  LatencyVerdict v;
  v.rule = rule;
  v.n_baseline = baseline.samples_us.size();
  v.n_current = current.samples_us.size();
  v.p_value = profiler::mann_whitney(baseline.samples_us, current.samples_us).p_value;
  if (baseline.median_us > 0)
    v.effect = (current.median_us - baseline.median_us) / baseline.median_us;
  v.noisy = !baseline.noise_warning().empty() || !current.noise_warning().empty();
  const Latency& fast = current.median_us < baseline.median_us ? current : baseline;
  const Latency& slow = &fast == &current ? baseline : current;
  v.beyond_spread = fast.median_us < slow.p10_us;
  const bool clears_noise = !v.noisy || v.beyond_spread;
  if (v.p_value < rule.alpha && std::fabs(v.effect) >= rule.min_effect && clears_noise)
    v.verdict = v.effect < 0 ? Verdict::Faster : Verdict::Slower;
  return v;
}

std::string machine_busy(const RunResult& r) {
  if (r.load.other_cores >= 0 && r.load.cores > 0 &&
      r.load.other_cores >= kBusyOtherCoresShare * r.load.cores)
    return r.load.text();
  return r.latency.noise_warning();
}

CpuSample CpuSample::now() {
  CpuSample s;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) == 0)
    s.self_s = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  // The first line: "cpu  user nice system idle iowait irq softirq steal ..." in clock ticks.
  std::ifstream stat("/proc/stat");
  std::string line, cpu;
  if (!std::getline(stat, line)) return s;
  std::istringstream in(line);
  in >> cpu;
  double total = 0, idle = 0, v = 0;
  for (int field = 0; in >> v; ++field) {
    total += field < 8 ? v : 0;  // guest time is already counted in user
    if (field == 3 || field == 4) idle += v;  // idle, iowait
  }
  const long ticks = sysconf(_SC_CLK_TCK);
  if (cpu == "cpu" && ticks > 0) s.machine_busy_s = (total - idle) / static_cast<double>(ticks);
  return s;
}

MachineLoad machine_load(const CpuSample& before, const CpuSample& after) {
  MachineLoad m;
  m.cores = std::thread::hardware_concurrency();
  m.wall_s = after.wall_s - before.wall_s;
  // /proc/stat counts in clock ticks (10 ms a CPU): under 100 ms the figure is a guess.
  if (before.machine_busy_s < 0 || after.machine_busy_s < 0 || m.wall_s < 0.1) return m;
  const double others = (after.machine_busy_s - before.machine_busy_s) - (after.self_s - before.self_s);
  // The ticks' rounding can put it a little past the machine.
  m.other_cores = std::clamp(others / m.wall_s, 0.0, static_cast<double>(std::max(1u, m.cores)));
  return m;
}

std::string LatencyVerdict::text() const {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s: median %+.1f%%, p = %.2g (Mann-Whitney U over %zu + %zu calls; needs p < %g "
                "and |change| >= %g%%%s)",
                verdict_name(verdict), 100 * effect, p_value, n_baseline, n_current, rule.alpha,
                100 * rule.min_effect,
                !noisy ? ""
                : beyond_spread
                    ? "; a side is noisy, the faster median below the slower p10"
                    : "; a side is noisy and the faster median is not below the slower p10");
  return buf;
}

}  // namespace fusebox::workbench
