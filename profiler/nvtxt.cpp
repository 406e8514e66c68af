// NVTXT: NVIDIA's NVTX text format. One instruction per line; '@' lines declare the argument
// order of a command, "Name = value" lines set defaults, then the events. ImportNvtxt turns the
// file into a .nsys-rep (`--cmd create`) or merges it into a capture (`--cmd merge`).
#include <cstdio>
#include <map>
#include <sstream>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "profiler/exporters.h"
#include "profiler/nvtx_names.h"

namespace fusebox::profiler {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\n' || c == '\r') ? '\'' : c;
  return out + "\"";
}

std::string hex_color(uint32_t argb) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", argb);
  return buf;
}

uint32_t span_color(const Recording& r, const Span& s) {
  if (s.kind == SpanKind::Run) return run_color();
  if (s.kind == SpanKind::Stage) return stage_color();
  if (s.node >= 0 && static_cast<size_t>(s.node) < r.nodes.size()) return op_color(r.nodes[static_cast<size_t>(s.node)].op);
  return 0xFF7F7F7F;
}

}  // namespace

// Worker spans (a thread's chunk of a parallel region) are left out, as in the SQLite export: as
// NVTX ranges named like their op, a reader of the .nsys-rep would count each op again.
size_t nvtxt_range_count(const Recording& r) {
  size_t n = 0;
  for (const Span& s : r.spans) n += s.kind != SpanKind::Worker;
  return n;
}

std::string nvtxt(const Recording& r, NvtxtTimeBase time_base) {
  std::string bad = check_recording(r);
  if (!bad.empty()) throw Error("cannot export the recording: " + bad);
  std::ostringstream os;
  os << "# fusebox profile of " << r.model << " (" << r.label << ")\n"
     << "# NVTXT: ImportNvtxt --cmd create -n this.nvtxt -o this.nsys-rep\n"
     << "# Times are CLOCK_MONOTONIC_RAW nanoseconds (TimeBase Manual reads them as-is;\n"
     << "# export with TimeBase ClockMonotonicRaw to merge into an nsys capture of the same run).\n"
     << "SetFileDisplayName, " << quoted("fusebox " + r.model) << "\n"
     << "@RangePush, Time, ThreadId, Message, Color\n"
     << "@RangePop, Time, ThreadId\n"
     << "ProcessId = " << r.pid << "\n"
     << "TimeBase = " << (time_base == NvtxtTimeBase::Manual ? "Manual" : "ClockMonotonicRaw") << "\n"
     << "NameProcess, " << r.pid << ", " << quoted("fusebox " + r.model) << "\n";
  for (const auto& [tid, name] : r.thread_names) os << "NameOsThread, " << r.pid << ", " << tid << ", " << quoted(name) << "\n";
  // Per thread: push in start order, pop what ended before the next push (innermost first).
  std::map<int32_t, std::vector<const Span*>> by_thread;
  for (const Span& s : r.spans)
    if (s.kind != SpanKind::Worker) by_thread[s.tid].push_back(&s);
  for (const auto& [tid, spans] : by_thread) {
    std::vector<const Span*> stack;
    auto pop_until = [&](int64_t t, bool all) {
      while (!stack.empty() && (all || stack.back()->end_ns <= t)) {
        os << "RangePop, " << stack.back()->end_ns << ", " << tid << "\n";
        stack.pop_back();
      }
    };
    for (const Span* s : spans) {
      pop_until(s->start_ns, false);
      os << "RangePush, " << s->start_ns << ", " << tid << ", " << quoted(s->name) << ", " << hex_color(span_color(r, *s)) << "\n";
      stack.push_back(s);
    }
    pop_until(0, true);
  }
  return os.str();
}

void write_nvtxt(const Recording& r, const std::string& path, NvtxtTimeBase time_base) {
  std::string text = nvtxt(r, time_base);
  write_file_atomically(path, text);
}

}  // namespace fusebox::profiler
