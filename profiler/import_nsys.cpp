// import_nsys_sqlite: reads an Nsight Systems SQLite export (`nsys export --type sqlite`, any
// schema version: columns are looked up with PRAGMA table_info, missing ones read as NULL) or our
// own write_nsys_sqlite file into a Recording. What it reads:
//   CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET / RUNTIME / SYNCHRONIZATION -> Recording::device
//   NVTX_EVENTS push/pop and start/end ranges -> Span{Range}, or, for the ranges our exporter
//     wrote in the "fusebox" domain, the Stage, Run and Op spans they came from (recognised by
//     their names and colors; op ranges "<OpType>.<index>(<node>)" also give back the node table's
//     names and op types, so exporting the import again writes the same file)
//   StringIds (names), ThreadNames (or NVTX thread-name events), TARGET_INFO_GPU -> gpus,
//   TARGET_INFO_SESSION_START_TIME -> origin_utc_ns, EXPORT_META_DATA (ours) -> model and label.
// Times stay nanoseconds from the session start, as the file has them (origin_ns = 0).
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/base/checked.h"
#include "core/base/error.h"
#include "profiler/exporters.h"
#include "profiler/nvtx_names.h"
#include "profiler/trace_import.h"

namespace fusebox::profiler {

namespace {

// ENUM_NSYS_EVENT_TYPE: NVTX ranges with an end (push/pop, start/end, and their NVTXT forms),
// thread names, domain creation.
constexpr int kNvtxThread = 39;
constexpr int kNvtxDomainCreate = 75;
bool is_nvtx_range(int64_t type) {
  return type == 59 || type == 60 || type == 70 || type == 71;
}

int32_t tid_of(int64_t global_tid) {
  return static_cast<int32_t>(global_tid & 0xFFFFFF);
}
int32_t pid_of(int64_t global_id) {
  return static_cast<int32_t>((global_id >> 24) & 0xFFFFFF);
}

// CUpti_ActivitySynchronizationType, as nsys labels it (ENUM_CUPTI_SYNC_TYPE.label).
std::string fixed_sync_name(int64_t type) {
  static const char* const kNames[] = {"Unknown", "Event sync", "Stream wait sync", "Stream sync",
                                       "Context sync"};
  return type >= 0 && type <= 4 ? kNames[type] : "Unknown";
}

void check_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxTraceBytes)
    throw Error(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(kMaxTraceBytes) + " a trace may have");
  char head[16] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(head, sizeof head) || std::memcmp(head, "SQLite format 3\0", 16) != 0)
    throw Error(path + ": not an SQLite file");
}

// One query's current row.
class Row {
 public:
  explicit Row(sqlite3_stmt* st) : st_(st) {}
  bool null(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
  int64_t i(int c, int64_t fallback = 0) const {
    return null(c) ? fallback : sqlite3_column_int64(st_, c);
  }
  double d(int c) const { return null(c) ? 0.0 : sqlite3_column_double(st_, c); }
  std::string s(int c) const {
    const unsigned char* t = sqlite3_column_text(st_, c);
    return t ? reinterpret_cast<const char*>(t) : "";
  }

 private:
  sqlite3_stmt* st_;
};

class Db {
 public:
  explicit Db(const std::string& path) : path_(path) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    db_.reset(db);  // closed on every path, also when opening failed
    if (rc != SQLITE_OK) fail();
    query("SELECT name FROM sqlite_master WHERE type = 'table'",
          [&](const Row& r) { tables_.insert(r.s(0)); });
  }
  bool has(const std::string& table) const { return tables_.count(table) > 0; }
  bool has_any_prefix(const std::string& prefix) const {
    return std::any_of(tables_.begin(), tables_.end(),
                       [&](const std::string& t) { return t.rfind(prefix, 0) == 0; });
  }
  // The column's name when `table` has it, else NULL (so one SELECT reads every schema version).
  std::string col(const std::string& table, const std::string& column) {
    auto it = columns_.find(table);
    if (it == columns_.end()) {
      std::set<std::string> names;
      query("PRAGMA table_info(" + table + ")", [&](const Row& r) { names.insert(r.s(1)); });
      it = columns_.emplace(table, std::move(names)).first;
    }
    return it->second.count(column) ? column : "NULL";
  }
  // "SELECT a, b, NULL FROM table" over the columns that exist.
  void select(const std::string& table, const std::vector<std::string>& columns,
              const std::function<void(const Row&)>& fn) {
    std::string sql = "SELECT ";
    for (size_t k = 0; k < columns.size(); ++k) sql += (k ? ", " : "") + col(table, columns[k]);
    // The rows are read one at a time (sqlite3_step) and counted against the memory budget, as
    // the kineto import counts events: the row past it stops the import, naming the budget.
    const std::string unit = "rows (at table " + table + ")";
    query(sql + " FROM " + table + " ORDER BY rowid", [&](const Row& r) {
      budget_.count(unit);
      fn(r);
    });
  }
  void query(const std::string& sql, const std::function<void(const Row&)>& fn) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &st, nullptr) != SQLITE_OK) fail();
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(st, sqlite3_finalize);
    Row row(st);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) fn(row);
    if (rc != SQLITE_DONE) fail();
  }

 private:
  [[noreturn]] void fail() const {
    throw Error(path_ + ": SQLite: " + (db_ ? sqlite3_errmsg(db_.get()) : "out of memory"));
  }
  std::string path_;
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db_{nullptr, sqlite3_close};
  std::set<std::string> tables_;
  std::map<std::string, std::set<std::string>> columns_;
  EventBudget budget_{path_};  // rows read so far, every table together
};

