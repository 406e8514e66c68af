#pragma once
// The machine's physical compute limit for one instruction-set level: a loop of independent
// fused multiply-adds in registers, on 1..n threads. No memory, no kernels of ours: this is the
// number our GEMM and every model are measured against, where the GEMM roof (roofline.h) says
// only how close a model gets to our own GEMM.
//
// Per level (the CPU backend's `isa` setting, ops/cpu/isa.h):
//   avx512    16 chains of zmm FMAs (16 + 2 constants of the 32 zmm registers)
//   avx2      12 chains of ymm FMAs (12 + 2 constants of the 16 ymm registers: no spills)
//   portable  the portable path's GEMM is OpenBLAS, which runs the CPU's own best kernels, so its
//             limit is the best level's: the probe runs that level's loop
// Either covers the FMA latency (4-5 cycles) times the FMA ports (2) of every x86 core we know.
#include <string>

namespace fusebox::profiler {

struct FmaPeak {
  double gflops = 0;  // all threads together
  std::string isa;    // the loop that ran: "avx512", "avx2" or "scalar" (no FMA unit)
  int chains = 0;     // independent accumulators
};

// Best of repeated measurements within `seconds` (OpenMP threads, each running the loop).
// `isa`: "auto" (the best the CPU runs), "avx512", "avx2" or "portable". A level the CPU lacks
// throws fusebox::Error.
FmaPeak measure_fma_peak(int threads, double seconds = 0.1, const std::string& isa = "auto");

}  // namespace fusebox::profiler
