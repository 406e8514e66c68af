// Output directories for the commands that write files (run --save-outputs, profile --out).
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

}  // namespace fusebox::cli
