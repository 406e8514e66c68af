// fusebox machine: the roofline the profiler classifies ops against, measured through the
// runtime (GEMM GFLOP/s per thread count, memory bandwidth, dispatch floor) and cached.
#include <omp.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "ops/cpu/parallel.h"
#include "profiler/roofline.h"

namespace fusebox::cli {

namespace {
struct MachineArgs {
  bool refresh = false;
  bool json = false;
  std::string backend = "cpu";
  std::string isa = "auto";
};

void run_machine(const MachineArgs& a) {
  workbench::Settings checked;  // the settings table's backend field: its names and message
  workbench::set_field(checked, "backend", a.backend, "--backend");
  profiler::RooflineOptions o;
  o.backend = checked.backend;
  o.isa = a.isa;
  profiler::Roofline r = profiler::machine_roofline(a.refresh, o);
  // What the CPU kernels size their thread teams by (ops/cpu/parallel.h): measured now, by this
  // process, not cached (it depends on the OpenMP wait policy and on what else runs).
  const int cores = omp_get_num_procs();
  const double fork_join = cores > 1 ? cpu::fork_join_ns(2) : 0.0;
  if (a.json) {
    nlohmann::json j = r.to_json();
    if (cores > 1) j["fork_join_ns_2_threads"] = fork_join;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << r.to_text();
    if (cores > 1) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "fork/join of 2 threads: %.2f us; an op runs on 2 threads from %.0f us of "
                    "one-thread work (each thread %g fork/joins' worth)\n",
                    fork_join / 1000.0, 2 * cpu::kMinShareOfForkJoin * fork_join / 1000.0,
                    cpu::kMinShareOfForkJoin);
      std::cout << line;
    }
  }
}

void machine_options(CLI::App& cmd, MachineArgs& a) {
  cmd.add_flag("--refresh", a.refresh, "measure again and update the cache");
  cmd.add_option("--backend", a.backend, "backend to measure")->capture_default_str();
  cmd.add_option(
         "--isa", a.isa,
         "CPU instruction-set level: auto | avx512 | avx2 | portable (its own FMA peak and GEMM)")
      ->capture_default_str();
  cmd.add_flag("--json", a.json, "print as JSON");
}

}  // namespace

Command machine_command() {
  return make_command<MachineArgs>("machine",
                                   "Print the measured machine roofline (cached in " +
                                       profiler::machine_cache_path() +
                                       ").\n"
                                       "Example: fusebox machine --refresh",
                                   machine_options, run_machine);
}

}  // namespace fusebox::cli
