#pragma once
// The op table's view of an opened GPU trace (profiler/gpu_analysis.h): each GPU's time as one
// bar (kernels, copies, memsets, idle), the analysis's warnings (clock skew), the findings ordered
// by the time they lose, one line each for graph replays, communication and serving phases, then
// the kernels grouped by name or by the host op / NVTX range that launched them, and the copies by
// direction with their achieved GB/s, pageable ones marked. With several ranks open, the ranks
// come first (step, computation, communication, exposed, idle, wait; the straggler and the
// verdict), then the straggler's own analysis. With an Nsight Compute export beside the trace
// (kernels=PATH) each kernel row carries its profiled launch's limiter, and the selected kernel
// (kernel=NAME, or a click) shows its fine-grained figures: Speed Of Light bars, occupancy, memory
// hierarchy, scheduler, ncu's rules. A serving or generation trace's phases pick whose kernels
// the table lists (ops.phase=decode: those its decode steps launched; a CPU recording's ops).
#include <cstddef>
#include <string>
#include <vector>

#include "app/ui/panel.h"
#include "app/workbench/opened_trace.h"

namespace fusebox::ui {

struct GpuTable {
  void draw(const Frame& frame, const workbench::OpenedTrace& trace);
  void kernel_figures(const workbench::KernelLevel& level, const profiler::KernelLink& link);
  void level_lines(const profiler::GpuAnalysis& a);
  void rank_rows(const workbench::OpenedTrace& trace);

  // The kernel rows: the table under the findings.
  void kernel_table(const Frame& frame, const std::vector<profiler::KernelGroup>& groups,
                    const char* header, bool selectable);
  // The phases to choose from (all, then each the trace has), where it has any.
  void phase_picker(const Frame& frame, const profiler::Phases& phases);

  bool by_launcher = false;  // kernels grouped by launching host span instead of by name
  std::string phase;         // "": every kernel; a phase's name: the kernels its steps launched
  struct Drawn {
    size_t findings = 0;
    size_t warnings = 0;
    size_t level_lines = 0;  // graph replays, capture, communication, phases
    size_t kernel_rows = 0;
    size_t phase_choices = 0;  // the phase picker's buttons (all and each phase)
    size_t copy_rows = 0;
    size_t ranks = 0;  // rank rows
    size_t kernel_level_lines = 0;  // the ncu export's summary line (kernels=PATH)
    size_t kernel_limiters = 0;     // kernel rows showing their profiled launch's limiter
    size_t kernel_figures = 0;      // the selected kernel's fine-grained section
    size_t kernel_findings = 0;     // its measured fine-grained items
  } drawn;
};

}  // namespace fusebox::ui
