#pragma once
// A GPU trace another tool recorded (PyTorch profiler JSON, Nsight Systems SQLite) or fusebox
// exported, opened as a document of its own: the recording the importer made of it, what the
// importer skipped, and the GPU analysis. The window shows it in the trace and op table panels
// (the other panels say there is no graph); `fusebox trace` prints the same analysis.
// Several ranks of one job open as one document too (open_ranks): one recording holding every
// rank's (profiler/rank_view.h), the ranks side by side (profiler/ranks.h).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "profiler/gpu_analysis.h"
#include "profiler/rank_view.h"
#include "profiler/ranks.h"
#include "profiler/timeline.h"
#include "profiler/trace_import.h"

namespace fusebox::workbench {

struct OpenedTrace {
  uint64_t id = 0;   // unique per opening in this process: what a view caches its work on
  std::string path;  // the file; for ranks the folder (or first file) named
  profiler::ImportReport report;  // for ranks: the files' together
  // The importer's recording, its host side moved onto the GPU's clock where the analysis found
  // the two apart (analysis.skew, and a warning): the trace panel and the exports show the
  // launches where the figures measured them. For ranks: every rank's, merged (rank_view.h).
  profiler::Recording recording;
  // For ranks: the straggler's (the rank ranks.h's verdict sends you to; the first rank when
  // none is named). Each rank's own, as its slice of `recording` numbers its GPUs, is in
  // rank_analyses; an analysis never mixes ranks (one rank's host is not another's).
  profiler::GpuAnalysis analysis;
  // Several ranks: each one's share of `recording`, in rank order, its analysis, and the ranks
  // side by side.
  std::vector<profiler::RankSlice> slices;
  std::vector<profiler::GpuAnalysis> rank_analyses;  // by slice
  std::shared_ptr<const profiler::RankAnalysis> ranks;  // null for one trace
  size_t shown_rank = 0;  // the slice `analysis` is of
  // "kineto trace, 1408 events (46 skipped): 79 kernels, 16 copies on 1 GPU"
  std::string summary() const;
};

// What the importer read, before the analysis aligns its host clock (the form a saved trace
// keeps, so that opening it again aligns it the same way).
using OnImported = std::function<void(const profiler::Recording&, const profiler::ImportReport&)>;

// Imports and analyses `path`; throws fusebox::Error naming the file (import_trace's errors).
std::shared_ptr<const OpenedTrace> open_trace(const std::string& path,
                                              const profiler::GpuAnalysisOptions& options = {},
                                              const OnImported& on_imported = {});

// A trace file, or a folder: its one trace opens as open_trace, several as open_ranks.
std::shared_ptr<const OpenedTrace> open_path(const std::string& path,
                                             const profiler::GpuAnalysisOptions& options = {});

// The trace files `paths` name, a folder standing for the traces in it (by name). Throws
// fusebox::Error naming a folder that cannot be listed or holds no trace.
std::vector<std::string> trace_files(const std::vector<std::string>& paths);

// The ranks of one job, one file each: each opened as open_trace opens it, then side by side
// (analyze_ranks) and merged into one document. `path` is what the user named. Throws
// fusebox::Error naming the files when they are not ranks of one job.
std::shared_ptr<const OpenedTrace> open_ranks(const std::vector<std::string>& files,
                                              const std::string& path,
                                              const profiler::GpuAnalysisOptions& options = {});

}  // namespace fusebox::workbench
