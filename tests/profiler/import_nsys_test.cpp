// import_nsys_sqlite: the A100 CloverLeaf export read into a Recording (counts and sums checked
// against what sqlite3 computes from the same file), our own exports read back and written again
// byte for byte, and bad input refused with an error naming the file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/base/error.h"
#include "profiler/exporters.h"
#include "profiler/trace_import.h"
#include "profiler_test_util.h"
#include "sqlite_reader.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {

std::string cloverleaf() {
  return std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/nsys_a100_cloverleaf.sqlite";
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

size_t count(const Recording& r, exec::ActivityKind kind) {
  size_t n = 0;
  for (const auto& a : r.device) n += a.kind == kind;
  return n;
}

// The error import_nsys_sqlite throws for `path` ("" when it does not throw).
std::string import_error(const std::string& path) {
  return ptest::error_of([&] { import_nsys_sqlite(path); });
}

// Export, import, export again: the two files must be the same bytes.
// A hand-made SQLite file `name` in a fresh folder, made by `sql`; "" (and a test failure) where
// SQLite refuses it.
std::string sqlite_file(const std::string& tag, const std::string& name, const char* sql) {
  const std::string path = ptest::temp_dir(tag) + "/" + name;
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  const bool made = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
                    sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  if (!made) ADD_FAILURE() << path << ": " << (db ? sqlite3_errmsg(db) : "cannot open");
  sqlite3_close(db);
  return made ? path : "";
}

void expect_round_trip(const Recording& r, const std::string& tag) {
  std::string dir = ptest::temp_dir("import-nsys-" + tag);
  std::string a = dir + "/a.sqlite", b = dir + "/b.sqlite";
  write_nsys_sqlite(r, a);
  ImportReport report;
  Recording back = import_nsys_sqlite(a, &report);
  EXPECT_EQ(check_recording(back), "");
  EXPECT_EQ(report.skipped, 0u);
  EXPECT_EQ(back.spans.size(), r.spans.size());
  EXPECT_EQ(back.device.size(), r.device.size());
  write_nsys_sqlite(back, b);
  std::string x = bytes_of(a), y = bytes_of(b);
  ASSERT_FALSE(x.empty());
  EXPECT_EQ(x.size(), y.size());
  EXPECT_TRUE(x == y) << a << " and " << b << " differ";
}

// Synthetic GPU activity of every kind after the recording's first span, plus user ranges.
Recording with_every_kind(Recording r) {
  using exec::ActivityKind;
  const int64_t t0 = r.spans.front().start_ns;
  auto make = [&](ActivityKind kind, const char* name, int64_t start, int64_t dur) {
    exec::DeviceActivity a;
    a.kind = kind;
    a.name = name;
    a.start_ns = t0 + start;
    a.end_ns = t0 + start + dur;
    a.stream = 7;
    a.device = 1;
    return a;
  };
  exec::DeviceActivity rt = make(ActivityKind::Runtime, "cudaLaunchKernel", 10, 20);
  rt.correlation_id = 5;
  rt.device = 0;
  rt.stream = 0;
  rt.thread_id = static_cast<uint32_t>(r.main_tid);
  exec::DeviceActivity k =
      make(ActivityKind::Kernel, "void sgemm_kernel<float>(float*, int)", 40, 2000);
  k.correlation_id = 5;
  k.grid[0] = 2, k.grid[1] = 3, k.grid[2] = 1;
  k.block[0] = 256, k.block[1] = 1, k.block[2] = 1;
  k.registers = 32;
  k.shared_memory = 4096;
  exec::DeviceActivity cp = make(ActivityKind::Memcpy, "HtoD", 3000, 500);
  cp.bytes = 1 << 20;
  cp.copy_kind = 1;
  cp.src_kind = exec::kMemoryKindPageable;
  cp.dst_kind = 3;
  cp.correlation_id = 6;
  exec::DeviceActivity ms = make(ActivityKind::Memset, "Memset", 3600, 100);
  ms.bytes = 4096;
  ms.correlation_id = 7;
  exec::DeviceActivity sync = make(ActivityKind::Sync, "Stream sync", 3700, 300);
  sync.correlation_id = 8;
  exec::DeviceActivity ctx = make(ActivityKind::Sync, "Context sync", 4100, 50);
  ctx.stream = -1;
  ctx.correlation_id = 9;
  // Kineto's name for a stream wait: written as nsys's type 2, read back as nsys labels it.
  exec::DeviceActivity wait = make(ActivityKind::Sync, "Stream Wait Event", 4200, 10);
  wait.correlation_id = 10;
  // Interleaved kinds: the file groups them by table, and must still read back to the same file.
  r.device = {rt, k, cp, ms, sync, ctx, wait};
  // A user range around the whole recording on the main thread, one inside it on another thread.
  int64_t last_end = 0;
  for (const Span& s : r.spans) last_end = std::max(last_end, s.end_ns);
  Span outer{.name = "user step",
             .start_ns = t0 - 1000,
             .end_ns = last_end + 1000,
             .run = -1,
             .tid = r.main_tid,
             .node = -1,
             .depth = 0,
             .kind = SpanKind::Range};
  Span other{.name = "loader",
             .start_ns = t0 + 5,
             .end_ns = t0 + 50,
             .run = -1,
             .tid = r.main_tid + 1,
             .node = -1,
             .depth = 0,
             .kind = SpanKind::Range};
  r.spans.insert(r.spans.begin(), outer);
  for (Span& s : r.spans)
    if (&s != &r.spans.front()) ++s.depth;
  auto by_start = [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; };
  r.spans.insert(std::upper_bound(r.spans.begin(), r.spans.end(), other, by_start), other);
  r.thread_names.emplace_back(r.main_tid + 1, "loader thread");
  r.gpus = {GpuInfo{1, "NVIDIA A100-SXM4-80GB", 108, 8, 0, 84990623744ull, 2039040000000.0}};
  return r;
}

}  // namespace

