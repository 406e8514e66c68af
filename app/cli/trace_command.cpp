// fusebox trace FILE: a trace recorded on a GPU by another tool (PyTorch profiler / kineto JSON,
// Nsight Systems SQLite) or exported by fusebox, read into a Recording and analysed top down:
// where the GPU's time went, why it sat idle, launch overhead, kernels, copies, the longest idle
// gaps and the CUDA-graph candidates, as findings ordered by the time they lose. It can also
// convert the trace to the other formats we write.
#include <iostream>

#include "app/cli/commands.h"
#include "app/workbench/opened_trace.h"
#include "profiler/exporters.h"

namespace fusebox::cli {

namespace {

struct TraceArgs {
  std::string path;
  bool json = false;
  bool timeline = false;
  size_t gaps = 10;
  std::string chrome_out, sqlite_out;
};

void run_trace(const TraceArgs& a) {
  profiler::GpuAnalysisOptions options;
  options.top_gaps = a.gaps;
  const auto opened = workbench::open_trace(a.path, options);  // what the window opens, too
  const profiler::ImportReport& report = opened->report;
  const profiler::Recording& r = opened->recording;
  const profiler::GpuAnalysis& analysis = opened->analysis;
  for (const std::string& w : report.warnings) std::cerr << "warning: " << a.path << ": " << w << "\n";
  if (a.json) {
    nlohmann::json j = profiler::gpu_analysis_json(analysis);
    j["file"] = a.path;
    j["format"] = report.format;
    j["events"] = report.events;
    j["skipped"] = report.skipped;
    j["warnings"] = report.warnings;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << a.path << ": " << report.format << " trace, " << report.events << " events";
    if (report.skipped) std::cout << " (" << report.skipped << " skipped)";
    std::cout << "\n" << profiler::gpu_analysis_text(analysis);
    if (a.timeline) std::cout << profiler::timeline_text(profiler::build_timeline(r));
  }
  if (!a.chrome_out.empty()) profiler::write_chrome_trace(r, a.chrome_out);
  if (!a.sqlite_out.empty()) profiler::write_nsys_sqlite(r, a.sqlite_out);
}

void trace_options(CLI::App& cmd, TraceArgs& a) {
  cmd.add_option("trace", a.path, "a kineto .json / .json.gz or an nsys .sqlite export")->required();
  cmd.add_flag("--json", a.json, "print the analysis as JSON");
  cmd.add_flag("--timeline", a.timeline, "also print the timeline model (tracks, rows, busy time)");
  cmd.add_option("--gaps", a.gaps, "how many of the longest GPU-idle gaps to list")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, size_t{1000}));
  cmd.add_option("--chrome", a.chrome_out, "also write the trace as Chrome-trace JSON (Perfetto)");
  cmd.add_option("--sqlite", a.sqlite_out, "also write the trace as an nsys-schema SQLite file");
}

}  // namespace

Command trace_command() {
  return make_command<TraceArgs>(
      "trace",
      "Open a GPU trace recorded by PyTorch's profiler (.json/.json.gz) or Nsight Systems "
      "(nsys export --type sqlite) and print the GPU analysis, top down: time split, idle causes, "
      "launch overhead, kernels, copies, idle gaps, CUDA-graph candidates, findings by time "
      "lost.\nExample: fusebox trace tests/data/traces/kineto_a100_alexnet.json.gz",
      trace_options, run_trace);
}

}  // namespace fusebox::cli
