// Output directories for the commands that write a set of files (run --save-outputs,
// profile --out): written whole into a folder beside, then swapped in (write_directory_atomically),
// so the directory holds either the old set or the new one, never a mix.
#include "app/cli/commands.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"

namespace fusebox::cli {

void check_output_dir(const std::string& dir, const std::string& option,
                      const FileNameFilter& ours) {
  try {
    check_directory_replaceable(dir, ours);
  } catch (const Error& e) {
    throw Error(option + ": " + e.what());
  }
}

void write_output_dir(const std::string& dir, const std::string& option, const FileNameFilter& ours,
                      const std::function<void(const std::string& tmp)>& write) {
  try {
    write_directory_atomically(dir, write, ours);
  } catch (const Error& e) {
    throw Error(option + ": " + e.what());
  }
}

}  // namespace fusebox::cli