TEST(ImportNsys, CloverleafHasEveryKernelCopyRuntimeCallAndSync) {
  ImportReport report;
  Recording r = import_nsys_sqlite(cloverleaf(), &report);
  EXPECT_EQ(check_recording(r), "");
  EXPECT_EQ(r.source, "nsys");
  EXPECT_EQ(r.model, cloverleaf());
  EXPECT_EQ(report.format, "nsys");
  EXPECT_EQ(report.skipped, 0u);
  EXPECT_EQ(count(r, exec::ActivityKind::Kernel),
            1312u);  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL
  EXPECT_EQ(count(r, exec::ActivityKind::Memcpy),
            279u);  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY
  EXPECT_EQ(count(r, exec::ActivityKind::Runtime),
            3048u);  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME
  EXPECT_EQ(count(r, exec::ActivityKind::Sync),
            1312u);  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
  EXPECT_EQ(count(r, exec::ActivityKind::Memset), 0u);  // no MEMSET table
  EXPECT_TRUE(r.spans.empty());                         // no NVTX_EVENTS table
  EXPECT_EQ(report.events, 1312u + 279u + 3048u + 1312u);
}

TEST(ImportNsys, CloverleafKernelTimeAndCopiedBytesMatchSqlite) {
  Recording r = import_nsys_sqlite(cloverleaf());
  int64_t kernel_ns = 0;
  uint64_t copied = 0;
  for (const auto& a : r.device) {
    if (a.kind == exec::ActivityKind::Kernel) kernel_ns += a.end_ns - a.start_ns;
    if (a.kind == exec::ActivityKind::Memcpy) copied += a.bytes;
  }
  EXPECT_EQ(kernel_ns, 294404540);  // SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL
  EXPECT_EQ(copied, 225116952u);    // SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY
}

