#pragma once
// A start under an address-space limit too small to load fusebox: a sentence and exit 2.
//
// OpenBLAS maps its thread buffers (128 MiB each here) in its library constructor, before main,
// and when that mmap fails it retries for ever: under `ulimit -v 300000`, even `fusebox --version`
// spun at 100% CPU. Measured on the 2-core build machine, `fusebox run mlp` needs about 330 MiB
// of address space to start. So each executable registers check_address_space in .preinit_array,
// which the dynamic loader runs before any shared library's constructor (System V gABI, "Dynamic
// Section": DT_PREINIT_ARRAY), and refuses a limit under kMinAddressSpace with what to raise.
// Above it, an allocation that fails is std::bad_alloc, which each main turns into a sentence.
//
// Only system calls here: nothing of the C++ runtime or libc's stdio is set up yet.
#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>

namespace fusebox {

inline constexpr rlim_t kMinAddressSpace = rlim_t{512} << 20;

namespace address_space_detail {

inline void put(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  while (n > 0) {
    const ssize_t k = ::write(2, s, n);
    if (k <= 0) return;
    s += k;
    n -= static_cast<size_t>(k);
  }
}

inline void put_number(unsigned long long v) {
  char buf[24];
  char* p = buf + sizeof buf;
  *--p = '\0';
  do *--p = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
  put(p);
}

}  // namespace address_space_detail

// Exits 2 with a message when RLIMIT_AS or RLIMIT_DATA (both cap mmap) is under kMinAddressSpace.
inline void check_address_space(const char* program) {
  using namespace address_space_detail;
  const struct {
    int resource;
    const char* flag;
  } limits[] = {{RLIMIT_AS, "ulimit -v"}, {RLIMIT_DATA, "ulimit -d"}};
  for (const auto& l : limits) {
    struct rlimit r {};
    if (::getrlimit(l.resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= kMinAddressSpace) continue;
    put(program);
    put(": error: the memory limit (");
    put(l.flag);
    put(") is ");
    put_number(static_cast<unsigned long long>(r.rlim_cur >> 10));
    put(" KiB; fusebox needs at least ");
    put_number(static_cast<unsigned long long>(kMinAddressSpace >> 10));
    put(" KiB of address space to start (OpenBLAS maps its buffers as it loads): raise it\n");
    ::_exit(2);
  }
}

}  // namespace fusebox
