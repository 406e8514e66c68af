#include "app/workbench/kernel_level.h"

#include <cstdio>
#include <filesystem>

namespace fusebox::workbench {

const profiler::KernelLink* KernelLevel::by_name(const std::string& name) const {
  const auto it = first_by_name.find(name);
  return it == first_by_name.end() ? nullptr : it->second;
}

std::string KernelLevel::summary() const {
  char share[64];
  std::snprintf(share, sizeof share, "%.1f%%",
                links.trace_kernel_ns > 0
                    ? 100.0 * static_cast<double>(links.linked_ns) / static_cast<double>(links.trace_kernel_ns)
                    : 0.0);
  return std::to_string(links.ncu_matched) + " of " + std::to_string(links.ncu_launches) +
         " profiled launches matched; " + share + " of the kernel time has a profiled launch";
}

std::shared_ptr<const KernelLevel> open_kernel_level(const std::string& path, const OpenedTrace& trace) {
  auto level = std::make_shared<KernelLevel>();
  level->path = path;
  level->trace_id = trace.id;
  level->ncu = profiler::read_ncu(path);
  level->links = profiler::link_kernels(trace.recording.device, level->ncu);
  level->figures.reserve(level->ncu.kernels.size());
  for (const profiler::NcuKernel& k : level->ncu.kernels) level->figures.push_back(profiler::kernel_figures(k));
  for (const profiler::KernelLink& g : level->links.groups)
    if (!g.ncu.empty()) level->first_by_name.emplace(g.name, &g);  // emplace keeps the first
  return level;
}

std::string trace_kernel_named(const OpenedTrace& trace, const std::string& part) {
  for (const profiler::KernelGroup& g : trace.analysis.kernels_by_name)
    if (g.key.find(part) != std::string::npos) return g.key;
  return "";
}

const profiler::KernelFigures* launch_named(const KernelLevel& level, const std::string& part, std::string& why) {
  const profiler::KernelFigures* found = nullptr;
  for (const profiler::KernelFigures& f : level.figures) {
    if (f.name.find(part) == std::string::npos) continue;
    if (found && found->name != f.name) {
      why = "'" + part + "' is in the names of several profiled kernels (" + profiler::kernel_base_name(found->name) +
            ", " + profiler::kernel_base_name(f.name) + "...): give more of the name";
      return nullptr;
    }
    if (!found) found = &f;
  }
  if (!found) why = "no profiled launch in " + level.path + " has '" + part + "' in its name";
  return found;
}

bool is_ncu_export(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec))
    return path.ends_with(".csv") && std::filesystem::is_regular_file(path, ec) && profiler::looks_like_ncu_csv(path);
  // A folder: the first .csv files under it (a bounded look; read_ncu reads them all).
  std::error_code list;
  size_t seen = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(path, list);
       !list && it != std::filesystem::recursive_directory_iterator() && seen < 10000; it.increment(list), ++seen) {
    std::error_code entry;
    if (it->is_regular_file(entry) && it->path().extension() == ".csv" && profiler::looks_like_ncu_csv(it->path().string()))
      return true;
  }
  return false;
}

}  // namespace fusebox::workbench
