#pragma once
// The CUDA conv family's host-side decisions as pure functions over core's conv_params (no CUDA
// headers), so they are unit-tested without a GPU (tests/cuda/conv_geometry_test.cpp): which path
// a Conv takes, its GEMMs' shapes, strides and batching, the scratch its im2col needs, and the
// window every kernel of the family walks. conv.cpp turns a node into these; conv_kernels.cu only
// reads them.
#include <cstddef>
#include <string>

#include "core/ir/conv_params.h"
#include "ops/cuda/conv_types.h"

namespace fusebox::cuda {

// The window right-aligned into three dims (conv_types.h). Throws fusebox::Error naming `op` for
// more than three spatial dims.
Window3 window3(const ir::WindowGeometry& g, const char* op);

// The path and GEMM plan of a Conv:
//  - one input channel per group (group > 1): kDepthwise, no GEMM;
//  - 1x1, stride 1, no pads (ir::ConvShape::pointwise): kPointwise, the input read in place; with
//    one group every image is one GEMM of one call (the weight's batch stride 0), with several
//    one call per image batched over the groups;
//  - anything else: kIm2col, one image at a time (one call per image, batched over the groups),
//    its im2col [C_in * kernel size, P] in scratch (group g's K rows start at g * K, so the rows
//    are the same for any grouping).
// Throws fusebox::Error when a GEMM dimension exceeds cuBLAS's int range.
ConvGemmPlan conv_gemm_plan(const ir::ConvShape& c);

// Scratch bytes the CUDA Conv needs (the planner plans them): one image's im2col, or 0.
size_t conv_scratch_bytes_cuda(const ir::ConvShape& c);

// ConvTranspose's plan (conv_types.h). Throws fusebox::Error when a GEMM dimension exceeds
// cuBLAS's int range.
ConvTransposeParams conv_transpose_params(const ir::ConvTransposeShape& c);
size_t conv_transpose_scratch_bytes_cuda(const ir::ConvTransposeShape& c);

ConvActParams conv_act_params(const ir::ConvActivation& act);

// "pointwise", "im2col", "depthwise": for messages and tests.
std::string conv_path_name(ConvPath path);

}  // namespace fusebox::cuda
