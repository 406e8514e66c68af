#include "profiler/fma_peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>

namespace fusebox::profiler {
namespace {

// Enough independent chains to cover the FMA latency (4 cycles) on two FMA ports, and some.
constexpr int kChains = 16;
constexpr int64_t kIterations = 1 << 16;  // per timed block: about 2 M FMAs per chain lane

#if defined(__AVX512F__)
constexpr const char* kIsa = "avx512";
constexpr int kLanes = 16;
float fma_block(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  // acc = acc * a + b converges to b / (1 - a) = 1: no overflow, no denormals, however long.
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float out[16];
  _mm512_store_ps(out, sum);
  float total = 0;
  for (float v : out) total += v;
  return total;
}
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kIsa = "avx2";
constexpr int kLanes = 8;
float fma_block(int64_t iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float out[8];
  _mm256_store_ps(out, sum);
  float total = 0;
  for (float v : out) total += v;
  return total;
}
#else
constexpr const char* kIsa = "scalar";
constexpr int kLanes = 1;
float fma_block(int64_t iterations) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = static_cast<float>(c);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * 0.999f + 0.001f;
  }
  float total = 0;
  for (float v : acc) total += v;
  return total;
}
#endif

volatile float g_sink = 0;  // keeps the loops from being optimized away

}  // namespace

FmaPeak measure_fma_peak(int threads, double seconds) {
  threads = std::max(1, threads);
  const double flops_per_block = 2.0 * kLanes * kChains * static_cast<double>(kIterations);
  double best = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int rep = 0;; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += fma_block(kIterations);
    g_sink = total;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The first region wakes the threads and raises the clock: it does not count.
    if (rep > 0 && s > 0) best = std::max(best, flops_per_block * threads / s / 1e9);
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rep >= 3 && spent > seconds) break;
  }
  return {best, kIsa, kChains};
}

}  // namespace fusebox::profiler
