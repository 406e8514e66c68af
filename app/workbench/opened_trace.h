#pragma once
// A GPU trace another tool recorded (PyTorch profiler JSON, Nsight Systems SQLite) or fusebox
// exported, opened as a document of its own: the recording the importer made of it, what the
// importer skipped, and the GPU analysis. The window shows it in the trace and op table panels
// (the other panels say there is no graph); `fusebox trace` prints the same analysis.
#include <memory>
#include <string>

#include "profiler/gpu_analysis.h"
#include "profiler/timeline.h"
#include "profiler/trace_import.h"

namespace fusebox::workbench {

struct OpenedTrace {
  std::string path;
  profiler::ImportReport report;
  profiler::Recording recording;
  profiler::GpuAnalysis analysis;
  // "kineto trace, 1408 events (46 skipped): 79 kernels, 16 copies on 1 GPU"
  std::string summary() const;
};

// Imports and analyses `path`; throws fusebox::Error naming the file (import_trace's errors).
std::shared_ptr<const OpenedTrace> open_trace(const std::string& path,
                                              const profiler::GpuAnalysisOptions& options = {});

}  // namespace fusebox::workbench
