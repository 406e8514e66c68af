#pragma once
// The machine's roofline, measured through the runtime itself (a Backend created by name, tiny
// graphs run through exec::Session, so the numbers include what our kernels achieve):
//   - GEMM GFLOP/s per intra-op thread count: one square MatMul graph;
//   - memory bandwidth: a triad-like Mul+Add graph on arrays well past the last-level cache;
//   - on the CPU, the hierarchy's read bandwidth level by level (L1, L2, L3, DRAM) on one thread
//     and on all (memory_levels.h): the roofs an op is placed under by where its bytes come from;
//   - dispatch floor: the per-op cost of the compiled loop over a chain of one-element ops;
// and, beside them, the physical limit they are judged against:
//   - FMA peak GFLOP/s per thread count: independent FMAs in registers (fma_peak.h).
// Cached per machine (CPU model + hardware threads + backend + instruction-set level) in
// $XDG_CACHE_HOME/fusebox/machine.json (default ~/.cache/fusebox/machine.json), written atomically.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/memory_levels.h"

namespace fusebox::profiler {

struct Roofline {
  std::string key;         // "<cpu model>|<hardware threads> threads|<backend>[|<isa>]"
  std::string cpu_model;
  int hardware_threads = 1;
  std::string backend = "cpu";
  std::string isa;         // the backend's instruction-set level ("avx2"); "" for one with none
  std::map<int, double> gemm_gflops;  // threads -> GFLOP/s
  int gemm_n = 0;                     // the square GEMM size measured
  double bandwidth_gbs = 0;           // GB/s (1e9 bytes/s)
  double bandwidth_bytes = 0;         // working set of the bandwidth graph
  double dispatch_floor_ns = 0;       // per op, compiled executor
  std::map<int, double> fma_gflops;   // threads -> GFLOP/s of the FMA loop (the physical limit)
  std::string fma_isa;                // the FMA loop that ran: "avx512", "avx2", "scalar"
  std::vector<MemoryLevel> levels;    // L1, L2, L3, DRAM read bandwidth (CPU backend; none for another)
  std::string measured_at;            // UTC time

  // Peak GFLOP/s for `threads` (the nearest measured count at or below it).
  double peak_gflops(int threads) const;
  // The FMA peak for `threads` (the nearest measured count at or below it).
  double fma_peak_gflops(int threads) const;
  // The read bandwidth of levels[i] at `threads`: the figure measured at that count; between
  // the counts measured, the one-thread figure times `threads`, capped at the all-thread one
  // (each core brings its own L1 and L2 and its share of the rest, until the machine's figure).
  double level_gbs(size_t i, int threads) const;
  // FLOPs per byte where the compute roof meets the memory roof.
  double balance(int threads) const { return bandwidth_gbs > 0 ? peak_gflops(threads) / bandwidth_gbs : 0; }
  nlohmann::json to_json() const;
  static Roofline from_json(const nlohmann::json& j);
  std::string to_text() const;
};

struct RooflineOptions {
  std::string backend = "cpu";
  std::string isa = "auto";        // the backend's level (CompileOptions::isa)
  int max_threads = 0;             // 0: hardware threads
  int gemm_n = 512;
  double bandwidth_min_bytes = 0;  // 0: 4x the last-level cache, at least 64 MiB
  double level_dram_bytes = 0;     // the DRAM level's working set; 0: memory_levels.h's rule
  int dispatch_chain = 256;        // ops in the dispatch chain
  double seconds_per_measure = 0.15;  // time budget per figure
};

int hardware_threads();
size_t last_level_cache_bytes();
std::string machine_cache_path();  // $XDG_CACHE_HOME/fusebox/machine.json or ~/.cache/...
// `isa`: the level as the backend resolved it ("avx2"), "" for a backend with none.
std::string machine_key(const std::string& backend, const std::string& isa = "");
// The level `isa` ("auto", ...) resolves to on `backend` ("" for a backend with none). Throws
// fusebox::Error for a level this machine does not run.
std::string resolved_isa(const std::string& backend, const std::string& isa);

// Measures now (no cache). Throws fusebox::Error if the backend is unknown or unavailable.
Roofline measure_roofline(const RooflineOptions& options = {});
// The cached figures for this machine, measured (and cached) when absent or when `refresh`.
// `cache_path` empty: machine_cache_path().
Roofline machine_roofline(bool refresh = false, const RooflineOptions& options = {},
                          const std::string& cache_path = "");

}  // namespace fusebox::profiler
