// fusebox passes: the optimization passes, in pipeline order, with what each does.
#include <cstdio>

#include "app/cli/commands.h"
#include "core/passes/pass_manager.h"

namespace fusebox::cli {

void add_passes_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "passes",
      "List the optimization passes in pipeline order; pick them with --passes on run/plan.\n"
      "Example: fusebox passes; fusebox run transformer --passes absorb_matmul,fuse_patterns,dce --explain");
  cmd->callback([] {
    for (const auto& p : passes::PassRegistry::instance().entries())
      std::printf("%-18s %s\n", p.name.c_str(), p.description.c_str());
  });
}

}  // namespace fusebox::cli
