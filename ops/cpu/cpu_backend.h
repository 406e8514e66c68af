#pragma once
// The CPU backend: kernels over CBLAS (OpenBLAS, OpenMP build) and hand-written loops, one
// OpenMP thread pool shared by our kernels and BLAS. Always available.
#include <memory>

#include "core/backend/backend.h"

namespace fusebox::cpu {

std::unique_ptr<exec::Backend> make_backend();
// Registers "cpu" in exec::BackendRegistry (idempotent). Front ends call this at start-up.
void register_backend();

// Kernel families, one file each.
void add_matmul_kernels(exec::KernelTable& table);       // MatMul, MatMulAdd, FusedBiasRelu
void add_elementwise_kernels(exec::KernelTable& table);  // unary/binary math, Cast, Where
void add_fused_elementwise_kernels(exec::KernelTable& table);  // FusedElementwise
void add_normalization_kernels(exec::KernelTable& table);  // Softmax, LayerNorm, Reduce*, ArgMax
void add_layout_kernels(exec::KernelTable& table);  // Transpose, Concat, Slice, Gather, Expand, ...
void add_attention_kernels(exec::KernelTable& table);    // Attention
void add_conv_kernels(exec::KernelTable& table);         // Conv, ConvTranspose, BatchNorm, MaxPool, AveragePool, ...
void add_conv_nhwc_kernels(exec::KernelTable& table);    // NhwcConv and the channels-last pools
void add_resize_kernels(exec::KernelTable& table);       // Resize
void add_recurrent_kernels(exec::KernelTable& table);   // LSTM, GRU, RNN
void add_scatter_kernels(exec::KernelTable& table);     // ScatterND, ScatterElements

}  // namespace fusebox::cpu
