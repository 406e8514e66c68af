#include "profiler/memory_levels.h"

#include <immintrin.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "core/base/error.h"
#include "core/base/machine.h"
#include "profiler/probe_timing.h"

namespace fusebox::profiler {
namespace {

// Floats per loop iteration of every reader: 8 accumulators of one zmm (16 floats) each.
constexpr size_t kChunk = 128;

// The readers stay uninstrumented under AddressSanitizer and UndefinedBehaviorSanitizer: they read
// only their own buffer, in bounds, and a check per load would measure the check, not the cache
// level (with UBSan's pointer checks, L1 and L2 both read at about 110 GB/s on an AVX-512 Xeon,
// so the levels came out unordered in the sanitized build).
#define FUSEBOX_UNINSTRUMENTED no_sanitize("address", "undefined")

__attribute__((target("avx512f"), noinline, FUSEBOX_UNINSTRUMENTED)) float read_avx512(const float* p, size_t n, int passes) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (int pass = 0; pass < passes; ++pass)
    for (size_t i = 0; i < n; i += kChunk) {
      a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i)), a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
      a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32)), a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
      a4 = _mm512_add_ps(a4, _mm512_load_ps(p + i + 64)), a5 = _mm512_add_ps(a5, _mm512_load_ps(p + i + 80));
      a6 = _mm512_add_ps(a6, _mm512_load_ps(p + i + 96)), a7 = _mm512_add_ps(a7, _mm512_load_ps(p + i + 112));
    }
  const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                 _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  float total = 0;
  for (float v : out) total += v;
  return total;
}

__attribute__((target("avx2"), noinline, FUSEBOX_UNINSTRUMENTED)) float read_avx2(const float* p, size_t n, int passes) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (int pass = 0; pass < passes; ++pass)
    for (size_t i = 0; i < n; i += kChunk / 2) {  // 8 ymm loads: 64 floats
      a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i)), a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
      a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16)), a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
      a4 = _mm256_add_ps(a4, _mm256_load_ps(p + i + 32)), a5 = _mm256_add_ps(a5, _mm256_load_ps(p + i + 40));
      a6 = _mm256_add_ps(a6, _mm256_load_ps(p + i + 48)), a7 = _mm256_add_ps(a7, _mm256_load_ps(p + i + 56));
    }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                 _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  float total = 0;
  for (float v : out) total += v;
  return total;
}

__attribute__((noinline, FUSEBOX_UNINSTRUMENTED)) float read_scalar(const float* p, size_t n, int passes) {
  float acc[8] = {};
  for (int pass = 0; pass < passes; ++pass)
    for (size_t i = 0; i < n; i += 8)
      for (int c = 0; c < 8; ++c) acc[c] += p[i + c];
  float total = 0;
  for (float v : acc) total += v;
  return total;
}

using Reader = float (*)(const float*, size_t, int);
Reader best_reader() {
  return cpu_has_avx512() ? &read_avx512 : cpu_has_avx2_fma() ? &read_avx2 : &read_scalar;
}

// "48K", "1024K", "32M" as sysfs writes a cache size.
size_t parse_size(std::string s) {
  if (s.empty()) return 0;
  size_t mult = 1;
  if (s.back() == 'K') mult = 1024;
  if (s.back() == 'M') mult = 1024 * 1024;
  if (mult != 1) s.pop_back();
  try {
    return static_cast<size_t>(std::stoull(s)) * mult;
  } catch (const std::exception&) {
    return 0;
  }
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};

}  // namespace

CacheSizes cache_sizes() {
  CacheSizes c;
  for (int idx = 0; idx < 8; ++idx) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) continue;
    if (type == "Instruction") continue;
    const size_t bytes = parse_size(size);
    if (level == 1) c.l1 = bytes;
    if (level == 2) c.l2 = bytes;
    if (level == 3) c.l3 = bytes;
  }
  if (c.l1 && c.l2 && c.l3) {
    c.source = "sysfs";
    return c;
  }
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE), l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l1 > 0 && l2 > 0 && l3 > 0) return {static_cast<size_t>(l1), static_cast<size_t>(l2), static_cast<size_t>(l3), "sysconf"};
  return {size_t{32} << 10, size_t{1} << 20, size_t{32} << 20, "default"};
}

double level_working_set(const CacheSizes& s, int level, int threads) {
  threads = std::max(1, threads);
  const double l1 = static_cast<double>(s.l1), l2 = static_cast<double>(s.l2), l3 = static_cast<double>(s.l3);
  switch (level) {
    case 0: return l1 / 2;
    case 1: return (l1 + l2) / 2;
    case 2: return std::max(std::min(4 * l2, l3 / threads / 2), 2 * l2);
    default: {
      const double total = std::clamp(4 * l3, 64.0 * (1 << 20), 512.0 * (1 << 20));
      return total / threads;
    }
  }
}

double measure_read_gbs(double bytes_per_thread, int threads, double seconds) {
  threads = std::max(1, threads);
  const size_t n = std::max(kChunk, static_cast<size_t>(bytes_per_thread / sizeof(float)) / kChunk * kChunk);
  const double bytes = static_cast<double>(n) * sizeof(float);
  const MemoryBudget budget = memory_budget();
  if (bytes * threads > static_cast<double>(budget.bytes))
    throw Error("memory bandwidth probe: " + std::to_string(bytes * threads / (1 << 20)) + " MiB is over " +
                budget.source);
  // Each thread's buffer is written by that thread first, so its pages sit near it.
  std::vector<std::unique_ptr<float, FreeDeleter>> buffers(static_cast<size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    if (t < threads) {
      auto* p = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
      if (p) std::fill(p, p + n, 1.0f);
      buffers[static_cast<size_t>(t)].reset(p);
    }
  }
  for (const auto& b : buffers)
    if (!b) throw Error("memory bandwidth probe: cannot allocate " + std::to_string(bytes / (1 << 20)) + " MiB");
  const Reader read = best_reader();
  // About 64 MiB read per thread per timed block: long past the parallel region's own cost.
  const int passes = std::max(1, static_cast<int>((64.0 * (1 << 20)) / bytes));
  return best_rate(bytes * passes * threads, seconds, [&] {
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const int t = omp_get_thread_num();
      if (t < threads) total += read(buffers[static_cast<size_t>(t)].get(), n, passes);
    }
    return total;
  });
}

std::vector<MemoryLevel> measure_memory_levels(const std::vector<int>& thread_counts, double seconds,
                                               double dram_total_bytes) {
  const CacheSizes sizes = cache_sizes();
  const char* names[] = {"L1", "L2", "L3", "DRAM"};
  const double capacities[] = {static_cast<double>(sizes.l1), static_cast<double>(sizes.l2),
                               static_cast<double>(sizes.l3), 0};
  std::vector<MemoryLevel> levels;
  for (int level = 0; level < 4; ++level) {
    MemoryLevel m;
    m.name = names[level];
    m.capacity_bytes = capacities[level];
    auto working_set = [&](int t) {
      return level == 3 && dram_total_bytes > 0 ? dram_total_bytes / std::max(1, t) : level_working_set(sizes, level, t);
    };
    m.working_set_bytes = working_set(1);
    for (int t : thread_counts) m.gbs[t] = measure_read_gbs(working_set(t), t, seconds);
    levels.push_back(std::move(m));
  }
  return levels;
}

}  // namespace fusebox::profiler
