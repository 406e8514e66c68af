// The CUPTI collector's store (ops/cuda/host/activity_store.h) fed with records built here, as
// CUPTI's buffers would hand them over: a cuBLAS kernel launched through the driver API
// (cuLaunchKernelEx) lands on its op through the driver record's external correlation, runtime
// launches still do, records of other tools' correlation kinds are ignored, malformed records are
// counted, not thrown, and the store stops growing at its bound.
#include <gtest/gtest.h>

#ifdef FUSEBOX_HAVE_CUPTI_HEADERS
#include <string>
#include <vector>

#include "ops/cuda/host/activity_store.h"

using namespace fusebox;
using namespace fusebox::cuda;

namespace {

const CuptiClock kClock{1'000'000, 0};

CUpti_ActivityKernel10 kernel(uint32_t correlation, uint64_t start, const char* name = "gemm_kernel") {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.start = start;
  k.end = start + 100;
  k.correlationId = correlation;
  k.gridX = k.gridY = k.gridZ = 1;
  k.blockX = 128, k.blockY = k.blockZ = 1;
  return k;
}

CUpti_ActivityAPI api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t correlation, uint64_t start) {
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = static_cast<CUpti_CallbackId>(cbid);
  a.start = start;
  a.end = start + 50;
  a.correlationId = correlation;
  a.threadId = 7;
  return a;
}

CUpti_ActivityExternalCorrelation external(uint32_t correlation, uint64_t id,
                                           CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
  CUpti_ActivityExternalCorrelation e{};
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = kind;
  e.externalId = id;
  e.correlationId = correlation;
  return e;
}

template <typename R>
const CUpti_Activity& as_record(const R& r) {
  return reinterpret_cast<const CUpti_Activity&>(r);
}

// Names as cuptiGetCallbackName would give them, by domain.
std::string names(CUpti_ActivityKind kind, uint32_t cbid) {
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER && cbid == 1) return "cuLaunchKernelEx";
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME && cbid == 2) return "cudaLaunchKernel_v7000";
  return "";
}

const exec::DeviceActivity* find(const std::vector<exec::DeviceActivity>& a, exec::ActivityKind kind,
                                 uint32_t correlation) {
  for (const auto& x : a)
    if (x.kind == kind && x.correlation_id == correlation) return &x;
  return nullptr;
}

TEST(ActivityStore, DriverApiLaunchesLandOnTheirOpLikeRuntimeOnes) {
  ActivityStore s;
  s.set_clock(kClock);
  // Op 4 (external id 5): a cuBLAS GEMM, launched through the driver API.
  s.add(as_record(external(10, 5)), names);
  s.add(as_record(api(CUPTI_ACTIVITY_KIND_DRIVER, 1, 10, 1'000'100)), names);
  // Op 6 (external id 7): our own kernel, through the runtime API.
  s.add(as_record(external(11, 7)), names);
  s.add(as_record(api(CUPTI_ACTIVITY_KIND_RUNTIME, 2, 11, 1'000'300)), names);
  // The kernels arrive in another buffer, later.
  s.add(as_record(kernel(11, 1'000'900, "relu_kernel")), names);
  s.add(as_record(kernel(10, 1'000'500)), names);
  // A kernel launched outside any op (no external correlation).
  s.add(as_record(kernel(12, 1'001'000, "copy_kernel")), names);
  const TakenActivity t = s.take();
  EXPECT_EQ(t.dropped, 0u);
  ASSERT_EQ(t.activity.size(), 5u);

  const exec::DeviceActivity* gemm = find(t.activity, exec::ActivityKind::Kernel, 10);
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->node_index, 4) << "a kernel launched through cuLaunchKernelEx is tied to its op";
  const exec::DeviceActivity* driver = find(t.activity, exec::ActivityKind::Runtime, 10);
  ASSERT_TRUE(driver);
  EXPECT_EQ(driver->name, "cuLaunchKernelEx") << "named from the driver API's domain";
  EXPECT_EQ(driver->node_index, 4);
  const exec::DeviceActivity* relu = find(t.activity, exec::ActivityKind::Kernel, 11);
  ASSERT_TRUE(relu);
  EXPECT_EQ(relu->node_index, 6);
  const exec::DeviceActivity* runtime = find(t.activity, exec::ActivityKind::Runtime, 11);
  ASSERT_TRUE(runtime);
  EXPECT_EQ(runtime->name, "cudaLaunchKernel");
  EXPECT_EQ(find(t.activity, exec::ActivityKind::Kernel, 12)->node_index, -1);
  for (size_t i = 1; i < t.activity.size(); ++i)
    EXPECT_LE(t.activity[i - 1].start_ns, t.activity[i].start_ns) << "sorted by start";
  EXPECT_EQ(s.pending(), 0u) << "take empties the store";
  EXPECT_TRUE(s.take().activity.empty());
}

TEST(ActivityStore, OtherCorrelationKindsAndUnnamedCallsDoNotMisattribute) {
  ActivityStore s;
  s.set_clock(kClock);
  // Another tool's correlation (e.g. a framework's OPENACC kind) for the same call is ignored.
  s.add(as_record(external(20, 99, CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC)), names);
  s.add(as_record(api(CUPTI_ACTIVITY_KIND_DRIVER, 42, 20, 1'000'000)), names);
  s.add(as_record(kernel(20, 1'000'100)), names);
  const TakenActivity t = s.take();
  ASSERT_EQ(t.activity.size(), 2u);
  EXPECT_EQ(find(t.activity, exec::ActivityKind::Kernel, 20)->node_index, -1);
  EXPECT_EQ(find(t.activity, exec::ActivityKind::Runtime, 20)->name, "cuDriver_42")
      << "a callback id CUPTI cannot name keeps its number and domain";
}

TEST(ActivityStore, MalformedRecordsAreCountedNotThrown) {
  ActivityStore s;
  s.set_clock(kClock);
  CUpti_ActivityKernel10 backwards = kernel(1, 1'000'500);
  backwards.end = backwards.start - 1;
  EXPECT_NO_THROW(s.add(as_record(backwards), names));
  CUpti_ActivityKernel10 unnamed = kernel(2, 1'000'500);
  unnamed.name = nullptr;
  EXPECT_NO_THROW(s.add(as_record(unnamed), names));
  s.add(as_record(kernel(3, 1'000'600)), names);
  s.add_dropped(4);  // what CUPTI says it dropped
  const TakenActivity t = s.take();
  EXPECT_EQ(t.activity.size(), 1u);
  EXPECT_EQ(t.dropped, 6u);
  EXPECT_EQ(s.take().dropped, 0u) << "counted once";
}

TEST(ActivityStore, StopsGrowingAtItsBound) {
  ActivityStore s(4);
  s.set_clock(kClock);
  s.add(as_record(external(1, 1)), names);
  for (uint32_t i = 0; i < 10; ++i) s.add(as_record(kernel(100 + i, 1'000'000 + 10 * i)), names);
  EXPECT_EQ(s.pending(), 4u);
  const TakenActivity t = s.take();
  EXPECT_EQ(t.activity.size(), 3u) << "the correlation counts against the bound too";
  EXPECT_EQ(t.dropped, 7u);
  s.add(as_record(kernel(200, 1'002'000)), names);
  EXPECT_EQ(s.take().activity.size(), 1u) << "room again once taken";
  s.add(as_record(kernel(201, 1'002'000)), names);
  s.clear();
  EXPECT_EQ(s.pending(), 0u);
}

}  // namespace
#endif  // FUSEBOX_HAVE_CUPTI_HEADERS
