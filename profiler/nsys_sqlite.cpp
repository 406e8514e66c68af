// SQLite in the schema `nsys export --type sqlite` writes (Nsight Systems 2022.4, export schema
// 3.0.0): the table and column names, types and encodings below are the ones `nsys stats`
// reports and nsys scripts query. Tables we have no data for are left out, as nsys does.
#include <sqlite3.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <map>
#include <memory>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/symbols.h"
#include "profiler/exporters.h"
#include "profiler/nvtx_names.h"

namespace fusebox::profiler {

namespace {

// NVTX event types (ENUM_NSYS_EVENT_TYPE).
constexpr int kNvtxThread = 39;          // nvtxNameOsThread
constexpr int kNvtxPushPopRange = 59;
constexpr int kNvtxDomainCreate = 75;
// CUPTI runtime API event class (ENUM_NSYS_EVENT_CLASS: 1 = CUDA runtime).
constexpr int kEventClassCudaRuntime = 1;

// CUpti_ActivitySynchronizationType (ENUM_CUPTI_SYNC_TYPE): a Sync activity's name is the label.
struct SyncType {
  const char* name;
  const char* label;
};
const SyncType kSyncTypes[] = {{"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"},
                               {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"},
                               {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"},
                               {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"},
                               {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"}};
// The type for a Sync activity's name: nsys's labels, and kineto's cuda_sync names ("Event Sync",
// "Stream Wait Event", "Stream Sync", "Context Sync"), in any case; 0 (unknown) for others.
int64_t sync_type(const std::string& name) {
  std::string n;
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "stream wait event") return 2;
  for (size_t k = 0; k < std::size(kSyncTypes); ++k) {
    std::string label = kSyncTypes[k].label;
    label[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(label[0])));
    if (n == label) return static_cast<int64_t>(k);
  }
  return 0;
}

const char* kSchema = R"sql(
CREATE TABLE StringIds (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    value                       TEXT      NOT NULL
);
CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,
    priority                    INTEGER,
    globalTid                   INTEGER
);
CREATE TABLE PROCESSES (
    globalPid                   INTEGER,
    pid                         INTEGER,
    name                        TEXT
);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,
    utcTime                     TEXT,
    localTime                   TEXT
);
CREATE TABLE ANALYSIS_DETAILS (
    globalVid                   INTEGER   NOT NULL,
    duration                    INTEGER   NOT NULL,
    startTime                   INTEGER   NOT NULL,
    stopTime                    INTEGER   NOT NULL
);
CREATE TABLE EXPORT_META_DATA (
    name                        TEXT      NOT NULL,
    value                       TEXT
);
CREATE TABLE TARGET_INFO_GPU (
    id                          INTEGER   NOT NULL,
    name                        TEXT,
    busLocation                 TEXT,
    isDiscrete                  INTEGER,
    l2CacheSize                 INTEGER,
    totalMemory                 INTEGER,
    memoryBandwidth             INTEGER,
    clockRate                   INTEGER,
    smCount                     INTEGER,
    pwGpuId                     INTEGER,
    uuid                        TEXT,
    luid                        INTEGER,
    chipName                    TEXT,
    cuDevice                    INTEGER,
    computeMajor                INTEGER,
    computeMinor                INTEGER
);
CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,
    end                         INTEGER,
    eventType                   INTEGER   NOT NULL,
    rangeId                     INTEGER,
    category                    INTEGER,
    color                       INTEGER,
    text                        TEXT,
    globalTid                   INTEGER,
    endGlobalTid                INTEGER,
    textId                      INTEGER,
    domainId                    INTEGER,
    uint64Value                 INTEGER,
    int64Value                  INTEGER,
    doubleValue                 REAL,
    uint32Value                 INTEGER,
    int32Value                  INTEGER,
    floatValue                  REAL,
    jsonTextId                  INTEGER,
    jsonText                    TEXT
);
)sql";

const char* kCuptiSchema = R"sql(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    demangledName               INTEGER   NOT NULL,
    shortName                   INTEGER   NOT NULL,
    mangledName                 INTEGER,
    launchType                  INTEGER,
    cacheConfig                 INTEGER,
    registersPerThread          INTEGER   NOT NULL,
    gridX                       INTEGER   NOT NULL,
    gridY                       INTEGER   NOT NULL,
    gridZ                       INTEGER   NOT NULL,
    blockX                      INTEGER   NOT NULL,
    blockY                      INTEGER   NOT NULL,
    blockZ                      INTEGER   NOT NULL,
    staticSharedMemory          INTEGER   NOT NULL,
    dynamicSharedMemory         INTEGER   NOT NULL,
    localMemoryPerThread        INTEGER   NOT NULL,
    localMemoryTotal            INTEGER   NOT NULL,
    gridId                      INTEGER   NOT NULL,
    sharedMemoryExecuted        INTEGER,
    graphNodeId                 INTEGER,
    sharedMemoryLimitConfig     INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    bytes                       INTEGER   NOT NULL,
    copyKind                    INTEGER   NOT NULL,
    deprecatedSrcId             INTEGER,
    srcKind                     INTEGER,
    dstKind                     INTEGER,
    srcDeviceId                 INTEGER,
    srcContextId                INTEGER,
    dstDeviceId                 INTEGER,
    dstContextId                INTEGER,
    migrationCause              INTEGER,
    graphNodeId                 INTEGER,
    virtualAddress              INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    value                       INTEGER   NOT NULL,
    bytes                       INTEGER   NOT NULL,
    graphNodeId                 INTEGER,
    memKind                     INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    syncType                    INTEGER   NOT NULL,
    eventId                     INTEGER   NOT NULL
);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT      NOT NULL,
    label                       TEXT
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    eventClass                  INTEGER   NOT NULL,
    globalTid                   INTEGER,
    correlationId               INTEGER,
    nameId                      INTEGER   NOT NULL,
    returnValue                 INTEGER   NOT NULL,
    callchainId                 INTEGER
);
)sql";

