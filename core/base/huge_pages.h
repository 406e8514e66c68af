#pragma once
// Transparent huge pages for malloc's large blocks, so a trace at a real job's size is not
// spent in page faults.
//
// A 10-million-event trace's records, columns and analysis arrays are about a gigabyte, touched
// once when written. In 4 KiB pages that is a million page faults, and on the 2-core build
// machine (a virtual machine, transparent_hugepage=madvise) a fault is costly: fusebox_bench_trace
// on a 10M-event trace took 1.1 million faults and 12.4 s to import, 7.2 s to analyse; with
// glibc's `glibc.malloc.hugetlb=1` tunable (glibc 2.35 on: malloc madvises MADV_HUGEPAGE on
// what it maps) 15 thousand faults, 7.7 s and 2.9 s.
//
// glibc reads its tunables from GLIBC_TUNABLES once, as the process starts, and offers no call
// to set them later. So each executable, from its .preinit_array entry (before any library
// constructor, see address_space.h), re-executes itself once with the tunable added to the
// environment. Set already (by us or the user, to any value) it runs on as it is; FUSEBOX_HUGE_PAGES=0
// keeps the environment untouched. A sanitizer build keeps its own allocator and is left
// alone. If the re-exec fails (no /proc, an environment too large to copy here) the process runs
// on unchanged: only speed is at stake.
//
// Only system calls and plain loops here: nothing of the C++ runtime or libc is set up yet.
#include <unistd.h>

#include <cstddef>

namespace fusebox {

namespace huge_pages_detail {

inline bool starts_with(const char* s, const char* prefix) {
  while (*prefix)
    if (*s++ != *prefix++) return false;
  return true;
}

inline bool contains(const char* s, const char* part) {
  for (; *s; ++s)
    if (starts_with(s, part)) return true;
  return false;
}

}  // namespace huge_pages_detail

// The environment to re-execute with: envp without its GLIBC_TUNABLES, then GLIBC_TUNABLES with
// the tunable appended (its text in `text`), in `env` (null-terminated). False, leaving the
// environment as it is, when the tunable is there already, FUSEBOX_HUGE_PAGES=0 is set, or it
// does not fit in `env_room` pointers or `text_room` bytes.
inline bool huge_pages_environment(char* const* envp, char** env, size_t env_room, char* text,
                                   size_t text_room) {
  using namespace huge_pages_detail;
  constexpr const char* kTunable = "glibc.malloc.hugetlb";
  const char* old = nullptr;
  size_t n = 0;
  for (; envp[n]; ++n) {
    if (starts_with(envp[n], "FUSEBOX_HUGE_PAGES=0")) return false;
    if (starts_with(envp[n], "GLIBC_TUNABLES=")) {
      if (contains(envp[n], kTunable)) return false;
      old = envp[n] + 15;
    }
  }
  if (n + 2 > env_room) return false;
  size_t k = 0;  // "GLIBC_TUNABLES=" + the old value + ":" + the tunable "=1"
  auto put = [&](const char* s) {
    while (*s && k + 1 < text_room) text[k++] = *s++;
    return *s == '\0';
  };
  if (!put("GLIBC_TUNABLES=") || (old && *old && (!put(old) || !put(":"))) || !put(kTunable) || !put("=1"))
    return false;
  text[k] = '\0';
  size_t m = 0;
  for (size_t i = 0; i < n; ++i)
    if (!starts_with(envp[i], "GLIBC_TUNABLES=")) env[m++] = envp[i];
  env[m++] = text;
  env[m] = nullptr;
  return true;
}

inline void use_huge_pages(char** argv, char** envp) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)argv;
  (void)envp;
#else
  static char* env[4096];
  static char text[4096];
  if (argv && envp && huge_pages_environment(envp, env, sizeof env / sizeof env[0], text, sizeof text))
    ::execve("/proc/self/exe", argv, env);  // returns only on failure: run on as we are
#endif
}

}  // namespace fusebox
