#include <sys/stat.h>
#include <unistd.h>

#include "app/cli/commands.h"
#include "core/base/error.h"

namespace fusebox::cli {

void ensure_writable_dir(const std::string& dir, const std::string& option) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    if (mkdir(dir.c_str(), 0755) != 0) throw Error(option + ": cannot create directory '" + dir + "'");
  } else if (!S_ISDIR(st.st_mode)) {
    throw Error(option + ": '" + dir + "' is not a directory");
  }
  if (access(dir.c_str(), W_OK) != 0) throw Error(option + ": directory '" + dir + "' is not writable");
}

void add_session_options(CLI::App* cmd, SessionArgs& a, bool with_executor) {
  cmd->add_option("model", a.model,
                  "builtin model spec: mlp | transformer | stack, with options such as "
                  "transformer:seq=128,d=256,heads=4,ffn=1024,batch=1, or a .onnx file")
      ->required();
  if (with_executor)
    cmd->add_option("--executor", a.executor, "eager | interpreted | compiled")->capture_default_str();
  cmd->add_option("--backend", a.backend, "device to run on")->capture_default_str();
  cmd->add_option("--threads", a.threads, "intra-op threads (one pool shared with BLAS)")->capture_default_str();
  cmd->add_option("--passes", a.passes, "all | none | comma-separated pass names (see `fusebox passes`)")
      ->capture_default_str();
  cmd->add_option("--planner", a.planner, "memory planner strategy: naive | first_fit | best_fit | greedy_by_size | best (each, the smallest arena)")
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "seed for weights and random inputs")->capture_default_str();
}

}  // namespace fusebox::cli
