#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/base/error.h"
#include "profiler/exporters.h"
#include "profiler/nvtx.h"
#include "profiler_test_util.h"
#include "sqlite_reader.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {

using ptest::Sql;

std::map<std::string, std::pair<double, int64_t>> totals_by_name(const Recording& r) {
  std::map<std::string, std::pair<double, int64_t>> t;
  for (const Span& s : r.spans) {
    auto& e = t[std::string(nvtx_domain_name()) + ":" + s.name];
    e.first += static_cast<double>(s.end_ns - s.start_ns);
    e.second += 1;
  }
  return t;
}

}  // namespace

TEST(NsysSqlite, SchemaAndContents) {
  Recording r = ptest::record("mlp:dims=16-8-4", "none", 2);
  std::string path = ptest::temp_dir("sqlite") + "/trace.sqlite";
  write_nsys_sqlite(r, path);
  Sql db(path);
  for (const char* t : {"StringIds", "ThreadNames", "PROCESSES", "NVTX_EVENTS", "TARGET_INFO_SESSION_START_TIME",
                        "TARGET_INFO_GPU", "EXPORT_META_DATA", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                        "CUPTI_ACTIVITY_KIND_RUNTIME"})
    EXPECT_EQ(db.one(std::string("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='") + t + "'"), "1") << t;
  // Columns nsys stats and scripts read.
  db.rows("SELECT start, end, eventType, rangeId, category, color, text, globalTid, endGlobalTid, textId, domainId, "
          "uint64Value, int64Value, doubleValue, uint32Value, int32Value, floatValue, jsonTextId, jsonText FROM NVTX_EVENTS");
  db.rows("SELECT start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName, gridX, "
          "gridY, gridZ, blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL");
  db.rows("SELECT start, end, eventClass, globalTid, correlationId, nameId, returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME");
  db.rows("SELECT start, end, deviceId, streamId, bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY");
  // Domain row, ranges with names through StringIds, in the domain, on globalTid = pid<<24|tid.
  EXPECT_EQ(db.one("SELECT text FROM NVTX_EVENTS WHERE eventType = 75"), "fusebox");
  EXPECT_EQ(db.one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59"), std::to_string(r.spans.size()));
  EXPECT_EQ(db.one("SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId WHERE eventType = 59 AND domainId = 1"),
            std::to_string(r.spans.size()));
  int64_t gtid = (int64_t{r.pid} << 24) | r.main_tid;
  EXPECT_EQ(db.one("SELECT DISTINCT globalTid FROM NVTX_EVENTS WHERE eventType = 59"), std::to_string(gtid));
  EXPECT_EQ(db.one("SELECT pid FROM PROCESSES"), std::to_string(r.pid));
  EXPECT_EQ(db.one("SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId"), "fusebox main");
  // Times are ns from session start: the first stage begins right after the recorder was made.
  int64_t first = std::stoll(db.one("SELECT min(start) FROM NVTX_EVENTS WHERE eventType = 59"));
  EXPECT_GE(first, 0);
  EXPECT_EQ(first, r.spans.front().start_ns - r.origin_ns);
  EXPECT_EQ(db.one("SELECT value FROM EXPORT_META_DATA WHERE name = 'EXPORT_SCHEMA_VERSION'"), "3.0.0");
  EXPECT_FALSE(db.one("SELECT utcTime FROM TARGET_INFO_SESSION_START_TIME").empty());
  // Per-range totals as nvtxsum computes them.
  auto want = totals_by_name(r);
  auto got = db.rows("SELECT 'fusebox:' || s.value, sum(e.end - e.start), count(*) FROM NVTX_EVENTS e JOIN StringIds s ON "
                     "s.id = e.textId WHERE e.eventType = 59 GROUP BY 1");
  ASSERT_EQ(got.size(), want.size());
  for (const auto& row : got) {
    ASSERT_TRUE(want.count(row[0])) << row[0];
    EXPECT_EQ(std::stod(row[1]), want[row[0]].first) << row[0];
    EXPECT_EQ(std::stoll(row[2]), want[row[0]].second) << row[0];
  }
}

TEST(NsysSqlite, GpuRecordsFillCuptiTables) {
  Recording r = ptest::record("mlp:dims=16-8-4", "none", 1);
  exec::DeviceActivity k;
  k.kind = exec::ActivityKind::Kernel;
  k.name = "sgemm_kernel";
  k.start_ns = r.origin_ns + 1000;
  k.end_ns = r.origin_ns + 3000;
  k.stream = 7;
  k.correlation_id = 5;
  k.grid[0] = 2; k.grid[1] = 1; k.grid[2] = 1;
  k.block[0] = 256; k.block[1] = 1; k.block[2] = 1;
  exec::DeviceActivity rt = k;
  rt.kind = exec::ActivityKind::Runtime;
  rt.name = "cudaLaunchKernel";
  rt.end_ns = k.start_ns + 100;
  exec::DeviceActivity cp = k;
  cp.kind = exec::ActivityKind::Memcpy;
  cp.name = "DtoH";
  cp.bytes = 4096;
  cp.copy_kind = 2;
  r.device = {rt, k, cp};
  std::string path = ptest::temp_dir("sqlite-gpu") + "/trace.sqlite";
  write_nsys_sqlite(r, path);
  Sql db(path);
  EXPECT_EQ(db.one("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"), "sgemm_kernel");
  EXPECT_EQ(db.one("SELECT end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"), "2000");
  EXPECT_EQ(db.one("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL"), "1000");
  EXPECT_EQ(db.one("SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME k JOIN StringIds s ON s.id = k.nameId"), "cudaLaunchKernel");
  EXPECT_EQ(db.one("SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"), "4096");
  EXPECT_EQ(db.one("SELECT count(*) FROM TARGET_INFO_GPU"), "1");
}

TEST(NsysSqlite, NsysStatsNvtxsumMatchesRecording) {
  std::string nsys = ptest::tool("NSYS", "nsys");
  if (nsys.empty()) GTEST_SKIP() << "nsys not found (run tools/get-nsight-systems.sh, or set NSYS)";
  std::string dir = ptest::temp_dir("nsys");
  for (const char* passes : {"none", "all"}) {
    Recording r = ptest::record("transformer:seq=16,d=32,heads=2,ffn=64", passes, 5);
    std::string path = dir + "/trace_" + passes + ".sqlite";
    write_nsys_sqlite(r, path);
    for (const char* report : {"nvtxsum", "nvtxppsum"}) {
      auto res = ptest::run_command(nsys + " stats --report " + report + " --format csv --force-export=false " + path);
      ASSERT_EQ(res.status, 0) << res.output;
      auto want = totals_by_name(r);
      size_t matched = 0;
      std::istringstream in(res.output);
      std::string line;
      while (std::getline(in, line)) {
        // "Time (%)","Total Time (ns)","Instances",...,"Range" (nvtxsum has a Style column before Range)
        if (line.empty() || (line[0] != '"' && !std::isdigit(static_cast<unsigned char>(line[0])))) continue;
        std::vector<std::string> cols;
        std::string cell;
        bool q = false;
        for (char c : line) {
          if (c == '"') q = !q;
          else if (c == ',' && !q) cols.push_back(cell), cell.clear();
          else cell += c;
        }
        cols.push_back(cell);
        if (cols.size() < 3 || !want.count(cols.back())) continue;
        double total = std::stod(cols[1]);
        const auto& w = want[cols.back()];
        EXPECT_NEAR(total, w.first, 0.01 * w.first + 1) << report << " " << cols.back();
        EXPECT_EQ(std::stoll(cols[2]), w.second) << report << " " << cols.back();
        ++matched;
      }
      EXPECT_EQ(matched, want.size()) << report << " output:\n" << res.output.substr(0, 2000);
    }
  }
}

// A full disk while the database is written (here: a file-size limit, EFBIG) is reported by the
// target's name, not the temporary file's, and the old target stays.
TEST(NsysSqlite, AFullDiskNamesTheTarget) {
  Recording r = ptest::record("mlp:dims=16-8-4", "none", 2);
  std::string dir = ptest::temp_dir("sqlite-full");
  std::string path = dir + "/trace.sqlite";
  write_nsys_sqlite(r, path);
  const auto old_size = std::filesystem::file_size(path);
  std::string msg;
  {
    auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
    rlimit old{};
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit small = old;
    small.rlim_cur = 8192;
    ::setrlimit(RLIMIT_FSIZE, &small);
    try {
      write_nsys_sqlite(r, path);
    } catch (const Error& e) {
      msg = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, old_handler);
  }
  EXPECT_EQ(msg.rfind("cannot write '" + path + "'", 0), 0u) << msg;
  EXPECT_EQ(std::filesystem::file_size(path), old_size);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u) << "no temporary file left behind";
  std::filesystem::remove_all(dir);
}
