#pragma once
// Facts about the machine the process runs on, read from the OS, shared by the CPU backend (its
// messages) and the profiler (its cache key and reports).
#include <cstddef>
#include <string>

namespace fusebox {

// The CPU's model name from /proc/cpuinfo, with its family and model where x86 gives them ("AMD
// EPYC (family 25, model 17)"); "unknown CPU" when there is none.
std::string cpu_model_name();

// Whether this CPU (and the OS, which must save the wider registers) runs AVX-512 F, BW, DQ and
// VL with FMA; AVX2 with FMA. The CPU backend's levels (ops/cpu/isa.h) and the profiler's FMA
// probes (profiler/fma_peak.cpp) both ask here.
bool cpu_has_avx512();
bool cpu_has_avx2_fma();

// What this process may spend on what a file asks for: 80% of the physical memory, or, when it is
// smaller, half of what an address-space limit (ulimit -v or -d) leaves beyond what is mapped now
// (a growing vector's old and new blocks both count against a limit). `source` says which, for
// the messages that refuse ("80% of this machine's memory", "half of what its ulimit -v leaves").
struct MemoryBudget {
  size_t bytes = 0;  // SIZE_MAX when neither is known
  std::string source;
};
MemoryBudget memory_budget();

// The address space a `ulimit -v` (RLIMIT_AS) leaves beyond what is mapped now; SIZE_MAX without
// one. Thread stacks are mapped whole at creation, so a team of threads needs (threads - 1) of
// thread_stack_bytes() of it, or libgomp aborts the process ("Thread creation failed", exit 1).
size_t address_space_left();
// The stack of each OpenMP worker thread: OMP_STACKSIZE (or GOMP_STACKSIZE) where set, as libgomp
// reads it (a number, K by default, with B, K, M or G), else pthreads' default.
size_t thread_stack_bytes();

}  // namespace fusebox
