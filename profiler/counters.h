#pragma once
// The counter tracks of a recording, summed up for the report (`fusebox trace`, its --json):
// per track, how many samples it has and the values it took in this window.
//
// Definitions (a sample holds its value from its time to the track's next sample):
//  - first, last: the values of the track's first and last samples in the recording; growth is
//    last - first. A track's value before its first sample is not known, and is not claimed.
//  - peak: the largest sample, and the time of its first occurrence; low: the smallest.
//  - PyTorch's memory tracks (import_kineto.cpp: "memory allocated (cuda:0)", "memory reserved
//    (cuda:0)") are the caching allocator's totals after each allocation or free, as the
//    profiler records them with profile_memory=True (torch.profiler docs: "Total Allocated",
//    "Total Reserved"): every change while profiling is a sample, so the peak is the peak of
//    the window; allocations made before the profiler started count only through the totals.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiler/recording.h"

namespace fusebox::profiler {

struct CounterSummary {
  std::string name;
  bool bytes = true;
  size_t samples = 0;
  double first = 0, last = 0, low = 0, peak = 0;
  int64_t peak_ns = 0;  // on the recording's clock (a kineto trace's: its own timestamps, in ns)
};

// A counter's value for people: bytes as "1.2 MiB", a plain number as it is ("%.6g").
std::string counter_value_text(bool bytes, double v);

// In the recording's track order; tracks without samples are left out.
std::vector<CounterSummary> summarize_counters(const Recording& r);
// A table, one line per track; "" when there are none.
std::string counters_text(const std::vector<CounterSummary>& counters);
// [{name, bytes, samples, first, last, low, peak, peak_ns}].
nlohmann::json counters_json(const std::vector<CounterSummary>& counters);

}  // namespace fusebox::profiler