// nsys numbers memory kinds from 0 = pageable (ENUM_CUDA_MEM_KIND), CUPTI from 1: CloverLeaf's
// host-to-device copies come from pageable memory (SELECT srcKind, dstKind, copyKind, count(*)
// FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1, 2, 3: 0|2|1|254 and 2|0|2|25).
TEST(ImportNsys, CloverleafCopyMemoryKindsAreReadInNsysNumbering) {
  Recording r = import_nsys_sqlite(cloverleaf());
  size_t htod_pageable = 0, dtoh_to_pageable = 0;
  for (const auto& a : r.device) {
    if (a.kind != exec::ActivityKind::Memcpy) continue;
    htod_pageable += a.name == "HtoD" && a.src_kind == exec::kMemoryKindPageable && a.dst_kind == 3;
    dtoh_to_pageable += a.name == "DtoH" && a.src_kind == 3 && a.dst_kind == exec::kMemoryKindPageable;
  }
  EXPECT_EQ(htod_pageable, 254u);
  EXPECT_EQ(dtoh_to_pageable, 25u);
}

TEST(ImportNsys, CloverleafKernelsHaveNamesGeometryAndTheirLaunchingCall) {
  Recording r = import_nsys_sqlite(cloverleaf());
  std::set<uint32_t> launches;
  for (const auto& a : r.device)
    if (a.kind == exec::ActivityKind::Runtime) {
      EXPECT_FALSE(a.name.empty());
      EXPECT_NE(a.thread_id, 0u);
      launches.insert(a.correlation_id);
    }
  // Every kernel, copy and sync is tied to a runtime call:
  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId IN
  //   (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME)  -> 1312 (likewise 279 copies, 1312
  //   syncs)
  size_t kernels = 0, tied = 0;
  for (const auto& a : r.device) {
    if (a.kind == exec::ActivityKind::Runtime) continue;
    tied += launches.count(a.correlation_id);
    if (a.kind != exec::ActivityKind::Kernel) continue;
    ++kernels;
    EXPECT_FALSE(a.name.empty());
    EXPECT_GT(a.grid[0] * a.grid[1] * a.grid[2], 0);
    EXPECT_GT(a.block[0] * a.block[1] * a.block[2], 0);
    EXPECT_GT(a.registers, 0);
    EXPECT_GE(a.stream, 0);
  }
  EXPECT_EQ(kernels, 1312u);
  EXPECT_EQ(tied, 1312u + 279u + 1312u);
}

