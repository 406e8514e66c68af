// counters: a recording's counter tracks summed up (counters.h).
#include "profiler/counters.h"

#include <cstdio>
#include <sstream>

#include "core/base/strings.h"

namespace fusebox::profiler {

std::string counter_value_text(bool bytes, double v) {
  if (bytes) return format_bytes(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::vector<CounterSummary> summarize_counters(const Recording& r) {
  std::vector<CounterSummary> out(r.counter_tracks.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].name = r.counter_tracks[i].name;
    out[i].bytes = r.counter_tracks[i].bytes;
  }
  // Each track's samples are in time order (recorder.h), so the first seen is the first.
  for (const CounterSample& c : r.counters) {
    if (c.track < 0 || static_cast<size_t>(c.track) >= out.size())
      continue;  // check_recording refuses these
    CounterSummary& s = out[static_cast<size_t>(c.track)];
    if (s.samples++ == 0) {
      s.first = s.low = s.peak = c.value;
      s.peak_ns = c.t_ns;
    } else if (c.value > s.peak) {
      s.peak = c.value;
      s.peak_ns = c.t_ns;
    }
    if (c.value < s.low) s.low = c.value;
    s.last = c.value;
  }
  std::erase_if(out, [](const CounterSummary& s) { return s.samples == 0; });
  return out;
}

std::string counters_text(const std::vector<CounterSummary>& counters) {
  if (counters.empty()) return "";
  std::ostringstream os;
  os << "counters (each track's samples in this window: its first and last value, its peak)\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-34s %9s %12s %12s %12s\n", "counter", "samples", "first",
                "peak", "last");
  os << line;
  for (const CounterSummary& s : counters) {
    std::snprintf(line, sizeof line, "%-34s %9zu %12s %12s %12s\n", s.name.c_str(), s.samples,
                  counter_value_text(s.bytes, s.first).c_str(),
                  counter_value_text(s.bytes, s.peak).c_str(),
                  counter_value_text(s.bytes, s.last).c_str());
    os << line;
  }
  return os.str();
}

nlohmann::json counters_json(const std::vector<CounterSummary>& counters) {
  nlohmann::json j = nlohmann::json::array();
  for (const CounterSummary& s : counters)
    j.push_back({{"name", s.name},
                 {"bytes", s.bytes},
                 {"samples", s.samples},
                 {"first", s.first},
                 {"last", s.last},
                 {"low", s.low},
                 {"peak", s.peak},
                 {"peak_ns", s.peak_ns}});
  return j;
}

}  // namespace fusebox::profiler
