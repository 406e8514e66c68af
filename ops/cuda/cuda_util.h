#pragma once
// Helpers for the CUDA backend's host code (g++, C++20): what a kernel's run() reads from its
// ExecContext, and turning a CUDA error into fusebox::Error. A run() never throws: a launch that
// fails leaves its error with the runtime (the backend reads it when the op ends), a failed
// cuBLAS(Lt) status is kept (keep_status), a device-side fault is written to host-mapped memory,
// and Backend::synchronize() raises the first of them.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "core/base/error.h"
#include "core/backend/kernel.h"
#include "core/backend/kernel_util.h"
#include "ops/cuda/host/first_failure.h"
#include "ops/cuda/host/gemm_precision.h"
#include "ops/cuda/layout_types.h"

namespace fusebox::cuda {

using exec::fail;
using exec::input_ptr;
using exec::or_fail;
using exec::output_ptr;
using exec::require_arity;
using exec::require_dtype;
using exec::state_of;

// What the backend shares with its kernels beyond the stream and the cuBLAS handle
// (ExecContext::backend_data).
struct CudaShared {
  cublasLtHandle_t lt = nullptr;   // cuBLASLt, for GEMMs with a bias/activation epilogue
  void* workspace = nullptr;       // cuBLAS(Lt) workspace, device memory, fixed (graph capture needs it)
  size_t workspace_bytes = 0;
  int sm_count = 1;                // multiprocessors on the device (elementwise_geometry)
  int max_shared_per_block = 48 * 1024;  // bytes of shared memory a block may use (opt-in limit)
  int sm_major = 0;                // compute capability's major number (TF32 needs sm_80 and up)
  // What run() cannot throw, raised by the backend's next synchronize: the first failed library
  // status (cuBLAS, cuBLASLt) and the device's first out-of-range Gather index (the device view
  // of a host-mapped record).
  FirstFailure* failures = nullptr;
  GatherFault* gather_fault = nullptr;
};

// The cuBLAS compute type of the `precision` setting, for every GEMM family (MatMul, Conv).
inline cublasComputeType_t cublas_compute(GemmCompute c) {
  switch (c) {
    case GemmCompute::k32FFastTf32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GemmCompute::k32F:
      break;
  }
  return CUBLAS_COMPUTE_32F;
}

// The cuBLAS compute type of a GEMM being prepared: its run's precision (KernelContext::options)
// on this device; fp32, the backend's default, without options or a context (tests, folding).
inline cublasComputeType_t gemm_compute_of(const exec::KernelContext& ctx) {
  if (!ctx.options || !ctx.context || !ctx.context->backend_data) return CUBLAS_COMPUTE_32F;
  const int sm_major = static_cast<const CudaShared*>(ctx.context->backend_data)->sm_major;
  return cublas_compute(gemm_compute(parse_gemm_precision(ctx.options->precision), sm_major));
}

inline cudaStream_t stream_of(const exec::KernelArgs& a) { return static_cast<cudaStream_t>(a.context->stream); }
inline cublasHandle_t blas_of(const exec::KernelArgs& a) { return static_cast<cublasHandle_t>(a.context->blas); }
inline const CudaShared& shared_of(const exec::KernelArgs& a) {
  return *static_cast<const CudaShared*>(a.context->backend_data);
}

// "what: cudaErrorMemoryAllocation (out of memory)" as fusebox::Error, unless e is success.
// The runtime's last error is cleared first, so a failure reported here is never reported
// again by a later cudaGetLastError as some other call's.
inline void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}
// Keeps a failed cuBLAS(Lt) status for the next synchronize (a run() cannot throw, and cuBLAS
// carries its own copy of the CUDA runtime, so cudaGetLastError never sees its failures).
inline void keep_status(const exec::KernelArgs& a, cublasStatus_t s, const std::string& where, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS && shared_of(a).failures)
    shared_of(a).failures->record(status_failure(where, call, cublasGetStatusName(s), cublasGetStatusString(s)));
}
inline void check(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(what + ": " + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")");
}

}  // namespace fusebox::cuda
