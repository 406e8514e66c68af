#include "app/workbench/opened_trace.h"

namespace fusebox::workbench {

std::string OpenedTrace::summary() const {
  std::string s = report.format + " trace, " + std::to_string(report.events) + " events";
  if (report.skipped) s += " (" + std::to_string(report.skipped) + " skipped)";
  s += ": " + std::to_string(analysis.kernel_count) + " kernels, " +
       std::to_string(analysis.memcpy_count) + " copies on " +
       std::to_string(analysis.devices.size()) + " GPU" + (analysis.devices.size() == 1 ? "" : "s");
  return s;
}

std::shared_ptr<const OpenedTrace> open_trace(const std::string& path,
                                              const profiler::GpuAnalysisOptions& options) {
  auto t = std::make_shared<OpenedTrace>();
  t->path = path;
  t->recording = profiler::import_trace(path, &t->report);
  t->analysis = profiler::analyze_gpu(t->recording, options);
  return t;
}

}  // namespace fusebox::workbench
