// Two recorded traces compared (workbench/trace_compare.h): by name, by category, and the steps'
// noise verdict, on recordings built here and on HTA's compare pair.
#include <gtest/gtest.h>

#include "app/workbench/trace_compare.h"

using namespace fusebox;
using namespace fusebox::workbench;
using exec::ActivityKind;
using exec::DeviceActivity;

namespace {

DeviceActivity kernel(const std::string& name, int64_t s, int64_t e) {
  DeviceActivity a;
  a.kind = ActivityKind::Kernel;
  a.name = name;
  a.start_ns = s;
  a.end_ns = e;
  return a;
}

// `steps` ProfilerStep ranges of `step_ns` each, with one gemm of `gemm_ns` and, when `nccl`,
// an all-reduce of 100 ns in each.
std::shared_ptr<OpenedTrace> trace(int steps, int64_t step_ns, int64_t gemm_ns, bool nccl,
                                   const std::string& extra = "") {
  auto t = std::make_shared<OpenedTrace>();
  t->path = "synthetic";
  profiler::Recording& r = t->recording;
  for (int i = 0; i < steps; ++i) {
    const int64_t t0 = i * 1000000;
    profiler::Span s;
    s.kind = profiler::SpanKind::Range;
    s.name = "ProfilerStep#" + std::to_string(i);
    s.start_ns = t0;
    s.end_ns = t0 + step_ns + (i % 3) * 100;  // a little spread
    r.spans.push_back(s);
    r.device.push_back(kernel("gemm", t0 + 10, t0 + 10 + gemm_ns));
    if (nccl) r.device.push_back(kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", t0 + 10 + gemm_ns, t0 + 110 + gemm_ns));
    if (!extra.empty()) r.device.push_back(kernel(extra, t0 + 500, t0 + 600));
  }
  t->analysis = profiler::analyze_gpu(r);
  return t;
}

const NameDelta& named(const std::vector<NameDelta>& v, const std::string& n) {
  for (const NameDelta& d : v)
    if (d.name == n) return d;
  throw std::runtime_error("no " + n);
}

}  // namespace

TEST(TraceCompare, NamesThatAppearedVanishedOrChangedAndCategoryDeltas) {
  const auto a = trace(10, 50000, 300, true, "old_kernel");
  const auto b = trace(10, 50000, 400, false, "new_kernel");
  const TraceComparison c = compare_traces(*a, *b);
  EXPECT_STREQ(named(c.kernels, "gemm").change(), "slower");
  EXPECT_EQ(named(c.kernels, "gemm").delta_ns(), 1000);
  EXPECT_STREQ(named(c.kernels, "old_kernel").change(), "vanished");
  EXPECT_STREQ(named(c.kernels, "new_kernel").change(), "appeared");
  EXPECT_EQ(c.categories.at(0).category, "compute");
  EXPECT_EQ(c.categories.at(0).ns_a, 10 * (300 + 100));
  EXPECT_EQ(c.categories.at(0).ns_b, 10 * (400 + 100));
  EXPECT_EQ(c.categories.at(1).category, "communication");
  EXPECT_EQ(c.categories.at(1).ns_a, 1000);
  EXPECT_EQ(c.categories.at(1).ns_b, 0);
  // The largest change first.
  EXPECT_GE(std::abs(c.kernels[0].delta_ns()), std::abs(c.kernels[1].delta_ns()));
  const auto j = c.to_json();
  EXPECT_EQ(j["kernels"][0]["delta_ns"].get<int64_t>(), c.kernels[0].delta_ns());
  EXPECT_NE(c.to_text().find("appeared  new_kernel"), std::string::npos) << c.to_text();
}

TEST(TraceCompare, StepsThatMovedAreSlowerStepsThatDidNotAreWithinNoise) {
  const auto a = trace(12, 50000, 300, false);
  const TraceComparison slower = compare_traces(*a, *trace(12, 60000, 300, false));
  ASSERT_TRUE(slower.step_verdict.has_value());
  EXPECT_EQ(slower.step_verdict->verdict, Verdict::Slower);
  const TraceComparison same = compare_traces(*a, *trace(12, 50000, 300, false));
  ASSERT_TRUE(same.step_verdict.has_value());
  EXPECT_EQ(same.step_verdict->verdict, Verdict::WithinNoise);
  const TraceComparison few = compare_traces(*trace(2, 50000, 300, false), *a);
  EXPECT_FALSE(few.step_verdict.has_value());
  EXPECT_NE(few.no_verdict.find("at least 3 ProfilerStep"), std::string::npos);
}

TEST(TraceCompare, HtasComparePairAndWhatCountsAsATrace) {
  const std::string dir = std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/";
  EXPECT_TRUE(is_trace_file(dir + "kineto_trace_compare_base.json.gz"));
  EXPECT_TRUE(is_trace_file(dir + "nsys_a100_cloverleaf.sqlite"));
  const auto a = open_trace(dir + "kineto_trace_compare_base.json.gz");
  const auto b = open_trace(dir + "kineto_trace_compare_test.json.gz");
  const TraceComparison c = compare_traces(*a, *b);
  // Python over the two files: the vectorized_elementwise kernel of CUDAFunctor_add<int> ran 3
  // times (12 us) in base and twice (8 us) in test, the others as often and as long;
  // All2All_Pooled_Req is a host op of test only.
  const NameDelta& k = c.kernels.at(0);
  EXPECT_EQ(k.count_a, 3);
  EXPECT_EQ(k.count_b, 2);
  EXPECT_EQ(k.delta_ns(), -4000);
  EXPECT_STREQ(named(c.ops, "All2All_Pooled_Req").change(), "appeared");
}