// Rows that cannot be used, by kind, for the report.
struct Skips {
  std::map<std::string, size_t> counts;
  void add(const std::string& what) { ++counts[what]; }
};

class Importer {
 public:
  Importer(const std::string& path, Db& db) : path_(path), db_(db) {}

  Recording run(ImportReport* report) {
    if (!db_.has_any_prefix("CUPTI_ACTIVITY_KIND_") && !db_.has("NVTX_EVENTS"))
      throw Error(path_ + ": an SQLite file without CUPTI or NVTX tables (not an nsys export)");
    r_.source = "nsys";
    r_.model = path_;
    r_.origin_ns = 0;
    read_strings();
    read_meta();
    read_kernels();
    read_memcpys();
    read_memsets();
    read_runtime();
    read_syncs();
    separate_correlations();
    read_nvtx();
    read_threads();
    read_gpus();
    find_pid();
    if (report) fill_report(*report);
    return std::move(r_);
  }

 private:
  std::string str(int64_t id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? "" : it->second;
  }
  // Counts a row; false (and counted as skipped) when it ends before it starts.
  bool usable(int64_t start, int64_t end, const char* what) {
    ++events_;
    if (end >= start) return true;
    skips_.add(std::string(what) + " rows ending before they start");
    return false;
  }
  static int32_t stream_of(const Row& row, int c) {
    int64_t s = row.i(c, -1);
    return s < 0 || s > INT32_MAX ? -1 : static_cast<int32_t>(s);  // nsys writes -1 as 4294967295
  }

  void read_strings() {
    if (db_.has("StringIds"))
      db_.select("StringIds", {"id", "value"}, [&](const Row& r) { strings_[r.i(0)] = r.s(1); });
  }

