// import_trace: which importer a file needs, decided by its first bytes, not its name.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "profiler/saved_trace.h"
#include "profiler/trace_import.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace fusebox::profiler {

namespace {

enum class TraceFormat { Unknown, Kineto, Nsys, Saved };

// Reads up to n bytes of a regular file (never opens a FIFO or a device). A regular file that
// cannot be opened (no permission, `ulimit -n` reached) is an error saying why, not "no trace".
std::string head_of(const std::string& path, size_t n) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot open '" + path + "': " + std::strerror(errno) + (errno == EMFILE ? " (raise ulimit -n)" : ""));
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t k = ::read(fd, out.data() + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += static_cast<size_t>(k);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

TraceFormat format_of(const std::string& head) {
  static constexpr char kSqlite[] = "SQLite format 3";  // with its NUL: 16 bytes
  if (is_saved_trace(head)) return TraceFormat::Saved;
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    return TraceFormat::Kineto;  // gzip: kineto writes .json.gz
  if (head.size() >= sizeof kSqlite && std::memcmp(head.data(), kSqlite, sizeof kSqlite) == 0)
    return TraceFormat::Nsys;
  // JSON: a trace has a traceEvents array (or is a bare array of events) near its start.
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return TraceFormat::Unknown;
  if (head[first] == '[') return TraceFormat::Kineto;
  if (head[first] == '{' && head.find("\"traceEvents\"") != std::string::npos) return TraceFormat::Kineto;
  return TraceFormat::Unknown;
}

constexpr size_t kSniffBytes = 1 << 16;

// Every figure the analysis makes from a recording is a difference of two of its times or a sum
// of its durations (windows, busy, idle, delays, totals per name). They cannot overflow int64
// when the events lie within kMaxTraceSpanNs of each other and their durations sum below
// kMaxDurationSumNs; a file past either is not one recording of a real run (2.3 years; 146
// years of activity), and is refused naming the events, never summed into a negative figure.
constexpr int64_t kMaxTraceSpanNs = int64_t{1} << 56;
constexpr int64_t kMaxDurationSumNs = int64_t{1} << 62;

void check_times(const Recording& r, const std::string& path) {
  struct Extreme {
    int64_t t;
    std::string what;
  };
  Extreme first{INT64_MAX, ""}, last{INT64_MIN, ""};
  uint64_t sum = 0;  // stops growing past the bound: a sum of non-negative int64 never wraps
  auto see = [&](int64_t start, int64_t end, const std::string& name) {
    if (start < first.t) first = {start, name};
    if (end > last.t) last = {end, name};
    if (end > start && sum < static_cast<uint64_t>(kMaxDurationSumNs))
      sum += static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
  };
  for (const Span& s : r.spans) see(s.start_ns, s.end_ns, s.name);
  for (const exec::DeviceActivity& a : r.device) see(a.start_ns, a.end_ns, a.name);
  if (first.t > last.t) return;  // nothing timed
  const auto span = checked_sub(last.t, first.t);
  if (!span || *span > kMaxTraceSpanNs)
    throw Error(path + ": its events span more than 2^56 ns (2.3 years): '" + first.what + "' starts at " +
                std::to_string(first.t) + " ns and '" + last.what + "' ends at " + std::to_string(last.t) +
                " ns; not one recording");
  if (sum >= static_cast<uint64_t>(kMaxDurationSumNs))
    throw Error(path + ": its events' durations sum past 2^62 ns (146 years of activity); not one recording");
}

}  // namespace

std::vector<NodeInfo> NodeTable::take(const std::string& path) {
  std::vector<NodeInfo> out;
  if (nodes_.empty()) return out;
  const size_t last = nodes_.rbegin()->first;
  if (last / 2 > nodes_.size() + kSlack)
    throw Error(path + ": node index " + std::to_string(last) + " in a trace that describes " +
                std::to_string(nodes_.size()) + (nodes_.size() == 1 ? " node" : " nodes") +
                ": an exported trace numbers its graph's nodes from 0, so the table would be "
                "mostly empty");
  out.resize(last + 1);
  for (auto& [index, node] : nodes_) out[index] = std::move(node);
  nodes_.clear();
  return out;
}

Recording import_trace(const std::string& path, ImportReport* report) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error("cannot read '" + path + "': no such file");
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error("cannot read '" + path + "': not a regular file");
  Recording r;
  switch (format_of(head_of(path, kSniffBytes))) {
    case TraceFormat::Kineto: r = import_kineto(path, report); break;
    case TraceFormat::Nsys: r = import_nsys_sqlite(path, report); break;
    case TraceFormat::Saved: r = load_saved_trace(path, report); break;
    case TraceFormat::Unknown:
      throw Error(path +
                  ": not a trace fusebox reads (a PyTorch profiler / Chrome trace .json or .json.gz "
                  "with traceEvents, an Nsight Systems SQLite export: nsys export --type sqlite, or a trace "
                  "fusebox trace --save wrote)");
  }
  check_times(r, path);
#ifdef __GLIBC__
  // What the import freed goes back to the system: its transient blocks (text chunks, batches,
  // the growing arrays' old copies) sit under a small live one in the heap, where glibc does not
  // trim them; on the 1M-event benchmark trace, 97 MB resident after the import, 53 MB trimmed.
  malloc_trim(0);
#endif
  return r;
}

EventBudget::EventBudget(std::string path)
    : path_(std::move(path)), budget_(memory_budget()), max_(budget_.bytes / kResidentBytesPerEvent) {}

void EventBudget::refuse(const std::string& unit) const {
  throw Error(path_ + ": more than " + std::to_string(max_) + " " + unit + ": at up to " +
              std::to_string(kResidentBytesPerEvent) + " B each they pass the memory budget of " +
              format_bytes(static_cast<double>(budget_.bytes)) + " (" + budget_.source + ")");
}

bool looks_like_trace(const std::string& path) {
  return format_of(head_of(path, kSniffBytes)) != TraceFormat::Unknown;
}

}  // namespace fusebox::profiler
