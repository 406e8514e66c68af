#pragma once
// Registration of the builtin op schemas, one function per family (one file each).
#include <initializer_list>
#include <string>
#include <vector>

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

// Declares `math` (and, where given, `transcendentals`) the math of each of `ops`, which must
// be registered already: a name with no schema throws fusebox::Error (a typo would leave the op
// undeclared). Each family declares its ops' math after adding them (op_schema.h: MathClass).
void set_math(OpRegistry& registry, MathClass math, std::initializer_list<const char*> ops,
              const MathFn& transcendentals = {});
// Declares `kind` the kind of each of `ops`, registered already, as set_math does.
void set_kind(OpRegistry& registry, OpKind kind, std::initializer_list<const char*> ops);
// Declares `types` (op_schema.h: OpSchema::types, "TT", "F", ...) the dtypes each of `ops`
// takes, registered already, as set_math does.
void set_types(OpRegistry& registry, const char* types, std::initializer_list<const char*> ops);
// Declares `kind` for each op added from position `first` on (a family's own, in the order
// added) that has not declared one: a family's common kind, after its exceptions.
void set_kind_from(OpRegistry& registry, size_t first, OpKind kind);
// Gelu's function by its attribute approximate: {"erf"} (none, the default) or {"tanh"}
// (Gelu, FusedBiasGelu).
std::vector<std::string> gelu_math(const Node& node);

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
