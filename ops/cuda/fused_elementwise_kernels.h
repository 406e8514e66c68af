#pragma once
// Launcher of the FusedElementwise interpreter (fused_elementwise_kernels.cu). C++17 with no core
// headers, so nvcc never sees core's C++20; prepare() builds its parameters (fused_types.h) with
// fused_params.h from the node's program (core/ir/elementwise_program.h).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ops/cuda/fused_types.h"

namespace fusebox::cuda {

// inputs: p.num_inputs device pointers to f32 tensors; y: the f32 output, which may be one of the
// inputs (in place). Launches nothing for an empty output; never allocates or synchronizes.
void launch_fused_elementwise(const FusedParams& p, const void* const* inputs, void* y, cudaStream_t stream,
                              int sm_count);

}  // namespace fusebox::cuda
