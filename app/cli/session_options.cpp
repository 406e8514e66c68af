#include "app/cli/commands.h"

namespace fusebox::cli {

void add_session_options(CLI::App* cmd, SessionArgs& a, bool with_executor) {
  cmd->add_option("model", a.model,
                  "builtin model spec: mlp | transformer | stack, with options such as "
                  "transformer:seq=128,d=256,heads=4,ffn=1024,batch=1")
      ->required();
  if (with_executor)
    cmd->add_option("--executor", a.executor, "eager | interpreted | compiled")->capture_default_str();
  cmd->add_option("--backend", a.backend, "device to run on")->capture_default_str();
  cmd->add_option("--threads", a.threads, "intra-op threads (one pool shared with BLAS)")->capture_default_str();
  cmd->add_option("--passes", a.passes, "all | none | comma-separated pass names (see `fusebox passes`)")
      ->capture_default_str();
  cmd->add_option("--planner", a.planner, "memory planner strategy: naive | first_fit | best_fit | greedy_by_size")
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "seed for weights and random inputs")->capture_default_str();
}

}  // namespace fusebox::cli
