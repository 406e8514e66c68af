#pragma once
// What the NVTX ranges (nvtx.h) and the trace files share: the domain's name and the colours,
// so that a range Nsight Systems recorded and the same op in an NVTXT or SQLite export look
// alike. Plain functions, no NVTX and no runtime: the exporters and the nsys importer use them.
#include <cstdint>
#include <string>

namespace fusebox::profiler {

const char* nvtx_domain_name();  // "fusebox"

// ARGB colors shared by NVTX ranges and the NVTXT export: one per op type (stable hash into a
// palette), one for runs, one for stages.
uint32_t op_color(const std::string& op_type);
uint32_t run_color();
uint32_t stage_color();

}  // namespace fusebox::profiler
