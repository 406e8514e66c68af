#pragma once
// The temporaries atomic_file.h writes beside a target, removed should SIGINT or SIGTERM end the
// program while one is open: the handler (installed with the first temporary, for a signal not
// already ignored) removes every registered file or folder with async-signal-safe calls only,
// then lets the signal do what it did before. SIGKILL cannot be caught: a file written through
// a stream is therefore created without a name (O_TMPFILE, where the file system has it) and
// named only to be renamed over its target, so it leaves nothing either.
#include <string>

namespace fusebox {

// A registered temporary: removed by the handler until released (or destroyed).
class Temporary {
 public:
  Temporary() = default;
  ~Temporary() { release(); }
  // Registers `path` (a file, or a folder of files); silently not when all slots are taken.
  void hold(const std::string& path, bool folder);
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  void release();  // it is gone or is the target now: forget it

 private:
  int slot_ = -1;
};

}  // namespace fusebox