TEST(ImportNsys, CloverleafSyncsAndGpusAreNamed) {
  Recording r = import_nsys_sqlite(cloverleaf());
  for (const auto& a : r.device)
    if (a.kind == exec::ActivityKind::Sync) {
      EXPECT_EQ(
          a.name,
          "Event sync");  // SELECT DISTINCT syncType FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> 1
      EXPECT_EQ(a.stream, -1);  // streamId 4294967295
    }
  ASSERT_EQ(r.gpus.size(), 4u);  // SELECT count(*) FROM TARGET_INFO_GPU
  std::set<int32_t> ids;
  for (const GpuInfo& g : r.gpus) {
    EXPECT_EQ(g.name, "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(g.sm_count, 108);
    EXPECT_EQ(g.compute_major, 8);
    EXPECT_EQ(g.compute_minor, 0);
    EXPECT_EQ(g.memory_bytes, 84990623744u);
    EXPECT_EQ(g.memory_bandwidth_bps, 2039040000000.0);
    ids.insert(g.device);
  }
  EXPECT_EQ(ids, (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(r.pid, 1701896);  // the process whose calls were traced (cuda-cloverleaf)
  EXPECT_FALSE(r.thread_names.empty());
}

TEST(ImportNsys, ExportOfARecordedSessionReadsBackToTheSameFile) {
  Recording r = ptest::record("mlp:dims=16-8-4", "none", 3);
  expect_round_trip(r, "session");
  // Stages, runs and ops come back as themselves, ops naming their node.
  std::string path = ptest::temp_dir("import-nsys-kinds") + "/a.sqlite";
  write_nsys_sqlite(r, path);
  Recording back = import_nsys_sqlite(path);
  ASSERT_EQ(back.spans.size(), r.spans.size());
  for (size_t i = 0; i < r.spans.size(); ++i) {
    const Span &want = r.spans[i], &got = back.spans[i];
    EXPECT_EQ(got.kind, want.kind) << want.name;
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.end_ns - got.start_ns, want.end_ns - want.start_ns);
    EXPECT_EQ(got.start_ns, want.start_ns - r.origin_ns);
    EXPECT_EQ(got.tid, want.tid);
    EXPECT_EQ(got.node, want.node) << want.name;
    EXPECT_EQ(got.run, want.run) << want.name;
    EXPECT_EQ(got.depth, want.depth) << want.name;
  }
  EXPECT_EQ(back.model, r.model);
  EXPECT_EQ(back.label, r.label);
  EXPECT_EQ(back.pid, r.pid);
  EXPECT_EQ(back.main_tid, r.main_tid);
  EXPECT_EQ(back.thread_names, r.thread_names);
  EXPECT_EQ(back.origin_utc_ns, r.origin_utc_ns);
}

TEST(ImportNsys, ExportWithEveryDeviceActivityKindAndRangesReadsBackToTheSameFile) {
  Recording r = with_every_kind(ptest::record("mlp:dims=16-8-4", "none", 2));
  ASSERT_EQ(check_recording(r), "");
  expect_round_trip(r, "every-kind");
  std::string path = ptest::temp_dir("import-nsys-every") + "/a.sqlite";
  write_nsys_sqlite(r, path);
  ptest::Sql db(path);
  // CUPTI's pageable (1) and device (3) are nsys's 0 and 2 (ENUM_CUDA_MEM_KIND).
  EXPECT_EQ(db.one("SELECT srcKind || ',' || dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"), "0,2");
  EXPECT_EQ(db.one("SELECT group_concat(syncType || ':' || streamId) FROM "
                   "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
            "3:7,4:4294967295,2:7");
  EXPECT_EQ(db.one("SELECT name || ',' || smCount || ',' || computeMajor FROM TARGET_INFO_GPU"),
            "NVIDIA A100-SXM4-80GB,108,8");
  Recording back = import_nsys_sqlite(path);
  std::map<exec::ActivityKind, const exec::DeviceActivity*> got;
  for (const auto& a : back.device) got.emplace(a.kind, &a);
  for (const auto& want : r.device) {
    ASSERT_TRUE(got.count(want.kind)) << want.name;
    const exec::DeviceActivity& a = *got[want.kind];
    if (want.kind == exec::ActivityKind::Sync && want.correlation_id != 8)
      continue;  // the others: by SQL above
    EXPECT_EQ(a.name, want.name);
    EXPECT_EQ(a.start_ns, want.start_ns - r.origin_ns);
    EXPECT_EQ(a.end_ns, want.end_ns - r.origin_ns);
    EXPECT_EQ(a.correlation_id, want.correlation_id);
    EXPECT_EQ(a.bytes, want.bytes);
    EXPECT_EQ(a.src_kind, want.src_kind);
    EXPECT_EQ(a.dst_kind, want.dst_kind);
    EXPECT_EQ(a.registers, want.registers);
    EXPECT_EQ(a.shared_memory, want.shared_memory);
    if (want.kind != exec::ActivityKind::Runtime) {
      EXPECT_EQ(a.device, want.device);
      EXPECT_EQ(a.stream, want.stream);
    } else {
      EXPECT_EQ(a.thread_id, want.thread_id);
    }
  }
  EXPECT_EQ(back.device.back().name, "Stream wait sync");
  size_t ranges = 0;
  for (const Span& s : back.spans) ranges += s.kind == SpanKind::Range;
  EXPECT_EQ(ranges, 2u);
  EXPECT_EQ(back.spans.front().name, "user step");
  EXPECT_EQ(back.spans.front().depth, 0);
  ASSERT_EQ(back.gpus.size(), 1u);
  EXPECT_EQ(back.gpus[0].memory_bytes, 84990623744u);
  EXPECT_EQ(back.gpus[0].memory_bandwidth_bps, 2039040000000.0);
}

TEST(ImportNsys, AFileThatIsNotSqliteIsRefusedByName) {
  std::string path = ptest::temp_dir("import-nsys-bad") + "/not.sqlite";
  write_bytes(path, "this is not a database, just some text that is long enough\n");
  std::string err = import_error(path);
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("not an SQLite file"), std::string::npos) << err;
}

TEST(ImportNsys, ATruncatedExportIsRefusedWithSqlitesMessage) {
  std::string path = ptest::temp_dir("import-nsys-trunc") + "/truncated.sqlite";
  write_bytes(path, bytes_of(cloverleaf()).substr(0, 64 * 1024));
  std::string err = import_error(path);
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("SQLite"), std::string::npos) << err;
}

TEST(ImportNsys, AnSqliteFileWithoutCuptiOrNvtxTablesIsNotAnNsysExport) {
  std::string path = ptest::temp_dir("import-nsys-other") + "/other.sqlite";
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('bread');",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(import_error(path),
            path + ": an SQLite file without CUPTI or NVTX tables (not an nsys export)");
}

