#pragma once
// The timing both machine probes share (fma_peak.cpp, memory_levels.cpp): the best rate of
// repeated timed blocks, the first not counted (threads waking, caches filling, clocks rising),
// at least four counted and about `seconds` in all.
#include <algorithm>
#include <chrono>

namespace fusebox::profiler {

inline volatile float g_probe_sink = 0;  // keeps the probes' loops from being optimized away

// `block()` runs one block and returns a value of it (kept in g_probe_sink); `work` is what one
// block does (FLOPs, bytes). Returns the best work per nanosecond: GFLOP/s, GB/s.
template <typename Block>
double best_rate(double work, double seconds, Block&& block) {
  double best = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int rep = 0;; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    g_probe_sink = block();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0 && s > 0) best = std::max(best, work / s / 1e9);
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rep >= 4 && spent > seconds) break;
  }
  return best;
}

}  // namespace fusebox::profiler