  void read_meta() {
    if (db_.has("TARGET_INFO_SESSION_START_TIME"))
      db_.select("TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"},
                 [&](const Row& r) { r_.origin_utc_ns = r.i(0); });
    if (!db_.has("EXPORT_META_DATA")) return;
    std::map<std::string, std::string> meta;
    db_.select("EXPORT_META_DATA", {"name", "value"}, [&](const Row& r) { meta[r.s(0)] = r.s(1); });
    // Our own export keeps the model and configuration it was recorded with.
    if (meta["EXPORT_PRODUCT_NAME"] != "fusebox profiler") return;
    r_.model = meta["EXPORT_MODEL"];
    r_.label = meta["EXPORT_CONFIGURATION"];
  }

  void read_kernels() {
    const char* t = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (!db_.has(t)) return;
    db_.select(t,
               {"start", "end", "deviceId", "streamId", "correlationId", "demangledName",
                "shortName", "mangledName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                "registersPerThread", "staticSharedMemory", "dynamicSharedMemory", "globalPid"},
               [&](const Row& row) {
                 if (!usable(row.i(0), row.i(1), "kernel")) return;
                 exec::DeviceActivity a = activity(row, exec::ActivityKind::Kernel);
                 for (int c : {5, 6, 7})
                   if (a.name.empty() && !row.null(c)) a.name = str(row.i(c));
                 for (int k = 0; k < 3; ++k) {
                   a.grid[k] = static_cast<int32_t>(row.i(8 + k));
                   a.block[k] = static_cast<int32_t>(row.i(11 + k));
                 }
                 a.registers = static_cast<int32_t>(row.i(14));
                 a.shared_memory = static_cast<int32_t>(
                     std::clamp<int64_t>(saturating_add(row.i(15), row.i(16)), 0, INT32_MAX));
                 keep(std::move(a), row, 17, false);
               });
  }

  void read_memcpys() {
    const char* t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!db_.has(t)) return;
    db_.select(t,
               {"start", "end", "deviceId", "streamId", "correlationId", "bytes", "copyKind",
                "srcKind", "dstKind", "globalPid"},
               [&](const Row& row) {
                 if (!usable(row.i(0), row.i(1), "memcpy")) return;
                 exec::DeviceActivity a = activity(row, exec::ActivityKind::Memcpy);
                 a.bytes = static_cast<uint64_t>(row.i(5));
                 a.copy_kind = static_cast<uint8_t>(row.i(6));
                 a.src_kind = cupti_memory_kind(row.i(7, 7));  // nsys numbers them apart
                 a.dst_kind = cupti_memory_kind(row.i(8, 7));
                 a.name = exec::copy_kind_name(a.copy_kind);
                 keep(std::move(a), row, 9, false);
               });
  }

  void read_memsets() {
    const char* t = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!db_.has(t)) return;
    db_.select(t, {"start", "end", "deviceId", "streamId", "correlationId", "bytes", "globalPid"},
               [&](const Row& row) {
                 if (!usable(row.i(0), row.i(1), "memset")) return;
                 exec::DeviceActivity a = activity(row, exec::ActivityKind::Memset);
                 a.bytes = static_cast<uint64_t>(row.i(5));
                 a.name = "Memset";
                 keep(std::move(a), row, 6, false);
               });
  }

  void read_runtime() {
    const char* t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!db_.has(t)) return;
    db_.select(t, {"start", "end", "globalTid", "correlationId", "nameId"}, [&](const Row& row) {
      if (!usable(row.i(0), row.i(1), "runtime")) return;
      exec::DeviceActivity a;
      a.kind = exec::ActivityKind::Runtime;
      a.start_ns = row.i(0);
      a.end_ns = row.i(1);
      a.device = 0;
      a.stream = 0;
      a.thread_id = static_cast<uint32_t>(tid_of(row.i(2)));
      a.name = str(row.i(4));
      keep(std::move(a), row, 2, true, 3);
    });
  }

  void read_syncs() {
    const char* t = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    if (!db_.has(t)) return;
    std::map<int64_t, std::string> names;
    if (db_.has("ENUM_CUPTI_SYNC_TYPE"))
      db_.select("ENUM_CUPTI_SYNC_TYPE", {"id", "label"},
                 [&](const Row& r) { names[r.i(0)] = r.s(1); });
    db_.select(t,
               {"start", "end", "deviceId", "streamId", "correlationId", "syncType", "globalPid"},
               [&](const Row& row) {
                 if (!usable(row.i(0), row.i(1), "synchronization")) return;
                 exec::DeviceActivity a = activity(row, exec::ActivityKind::Sync);
                 auto it = names.find(row.i(5));
                 a.name = it != names.end() && !it->second.empty() ? it->second
                                                                   : fixed_sync_name(row.i(5));
                 keep(std::move(a), row, 6, false);
               });
  }

  // The columns every GPU-side table starts with: start, end, deviceId, streamId, correlationId.
  static exec::DeviceActivity activity(const Row& row, exec::ActivityKind kind) {
    exec::DeviceActivity a;
    a.kind = kind;
    a.start_ns = row.i(0);
    a.end_ns = row.i(1);
    a.device = static_cast<int32_t>(row.i(2));
    a.stream = stream_of(row, 3);
    return a;  // its correlation id: keep()
  }

  // Keeps a row's activity, with its process (from column `pid_col`, a globalPid or globalTid)
  // and its correlation id (column `corr_col`) as the file has them, for separate_correlations().
  void keep(exec::DeviceActivity a, const Row& row, int pid_col, bool host, int corr_col = 4) {
    note_pid(row, pid_col, host);
    row_pid_.push_back(row.null(pid_col) ? -1 : pid_of(row.i(pid_col)));
    row_corr_.push_back(row.i(corr_col));
    r_.device.push_back(std::move(a));
  }

  // CUPTI numbers correlation ids per process, and nsys stores them as 64-bit integers, while a
  // recording ties a GPU row to its launch call by one 32-bit id. Where no id is used by two
  // processes and every id fits, they are kept as they are. Otherwise each (process, id) gets an
  // id of its own, so a kernel is never tied to another process's call, and an id past 2^32 is
  // never cut to another's. A GPU row without a globalPid is given the one process that made
  // launch calls, or left untied (0), counted in a warning, when several did.
  void separate_correlations() {
    std::map<int64_t, std::set<int64_t>> users;  // id in the file -> the processes using it
    std::set<int64_t> callers;
    bool fits = true;
    for (size_t i = 0; i < row_pid_.size(); ++i) {
      if (row_corr_[i] != 0 && row_pid_[i] >= 0) users[row_corr_[i]].insert(row_pid_[i]);
      if (r_.device[i].kind == exec::ActivityKind::Runtime && row_pid_[i] >= 0)
        callers.insert(row_pid_[i]);
      fits = fits && row_corr_[i] >= 0 && row_corr_[i] <= int64_t{UINT32_MAX};
    }
    const size_t shared = static_cast<size_t>(std::count_if(
        users.begin(), users.end(), [](const auto& u) { return u.second.size() > 1; }));
    if (shared == 0 && fits) {
      for (size_t i = 0; i < row_pid_.size(); ++i)
        r_.device[i].correlation_id = static_cast<uint32_t>(row_corr_[i]);
      return;
    }
    std::map<std::pair<int64_t, int64_t>, uint32_t> fresh;  // (process, id in the file) -> id
    for (size_t i = 0; i < row_pid_.size(); ++i)
      if (row_corr_[i] != 0 && row_pid_[i] >= 0)
        fresh.emplace(std::make_pair(row_pid_[i], row_corr_[i]), 0);
    uint32_t next = 0;
    for (auto& [key, id] : fresh) id = next < UINT32_MAX ? ++next : 0;
    size_t untied = 0;
    for (size_t i = 0; i < row_pid_.size(); ++i) {
      int64_t pid = row_pid_[i];
      if (pid < 0 && callers.size() == 1) pid = *callers.begin();
      const auto it = row_corr_[i] != 0 && pid >= 0 ? fresh.find({pid, row_corr_[i]}) : fresh.end();
      r_.device[i].correlation_id = it != fresh.end() ? it->second : 0;
      if (row_corr_[i] != 0 && it == fresh.end()) ++untied;
    }
    if (shared)
      notes_.push_back(
          std::to_string(shared) + (shared == 1 ? " correlation id" : " correlation ids") +
          " used by several processes: each GPU row tied to a launch call of its own process");
    if (untied)
      notes_.push_back(std::to_string(untied) +
                       " GPU rows without a process (globalPid) in a file of several: left untied");
  }

  // The traced process: the first host thread's (runtime calls, NVTX), else the first GPU row's.
  void note_pid(const Row& row, int c, bool host) {
    if (row.null(c)) return;
    if (host && !host_pid_) host_pid_ = pid_of(row.i(c));
    if (!host && !gpu_pid_) gpu_pid_ = pid_of(row.i(c));
  }

  struct Range {
    int64_t start, end;
    int32_t tid;
    uint32_t color;
    int64_t domain;
    std::string name;
  };

  void read_nvtx() {
    if (!db_.has("NVTX_EVENTS")) return;
    std::vector<Range> ranges;
    std::optional<int64_t> fusebox_domain;
    db_.select("NVTX_EVENTS",
               {"start", "end", "eventType", "color", "text", "textId", "globalTid", "domainId"},
               [&](const Row& row) {
                 int64_t type = row.i(2);
                 std::string text = row.null(4) && !row.null(5) ? str(row.i(5)) : row.s(4);
                 if (type == kNvtxDomainCreate && text == nvtx_domain_name()) {
                   fusebox_domain = row.i(7);
                   if (!row.null(6)) main_tid_ = tid_of(row.i(6));
                 }
                 if (type == kNvtxThread && !row.null(6))
                   nvtx_thread_names_.emplace_back(tid_of(row.i(6)), text);
                 if (!is_nvtx_range(type) || row.null(1)) return;
                 if (!usable(row.i(0), row.i(1), "NVTX range")) return;
                 note_pid(row, 6, true);
                 ranges.push_back({row.i(0), row.i(1), tid_of(row.i(6)),
                                   static_cast<uint32_t>(row.i(3)), row.i(7), std::move(text)});
               });
    for (const Range& g : ranges)
      r_.spans.push_back(span_of(g, fusebox_domain && g.domain == *fusebox_domain));
    nest_spans();
  }

  // A range our exporter wrote goes back to the span it came from; any other is a Range.
  Span span_of(const Range& g, bool ours) {
    Span s;
    s.kind = SpanKind::Range;
    s.name = g.name;
    s.start_ns = g.start;
    s.end_ns = g.end;
    s.tid = g.tid;
    if (!ours) return s;
    int64_t run = 0;
    std::string op;
    size_t index = 0, node_end = 0;
    if (g.color == run_color() && parse_run(g.name, &run)) {
      s.kind = SpanKind::Run;
      s.run = run;
    } else if (parse_op(g.name, &op, &index, &node_end) && g.color == op_color(op)) {
      s.kind = SpanKind::Op;
      s.node = static_cast<int32_t>(index);
      NodeInfo& n = nodes_.at(index);
      n.op = op;
      n.name = g.name.substr(node_end, g.name.size() - 1 - node_end);
    } else if (g.color == stage_color()) {
      s.kind = SpanKind::Stage;
    }
    return s;
  }

  static bool parse_run(const std::string& name, int64_t* run) {
    if (name.rfind("run ", 0) != 0 || name.size() < 5) return false;
    try {
      size_t used = 0;
      *run = std::stoll(name.substr(4), &used);
      return used + 4 == name.size() && run_range_name(*run) == name;
    } catch (const std::exception&) {
      return false;
    }
  }

  // "<OpType>.<index>(<node name>)": the op type, the index and where the node name starts.
  static bool parse_op(const std::string& name, std::string* op, size_t* index,
                       size_t* node_start) {
    if (name.empty() || name.back() != ')') return false;
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
      size_t k = dot + 1;
      while (k < name.size() && std::isdigit(static_cast<unsigned char>(name[k]))) ++k;
      if (k == dot + 1 || k - dot > 10 || k >= name.size() || name[k] != '(') continue;
      *op = name.substr(0, dot);
      *index = std::stoul(name.substr(dot + 1, k - dot - 1));
      *node_start = k + 1;
      std::string node = name.substr(k + 1, name.size() - k - 2);
      if (op_range_name(*op, *index, node) == name) return true;
    }
    return false;
  }

  // Start order (kept as the file has it when it is already in order), depth by nesting on each
  // thread; ranges that overlap without nesting are skipped.
  void nest_spans() {
    auto& spans = r_.spans;
    auto by_start = [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; };
    if (!std::is_sorted(spans.begin(), spans.end(), by_start))
      std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
      });
    std::map<int32_t, std::vector<const Span*>> stacks;
    std::vector<Span> kept;
    kept.reserve(spans.size());
    for (Span& s : spans) {
      auto& stack = stacks[s.tid];
      while (!stack.empty() && s.start_ns >= stack.back()->end_ns) stack.pop_back();
      if (!stack.empty() && s.end_ns > stack.back()->end_ns) {
        skips_.add("NVTX ranges overlapping another on their thread without nesting");
        continue;
      }
      s.depth = static_cast<int32_t>(stack.size());
      kept.push_back(std::move(s));
      stack.push_back(&kept.back());  // kept never reallocates: reserved above
    }
    spans = std::move(kept);
    r_.nodes = nodes_.take(path_);
    r_.node_count = r_.nodes.size();
    assign_runs();
  }

  // An op belongs to the run whose time holds it (on whichever thread ran the op).
  void assign_runs() {
    std::vector<const Span*> runs;
    for (const Span& s : r_.spans)
      if (s.kind == SpanKind::Run) runs.push_back(&s);
    for (Span& s : r_.spans) {
      if (s.kind != SpanKind::Op) continue;
      auto it = std::upper_bound(runs.begin(), runs.end(), s.start_ns,
                                 [](int64_t t, const Span* run) { return t < run->start_ns; });
      if (it != runs.begin() && s.end_ns <= (*std::prev(it))->end_ns) s.run = (*std::prev(it))->run;
    }
  }

  void read_threads() {
    if (db_.has("ThreadNames"))
      db_.select("ThreadNames", {"nameId", "globalTid"},
                 [&](const Row& r) { r_.thread_names.emplace_back(tid_of(r.i(1)), str(r.i(0))); });
    else
      r_.thread_names = nvtx_thread_names_;
  }

  void read_gpus() {
    if (!db_.has("TARGET_INFO_GPU")) return;
    db_.select(
        "TARGET_INFO_GPU",
        {"id", "name", "smCount", "computeMajor", "computeMinor", "totalMemory", "memoryBandwidth"},
        [&](const Row& r) {
          GpuInfo g;
          g.device = static_cast<int32_t>(r.i(0));
          g.name = r.s(1);
          g.sm_count = static_cast<int32_t>(r.i(2));
          g.compute_major = static_cast<int32_t>(r.i(3));
          g.compute_minor = static_cast<int32_t>(r.i(4));
          g.memory_bytes = static_cast<uint64_t>(r.i(5));
          g.memory_bandwidth_bps = r.d(6);
          r_.gpus.push_back(std::move(g));
        });
  }

  void find_pid() {
    r_.pid = host_pid_ ? host_pid_ : gpu_pid_;
    if (!r_.pid && db_.has("PROCESSES")) {
      bool first = true;
      db_.select("PROCESSES", {"pid"}, [&](const Row& r) {
        if (first) r_.pid = static_cast<int32_t>(r.i(0));
        first = false;
      });
    }
    // Linux's main thread has the process's id.
    r_.main_tid = main_tid_ ? *main_tid_ : r_.pid;
  }

  void fill_report(ImportReport& report) const {
    report.format = "nsys";
    report.events = events_;
    report.skipped = 0;
    report.warnings.clear();
    for (const auto& [what, n] : skips_.counts) {
      report.skipped += n;
      report.warnings.push_back("skipped " + std::to_string(n) + " " + what);
    }
    report.warnings.insert(report.warnings.end(), notes_.begin(), notes_.end());
  }

  std::string path_;
  Db& db_;
  Recording r_;
  NodeTable nodes_;  // our own export's nodes, by index
  std::vector<int64_t> row_pid_, row_corr_;  // parallel to r_.device: process (-1: none), id
  std::vector<std::string> notes_;           // warnings beside the skipped rows
  std::unordered_map<int64_t, std::string> strings_;
  std::vector<std::pair<int32_t, std::string>> nvtx_thread_names_;
  std::optional<int32_t> main_tid_;
  int32_t host_pid_ = 0, gpu_pid_ = 0;
  size_t events_ = 0;
  Skips skips_;
};

}  // namespace

Recording import_nsys_sqlite(const std::string& path, ImportReport* report) {
  check_file(path);
  Db db(path);
  Recording r = Importer(path, db).run(report);
  std::string bad = check_recording(r);
  if (!bad.empty()) throw Error(path + ": " + bad);
  return r;
}

}  // namespace fusebox::profiler
