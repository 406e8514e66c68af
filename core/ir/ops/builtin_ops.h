#pragma once
// Registration of the builtin op schemas, one function per family (one file each).
#include "core/ir/op_schema.h"

namespace fusebox::ir {

void register_elementwise_ops(OpRegistry& registry);    // Add, Relu, Gelu, FusedElementwise, ...
void register_linalg_ops(OpRegistry& registry);         // MatMul, fused MatMuls, Attention
void register_normalization_ops(OpRegistry& registry);  // Softmax, LayerNorm, Reduce*, ArgMax
void register_layout_ops(OpRegistry& registry);         // views, Transpose, ..., Expand, Tile, Pad
void register_conv_ops(OpRegistry& registry);           // Conv, ConvTranspose, BatchNorm, MaxPool, AveragePool, Global*Pool
void register_resize_ops(OpRegistry& registry);         // Resize
void register_recurrent_ops(OpRegistry& registry);      // LSTM, GRU, RNN
void register_scatter_ops(OpRegistry& registry);        // ScatterND, ScatterElements

inline void register_builtin_ops(OpRegistry& registry) {
  register_elementwise_ops(registry);
  register_linalg_ops(registry);
  register_normalization_ops(registry);
  register_layout_ops(registry);
  register_conv_ops(registry);
  register_resize_ops(registry);
  register_recurrent_ops(registry);
  register_scatter_ops(registry);
}

}  // namespace fusebox::ir
