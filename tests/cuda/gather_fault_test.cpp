// The sentence the CUDA backend raises for an out-of-range Gather index found on the device
// (ops/cuda/host/gather_fault.h) is the CPU backend's own, for the same node and index.
#include <gtest/gtest.h>

#include "ops/cuda/host/gather_fault.h"
#include "tests/ops/op_test_util.h"

using namespace fusebox;
using namespace fusebox::cuda;
using namespace fusebox::optest;

namespace {

std::string cpu_error(const Tensor& data, const Tensor& indices, int64_t axis) {
  try {
    run1("Gather", {data, indices}, attrs_of({{"axis", axis}}));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Tensor indices_of(const std::vector<int64_t>& v) {
  Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

TEST(GatherFault, NamesTheIndexAsTheCpuDoes) {
  const Tensor data(DType::f32, {4, 10, 3});
  // make_node names the node test_Gather and its indices input in1 (tests/ops/op_test_util.h).
  const GatherSite site{"node 'test_Gather' (Gather)", "in1", 1, 10};
  const std::string want = cpu_error(data, indices_of({0, 9, -10, 10, -11}), 1);
  ASSERT_FALSE(want.empty()) << "the CPU refuses index 10 on an axis of size 10";
  EXPECT_EQ(gather_index_message(site, 3, 10), want);
  const std::string want_negative = cpu_error(data, indices_of({-11}), 1);
  EXPECT_EQ(gather_index_message(site, 0, -11), want_negative);
}

TEST(GatherFault, SitesAreRegisteredByIdAndForgotten) {
  GatherSites& sites = GatherSites::instance();
  const uint32_t a = sites.add({"node 'g1' (Gather)", "idx", 0, 5});
  const uint32_t b = sites.add({"node 'g2' (Gather)", "ids", 1, 7});
  EXPECT_NE(a, 0u) << "0 means no fault on the device";
  EXPECT_NE(a, b);
  EXPECT_EQ(sites.describe(b, 2, 7),
            "node 'g2' (Gather): input 'ids' element 2 is index 7, out of range for axis 1 of size 7 (valid: -7..6)");
  sites.remove(b);
  EXPECT_NE(sites.describe(b, 2, 7).find("site " + std::to_string(b)), std::string::npos)
      << "a fault of a site no longer prepared is still reported";
  EXPECT_NE(sites.describe(a, 0, 5).find("node 'g1' (Gather)"), std::string::npos);
  sites.remove(a);
}

}  // namespace
