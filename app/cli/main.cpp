// fusebox: the engine from the command line. Everything the workbench shows, printed or exported.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "app/cli/commands.h"
#include "app/workbench/backends.h"
#include "app/workbench/settings.h"
#include "core/base/address_space.h"
#include "core/base/error.h"
#include "core/base/huge_pages.h"
#include "core/base/utf8.h"

namespace {

// Before any shared library's constructor (core/base/address_space.h says why).
void preinit(int, char** argv, char** envp) {
  fusebox::check_address_space("fusebox");
  fusebox::use_huge_pages(argv, envp);  // core/base/huge_pages.h: re-executes once
}
[[gnu::used, gnu::section(".preinit_array")]] void (*preinit_entry)(int, char**, char**) = &preinit;

// "run mlp --iters 1": what the user asked for, to name in an out-of-memory message.
std::string asked(int argc, char** argv) {
  std::string s;
  for (int i = 1; i < argc && i < 8; ++i) s += (s.empty() ? "" : " ") + std::string(argv[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file size limit (ulimit -f) a write fails with EFBIG and the command says so, naming
  // the file, instead of the process dying of SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{
      "fusebox: an inference runtime you can take apart while it runs.\n"
      "Build a model, optimize it pass by pass, plan its memory, run it with three executors.\n"
      "Example: fusebox run transformer:seq=128 --executor compiled --iters 200"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fusebox 0.1.0");
  fusebox::workbench::register_backends();
  for (const fusebox::cli::Command& c : fusebox::cli::commands().entries())
    c.setup(*app.add_subcommand(c.name, c.help));
  // CLI11 says only "A subcommand is required" for a mistyped command: name it instead.
  const auto& commands = fusebox::cli::commands();
  if (argc > 1 && argv[1][0] != '-' && !commands.contains(argv[1])) {
    std::fprintf(stderr,
                 "fusebox: error: unknown command '%s' (commands: %s; see fusebox --help)\n",
                 argv[1], fusebox::join(commands.names(), ", ").c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const fusebox::cli::CommandFailed& e) {
    return e.code;
  } catch (const fusebox::Error& e) {
    // Errors name settings (`dims`, `inputs.x`); where the value came from a flag, the flag.
    // Paths in messages are bytes: shown with U+FFFD where they are not UTF-8.
    std::fprintf(
        stderr, "fusebox: error: %s\n",
        fusebox::valid_utf8(fusebox::workbench::SettingsFlags::in_flag_terms(e.what())).c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    // What could be budgeted was (memory_budget.h); this is an allocation the machine or its
    // `ulimit -v` still refused.
    std::fprintf(stderr, "fusebox: error: out of memory in 'fusebox %s': the input needs more than this machine "
                 "(or its ulimit -v) gives\n", fusebox::valid_utf8(asked(argc, argv)).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusebox: internal error: %s\n", fusebox::valid_utf8(e.what()).c_str());
    return 1;
  }
  // A report that did not reach stdout whole (a full disk, /dev/full, a file size limit) is an
  // error, not a silent exit 0 with a truncated or empty file.
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (!flushed || std::ferror(stdout) || std::cout.fail()) {
    std::fprintf(stderr, "fusebox: error: cannot write the output to stdout: %s\n",
                 err ? std::strerror(err) : "a write failed");
    return 2;
  }
  return 0;
}
