#pragma once
// Traces other tools recorded on real GPUs, read into the Recording our own profiler produces,
// so the timeline, the analysis, the exports and the window treat them as a live run:
//   - PyTorch profiler (kineto) Chrome-trace JSON, plain or gzip'd, every layout PyTorch wrote
//     (cat kernel/Kernel, gpu_memcpy, gpu_memset, cuda_runtime/Runtime, cuda_driver, cuda_sync,
//     cpu_op, user_annotation, ac2g flows, deviceProperties), and our own Chrome-trace export;
//   - Nsight Systems SQLite exports (`nsys export --type sqlite`): CUPTI_ACTIVITY_KIND_KERNEL /
//     MEMCPY / MEMSET / RUNTIME / SYNCHRONIZATION, NVTX_EVENTS, StringIds, TARGET_INFO_GPU,
//     ThreadNames; and our own SQLite export.
//
// What lands where in the Recording (source "kineto" or "nsys", model = the file's path):
//   host ops (cpu_op)               -> Span{Op, node -1} on their thread, depth by nesting
//   NVTX ranges, user annotations   -> Span{Range}
//   runtime and driver API calls    -> DeviceActivity{Runtime}, thread_id = host thread
//   kernels, copies, memsets, syncs -> DeviceActivity{Kernel, Memcpy, Memset, Sync} on
//                                      (device, stream), correlation_id tying each to its launch
//   GPU properties                  -> Recording::gpus
// Times become integer nanoseconds in the file's own time base (kineto: its microsecond clock;
// nsys: from the session's start), with origin_ns = 0, so what an exporter writes counts from
// the same zero the file did. Our own exports read back to the recording they were written from
// (export, import, export again gives the same file, byte for byte).
//
// Errors (fusebox::Error) name the file and, for a bad event, which one: a truncated .gz, JSON
// that is not a trace, a SQLite file without CUPTI or NVTX tables, events more than 2^56 ns
// apart or whose durations sum past 2^62 ns (import_trace: then no figure the analysis makes,
// a difference of two times or a sum of durations, can overflow). Events that cannot be used
// (a negative duration, a kernel without a correlation id where one is needed) are skipped and
// counted in the report's warnings, never guessed at.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/base/machine.h"
#include "profiler/recording.h"

namespace fusebox::profiler {

struct ImportReport {
  std::string format;               // "kineto" or "nsys"
  size_t events = 0;                // events (rows) read
  size_t skipped = 0;               // of those, not used
  std::vector<std::string> warnings;  // one line per kind of skipped event, with its count
};

// The largest trace file read (compressed or not): a bigger one is refused, naming its size.
constexpr size_t kMaxTraceBytes = size_t{4} << 30;

// What one event may cost resident, for the budget an import checks as it counts events (before
// the memory is spent, not after): the peak of a whole `fusebox trace` run measured 235 B at 200k
// events of make_big_trace.py's shape (huge pages round a small trace's arrays up: 180 B without)
// and 94 B at 10M (the large_trace_memory test bounds it at 300); 400 leaves room for real
// traces' longer names. A trace with more than memory_budget() / this many events is
// refused at the event that passes it, naming the budget.
constexpr size_t kResidentBytesPerEvent = 400;

// That count, kept by both importers: count() once per event or row read, before it is kept;
// the one past the budget throws fusebox::Error naming the file, the budget and its source.
class EventBudget {
 public:
  explicit EventBudget(std::string path);
  // `unit` names what is counted in the message: "events", "rows (at table StringIds)".
  void count(const std::string& unit) {
    if (++seen_ > max_) refuse(unit);
  }

 private:
  [[noreturn]] void refuse(const std::string& unit) const;
  std::string path_;
  MemoryBudget budget_;
  size_t max_ = 0, seen_ = 0;
};

// The node table of our own exports, filled by node index as their ops are read (kineto's
// "Node Index", nsys's "Op.index(name)" ranges). An index numbers a node of the exported graph
// from 0, so a recording's table is dense: a few nodes that name index 16 million would size a
// table of gigabytes from a kilobyte file. take() refuses a table more than half empty (past
// kSlack entries), naming the file and the largest index.
class NodeTable {
 public:
  static constexpr size_t kSlack =
      65536;  // a window that starts mid-run misses a run's first nodes
  NodeInfo& at(size_t index) { return nodes_[index]; }  // created empty the first time
  bool has(size_t index) const { return nodes_.count(index) > 0; }
  std::vector<NodeInfo> take(const std::string& path);

 private:
  std::map<size_t, NodeInfo> nodes_;
};

Recording import_kineto(const std::string& path, ImportReport* report = nullptr);
Recording import_nsys_sqlite(const std::string& path, ImportReport* report = nullptr);

// By content, not by name: gzip or JSON -> kineto, "SQLite format 3" -> nsys; anything else is
// an error naming the file and the formats it can read.
Recording import_trace(const std::string& path, ImportReport* report = nullptr);

// Whether `path` starts like a trace import_trace reads (so "open" can tell a trace from a model
// or a scenario without throwing). False for unreadable files.
bool looks_like_trace(const std::string& path);

}  // namespace fusebox::profiler
