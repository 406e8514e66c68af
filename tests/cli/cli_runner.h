#pragma once
// Runs the `fusebox` binary the build made (FUSEBOX_CLI) as a user would, for the CLI's tests:
// its exit code and what it printed (stdout, with stderr unless asked not to). A run that
// hangs is stopped after five minutes (exit code 124), so a hang fails a test instead of CI.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace fusebox::test {

struct CliResult {
  int code = -1;  // the exit code, -1 when it did not exit (a signal)
  std::string out;
};

// A shell command line (sh -c): its exit code and its stdout.
inline CliResult run_shell(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline CliResult run_cli(const std::string& args, bool with_stderr = true) {
  return run_shell("timeout 300 " + std::string(FUSEBOX_CLI) + " " + args +
                   (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

}  // namespace fusebox::test
