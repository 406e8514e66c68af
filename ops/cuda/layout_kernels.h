#pragma once
// Launchers and parameters of the layout kernels (layout_kernels.cu): strided copies
// (Transpose, Slice), Concat, Gather and plain copies (view ops outside an executor). C++17 with
// no core headers, so nvcc never sees core's C++20; layout.cpp fills the parameters
// (layout_types.h) in prepare().
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ops/cuda/layout_types.h"

namespace fusebox::cuda {

// None allocates or synchronizes (graph-capturable); empty work launches nothing.
void launch_strided_copy(const StridedCopyParams& p, const void* x, void* y, cudaStream_t stream, int sm_count);
void launch_concat_batch(const ConcatBatch& b, void* y, cudaStream_t stream, int sm_count);
void launch_gather(const GatherParams& p, const void* x, const int64_t* indices, void* y, cudaStream_t stream,
                   int sm_count);
// y = x, `bytes` bytes (nothing when x == y).
void launch_copy(const void* x, void* y, size_t bytes, cudaStream_t stream);

}  // namespace fusebox::cuda
