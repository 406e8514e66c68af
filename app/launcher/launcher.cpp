// The launcher: `fusebox` and `fusebox-ui` as a user runs them. A statically linked program that
// checks what the dynamic loader needs before the real binary (fusebox-bin, fusebox-ui-bin, in the
// same folder) is started with execv, same process, same arguments.
//
// Why it exists: under `prlimit --nofile=3` (or `ulimit -n 3`) standard input, output and error
// take every descriptor the process may have, and the dynamic loader cannot open one shared
// library. It prints "error while loading shared libraries: ... Error 24" and exits 127, before any
// code of ours runs (issue 39). A static program needs no loader, so it can say it in a sentence.
// Once one descriptor is free the real binary starts, and reports its own files' EMFILE errors.
//
// It uses the C library alone (no iostream, no allocation), and is built without sanitizers: it
// runs for a few hundred microseconds and then is replaced by the real, instrumented binary.
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef FUSEBOX_LAUNCH_NAME
#error "FUSEBOX_LAUNCH_NAME names the binary to start, e.g. \"fusebox-bin\" (app/CMakeLists.txt)"
#endif

namespace {

// Descriptors below `limit` that are not open. The loop is short: it runs only when the limit is.
long free_descriptors(rlim_t limit) {
  long n = 0;
  for (rlim_t fd = 0; fd < limit; ++fd)
    if (fcntl(static_cast<int>(fd), F_GETFD) == -1 && errno == EBADF) ++n;
  return n;
}

// The shown name: argv[0]'s last component ("fusebox"), or the real name without "-bin".
const char* shown_name(const char* argv0) {
  if (argv0 && *argv0) {
    const char* slash = std::strrchr(argv0, '/');
    return slash ? slash + 1 : argv0;
  }
  return FUSEBOX_LAUNCH_NAME;
}

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  const char* name = shown_name(argv[0]);

  // Past 64 descriptors the loader has room; below, count what is free (0, 1 and 2 are usually
  // open). The loader opens one library at a time, so one free descriptor is enough to start.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < 64 && free_descriptors(nofile.rlim_cur) == 0) {
    std::fprintf(stderr,
                 "%s: the open-file limit is %lu and all %lu descriptors are in use, so not even its shared "
                 "libraries can be opened; raise the limit (ulimit -n, prlimit --nofile) to at least %lu\n",
                 name, static_cast<unsigned long>(nofile.rlim_cur), static_cast<unsigned long>(nofile.rlim_cur),
                 static_cast<unsigned long>(nofile.rlim_cur) + 1);
    return 2;
  }

  // The real binary sits beside this one. /proc/self/exe names this file with symlinks resolved
  // (a link from a bin folder still finds the build tree); argv[0] when /proc is not mounted.
  char path[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
  if (len <= 0) {
    if (!argv[0] || !std::strchr(argv[0], '/') || std::strlen(argv[0]) >= sizeof path) {
      std::fprintf(stderr, "%s: cannot find its own folder (/proc/self/exe is unreadable); run %s by its path\n",
                   name, name);
      return 2;
    }
    len = static_cast<ssize_t>(std::strlen(argv[0]));
    std::memcpy(path, argv[0], static_cast<size_t>(len));
  }
  path[len] = 0;
  char* slash = std::strrchr(path, '/');
  const size_t folder = slash ? static_cast<size_t>(slash - path + 1) : 0;
  if (folder + sizeof FUSEBOX_LAUNCH_NAME > sizeof path) {
    std::fprintf(stderr, "%s: its folder's path is too long (%zu bytes)\n", name, folder);
    return 2;
  }
  std::memcpy(path + folder, FUSEBOX_LAUNCH_NAME, sizeof FUSEBOX_LAUNCH_NAME);

  execv(path, argv);
  std::fprintf(stderr, "%s: cannot start %s: %s\n", name, path, std::strerror(errno));
  return 2;
}
