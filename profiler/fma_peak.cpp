#include "profiler/fma_peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>

#include "core/base/error.h"
#include "core/base/machine.h"
#include "profiler/probe_timing.h"

namespace fusebox::profiler {
namespace {

constexpr int64_t kIterations = 1 << 16;  // per timed block: about 1-2 M FMAs per chain lane

// acc = acc * a + b converges to b / (1 - a) = 1: no overflow, no denormals, however long. The
// chains are named registers, not an array the compiler might keep in memory: objdump of each
// loop shows only vfmadd*ps on registers (tests/profiler check the disassembly).
constexpr int kChains512 = 16;
__attribute__((target("avx512f,fma"), noinline)) float fma_block_avx512(int64_t iterations) {
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  __m512 c0 = _mm512_set1_ps(0), c1 = _mm512_set1_ps(1), c2 = _mm512_set1_ps(2), c3 = _mm512_set1_ps(3);
  __m512 c4 = _mm512_set1_ps(4), c5 = _mm512_set1_ps(5), c6 = _mm512_set1_ps(6), c7 = _mm512_set1_ps(7);
  __m512 c8 = _mm512_set1_ps(8), c9 = _mm512_set1_ps(9), c10 = _mm512_set1_ps(10), c11 = _mm512_set1_ps(11);
  __m512 c12 = _mm512_set1_ps(12), c13 = _mm512_set1_ps(13), c14 = _mm512_set1_ps(14), c15 = _mm512_set1_ps(15);
  for (int64_t i = 0; i < iterations; ++i) {
    c0 = _mm512_fmadd_ps(c0, a, b), c1 = _mm512_fmadd_ps(c1, a, b), c2 = _mm512_fmadd_ps(c2, a, b);
    c3 = _mm512_fmadd_ps(c3, a, b), c4 = _mm512_fmadd_ps(c4, a, b), c5 = _mm512_fmadd_ps(c5, a, b);
    c6 = _mm512_fmadd_ps(c6, a, b), c7 = _mm512_fmadd_ps(c7, a, b), c8 = _mm512_fmadd_ps(c8, a, b);
    c9 = _mm512_fmadd_ps(c9, a, b), c10 = _mm512_fmadd_ps(c10, a, b), c11 = _mm512_fmadd_ps(c11, a, b);
    c12 = _mm512_fmadd_ps(c12, a, b), c13 = _mm512_fmadd_ps(c13, a, b), c14 = _mm512_fmadd_ps(c14, a, b);
    c15 = _mm512_fmadd_ps(c15, a, b);
  }
  const __m512 s = _mm512_add_ps(
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                    _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7))),
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
                    _mm512_add_ps(_mm512_add_ps(c12, c13), _mm512_add_ps(c14, c15))));
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  float total = 0;
  for (float v : out) total += v;
  return total;
}

constexpr int kChains256 = 12;
__attribute__((target("avx2,fma"), noinline)) float fma_block_avx2(int64_t iterations) {
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  __m256 c0 = _mm256_set1_ps(0), c1 = _mm256_set1_ps(1), c2 = _mm256_set1_ps(2), c3 = _mm256_set1_ps(3);
  __m256 c4 = _mm256_set1_ps(4), c5 = _mm256_set1_ps(5), c6 = _mm256_set1_ps(6), c7 = _mm256_set1_ps(7);
  __m256 c8 = _mm256_set1_ps(8), c9 = _mm256_set1_ps(9), c10 = _mm256_set1_ps(10), c11 = _mm256_set1_ps(11);
  for (int64_t i = 0; i < iterations; ++i) {
    c0 = _mm256_fmadd_ps(c0, a, b), c1 = _mm256_fmadd_ps(c1, a, b), c2 = _mm256_fmadd_ps(c2, a, b);
    c3 = _mm256_fmadd_ps(c3, a, b), c4 = _mm256_fmadd_ps(c4, a, b), c5 = _mm256_fmadd_ps(c5, a, b);
    c6 = _mm256_fmadd_ps(c6, a, b), c7 = _mm256_fmadd_ps(c7, a, b), c8 = _mm256_fmadd_ps(c8, a, b);
    c9 = _mm256_fmadd_ps(c9, a, b), c10 = _mm256_fmadd_ps(c10, a, b), c11 = _mm256_fmadd_ps(c11, a, b);
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                                 _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)),
                                               _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11))));
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  float total = 0;
  for (float v : out) total += v;
  return total;
}

// A CPU without FMA: eight scalar chains (multiply and add, counted as 2 FLOPs).
constexpr int kChainsScalar = 8;
__attribute__((noinline)) float fma_block_scalar(int64_t iterations) {
  float acc[kChainsScalar];
  for (int c = 0; c < kChainsScalar; ++c) acc[c] = static_cast<float>(c);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChainsScalar; ++c) acc[c] = acc[c] * 0.999f + 0.001f;
  float total = 0;
  for (float v : acc) total += v;
  return total;
}

struct Probe {
  const char* isa;
  int lanes, chains;
  float (*block)(int64_t);
};

Probe probe_for(const std::string& isa) {
  const Probe p512{"avx512", 16, kChains512, &fma_block_avx512};
  const Probe p256{"avx2", 8, kChains256, &fma_block_avx2};
  const Probe scalar{"scalar", 1, kChainsScalar, &fma_block_scalar};
  if (isa == "avx512") {
    if (!cpu_has_avx512()) throw Error("FMA peak for isa 'avx512': this CPU has no AVX-512");
    return p512;
  }
  if (isa == "avx2") {
    if (!cpu_has_avx2_fma()) throw Error("FMA peak for isa 'avx2': this CPU has no AVX2 and FMA");
    return p256;
  }
  if (isa != "auto" && isa != "portable")
    throw Error("FMA peak: unknown isa '" + isa + "' (valid: auto | avx512 | avx2 | portable)");
  // auto and portable: the best loop the CPU runs (portable GEMMs are OpenBLAS's own kernels).
  return cpu_has_avx512() ? p512 : cpu_has_avx2_fma() ? p256 : scalar;
}

}  // namespace

FmaPeak measure_fma_peak(int threads, double seconds, const std::string& isa) {
  const Probe probe = probe_for(isa);
  threads = std::max(1, threads);
  const double flops_per_block = 2.0 * probe.lanes * probe.chains * static_cast<double>(kIterations);
  const double best = best_rate(flops_per_block * threads, seconds, [&] {
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += probe.block(kIterations);
    return total;
  });
  return {best, probe.isa, probe.chains};
}

}  // namespace fusebox::profiler
