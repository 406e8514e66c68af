// fusebox passes: the optimization passes, in pipeline order, with what each does.
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "core/passes/pass_manager.h"

namespace fusebox::cli {

namespace {

struct PassesArgs {};

void run_passes(const PassesArgs&) {
  for (const auto& p : passes::PassRegistry::instance().entries())
    std::printf("%-18s %s\n", p.name.c_str(), p.description.c_str());
}

void passes_options(CLI::App&, PassesArgs&) {}

}  // namespace

Command passes_command() {
  return make_command<PassesArgs>(
      "passes",
      "List the optimization passes in pipeline order; pick them with --passes on run/plan.\n"
      "Example: fusebox passes; fusebox run transformer --passes absorb_matmul,fuse_patterns,dce "
      "--explain",
      passes_options, run_passes);
}

}  // namespace fusebox::cli
