// The `precision` setting as the CUDA backend reads it (ops/cuda/host/gemm_precision.h): which
// cuBLAS compute type the MatMul family asks for, checked without a GPU.
#include "ops/cuda/host/gemm_precision.h"

#include <gtest/gtest.h>

#include "core/base/error.h"

using namespace fusebox::cuda;

namespace {

TEST(GemmPrecision, NamesRoundTrip) {
  for (const std::string& name : gemm_precision_names())
    EXPECT_EQ(gemm_precision_name(parse_gemm_precision(name)), name);
  EXPECT_EQ(gemm_precision_names(), (std::vector<std::string>{"fp32", "tf32"}));
}

TEST(GemmPrecision, UnknownNameIsRefusedNamingTheValidOnes) {
  try {
    parse_gemm_precision("fp16");
    ADD_FAILURE() << "fp16 was accepted";
  } catch (const fusebox::Error& e) {
    EXPECT_STREQ(e.what(), "unknown precision 'fp16' (valid: fp32, tf32)");
  }
  EXPECT_THROW(parse_gemm_precision("TF32"), fusebox::Error);  // names are lower case, as the setting's
}

TEST(GemmPrecision, Tf32OnlyWhenAskedAndTheTensorCoresHaveIt) {
  for (int sm : {8, 9, 10, 12}) {
    EXPECT_EQ(gemm_compute(GemmPrecision::kFp32, sm), GemmCompute::k32F) << "sm_" << sm << "0, fp32";
    EXPECT_EQ(gemm_compute(GemmPrecision::kTf32, sm), GemmCompute::k32FFastTf32) << "sm_" << sm << "0, tf32";
  }
  // Before Ampere there is no TF32: the GEMMs stay fp32 rather than fail.
  for (int sm : {6, 7}) EXPECT_EQ(gemm_compute(GemmPrecision::kTf32, sm), GemmCompute::k32F) << "sm_" << sm << "0";
}

}  // namespace
