#include "app/workbench/run_result.h"

#include <algorithm>
#include <cstdio>

#include "core/base/strings.h"
#include "profiler/stats.h"

namespace fusebox::workbench {

Latency summarize(std::vector<double> s) {
  Latency l;
  l.samples_us = s;
  if (s.empty()) return l;
  std::sort(s.begin(), s.end());
  l.min_us = s.front();
  l.p10_us = profiler::percentile_sorted(s, 0.1);
  l.median_us = profiler::percentile_sorted(s, 0.5);
  l.p90_us = profiler::percentile_sorted(s, 0.9);
  double sum = 0;
  for (double x : s) sum += x;
  l.mean_us = sum / static_cast<double>(s.size());
  return l;
}

std::string Latency::text() const {
  return format_duration_ns(median_us * 1e3) + " (p10 " + format_duration_ns(p10_us * 1e3) +
         ", p90 " + format_duration_ns(p90_us * 1e3) + ")";
}

std::string Latency::noise_warning() const {
  if (spread() <= kNoisySpread) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "noisy: p90 is %.2fx p10; the machine was busy", spread());
  return buf;
}

std::string MachineLoad::text() const {
  if (other_cores < 0) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "other processes used %.1f of %u cores while it measured", other_cores, cores);
  return buf;
}

OutputSummary summarize_output(const std::string& name, const ir::Tensor& t) {
  OutputSummary s{name, t.shape(), 0};
  for (int64_t i = 0; i < t.numel(); ++i)
    s.checksum += t.dtype() == ir::DType::f32 ? t.data<float>()[i] : static_cast<double>(t.data<int64_t>()[i]);
  return s;
}

}  // namespace fusebox::workbench
