#include "ops/cpu/isa.h"

#include <hwy/targets.h>

#include <cstdlib>

#include "core/base/error.h"
#include "core/base/machine.h"  // cpu_model_name
#include "core/base/strings.h"
#include "core/backend/kernel.h"

namespace fusebox::cpu {

namespace {

constexpr Isa kAll[] = {Isa::kAvx512, Isa::kAvx2, Isa::kPortable};  // best first

std::string runs_text() {
  return join(isa_levels(), " | ");
}

// The level `text` names (without "auto") and whether it exists; no check of the CPU.
bool lookup(const std::string& text, Isa& out) {
  for (Isa isa : kAll)
    if (text == isa_name(isa)) {
      out = isa;
      return true;
    }
  return false;
}

Isa checked(const std::string& text, const std::string& where) {
  Isa isa{};
  if (!lookup(text, isa))
    throw Error(where + "unknown isa '" + text + "' (valid: auto | " + join(isa_names(), " | ") + ")");
  if (!cpu_runs(isa)) {
    const std::string what = isa == Isa::kAvx512 ? "AVX-512 (F, BW, DQ, VL)" : "AVX2 and FMA";
    throw Error(where + "isa '" + text + "': this CPU (" + cpu_model_name() + ")" +
                " has no " + what + "; it runs " + runs_text());
  }
  return isa;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kPortable:
      break;
  }
  return "portable";
}

bool cpu_runs(Isa isa) {
  switch (isa) {
    // Highway's detection (CPUID and what the OS saves) of the targets the vector code is compiled
    // for (vec_math-inl.h; avx512.h uses the same feature list).
    case Isa::kAvx512:
      return (hwy::SupportedTargets() & HWY_AVX3) != 0;
    case Isa::kAvx2:
      return (hwy::SupportedTargets() & HWY_AVX2) != 0;
    case Isa::kPortable:
      break;
  }
  return true;
}

std::vector<std::string> isa_names() {
  std::vector<std::string> out;
  for (Isa isa : kAll) out.push_back(isa_name(isa));
  return out;
}

std::vector<std::string> isa_levels() {
  std::vector<std::string> out;
  for (Isa isa : kAll)
    if (cpu_runs(isa)) out.push_back(isa_name(isa));
  return out;
}

Isa auto_isa() {
  static const Isa isa = [] {
    const char* env = std::getenv("FUSEBOX_ISA");
    if (env && *env && std::string(env) != "auto") return checked(env, "FUSEBOX_ISA: ");
    for (Isa level : kAll)
      if (cpu_runs(level)) return level;
    return Isa::kPortable;
  }();
  return isa;
}

Isa parse_isa(const std::string& text) {
  if (text == "auto") return auto_isa();
  return checked(text, "");
}

Isa kernel_isa(const exec::KernelContext& ctx) {
  if (ctx.options && !ctx.options->isa.empty()) return parse_isa(ctx.options->isa);
  return auto_isa();
}

}  // namespace fusebox::cpu
