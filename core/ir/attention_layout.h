#pragma once
// How an Attention node reads Q, K, V and writes its output: one parser shared by the op schema
// (shape inference, cost, scratch), the kernels and the absorb_layout pass.
//
// Attention(Q, K, V [, mask]) = softmax(scale * Q K^T + mask) V over the last two dims, for every
// index of the leading (batch, head) dims. Logically Q is [..., Sq, D], K is [..., Skv, D] (stored [..., D, Skv]
// when k_transposed=1), V is [..., Skv, Dv] and the output [..., Sq, Dv]; leading dims are equal
// (no broadcasting).
//
// By default each operand is its whole input tensor, row-major. Optional attributes let the node
// read an operand through a strided view of its input instead, and write its output through a
// view of a differently shaped output tensor, so that splitting a projection into heads
// (Slice/Reshape/Transpose) and merging the heads back (Transpose/Reshape) cost no copies:
//   q_shape, q_strides, q_offset  logical shape of Q, and where its elements are in input 0
//                                 (StridedView; q_offset defaults to 0)
//   k_..., v_...                  the same for K (input 1; the view is of what k_transposed
//                                 describes) and V (input 2)
//   out_shape, out_strides        the output tensor's shape, and the strides at which the
//                                 logical output [..., Sq, Dv] is written into it. They must
//                                 cover the tensor exactly once, and the last stride is 1
//                                 (rows of Dv are written contiguously).
//
// Masks, either or both:
//   causal=1                      query i sees keys j <= i only (top-left aligned, as GPT's
//                                 tril(ones(T, T))[:Sq, :Skv]); the kernel never computes the
//                                 keys past the diagonal.
//   input 3 (optional)            an additive f32 mask added to the scaled scores; its shape
//                                 broadcasts (numpy rules) to [..., Sq, Skv] without enlarging
//                                 it: e.g. [Sq, Skv], [1, 1, Sq, Skv], [B, 1, 1, Skv]. -inf hides
//                                 a key; a query row that sees no key at all gives NaN (as
//                                 PyTorch does).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/op_schema.h"
#include "core/ir/strided_view.h"

namespace fusebox::ir {

struct AttentionLayout {
  Shape lead;  // leading (batch, head) dims
  int64_t batch = 1, sq = 0, skv = 0, d = 0, dv = 0;
  double scale = 1.0;
  // Relative to the node's input tensors 0, 1, 2 and its output tensor. k is always [..., Skv, D]:
  // k_transposed is resolved into its strides.
  StridedView q, k, v, out;
  Shape out_shape;  // the output tensor's shape
  bool causal = false;
  // The additive mask (input 3) as a view [..., Sq, Skv] of its tensor, broadcast dims at stride
  // 0; nullopt when the node has no input 3.
  std::optional<StridedView> mask;
  Shape mask_shape;  // input 3's own shape

  // Query rows [i0, i0 + rows) see keys [0, keys_for_rows(i0, rows)): all of them, or up to the
  // diagonal when causal.
  int64_t keys_for_rows(int64_t i0, int64_t rows) const {
    return causal ? std::min(skv, i0 + rows) : skv;
  }
  // (query, key) pairs that are computed: Sq * Skv, or the causal triangle.
  double scored_pairs() const;
};

// Throws fusebox::Error naming the attribute or operand at fault.
AttentionLayout attention_layout(const Node& node, const std::vector<TensorType>& inputs);

// Makes `node` read input `slot` (0 = Q, 1 = K, 2 = V) through `view` of its input tensor. For K
// the view is [..., Skv, D] and k_transposed is reset to 0.
void set_attention_input_view(Node& node, int slot, const StridedView& view);
// Makes `node` write its logical output through `view` into an output tensor of `out_shape`.
void set_attention_output_view(Node& node, const StridedView& view, const Shape& out_shape);

}  // namespace fusebox::ir
