#pragma once
// The machine's physical compute limit: a loop of independent fused multiply-adds in registers
// (AVX-512 where the CPU has it, else AVX2 + FMA, else scalar), on 1..n threads. No memory, no
// kernels of ours: this is the number our GEMM and every model are measured against, where the
// GEMM roof (roofline.h) says only how close a model gets to our own GEMM.
namespace fusebox::profiler {

struct FmaPeak {
  double gflops = 0;     // all threads together
  const char* isa = "";  // "avx512", "avx2", "scalar"
  int chains = 0;        // independent accumulators
};

// Best of repeated measurements within `seconds` (OpenMP threads, each running the loop).
FmaPeak measure_fma_peak(int threads, double seconds = 0.1);

}  // namespace fusebox::profiler
