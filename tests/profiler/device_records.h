#pragma once
// Synthetic device activity for the GPU-analysis tests: kernels, launch calls, host spans and an
// empty recorded trace, built with the fields the analysis reads.
#include <cstdint>
#include <string>

#include "profiler/recording.h"

namespace fusebox::profiler::ptest {

inline exec::DeviceActivity kernel(const std::string& name, int64_t s, int64_t e, uint32_t corr = 0,
                                   int32_t stream = 7, int32_t dev = 0) {
  exec::DeviceActivity a;
  a.kind = exec::ActivityKind::Kernel;
  a.name = name;
  a.start_ns = s;
  a.end_ns = e;
  a.correlation_id = corr;
  a.stream = stream;
  a.device = dev;
  return a;
}

// A host runtime call (a launch when it has a correlation id).
inline exec::DeviceActivity call(const std::string& name, int64_t s, int64_t e, uint32_t corr = 0,
                                 uint32_t tid = 1) {
  exec::DeviceActivity a;
  a.kind = exec::ActivityKind::Runtime;
  a.name = name;
  a.start_ns = s;
  a.end_ns = e;
  a.correlation_id = corr;
  a.thread_id = tid;
  return a;
}

inline Span span(SpanKind kind, const std::string& name, int64_t s, int64_t e, int32_t tid = 1,
                 int32_t depth = 0) {
  Span sp;
  sp.kind = kind;
  sp.name = name;
  sp.start_ns = s;
  sp.end_ns = e;
  sp.tid = tid;
  sp.depth = depth;
  return sp;
}

// An empty recording of an imported trace.
inline Recording trace() {
  Recording r;
  r.source = "kineto";
  return r;
}

}  // namespace fusebox::profiler::ptest