TEST(ImportNsys, RowsEndingBeforeTheyStartAreSkippedAndCounted) {
  Recording r = with_every_kind(ptest::record("mlp:dims=16-8-4", "none", 1));
  std::string path = ptest::temp_dir("import-nsys-neg") + "/neg.sqlite";
  write_nsys_sqlite(r, path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ImportReport report;
  Recording back = import_nsys_sqlite(path, &report);
  EXPECT_EQ(check_recording(back), "");
  EXPECT_EQ(count(back, exec::ActivityKind::Kernel), 0u);
  EXPECT_EQ(back.device.size(), r.device.size() - 1);
  EXPECT_EQ(report.skipped, 1u);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("1 kernel rows ending before they start"), std::string::npos)
      << report.warnings[0];
}

TEST(ImportNsys, AFifoIsRefusedAtOnceWithoutWaitingForAWriter) {
  std::string path = ptest::temp_dir("import-nsys-fifo") + "/trace.sqlite";
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  auto t0 = std::chrono::steady_clock::now();
  std::string err = import_error(path);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
  std::remove(path.c_str());
}

TEST(ImportNsys, ADirectoryOrAMissingFileIsRefusedByName) {
  std::string dir = ptest::temp_dir("import-nsys-dir");
  std::string err = import_error(dir);
  EXPECT_NE(err.find(dir), std::string::npos) << err;
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
  std::string missing = dir + "/missing.sqlite";
  err = import_error(missing);
  EXPECT_NE(err.find(missing), std::string::npos) << err;
}

