#include "core/base/machine.h"

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

}  // namespace fusebox
