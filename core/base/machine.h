#pragma once
// Facts about the machine the process runs on, read from the OS, shared by the CPU backend (its
// messages) and the profiler (its cache key and reports).
#include <string>

namespace fusebox {

// The CPU's model name ("AMD EPYC 7B13") from /proc/cpuinfo; "unknown CPU" when there is none.
std::string cpu_model_name();

}  // namespace fusebox
