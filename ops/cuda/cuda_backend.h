#pragma once
// The CUDA backend, inside libfusebox_cuda.so (the plugin; plugin.cpp is its entry point). It is
// an exec::Backend like the CPU's: device memory from cudaMalloc, weights uploaded once, inputs
// and outputs through pinned staging buffers, one stream, cuBLAS and cuBLASLt handles in the
// ExecContext its kernels get, CUDA graphs for capture/replay, CUPTI activity for the trace.
//
// The kernels are in one file per family, like ops/cpu: <family>.cpp registers each op (prepare
// reads the node and shapes into a plain parameter struct; run launches) and <family>_kernels.cu
// holds the device code behind launchers declared in <family>_kernels.h (C++17, no core headers,
// so nvcc never sees core's C++20). Launch geometry comes from ops/cuda/host (unit-tested here).
#include <cstddef>
#include <memory>
#include <string>

#include "core/backend/backend.h"
#include "core/backend/kernel.h"

namespace fusebox::cuda {

// Makes the backend on device 0. Throws fusebox::Error naming the CUDA call that failed.
std::unique_ptr<exec::Backend> make_backend();

// Kernel families, one file each (the same split as ops/cpu).
void add_matmul_kernels(exec::KernelTable& k);       // MatMul, MatMulAdd, FusedBias{Relu,Gelu,Tanh,Sigmoid}: cuBLAS(Lt)
void add_elementwise_kernels(exec::KernelTable& k);  // unary/binary math, Gelu, Cast, Where
void add_fused_elementwise_kernels(exec::KernelTable& k);  // FusedElementwise
void add_normalization_kernels(exec::KernelTable& k);      // Softmax, LayerNorm, SkipLayerNorm, ReduceMean
void add_layout_kernels(exec::KernelTable& k);       // Transpose, Concat, Slice, Gather, view copies
void add_attention_kernels(exec::KernelTable& k);    // Attention
void add_conv_kernels(exec::KernelTable& k);         // Conv, ConvTranspose (cuBLAS), BatchNorm, the pools

}  // namespace fusebox::cuda
