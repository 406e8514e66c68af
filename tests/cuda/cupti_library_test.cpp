// Where the CUDA plugin looks for CUPTI, which it dlopens when a run is recorded
// (ops/cuda/host/cupti_library.h): a toolkit whose CUPTI is only under extras/CUPTI is found from
// where cuBLAS was loaded, in both the lib64 and the targets/<arch>/lib layouts.
#include <gtest/gtest.h>

#include <algorithm>

#include "ops/cuda/host/cupti_library.h"

using namespace fusebox::cuda;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(CuptiLibrary, SonameFollowsTheRuntimeMajorVersion) {
  EXPECT_EQ(cupti_soname(13000), "libcupti.so.13");
  EXPECT_EQ(cupti_soname(12080), "libcupti.so.12");
}

TEST(CuptiLibrary, LooksBesideCublasAndInItsToolkitsExtras) {
  const auto c = cupti_library_candidates("libcupti.so.13", "/opt/cuda-13.0/lib64", "");
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.front(), "libcupti.so.13") << "the loader's own search first";
  EXPECT_TRUE(has(c, "/opt/cuda-13.0/lib64/libcupti.so.13"));
  EXPECT_TRUE(has(c, "/opt/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_TRUE(has(c, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"));
}

TEST(CuptiLibrary, FindsExtrasFromTheTargetsLayout) {
  const auto c = cupti_library_candidates("libcupti.so.13", "/usr/local/cuda-13.0/targets/x86_64-linux/lib/", "");
  EXPECT_TRUE(has(c, "/usr/local/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_TRUE(has(c, "/usr/local/cuda-13.0/targets/x86_64-linux/extras/CUPTI/lib64/libcupti.so.13"));
}

TEST(CuptiLibrary, CudaHomeIsTriedAndNothingTwice) {
  const auto c = cupti_library_candidates("libcupti.so.13", "", "/usr/local/cuda");
  EXPECT_TRUE(has(c, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_TRUE(has(c, "/usr/local/cuda/lib64/libcupti.so.13"));
  for (size_t i = 0; i < c.size(); ++i)
    for (size_t j = i + 1; j < c.size(); ++j) EXPECT_NE(c[i], c[j]);
}

}  // namespace
