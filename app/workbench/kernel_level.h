#pragma once
// An Nsight Compute export opened beside a GPU trace (`fusebox trace T --kernels NCU`, the
// window's kernels=PATH or a second open=): its launches, and each matched to the trace's kernels
// (profiler/kernel_link.h), so the op table's kernel rows carry their limiter and a selected
// kernel shows its fine-grained figures.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/workbench/opened_trace.h"
#include "profiler/kernel_link.h"
#include "profiler/ncu_report.h"

namespace fusebox::workbench {

struct KernelLevel {
  std::string path;        // the export (a file or a folder of them)
  uint64_t trace_id = 0;   // the OpenedTrace it was matched against
  profiler::NcuReport ncu;
  profiler::KernelLinks links;
  // Each launch's figures (parallel to ncu.kernels), worked out once on opening: the window
  // draws them every frame.
  std::vector<profiler::KernelFigures> figures;
  // The figures of a group's first profiled launch.
  const profiler::KernelFigures& figures_of(const profiler::KernelLink& link) const { return figures[link.ncu.front()]; }
  // The first group of the trace's kernel `name` (KernelGroup::key) that has a profiled launch,
  // or null: the op table's kernel rows are by name, the links by name and launch geometry.
  const profiler::KernelLink* by_name(const std::string& name) const;
  // "5 of 14 profiled launches matched; 89.9% of the kernel time has a profiled launch"
  std::string summary() const;

  std::unordered_map<std::string, const profiler::KernelLink*> first_by_name;  // by_name's index
};

// Reads the export and matches it to `trace`'s kernels. Throws fusebox::Error naming the file for
// an export that cannot be read (ncu_report.h).
std::shared_ptr<const KernelLevel> open_kernel_level(const std::string& path, const OpenedTrace& trace);

// The first of the trace's kernels (by GPU time, OpenedTrace's kernels by name) whose name holds
// `part`, or "": how a scenario's look_at names a kernel without its whole templated name.
std::string trace_kernel_named(const OpenedTrace& trace, const std::string& part);

// The figures of the one profiled launch whose (ncu) name holds `part`; null when none does or
// several launches of different names do (then `why` says which, to give more of the name).
const profiler::KernelFigures* launch_named(const KernelLevel& level, const std::string& part, std::string& why);

// Whether `path` is an Nsight Compute CSV export, or a folder holding one (the window's open=
// tells it from a trace or a model by this).
bool is_ncu_export(const std::string& path);

}  // namespace fusebox::workbench
