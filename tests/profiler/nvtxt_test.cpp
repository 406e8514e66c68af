#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "core/base/atomic_file.h"
#include "profiler/exporters.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {

// Checks the NVTXT syntax we rely on, line by line, and replays the push/pop stack per thread.
// Returns problems; fills `pushes` with the range names in file order.
std::vector<std::string> check_nvtxt(const std::string& text, std::vector<std::string>& pushes) {
  std::vector<std::string> bad;
  std::istringstream in(text);
  std::string line;
  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> stacks;  // tid -> (time, name)
  std::map<std::string, int64_t> last_time;
  bool declared_push = false, declared_pop = false, time_base = false;
  static const std::regex push_re(R"re(^RangePush, (\d+), (\d+), "([^"\n]*)", 0x[0-9A-F]{8}$)re");
  static const std::regex pop_re(R"re(^RangePop, (\d+), (\d+)$)re");
  static const std::regex assign_re(R"re(^[A-Za-z]+ = [A-Za-z0-9]+$)re");
  static const std::regex name_re(R"re(^(NameProcess, \d+|NameOsThread, \d+, \d+|SetFileDisplayName), "[^"\n]*"$)re");
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string at = "line " + std::to_string(n) + ": ";
    std::smatch m;
    if (line.empty() || line[0] == '#') continue;
    if (line == "@RangePush, Time, ThreadId, Message, Color") { declared_push = true; continue; }
    if (line == "@RangePop, Time, ThreadId") { declared_pop = true; continue; }
    if (std::regex_match(line, assign_re)) {
      if (line.rfind("TimeBase = ", 0) == 0) time_base = true;
      continue;
    }
    if (std::regex_match(line, name_re)) continue;
    if (std::regex_match(line, m, push_re)) {
      if (!declared_push || !time_base) bad.push_back(at + "RangePush before its declaration / TimeBase");
      int64_t t = std::stoll(m[1]);
      if (t < last_time[m[2]]) bad.push_back(at + "time goes back");
      last_time[m[2]] = t;
      stacks[m[2]].push_back({t, m[3]});
      pushes.push_back(m[3]);
      continue;
    }
    if (std::regex_match(line, m, pop_re)) {
      if (!declared_pop) bad.push_back(at + "RangePop before its declaration");
      int64_t t = std::stoll(m[1]);
      if (t < last_time[m[2]]) bad.push_back(at + "time goes back");
      last_time[m[2]] = t;
      if (stacks[m[2]].empty()) bad.push_back(at + "pop without push");
      else stacks[m[2]].pop_back();
      continue;
    }
    bad.push_back(at + "unrecognised: " + line);
  }
  for (const auto& [tid, st] : stacks)
    if (!st.empty()) bad.push_back("thread " + tid + ": " + std::to_string(st.size()) + " ranges never popped");
  return bad;
}

}  // namespace

TEST(Nvtxt, SyntaxNestingAndNames) {
  Recording r = ptest::record("mlp:dims=16-8-4", "none", 2);
  std::vector<std::string> pushes;
  auto bad = check_nvtxt(nvtxt(r), pushes);
  EXPECT_TRUE(bad.empty()) << bad.front();
  // Every span but the worker threads' chunks (left out: a reader would count their ops twice).
  std::vector<std::string> ranges;
  for (const Span& s : r.spans)
    if (s.kind != SpanKind::Worker) ranges.push_back(s.name);
  EXPECT_EQ(pushes, ranges);
  EXPECT_EQ(nvtxt_range_count(r), ranges.size());
  std::string raw = nvtxt(r, NvtxtTimeBase::ClockMonotonicRaw);
  EXPECT_NE(raw.find("TimeBase = ClockMonotonicRaw"), std::string::npos);
  EXPECT_NE(nvtxt(r).find("NameOsThread, " + std::to_string(r.pid) + ", "), std::string::npos);
}

TEST(Nvtxt, ImportNvtxtImportsEveryRange) {
  std::string import = ptest::tool("IMPORT_NVTXT", "ImportNvtxt");
  if (import.empty()) GTEST_SKIP() << "ImportNvtxt not found (run tools/get-nsight-systems.sh, or set IMPORT_NVTXT)";
  std::string dir = ptest::temp_dir("nvtxt");
  for (const char* passes : {"none", "all"}) {
    Recording r = ptest::record("transformer:seq=16,d=32,heads=2,ffn=64", passes, 3);
    std::string nv = dir + "/trace_" + passes + ".nvtxt", rep = dir + "/trace_" + passes + ".nsys-rep";
    write_nvtxt(r, nv);
    std::remove(rep.c_str());
    auto res = ptest::run_command(import + " --cmd create -n " + nv + " -o " + rep);
    EXPECT_EQ(res.status, 0) << res.output;
    EXPECT_EQ(res.output.find("rror"), std::string::npos) << res.output;
    EXPECT_EQ(res.output.find("Incorrect"), std::string::npos) << res.output;
    // Every push and every pop is an event.
    std::string expect = std::to_string(2 * nvtxt_range_count(r)) + " events imported";
    EXPECT_NE(res.output.find(expect), std::string::npos) << "want '" << expect << "' in:\n" << res.output;
  }
}
