// import_trace: which importer a file needs, decided by its first bytes, not its name.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "profiler/trace_import.h"

namespace fusebox::profiler {

namespace {

enum class TraceFormat { Unknown, Kineto, Nsys };

// Reads up to n bytes of a regular file (never opens a FIFO or a device).
std::string head_of(const std::string& path, size_t n) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  std::ifstream in(path, std::ios::binary);
  std::string out(n, '\0');
  in.read(out.data(), static_cast<std::streamsize>(n));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

TraceFormat format_of(const std::string& head) {
  static constexpr char kSqlite[] = "SQLite format 3";  // with its NUL: 16 bytes
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

}  // namespace

Recording import_trace(const std::string& path, ImportReport* report) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error("cannot read '" + path + "': no such file");
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error("cannot read '" + path + "': not a regular file");
  switch (format_of(head_of(path, kSniffBytes))) {
    case TraceFormat::Kineto: return import_kineto(path, report);
    case TraceFormat::Nsys: return import_nsys_sqlite(path, report);
    case TraceFormat::Unknown: break;
  }
  throw Error(path +
              ": not a trace fusebox reads (a PyTorch profiler / Chrome trace .json or .json.gz "
              "with traceEvents, or an Nsight Systems SQLite export: nsys export --type sqlite)");
}

bool looks_like_trace(const std::string& path) {
  return format_of(head_of(path, kSniffBytes)) != TraceFormat::Unknown;
}

}  // namespace fusebox::profiler
