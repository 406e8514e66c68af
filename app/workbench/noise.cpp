#include "app/workbench/noise.h"

#include <cmath>
#include <cstdio>

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
