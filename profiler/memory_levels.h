#pragma once
// The memory hierarchy's read bandwidth, level by level (L1, L2, L3, DRAM): the roofs of the
// hierarchical roofline (roofline.h), measured as fma_peak.h measures the compute roof, by a loop
// of our own and no kernels of ours.
//
// The loop: each thread sums its own buffer of `working set` bytes with the widest loads the CPU
// has (zmm with AVX-512, ymm with AVX2, else scalar), eight independent accumulators, pass after
// pass; bytes read over time, best of repeated blocks, the first block (threads waking, caches
// filling, clocks rising) not counted. A read loop is the fastest way data moves, so no op that
// reads and writes the same bytes beats it: it is the roof, not a typical rate.
//
// The working set per thread, from the cache sizes the OS reports (cache_sizes()):
//   L1    half of L1d: fits with room for the stack and the loop's own lines;
//   L2    the middle of (L1d, L2): past L1, well inside L2;
//   L3    4 x L2, capped at L3 / threads / 2: past every private level, inside the L3 a thread
//         shares (a reported L3 can be the whole socket's, several dies' worth, so it is no bound
//         on one die's: 4 x L2 stays inside any die's L3 we know);
//   DRAM  (4 x L3, at least 64 MiB, at most 512 MiB) / threads: past every cache (the largest
//         L3 of one die we know is 96 MiB).
// Measured on one thread (a core's own figure) and on every hardware thread (the machine's).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace fusebox::profiler {

// Data cache sizes in bytes: /sys/devices/system/cpu/cpu0/cache where the OS has it, else
// sysconf (glibc's CPUID reading), else 32 KiB / 1 MiB / 32 MiB. `source` says which.
struct CacheSizes {
  size_t l1 = 0, l2 = 0, l3 = 0;
  std::string source;  // "sysfs", "sysconf" or "default"
};
CacheSizes cache_sizes();

// One level of the hierarchy and its measured read bandwidth.
struct MemoryLevel {
  std::string name;              // "L1", "L2", "L3", "DRAM"
  double capacity_bytes = 0;     // the level's size as reported (0 for DRAM: unbounded)
  double working_set_bytes = 0;  // per thread, at one thread
  std::map<int, double> gbs;     // threads -> GB/s (1e9 bytes/s), all threads together
};

// The working set per thread for `level` (0 L1, 1 L2, 2 L3, 3 DRAM) at `threads`, by the rule above.
double level_working_set(const CacheSizes& sizes, int level, int threads);

// Reads `bytes_per_thread` on each of `threads` threads for about `seconds`: GB/s, all together.
double measure_read_gbs(double bytes_per_thread, int threads, double seconds);

// The four levels, each measured at every count in `thread_counts`. `dram_total_bytes` > 0 sets
// the DRAM level's working set (all threads together) instead of the rule: quick tests only.
std::vector<MemoryLevel> measure_memory_levels(const std::vector<int>& thread_counts, double seconds,
                                               double dram_total_bytes = 0);

}  // namespace fusebox::profiler