// A hand-made export in an older layout: NVTX_EVENTS with textId only (no text column), kernels
// with shortName only, no StringIds for one range; push/pop and start/end ranges from another
// domain, nested, one overlapping its neighbour.
TEST(ImportNsys, AnOlderSchemaIsReadThroughTheColumnsItHas) {
  const std::string path = sqlite_file("import-nsys-old", "old.sqlite", R"sql(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES (1, 'step'), (2, 'forward'), (3, 'axpy'), (4, 'cudaLaunchKernel'), (5, 'async');
    CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, textId INTEGER, globalTid INTEGER);
    INSERT INTO NVTX_EVENTS VALUES (100, 900, 59, 1, (42 << 24) | 43), (200, 400, 59, 2, (42 << 24) | 43),
                                   (300, 1000, 60, 5, (42 << 24) | 43), (150, 160, 34, 1, (42 << 24) | 43);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
                                             correlationId INTEGER, shortName INTEGER, gridX INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (500, 700, 0, 13, 9, 3, 4);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, correlationId INTEGER,
                                              nameId INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (250, 260, (42 << 24) | 43, 9, 4);
  )sql");
  ASSERT_NE(path, "");
  ImportReport report;
  Recording r = import_nsys_sqlite(path, &report);
  EXPECT_EQ(check_recording(r), "");
  EXPECT_EQ(r.pid, 42);
  EXPECT_EQ(r.main_tid, 42);  // no NVTX domain row: the process's main thread
  ASSERT_EQ(r.spans.size(), 2u);
  EXPECT_EQ(r.spans[0].name, "step");
  EXPECT_EQ(r.spans[0].kind, SpanKind::Range);
  EXPECT_EQ(r.spans[0].tid, 43);
  EXPECT_EQ(r.spans[1].name, "forward");
  EXPECT_EQ(r.spans[1].depth, 1);
  // "async" (300..1000) overlaps "step" (100..900) without nesting in it: skipped and counted.
  EXPECT_EQ(report.skipped, 1u);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("overlapping"), std::string::npos) << report.warnings[0];
  ASSERT_EQ(r.device.size(), 2u);
  EXPECT_EQ(r.device[0].name, "axpy");
  EXPECT_EQ(r.device[0].stream, 13);
  EXPECT_EQ(r.device[0].grid[0], 4);
  EXPECT_EQ(r.device[0].block[0], 0);  // no blockX column
  EXPECT_EQ(r.device[1].name, "cudaLaunchKernel");
  EXPECT_EQ(r.device[1].thread_id, 43u);
  EXPECT_EQ(r.device[1].correlation_id, r.device[0].correlation_id);
}

// CUPTI numbers correlation ids per process and nsys stores them in 64 bits. Two processes that
// both used id 5, and an id past 2^32 (cut to 5 it was, too): each kernel is tied to its own
// process's call, 20 ns before it, not to another's.
TEST(ImportNsys, CorrelationIdsAreTiedWithinTheirProcessAndNeverCutTo32Bits) {
  const std::string path = sqlite_file("import-nsys-corr", "corr.sqlite", R"sql(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
                                             correlationId INTEGER, shortName INTEGER, globalPid INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (120, 130, 0, 7, 5, 1, 42 << 24),
                                                  (1020, 1030, 1, 7, 5, 1, 77 << 24),
                                                  (2020, 2030, 0, 7, (1 << 32) + 5, 1, 42 << 24);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, correlationId INTEGER,
                                              nameId INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 105, (42 << 24) | 43, 5, 2),
                                                   (1000, 1005, (77 << 24) | 78, 5, 2),
                                                   (2000, 2005, (42 << 24) | 43, (1 << 32) + 5, 2);
  )sql");
  ASSERT_NE(path, "");
  ImportReport report;
  Recording r = import_nsys_sqlite(path, &report);
  EXPECT_EQ(check_recording(r), "");
  std::map<uint32_t, int64_t> call_start;
  for (const auto& a : r.device)
    if (a.kind == exec::ActivityKind::Runtime) call_start[a.correlation_id] = a.start_ns;
  ASSERT_EQ(call_start.size(), 3u) << "three calls, three ids";
  size_t kernels = 0;
  for (const auto& a : r.device) {
    if (a.kind != exec::ActivityKind::Kernel) continue;
    ++kernels;
    ASSERT_TRUE(call_start.count(a.correlation_id)) << a.start_ns;
    EXPECT_EQ(a.start_ns - call_start[a.correlation_id], 20) << a.start_ns;
  }
  EXPECT_EQ(kernels, 3u);
  bool said = false;
  for (const std::string& w : report.warnings)
    said = said || w.find("1 correlation id used by several processes") != std::string::npos;
  EXPECT_TRUE(said);
}
