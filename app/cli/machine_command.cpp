// fusebox machine: the roofline the profiler classifies ops against, measured through the
// runtime (GEMM GFLOP/s per thread count, memory bandwidth, dispatch floor) and cached.
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "profiler/roofline.h"

namespace fusebox::cli {

namespace {
struct MachineArgs {
  bool refresh = false;
  bool json = false;
  std::string backend = "cpu";
};
}  // namespace

void add_machine_command(CLI::App& app) {
  auto args = std::make_shared<MachineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "machine",
      "Print the measured machine roofline (cached in " + profiler::machine_cache_path() + ").\n"
      "Example: fusebox machine --refresh");
  cmd->add_flag("--refresh", args->refresh, "measure again and update the cache");
  cmd->add_option("--backend", args->backend, "backend to measure")->capture_default_str();
  cmd->add_flag("--json", args->json, "print as JSON");
  cmd->callback([args] {
    profiler::RooflineOptions o;
    o.backend = args->backend;
    profiler::Roofline r = profiler::machine_roofline(args->refresh, o);
    if (args->json)
      std::cout << r.to_json().dump(2) << "\n";
    else
      std::cout << r.to_text();
  });
}

}  // namespace fusebox::cli
