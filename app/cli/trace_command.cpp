// fusebox trace FILE: a trace recorded on a GPU by another tool (PyTorch profiler / kineto JSON,
// Nsight Systems SQLite) or exported by fusebox, read into a Recording and analysed top down:
// where the GPU's time went, why it sat idle, launch overhead, kernels, copies, the longest idle
// gaps and the CUDA-graph candidates, as findings ordered by the time they lose. It can also
// convert the trace to the other formats we write, and save it in our compact form.
#include <algorithm>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/workbench/opened_trace.h"
#include "core/base/error.h"
#include "profiler/exporters.h"
#include "profiler/kernel_link.h"
#include "profiler/ncu_report.h"
#include "profiler/ranks.h"
#include "profiler/saved_trace.h"

namespace fusebox::cli {

namespace {

struct TraceArgs {
  std::vector<std::string> paths;
  bool json = false;
  bool timeline = false;
  size_t gaps = 10;
  std::string chrome_out, sqlite_out, save_out;
  std::string kernels;  // an Nsight Compute export (file or folder) of some of the trace's kernels
};

nlohmann::json trace_json(const workbench::OpenedTrace& t) {
  nlohmann::json j = profiler::gpu_analysis_json(t.analysis);
  j["file"] = t.path;
  j["format"] = t.report.format;
  j["events"] = t.report.events;
  j["skipped"] = t.report.skipped;
  j["warnings"] = t.report.warnings;
  j["rank"] = t.recording.rank;
  j["world_size"] = t.recording.world_size;
  return j;
}

// The importer's warnings; the analysis's too where the text does not carry them (--json, ranks).
void print_warnings(const workbench::OpenedTrace& t, bool analysis_too) {
  for (const std::string& w : t.report.warnings) std::cerr << "warning: " << t.path << ": " << w << "\n";
  if (analysis_too)
    for (const std::string& w : t.analysis.warnings)
      std::cerr << "warning: " << t.path << ": " << w << "\n";
}

void run_one(const TraceArgs& a, const std::string& path) {
  profiler::GpuAnalysisOptions options;
  options.top_gaps = a.gaps;
  // What the window opens, too; a trace saved as it was read, before the clock alignment.
  const auto opened = workbench::open_trace(
      path, options, [&](const profiler::Recording& imported, const profiler::ImportReport& report) {
        if (!a.save_out.empty()) profiler::save_trace(imported, report, a.save_out);
      });
  const profiler::ImportReport& report = opened->report;
  const profiler::Recording& r = opened->recording;
  print_warnings(*opened, a.json);
  // The kernel level beside it: the ncu export's launches matched to the trace's kernels.
  profiler::NcuReport ncu;
  profiler::KernelLinks links;
  if (!a.kernels.empty()) {
    ncu = profiler::read_ncu(a.kernels);
    for (const std::string& w : ncu.warnings) std::cerr << "warning: " << a.kernels << ": " << w << "\n";
    links = profiler::link_kernels(r.device, ncu);
  }
  if (a.json) {
    nlohmann::json j = trace_json(*opened);
    if (!a.kernels.empty()) j["kernel_level"] = profiler::kernel_links_json(links, ncu);
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << path << ": " << report.format << " trace, " << report.events << " events";
    if (report.skipped) std::cout << " (" << report.skipped << " skipped)";
    if (r.rank >= 0) {  // world_size 0: the trace names its rank but not the job's size
      std::cout << ", rank " << r.rank;
      if (r.world_size > 0) std::cout << " of " << r.world_size;
    }
    std::cout << "\n" << profiler::gpu_analysis_text(opened->analysis);
    if (!a.kernels.empty()) std::cout << "\n" << profiler::kernel_links_text(links, ncu);
    if (a.timeline) std::cout << profiler::timeline_text(profiler::build_timeline(r));
  }
  if (!a.chrome_out.empty()) profiler::write_chrome_trace(r, a.chrome_out);
  if (!a.sqlite_out.empty()) profiler::write_nsys_sqlite(r, a.sqlite_out);
}

// Several ranks of one job: each rank's analysis, then the ranks side by side.
void run_ranks(const TraceArgs& a, const std::vector<std::string>& files) {
  if (!a.chrome_out.empty() || !a.sqlite_out.empty() || !a.save_out.empty() || a.timeline || !a.kernels.empty())
    throw Error("--chrome, --sqlite, --save, --timeline and --kernels take one trace; " +
                std::to_string(files.size()) + " were given");
  profiler::GpuAnalysisOptions options;
  options.top_gaps = a.gaps;
  std::vector<std::shared_ptr<const workbench::OpenedTrace>> opened;
  std::vector<profiler::RankTrace> ranks;
  for (const std::string& f : files) {
    opened.push_back(workbench::open_trace(f, options));
    ranks.push_back({f, &opened.back()->recording});
  }
  const profiler::RankAnalysis ra = profiler::analyze_ranks(ranks);
  for (const auto& t : opened) print_warnings(*t, true);
  if (a.json) {
    nlohmann::json j;
    j["ranks"] = profiler::rank_analysis_json(ra);
    nlohmann::json per = nlohmann::json::array();
    for (const auto& t : opened) per.push_back(trace_json(*t));
    j["files"] = per;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  std::cout << profiler::rank_analysis_text(ra);
  for (const profiler::RankSummary& r : ra.ranks) {
    for (const auto& t : opened) {
      if (t->path != r.file) continue;
      std::cout << "\nrank " << r.rank << " (" << t->summary() << ")\n";
      const auto& f = t->analysis.findings;
      for (size_t i = 0; i < f.size() && i < 3; ++i) std::cout << "  - " << f[i].sentence << "\n";
      if (f.empty()) std::cout << "  no findings\n";
    }
  }
}

void run_trace(const TraceArgs& a) {
  const std::vector<std::string> files = workbench::trace_files(a.paths);
  if (files.size() == 1)
    run_one(a, files.front());
  else
    run_ranks(a, files);
}

void trace_options(CLI::App& cmd, TraceArgs& a) {
  cmd.add_option("trace", a.paths,
                 "a kineto .json / .json.gz or an nsys .sqlite export; several (or a folder): "
                 "the ranks of one job")
      ->required();
  cmd.add_flag("--json", a.json, "print the analysis as JSON");
  cmd.add_flag("--timeline", a.timeline, "also print the timeline model (tracks, rows, busy time)");
  cmd.add_option("--gaps", a.gaps, "how many of the longest GPU-idle gaps to list")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, size_t{1000}));
  cmd.add_option("--chrome", a.chrome_out, "also write the trace as Chrome-trace JSON (Perfetto)");
  cmd.add_option("--sqlite", a.sqlite_out, "also write the trace as an nsys-schema SQLite file");
  cmd.add_option("--kernels", a.kernels,
                 "an Nsight Compute CSV export (or a folder of them) of some of the trace's kernels: "
                 "each profiled launch is matched to the trace's kernels by name and launch "
                 "geometry, and the top kernels are listed with their limiter");
  cmd.add_option("--save", a.save_out,
                 "also write the imported trace in fusebox's compact form (zstd columns), which "
                 "`fusebox trace` and the window open again in a fraction of the import time");
}

}  // namespace

Command trace_command() {
  return make_command<TraceArgs>(
      "trace",
      "Open a GPU trace recorded by PyTorch's profiler (.json/.json.gz) or Nsight Systems "
      "(nsys export --type sqlite) and print the GPU analysis, top down: time split, idle causes, "
      "launch overhead, graph replays, communication, kernels, copies, idle gaps, CUDA-graph "
      "candidates, findings by time lost. Several traces (or a folder) are the ranks of one job: "
      "per rank step time, computation, communication, idle, and the straggler.\n"
      "Example: fusebox trace tests/data/traces/kineto_a100_alexnet.json.gz\n"
      "         fusebox trace tests/data/traces/a100_2rank_nccl\n"
      "         fusebox trace run.json.gz --kernels ncu.details.csv",
      trace_options, run_trace);
}

}  // namespace fusebox::cli
