#include "app/cli/commands.h"

namespace fusebox::cli {

// Each defined in its own <name>_command.cpp.
Command run_command();
Command generate_command();
Command passes_command();
Command plan_command();
Command inspect_command();
Command profile_command();
Command compare_command();
Command machine_command();
Command settings_command();
Command graph_command();
Command check_command();
Command selftest_command();
Command trace_command();
Command kernels_command();

const Registry<Command>& commands() {
  static const Registry<Command> all = [] {
    Registry<Command> r("command");
    for (Command c :
         {run_command(), generate_command(), passes_command(), plan_command(), inspect_command(),
          profile_command(), compare_command(), machine_command(), settings_command(),
          graph_command(), check_command(), selftest_command(), trace_command(), kernels_command()})
      r.add(std::move(c));
    return r;
  }();
  return all;
}

}  // namespace fusebox::cli
