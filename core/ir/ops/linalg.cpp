// MatMul and the fused ops built on it: FusedBiasRelu, FusedBiasGelu, MatMulAdd, Attention (whose operands are
// described in core/ir/attention_layout.h).
//
// MatMul(A, B) attributes: transA, transB (0/1: use the last two dims transposed), alpha (scale).
// Leading (batch) dims broadcast numpy-style. A 1-D A is [1,K] and a 1-D B is [K,1], with that
// dim dropped from the output, as in ONNX.
#include "core/base/error.h"
#include "core/ir/attention_layout.h"
#include "core/ir/matmul_shape.h"
#include "core/ir/ops/builtin_ops.h"

namespace fusebox::ir {

namespace {

// The schema's own checks first (its wording), then the shared reading (matmul_shape.h).
MatMulShape checked_matmul_shape(const Node& node, const TensorType& a, const TensorType& b) {
  if (a.shape.empty() || b.shape.empty()) throw Error("MatMul inputs must have rank >= 1");
  return matmul_shape(node, a.shape, b.shape);
}

OpSchema matmul_like(const char* name, const char* doc, int inputs) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.min_inputs = s.max_inputs = inputs;
  s.infer = [inputs](const Node& n, const std::vector<TensorType>& in) {
    const MatMulShape d = checked_matmul_shape(n, in[0], in[1]);
    if (inputs == 3) {
      Shape b = broadcast_shapes(d.out, in[2].shape);
      if (b != d.out)
        throw Error("bias " + shape_str(in[2].shape) + " does not broadcast to " +
                    shape_str(d.out));
    }
    return std::vector<TensorType>{{DType::f32, d.out}};
  };
  s.flops = [](const Node& n, const std::vector<TensorType>& in,
               const std::vector<TensorType>& out) {
    double extra = in.size() == 3 ? 2.0 * static_cast<double>(numel(out[0].shape)) : 0.0;
    return checked_matmul_shape(n, in[0], in[1]).flops() + extra;
  };
  return s;
}

}  // namespace

void register_linalg_ops(OpRegistry& r) {
  r.add(matmul_like("MatMul", "alpha * op(A) op(B), batched; attributes transA, transB, alpha", 2));
  r.add(matmul_like(
      "MatMulAdd", "alpha * op(A) op(B) + C, C broadcast to the output (a bias or a residual)", 3));
  r.add(matmul_like("FusedBiasRelu", "relu(alpha * op(A) op(B) + bias)", 3));
  r.add(matmul_like("FusedBiasGelu",
                    "gelu(alpha * op(A) op(B) + bias); attribute approximate: 'none' (erf, the "
                    "default) or 'tanh'",
                    3));
  r.add(matmul_like("FusedBiasTanh", "tanh(alpha * op(A) op(B) + bias)", 3));
  r.add(matmul_like("FusedBiasSigmoid", "sigmoid(alpha * op(A) op(B) + bias)", 3));

  OpSchema s;
  s.name = "Attention";
  s.doc =
      "softmax(scale * Q K^T + mask) V over the last two dims; attributes scale, k_transposed, "
      "causal, optional strided views of the operands, and an optional additive mask input "
      "(attention_layout.h)";
  s.min_inputs = 3;
  s.max_inputs = 4;
  s.infer = [](const Node& n, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{{DType::f32, attention_layout(n, in).out_shape}};
  };
  s.flops = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    AttentionLayout a = attention_layout(n, in);
    // Causal attention skips the keys past the diagonal: only the scored pairs count.
    return static_cast<double>(a.batch) * a.scored_pairs() *
           (2.0 * a.d + 2.0 * a.dv + 5.0 + (a.mask ? 1.0 : 0.0));
  };
  // What the operands' views cover, not the whole tensors they point into (Q, K and V are often
  // three slices of one projection).
  s.bytes = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    AttentionLayout a = attention_layout(n, in);
    return 4.0 * static_cast<double>(a.q.numel() + a.k.numel() + a.v.numel() + a.out.numel() +
                                     (a.mask ? numel(a.mask_shape) : 0));
  };
  // Room for K^T and V of every batch-head repacked into the 32-column panels the CPU GEMM
  // micro-kernel streams (ops/cpu/packed_gemm.h); the scores never leave the kernel's registers
  // and a small block on its stack.
  s.scratch_bytes = [](const Node& n, const std::vector<TensorType>& in,
                       const std::vector<TensorType>&) {
    AttentionLayout a = attention_layout(n, in);
    auto up32 = [](int64_t x) { return (x + 31) / 32 * 32; };
    return static_cast<size_t>(a.batch * (up32(a.skv) * a.d + a.skv * up32(a.dv))) * sizeof(float);
  };
  r.add(std::move(s));
  set_math(r, MathClass::Arithmetic, {"MatMul", "MatMulAdd", "FusedBiasRelu"});
  set_math(r, MathClass::Transcendental, {"FusedBiasGelu"}, gelu_math);
  set_math(r, MathClass::Transcendental, {"FusedBiasTanh"}, fixed_math({"tanh"}));
  set_math(r, MathClass::Transcendental, {"FusedBiasSigmoid"}, fixed_math({"sigmoid"}));
  set_math(r, MathClass::Transcendental, {"Attention"}, fixed_math({"exp"}));  // its softmax
  // f32 throughout; the mask too (Attention's fourth input, optional).
  set_types(r, "F", {"MatMul", "MatMulAdd", "FusedBiasRelu", "FusedBiasGelu", "FusedBiasTanh", "FusedBiasSigmoid",
                     "Attention"});
  set_kind(r, OpKind::MatMul, {"MatMul"});
  set_kind(r, OpKind::Fused,
           {"MatMulAdd", "FusedBiasRelu", "FusedBiasGelu", "FusedBiasTanh", "FusedBiasSigmoid",
            "Attention"});
}

}  // namespace fusebox::ir
