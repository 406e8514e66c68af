// CorrelationIndex against a plain reading: for every id, the first runtime record carrying it,
// in both of its forms (a table by id when ids are dense, a hash map when they are scattered).
#include "profiler/correlation.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/profiler/device_records.h"

using namespace fusebox;
using namespace fusebox::profiler;
using exec::DeviceActivity;
using ptest::call;
using ptest::kernel;

namespace {

// The reference: the first runtime record with id `id`, by a scan.
const DeviceActivity* first_call(const std::vector<DeviceActivity>& dev, uint32_t id) {
  if (id == 0) return nullptr;
  for (const DeviceActivity& x : dev)
    if (x.kind == exec::ActivityKind::Runtime && x.correlation_id == id) return &x;
  return nullptr;
}

void expect_as_scan(const std::vector<DeviceActivity>& dev, const std::vector<uint32_t>& ids) {
  const CorrelationIndex index(dev);
  for (uint32_t id : ids) EXPECT_EQ(index.call(id), first_call(dev, id)) << "id " << id;
  for (const DeviceActivity& x : dev)
    EXPECT_EQ(index.launch_of(x), first_call(dev, x.correlation_id)) << x.name;
}

}  // namespace

TEST(CorrelationIndex, DenseIdsNameTheirFirstCall) {
  std::vector<DeviceActivity> dev;
  for (uint32_t i = 1; i <= 5000; ++i) {
    dev.push_back(call("cudaLaunchKernel", 10 * i, 10 * i + 4, i));
    dev.push_back(kernel("k", 10 * i + 6, 10 * i + 9, i));
  }
  dev.push_back(call("cudaLaunchKernel", 1, 2, 7));  // a repeat: the first one stays
  dev.push_back(call("cudaDeviceSynchronize", 3, 4, 0));
  dev.push_back(kernel("orphan", 5, 6, 9000));  // no call with its id
  expect_as_scan(dev, {0, 1, 7, 4999, 5000, 5001, 9000, UINT32_MAX});
}

TEST(CorrelationIndex, ScatteredIdsUseTheMapAndAgree) {
  std::vector<DeviceActivity> dev;
  const uint32_t ids[] = {3000000000u, 17, 4000000000u, UINT32_MAX, 123456789};
  for (uint32_t id : ids) {
    dev.push_back(call("hipLaunchKernel", 100, 110, id));
    dev.push_back(kernel("k", 120, 130, id));
  }
  dev.push_back(call("hipLaunchKernel", 1, 2, 17));
  expect_as_scan(dev, {0, 1, 17, 3000000000u, 4000000000u, UINT32_MAX, 123456789, 999});
}

TEST(CorrelationIndex, NoCallsNamesNothing) {
  const std::vector<DeviceActivity> dev = {kernel("k", 1, 2, 5)};
  const CorrelationIndex index(dev);
  EXPECT_EQ(index.call(5), nullptr);
  EXPECT_EQ(index.launch_of(dev[0]), nullptr);
}
