// A trace reader that links the trace library alone (fusebox_trace and fusebox_base, every object
// of fusebox_trace pulled in), not the runtime: the link is the check that reading, analysing and
// exporting a recording needs no executor, pass or kernel. Run on a trace file, it imports it,
// analyses its GPU activity and prints one line, which tests/CMakeLists.txt's test reads.
//
//   trace_library_probe TRACE.json[.gz] | TRACE.sqlite
#include <cstdio>
#include <exception>

#include "profiler/gpu_analysis.h"
#include "profiler/trace_import.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trace_library_probe TRACE\n");
    return 2;
  }
  try {
    fusebox::profiler::ImportReport report;
    const fusebox::profiler::Recording r = fusebox::profiler::import_trace(argv[1], &report);
    const fusebox::profiler::GpuAnalysis a = fusebox::profiler::analyze_gpu(r);
    std::printf("format %s, %zu events read, %zu device records, %lld kernels on %zu device(s)\n",
                report.format.c_str(), report.events, r.device.size(), static_cast<long long>(a.kernel_count),
                a.devices.size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_library_probe: %s\n", e.what());
    return 2;
  }
}