class Db {
 public:
  // A database in memory (SQLite's memdb), written out whole by bytes(); `path` names it in
  // messages.
  explicit Db(const std::string& path) : path_(path) {
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;
    if (sqlite3_open_v2("file:fusebox-export?vfs=memdb", &db_, flags, nullptr) != SQLITE_OK) {
      std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw Error(path + ": cannot create an SQLite database in memory: " + msg);
    }
  }
  // The database as a file's bytes, [data, data + size): valid while the Db is.
  std::pair<const char*, size_t> bytes() {
    sqlite3_int64 size = 0;
    unsigned char* data = sqlite3_serialize(db_, "main", &size, SQLITE_SERIALIZE_NOCOPY);
    if (!data) {  // not contiguous: a copy, freed with the Db
      copy_.reset(sqlite3_serialize(db_, "main", &size, 0));
      data = copy_.get();
    }
    if (!data) throw Error(path_ + ": SQLite: out of memory serializing the database");
    return {reinterpret_cast<const char*>(data), static_cast<size_t>(size)};
  }
  ~Db() {
    for (auto& [sql, st] : stmts_) sqlite3_finalize(st);
    if (db_) sqlite3_close(db_);
  }
  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "?";
      sqlite3_free(err);
      throw Error(path_ + ": SQLite: " + msg);
    }
  }
  // Binds values (int64, double, string or null) and steps a cached statement.
  struct Value {
    enum { Null, Int, Real, Text } type = Null;
    int64_t i = 0;
    double d = 0;
    std::string s;
    Value() = default;
    Value(int64_t v) : type(Int), i(v) {}
    Value(int v) : type(Int), i(v) {}
    Value(uint32_t v) : type(Int), i(v) {}
    Value(uint64_t v) : type(Int), i(static_cast<int64_t>(v)) {}
    Value(double v) : type(Real), d(v) {}
    Value(std::string v) : type(Text), s(std::move(v)) {}
    Value(const char* v) : type(Text), s(v) {}
  };
  void insert(const std::string& sql, const std::vector<Value>& values) {
    sqlite3_stmt*& st = stmts_[sql];
    if (!st && sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      throw Error(path_ + ": SQLite: " + sqlite3_errmsg(db_));
    sqlite3_reset(st);
    for (size_t k = 0; k < values.size(); ++k) {
      int idx = static_cast<int>(k) + 1;
      const Value& v = values[k];
      switch (v.type) {
        case Value::Null: sqlite3_bind_null(st, idx); break;
        case Value::Int: sqlite3_bind_int64(st, idx, v.i); break;
        case Value::Real: sqlite3_bind_double(st, idx, v.d); break;
        case Value::Text: sqlite3_bind_text(st, idx, v.s.c_str(), -1, SQLITE_TRANSIENT); break;
      }
    }
    if (sqlite3_step(st) != SQLITE_DONE) throw Error(path_ + ": SQLite: " + sqlite3_errmsg(db_));
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  std::map<std::string, sqlite3_stmt*> stmts_;
  std::unique_ptr<unsigned char, decltype(&sqlite3_free)> copy_{nullptr, &sqlite3_free};
};

std::string time_text(int64_t utc_ns, bool local) {
  std::time_t t = static_cast<std::time_t>(utc_ns / 1000000000);
  std::tm tm{};
  if (local)
    localtime_r(&t, &tm);
  else
    gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// Writes a recording into the nsys tables, one table kind after the other; StringIds are
// numbered in first-use order.
struct NsysFill {
  using V = Db::Value;
  Db& db;
  const Recording& r;
  int64_t pid = r.pid;
  int64_t global_pid = pid << 24;
  std::map<std::string, int64_t> ids;
  std::map<int32_t, bool> devices;  // every device GPU work ran on

  NsysFill(Db& d, const Recording& rec) : db(d), r(rec) {}
  int64_t sid(const std::string& s) {
    auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    int64_t id = static_cast<int64_t>(ids.size()) + 1;
    ids[s] = id;
    db.insert("INSERT INTO StringIds VALUES (?,?)", {V(id), V(s)});
    return id;
  }
  int64_t gtid(int64_t tid) const { return global_pid | (tid & 0xFFFFFF); }
  int64_t rel(int64_t t) const { return t - r.origin_ns; }
  template <class Write>
  void each(exec::ActivityKind kind, Write&& write) {
    for (const exec::DeviceActivity& a : r.device)
      if (a.kind == kind) write(a);
  }

  void metadata() {
    int64_t last = 0;
    for (const Span& s : r.spans) last = std::max(last, rel(s.end_ns));
    for (const auto& a : r.device) last = std::max(last, rel(a.end_ns));
    const char* meta[][2] = {
        {"EXPORT_PRODUCT_NAME", "fusebox profiler"},
        {"EXPORT_PRODUCT_VERSION", "0.1.0"},
        {"EXPORT_SCHEMA_VERSION", "3.0.0"},
        {"EXPORT_SCHEMA_VERSION_MAJOR", "3"},
        {"EXPORT_SCHEMA_VERSION_MINOR", "0"},
        {"EXPORT_SCHEMA_VERSION_MICRO", "0"},
        {"EXPORT_COMPATIBLE_WITH", "NVIDIA Nsight Systems 2022.4 nsys export --type sqlite"},
        {"EXPORT_PLATFORM", "linux-desktop"}};
    const char* meta_sql = "INSERT INTO EXPORT_META_DATA VALUES (?,?)";
    for (const auto& m : meta) db.insert(meta_sql, {V(m[0]), V(m[1])});
    db.insert(meta_sql, {V("EXPORT_MODEL"), V(r.model)});
    db.insert(meta_sql, {V("EXPORT_CONFIGURATION"), V(r.label)});
    db.insert("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?,?,?)",
              {V(r.origin_utc_ns), V(time_text(r.origin_utc_ns, false)),
               V(time_text(r.origin_utc_ns, true))});
    db.insert("INSERT INTO ANALYSIS_DETAILS VALUES (?,?,?,?)",
              {V(int64_t{0}), V(last), V(int64_t{0}), V(last)});
    db.insert("INSERT INTO PROCESSES VALUES (?,?,?)",
              {V(global_pid), V(pid), V("fusebox " + r.model)});
    for (const auto& [tid, name] : r.thread_names)
      db.insert("INSERT INTO ThreadNames VALUES (?,?,?)", {V(sid(name)), V(0), V(gtid(tid))});
  }

  // NVTX: the domain, the thread names as NVTX saw them, then every range.
  void nvtx() {
    const char* nvtx_sql =
        "INSERT INTO NVTX_EVENTS (start, end, eventType, color, text, globalTid, endGlobalTid, "
        "textId, domainId) VALUES (?,?,?,?,?,?,?,?,?)";
    int64_t first = r.spans.empty() ? 0 : rel(r.spans.front().start_ns);
    db.insert(nvtx_sql, {V(std::min<int64_t>(0, first)), V(), V(kNvtxDomainCreate), V(),
                         V(nvtx_domain_name()), V(gtid(r.main_tid)), V(), V(), V(1)});
    for (const auto& [tid, name] : r.thread_names)
      db.insert(nvtx_sql, {V(std::min<int64_t>(0, first)), V(), V(kNvtxThread), V(), V(name),
                           V(gtid(tid)), V(), V(), V(0)});
    for (const Span& s : r.spans) {
      // Worker spans are not NVTX ranges anyone pushed, and an nsys reader (import_nsys, nsys
      // stats' NVTX summaries) would count them as op ranges a second time: their threads are
      // in ThreadNames, their spans only in trace.json and the window.
      if (s.kind == SpanKind::Worker) continue;
      uint32_t color = s.kind == SpanKind::Run     ? run_color()
                       : s.kind == SpanKind::Stage ? stage_color()
                       : (s.node >= 0 && static_cast<size_t>(s.node) < r.nodes.size())
                           ? op_color(r.nodes[static_cast<size_t>(s.node)].op)
                           : 0xFF7F7F7Fu;
      db.insert(nvtx_sql, {V(rel(s.start_ns)), V(rel(s.end_ns)), V(kNvtxPushPopRange), V(color),
                           V(), V(gtid(s.tid)), V(), V(sid(s.name)), V(1)});
    }
  }

  void kernels() {
    each(exec::ActivityKind::Kernel, [&](const exec::DeviceActivity& a) {
      devices[a.device] = true;
      // demangledName: the full name; shortName: what nsys lists kernels by ("gemm").
      const int64_t name = sid(a.name), short_name = sid(kernel_short_name(a.name));
      db.insert(
          "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
          "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
          {V(rel(a.start_ns)), V(rel(a.end_ns)), V(a.device), V(1), V(a.stream),
           V(a.correlation_id), V(global_pid), V(name), V(short_name), V(), V(0), V(0),
           V(a.registers), V(a.grid[0]), V(a.grid[1]), V(a.grid[2]), V(a.block[0]), V(a.block[1]),
           V(a.block[2]), V(0), V(a.shared_memory), V(0), V(0), V(int64_t{a.correlation_id}), V(),
           V(), V()});
    });
  }

  void copies_and_sets() {
    each(exec::ActivityKind::Memcpy, [&](const exec::DeviceActivity& a) {
      devices[a.device] = true;
      db.insert("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                {V(rel(a.start_ns)), V(rel(a.end_ns)), V(a.device), V(1), V(a.stream),
                 V(a.correlation_id), V(global_pid), V(a.bytes), V(int{a.copy_kind}), V(),
                 V(nsys_memory_kind(a.src_kind)), V(nsys_memory_kind(a.dst_kind)), V(a.device),
                 V(1), V(a.device), V(1), V(), V(), V()});
    });
    each(exec::ActivityKind::Memset, [&](const exec::DeviceActivity& a) {
      devices[a.device] = true;
      db.insert("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                {V(rel(a.start_ns)), V(rel(a.end_ns)), V(a.device), V(1), V(a.stream),
                 V(a.correlation_id), V(global_pid), V(0), V(a.bytes), V(), V()});
    });
  }

  void runtime_calls() {
    const int64_t host_gtid = gtid(r.main_tid);
    each(exec::ActivityKind::Runtime, [&](const exec::DeviceActivity& a) {
      db.insert("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)",
                {V(rel(a.start_ns)), V(rel(a.end_ns)), V(kEventClassCudaRuntime),
                 V(a.thread_id ? gtid(int64_t{a.thread_id}) : host_gtid), V(a.correlation_id),
                 V(sid(a.name)), V(0), V()});
    });
  }

  // Syncs: the synchronisation type from the name; a sync on no stream (a context or event
  // sync) has streamId -1 as CUPTI's uint32, the way nsys writes it.
  void syncs() {
    each(exec::ActivityKind::Sync, [&](const exec::DeviceActivity& a) {
      const int64_t stream = a.stream < 0 ? int64_t{0xFFFFFFFF} : int64_t{a.stream};
      db.insert("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?,?,?,?,?,?,?,?,?)",
                {V(rel(a.start_ns)), V(rel(a.end_ns)), V(a.device), V(1), V(stream),
                 V(a.correlation_id), V(global_pid), V(sync_type(a.name)), V(0)});
    });
    for (size_t k = 0; k < std::size(kSyncTypes); ++k)
      db.insert("INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (?,?,?)",
                {V(static_cast<int64_t>(k)), V(kSyncTypes[k].name), V(kSyncTypes[k].label)});
  }

  // The GPUs as the recording describes them (NULL for what it does not know), else one row per
  // device seen.
  void gpus() {
    auto known = [](auto v) { return v ? V(v) : V(); };
    for (const GpuInfo& g : r.gpus)
      db.insert(
          "INSERT INTO TARGET_INFO_GPU (id, name, totalMemory, memoryBandwidth, smCount, "
          "cuDevice, computeMajor, computeMinor) VALUES (?,?,?,?,?,?,?,?)",
          {V(g.device), V(g.name), known(g.memory_bytes),
           known(static_cast<int64_t>(g.memory_bandwidth_bps)), known(g.sm_count), V(g.device),
           known(g.compute_major), known(g.compute_minor)});
    if (!r.gpus.empty()) return;
    for (const auto& [d, seen] : devices) {
      (void)seen;
      db.insert("INSERT INTO TARGET_INFO_GPU (id, name, cuDevice) VALUES (?,?,?)",
                {V(d), V("GPU " + std::to_string(d)), V(d)});
    }
  }
};

// GPU activity goes one kind after the other (each table's rows, and the StringIds they add, in
// the recording's order of that kind), so a recording read back from this file writes it again.
void fill(Db& db, const Recording& r) {
  NsysFill f(db, r);
  f.metadata();
  f.nvtx();
  f.kernels();
  f.copies_and_sets();
  f.runtime_calls();
  f.syncs();
  f.gpus();
}

}  // namespace

void write_nsys_sqlite(const Recording& r, const std::string& path) {
  std::string bad = check_recording(r);
  if (!bad.empty()) throw Error("cannot export the recording: " + bad);
  // Built in memory, then written as any file we write (write_file_atomically): with no name until
  // it is whole, so no signal, SIGKILL included, leaves a temporary (a named one beside the target
  // did), and the target is replaced only when everything succeeded.
  Db db(path);
  db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;");
  db.exec(kSchema);
  db.exec(kCuptiSchema);
  fill(db, r);
  db.exec("COMMIT;");
  const auto [data, size] = db.bytes();
  write_file_atomically(
      path, [&](std::ostream& out) { out.write(data, static_cast<std::streamsize>(size)); });
}

}  // namespace fusebox::profiler
