#pragma once
// CPU instruction-set levels: which of a kernel family's paths runs. Every family has an AVX-512
// path, an AVX2 + FMA path and a portable one (plain C++, vectorized by the compiler for the
// build's target, with OpenBLAS for GEMMs). The `isa` setting picks one per backend; a kernel
// reads it once, in prepare(), and keeps it in its state, so what it packed and what it runs
// always agree (run() never asks again, and OpenMP's worker threads need no copy of it).
//
//   auto      the best level this CPU runs (or FUSEBOX_ISA from the environment: tests use it to
//             run every suite on each path the CPU has)
//   avx512    zmm registers: AVX-512 F, BW, DQ, VL and FMA
//   avx2      ymm registers: AVX2 and FMA
//   portable  no intrinsics of ours
#include <cstdint>
#include <string>
#include <vector>

namespace fusebox::exec {
struct KernelContext;
}  // namespace fusebox::exec

namespace fusebox::cpu {

enum class Isa : uint8_t { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

// "portable", "avx2", "avx512".
const char* isa_name(Isa isa);
// Whether this CPU (and the OS, which must save the wider registers) runs `isa`.
bool cpu_runs(Isa isa);
// Every level, best first: {"avx512", "avx2", "portable"} (what `isa` takes besides "auto").
std::vector<std::string> isa_names();
// The levels this CPU runs, best first: e.g. {"avx2", "portable"}.
std::vector<std::string> isa_levels();
// The best level the CPU runs; FUSEBOX_ISA=<level> in the environment lowers it (an unknown name
// or a level this CPU lacks there throws fusebox::Error saying so, once, at first use).
Isa auto_isa();
// "auto" | "avx512" | "avx2" | "portable" -> the level. Throws fusebox::Error with a sentence a
// user can act on for an unknown name or a level this CPU does not run ("isa 'avx512': this CPU
// (AMD EPYC 7B13) has no AVX-512; it runs avx2 | portable").
Isa parse_isa(const std::string& text);
// The level a kernel being prepared uses: its run's (KernelContext::options, resolved by the
// backend), or auto_isa() when the kernel is prepared without options (constant folding, tests
// calling prepare directly).
Isa kernel_isa(const exec::KernelContext& ctx);

}  // namespace fusebox::cpu
