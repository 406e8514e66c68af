#include "core/base/machine.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>

namespace fusebox {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, name, family, model;
  // The first of each is enough: x86 says "model name", ARM "Model" (after the processors); x86's "cpu family"
  // and "model" tell generations apart that share a name (a VM's "AMD EPYC" is a Zen 3, 4 or 5,
  // whose FMA peaks differ by 2x, so the machine cache must not mix them).
  const auto value = [&line]() {
    const size_t colon = line.find(':');
    const size_t begin = colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? std::string() : line.substr(begin);
  };
  for (int i = 0; i < 4096 && std::getline(in, line); ++i) {
    if (name.empty() && (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0)) name = value();
    else if (family.empty() && line.rfind("cpu family", 0) == 0) family = value();
    else if (model.empty() && line.rfind("model", 0) == 0 && line.rfind("model name", 0) != 0) model = value();
  }
  if (name.empty()) return "unknown CPU";
  if (!family.empty() && !model.empty()) name += " (family " + family + ", model " + model + ")";
  return name;
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("fma");
  return has;
}

bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

namespace {

// What is mapped now (the libraries, OpenBLAS's buffers: about 330 MiB here), from statm.
size_t mapped_bytes() {
  const long page = sysconf(_SC_PAGESIZE);
  size_t pages_mapped = 0;
  if (std::ifstream statm("/proc/self/statm"); statm && page > 0 && statm >> pages_mapped)
    return pages_mapped * static_cast<size_t>(page);
  return 0;
}

}  // namespace

size_t address_space_left() {
  struct rlimit r {};
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  const size_t mapped = mapped_bytes();
  return r.rlim_cur > mapped ? static_cast<size_t>(r.rlim_cur) - mapped : 0;
}

size_t thread_stack_bytes() {
  for (const char* var : {"GOMP_STACKSIZE", "OMP_STACKSIZE"}) {
    const char* v = std::getenv(var);
    if (!v || !*v) continue;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    while (*end == ' ') ++end;
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(*end)));
    const unsigned shift = unit == 'B' ? 0 : unit == 'M' ? 20 : unit == 'G' ? 30 : 10;
    if (end != v && n <= (SIZE_MAX >> shift)) return static_cast<size_t>(n) << shift;
  }
  pthread_attr_t attr;
  size_t bytes = size_t{8} << 20;
  if (pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &bytes);
    pthread_attr_destroy(&attr);
  }
  return bytes;
}

MemoryBudget memory_budget() {
  MemoryBudget b{SIZE_MAX, "no known limit"};
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    b = {static_cast<size_t>(0.8 * static_cast<double>(pages) * static_cast<double>(page)), "80% of this machine's memory"};
  const struct {
    int resource;
    const char* source;
  } limits[] = {{RLIMIT_AS, "half of what its ulimit -v leaves"}, {RLIMIT_DATA, "half of what its ulimit -d leaves"}};
  // Under a limit, what is already mapped is not there to spend: half of what is left.
  const size_t mapped = mapped_bytes();
  for (const auto& l : limits) {
    struct rlimit r {};
    if (getrlimit(l.resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) continue;
    const size_t left = r.rlim_cur > mapped ? static_cast<size_t>(r.rlim_cur) - mapped : 0;
    if (left / 2 < b.bytes) b = {left / 2, l.source};
  }
  return b;
}

}  // namespace fusebox
