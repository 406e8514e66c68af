#include "app/workbench/opened_trace.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <system_error>

#include "core/base/error.h"

namespace fusebox::workbench {

namespace {
uint64_t next_id() {
  static std::atomic<uint64_t> id{0};
  return ++id;
}
}  // namespace

std::string OpenedTrace::summary() const {
  int64_t kernels = analysis.kernel_count, copies = analysis.memcpy_count;
  size_t gpus = analysis.devices.size();
  if (ranks) {  // every rank's
    kernels = copies = 0, gpus = 0;
    for (const profiler::GpuAnalysis& a : rank_analyses)
      kernels += a.kernel_count, copies += a.memcpy_count, gpus += a.devices.size();
  }
  std::string s;
  if (ranks) s = std::to_string(slices.size()) + " ranks, ";
  s += report.format + " trace" + (ranks ? "s, " : ", ") + std::to_string(report.events) + " events";
  if (report.skipped) s += " (" + std::to_string(report.skipped) + " skipped)";
  if (gpus == 0 && kernels == 0 && copies == 0) return s + ": no GPU work (a CPU recording)";
  s += ": " + std::to_string(kernels) + " kernels, " + std::to_string(copies) + " copies on " +
       std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s");
  return s;
}

std::shared_ptr<const OpenedTrace> open_trace(const std::string& path,
                                              const profiler::GpuAnalysisOptions& options,
                                              const OnImported& on_imported) {
  auto t = std::make_shared<OpenedTrace>();
  t->id = next_id();
  t->path = path;
  t->recording = profiler::import_trace(path, &t->report);
  if (on_imported) on_imported(t->recording, t->report);
  t->analysis = profiler::analyze_gpu_aligning(t->recording, options);
  return t;
}

std::shared_ptr<const OpenedTrace> open_path(const std::string& path,
                                             const profiler::GpuAnalysisOptions& options) {
  const std::vector<std::string> files = trace_files({path});
  return files.size() == 1 ? open_trace(files.front(), options) : open_ranks(files, path, options);
}

std::vector<std::string> trace_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> in;
    std::error_code list;  // the listing's own error, apart from each entry's
    for (auto it = std::filesystem::directory_iterator(p, list); !list && it != std::filesystem::directory_iterator();
         it.increment(list)) {
      std::error_code entry;
      if (it->is_regular_file(entry) && profiler::looks_like_trace(it->path().string()))
        in.push_back(it->path().string());
    }
    if (list) throw Error(p + ": cannot list the folder: " + list.message());
    if (in.empty()) throw Error(p + ": a folder with no trace in it (kineto .json/.json.gz, nsys .sqlite)");
    std::sort(in.begin(), in.end());
    files.insert(files.end(), in.begin(), in.end());
  }
  return files;
}

std::shared_ptr<const OpenedTrace> open_ranks(const std::vector<std::string>& files,
                                              const std::string& path,
                                              const profiler::GpuAnalysisOptions& options) {
  // Each rank as open_trace opens it (its host on its GPU's clock), then side by side.
  std::vector<OpenedTrace> each(files.size());
  std::vector<profiler::RankTrace> traces;
  for (size_t i = 0; i < files.size(); ++i) {
    each[i].path = files[i];
    each[i].recording = profiler::import_trace(files[i], &each[i].report);
    each[i].analysis = profiler::analyze_gpu_aligning(each[i].recording, options);
  }
  for (const OpenedTrace& e : each) traces.push_back({e.path, &e.recording});
  auto ranks = std::make_shared<const profiler::RankAnalysis>(profiler::analyze_ranks(traces));

  auto t = std::make_shared<OpenedTrace>();
  t->id = next_id();
  t->path = path;
  t->ranks = ranks;
  // In rank order (analyze_ranks orders them; every file is one of its ranks).
  std::vector<profiler::Recording> ordered;
  for (const profiler::RankSummary& r : ranks->ranks)
    for (OpenedTrace& e : each) {
      if (e.path != r.file) continue;
      if (t->report.format.empty()) t->report.format = e.report.format;
      t->report.events += e.report.events;
      t->report.skipped += e.report.skipped;
      for (const std::string& w : e.report.warnings) t->report.warnings.push_back(e.path + ": " + w);
      for (const std::string& w : e.analysis.warnings) t->report.warnings.push_back(e.path + ": " + w);
      e.recording.rank = r.rank;  // from the file name where the trace does not say
      ordered.push_back(std::move(e.recording));
      break;
    }
  profiler::MergedRanks merged = profiler::merge_ranks(std::move(ordered));
  t->recording = std::move(merged.recording);
  t->slices = std::move(merged.slices);
  // Slice i is ranks->ranks[i] (merged in that order).
  for (size_t i = 0; i < t->slices.size(); ++i) {
    // On the slice (its GPUs as the merged recording numbers them); its clock was aligned when
    // it was opened, and that warning stays with it.
    profiler::GpuAnalysis a =
        profiler::analyze_gpu(profiler::slice_recording(t->recording, t->slices[i]), options);
    for (const OpenedTrace& e : each)
      if (e.path == ranks->ranks[i].file) {
        a.skew = e.analysis.skew;
        a.warnings = e.analysis.warnings;
      }
    if (t->slices[i].rank == ranks->straggler) t->shown_rank = i;
    t->rank_analyses.push_back(std::move(a));
  }
  t->analysis = t->rank_analyses.at(t->shown_rank);
  return t;
}

}  // namespace fusebox::workbench
