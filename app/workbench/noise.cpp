#include "app/workbench/noise.h"

#include <cmath>
#include <cstdio>

#include "profiler/stats.h"

namespace fusebox::workbench {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Faster:
      return "faster";
    case Verdict::Slower:
      return "slower";
    case Verdict::WithinNoise:
      return "within noise";
  }
  return "?";
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
  v.ranges_overlap = baseline.p10_us <= current.p90_us && current.p10_us <= baseline.p90_us;
  const bool clears_noise = !v.noisy || !v.ranges_overlap;
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
                !noisy           ? ""
                : ranges_overlap ? "; a side is noisy and the p10-p90 ranges overlap"
                                 : "; a side is noisy, the p10-p90 ranges apart");
  return buf;
}

}  // namespace fusebox::workbench
