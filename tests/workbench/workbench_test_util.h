#pragma once
// Shared by the workbench tests: small settings, a fixed roofline (no machine measuring inside a
// test) and the CPU backend registered.
#include <string>

#include "app/workbench/pipeline.h"
#include "app/workbench/settings.h"
#include "ops/cpu/cpu_backend.h"
#include "profiler/roofline.h"

namespace fusebox::workbench::test {

inline void register_cpu() {
  static bool once = (cpu::register_backend(), true);
  (void)once;
}

// A roofline with round figures, so tests never measure the machine.
inline profiler::Roofline fixed_roofline(const std::string& backend, const std::string& isa = "") {
  profiler::Roofline r;
  r.key = "test";
  r.backend = backend;
  r.isa = isa;
  r.gemm_gflops[1] = 100;
  r.gemm_gflops[2] = 200;
  r.bandwidth_gbs = 20;
  r.dispatch_floor_ns = 50;
  // Above what any core we run on reaches (235 GFLOP/s on a Zen 4 core), so no op is ever
  // faster than every compute roof here.
  r.fma_gflops[1] = 400;
  r.fma_gflops[2] = 800;
  r.fma_isa = "avx512";
  if (backend == "cpu") {  // the memory hierarchy, likewise above any core's
    const char* names[] = {"L1", "L2", "L3", "DRAM"};
    const double capacity[] = {48 << 10, 1 << 20, 32 << 20, 0};
    const double gbs[] = {1000, 500, 250, 60};
    for (int i = 0; i < 4; ++i) {
      profiler::MemoryLevel m;
      m.name = names[i];
      m.capacity_bytes = capacity[i];
      m.gbs = {{1, gbs[i]}, {2, 2 * gbs[i]}};
      r.levels.push_back(m);
    }
  }
  return r;
}

// A transformer block small enough for hundreds of runs, with few iterations.
inline Settings small_settings(const std::string& model = "transformer:seq=16,d=32,heads=2,ffn=64") {
  register_cpu();
  Settings s;
  s.model = model;
  s.warmup = 0;
  s.iters = 2;
  s.profile_runs = 1;
  return s;
}

}  // namespace fusebox::workbench::test
