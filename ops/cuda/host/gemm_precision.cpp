#include "ops/cuda/host/gemm_precision.h"

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::cuda {

std::vector<std::string> gemm_precision_names() {
  return {"fp32", "tf32"};
}

GemmPrecision parse_gemm_precision(const std::string& name) {
  if (name == "fp32") return GemmPrecision::kFp32;
  if (name == "tf32") return GemmPrecision::kTf32;
  throw Error("unknown precision '" + name + "' (valid: " + join(gemm_precision_names(), ", ") + ")");
}

std::string gemm_precision_name(GemmPrecision precision) {
  return precision == GemmPrecision::kTf32 ? "tf32" : "fp32";
}

GemmCompute gemm_compute(GemmPrecision precision, int sm_major) {
  // TF32 tensor cores came with Ampere (sm_80).
  if (precision == GemmPrecision::kTf32 && sm_major >= 8) return GemmCompute::k32FFastTf32;
  return GemmCompute::k32F;
}

}  // namespace fusebox::cuda
