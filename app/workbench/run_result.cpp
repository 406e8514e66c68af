#include "app/workbench/run_result.h"

#include <algorithm>

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

OutputSummary summarize_output(const std::string& name, const ir::Tensor& t) {
  OutputSummary s{name, t.shape(), 0};
  for (int64_t i = 0; i < t.numel(); ++i)
    s.checksum += t.dtype() == ir::DType::f32 ? t.data<float>()[i] : static_cast<double>(t.data<int64_t>()[i]);
  return s;
}

}  // namespace fusebox::workbench
