// fusebox kernels FILE_OR_DIR: the kernel level of the top-down workflow, from Nsight Compute
// exports (profiler/ncu_report.h): per kernel its duration and launch, Speed Of Light and the
// unit nearest its peak, occupancy and its limiter, memory hit rates and DRAM throughput,
// scheduler statistics, the FP32 roofline, the fine-grained list by estimated gain, and ncu's own
// rules as ncu wrote them.
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "profiler/ncu_report.h"

namespace fusebox::cli {

namespace {

struct KernelsArgs {
  std::string path;
  bool json = false;
};

void run_kernels(const KernelsArgs& a) {
  const profiler::NcuReport report = profiler::read_ncu(a.path);
  for (const std::string& w : report.warnings) std::cerr << "warning: " << a.path << ": " << w << "\n";
  if (a.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const profiler::NcuKernel& k : report.kernels) {
      nlohmann::json j = profiler::kernel_figures_json(profiler::kernel_figures(k));
      j["file"] = k.file;
      j["id"] = k.id;
      all.push_back(std::move(j));
    }
    std::cout << nlohmann::json{{"kernels", all}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  std::cout << report.kernels.size() << " kernel launch" << (report.kernels.size() == 1 ? "" : "es") << " in "
            << a.path << "\n\n";
  for (const profiler::NcuKernel& k : report.kernels)
    std::cout << profiler::kernel_figures_text(profiler::kernel_figures(k)) << "\n";
}

void kernels_options(CLI::App& cmd, KernelsArgs& a) {
  cmd.add_option("FILE_OR_DIR", a.path,
                 "an Nsight Compute CSV export (ncu --csv --page details or --page raw), or a folder of them")
      ->required();
  cmd.add_flag("--json", a.json, "print the figures as JSON");
}

}  // namespace

Command kernels_command() {
  return make_command<KernelsArgs>(
      "kernels",
      "The kernel level: read Nsight Compute exports and print each kernel's limiter.\n"
      "Example: fusebox kernels ncu.details.csv",
      kernels_options, run_kernels);
}

}  // namespace fusebox::cli
