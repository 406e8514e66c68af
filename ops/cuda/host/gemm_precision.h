#pragma once
// The CUDA backend's float GEMM precision (the `precision` setting) and the cuBLAS compute type it
// asks for, as pure functions (no CUDA headers) so tests/cuda/gemm_precision_test.cpp checks the
// choice without a GPU. matmul.cpp maps GemmCompute onto cublasComputeType_t.
#include <string>
#include <vector>

namespace fusebox::cuda {

enum class GemmPrecision { kFp32, kTf32 };

// cuBLAS compute types the MatMul family uses: CUBLAS_COMPUTE_32F (IEEE fp32 multiply-adds, no
// tensor-core rounding) and CUBLAS_COMPUTE_32F_FAST_TF32 (inputs rounded to TF32 for tensor
// cores, fp32 accumulation).
enum class GemmCompute { k32F, k32FFastTf32 };

// "fp32" and "tf32", in that order.
std::vector<std::string> gemm_precision_names();
// Throws fusebox::Error naming the valid names for anything else.
GemmPrecision parse_gemm_precision(const std::string& name);
std::string gemm_precision_name(GemmPrecision precision);

// What a GEMM of the MatMul family (MatMul, MatMulAdd, FusedBias*) computes with on a device of
// compute capability `sm_major`.x: TF32 only when asked for and the tensor cores have it (sm_80
// and newer); everything else stays fp32, so asking for tf32 never makes a result less exact
// than a device can do.
GemmCompute gemm_compute(GemmPrecision precision, int sm_major);

}  // namespace fusebox::cuda
