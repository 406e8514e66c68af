#pragma once
// The files a run can be exported as, written by one set of functions for both front ends:
// `fusebox profile --out DIR` and `fusebox graph --out G.svg` call them, and so do the window's
// File > Export items (export.profile=DIR, export.svg=PATH, export.trace=PATH). Every file is
// written whole or not at all (core/base/atomic_file.h); a profile folder is swapped in whole.
#include <string>

#include "app/workbench/run_result.h"
#include "profiler/analysis.h"
#include "profiler/exporters.h"
#include "profiler/recording.h"

namespace fusebox::workbench {

// The files a profile folder holds (and so the only ones writing it again may replace):
// profile.json, analysis.json, trace.json, trace.nvtxt, trace.sqlite.
bool is_profile_file(const std::string& name);

struct ProfileFormats {
  bool chrome = true;  // trace.json: Chrome trace (Perfetto, chrome://tracing)
  bool nvtxt = true;   // trace.nvtxt: NVIDIA's ImportNvtxt makes an .nsys-rep of it
  bool sqlite = true;  // trace.sqlite: the `nsys export` schema
};

// The checks writing `dir` makes before anything is written (for a command to make before a long
// run): an existing `dir` holding anything but profile files is refused. Throws fusebox::Error.
void check_profile_folder(const std::string& dir);
// profile.json (the recording; `fusebox compare A.json B.json`), analysis.json and the trace
// files `formats` asks for, into `dir`, which holds either the old set or the new one afterwards.
// Throws fusebox::Error naming `dir`.
void write_profile_folder(const std::string& dir, const profiler::Recording& recording,
                          const profiler::Analysis& analysis, const ProfileFormats& formats = {},
                          profiler::NvtxtTimeBase time_base = profiler::NvtxtTimeBase::Manual);

// The graph as `fusebox graph` draws it: the graph the run ran (after its passes), or with
// `pass` the graph after that pass (before it, with `before`) with what it touched in red.
// `title` is the caption over the drawing ("transformer\nafter passes all: 14 nodes").
struct GraphSvg {
  std::string svg;
  std::string title;
};
GraphSvg graph_svg(const RunResult& result, const std::string& pass = "", bool before = false,
                   bool edge_labels = true);
// A refused model's outline (refused_model.h), its unsupported nodes filled red.
GraphSvg refused_graph_svg(const RefusedModel& refused, bool edge_labels = true);
void write_graph_svg(const std::string& path, const GraphSvg& svg);

}  // namespace fusebox::workbench
