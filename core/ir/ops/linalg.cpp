// MatMul and the fused ops built on it: FusedBiasRelu, MatMulAdd, Attention.
//
// MatMul(A, B) attributes: transA, transB (0/1: use the last two dims transposed), alpha (scale).
// Leading (batch) dims broadcast numpy-style. A 1-D A is [1,K] and a 1-D B is [K,1], with that
// dim dropped from the output, as in ONNX.
#include "core/base/error.h"
#include "core/ir/ops/builtin_ops.h"

namespace fusebox::ir {

namespace {

struct MatMulDims {
  Shape batch;  // broadcast batch dims
  int64_t m = 0, n = 0, k = 0;
  Shape out;
};

MatMulDims matmul_dims(const Node& node, const TensorType& a, const TensorType& b) {
  if (a.dtype != DType::f32 || b.dtype != DType::f32) throw Error("MatMul inputs must be f32");
  if (a.shape.empty() || b.shape.empty()) throw Error("MatMul inputs must have rank >= 1");
  bool ta = node.attrs.get_int("transA", 0) != 0;
  bool tb = node.attrs.get_int("transB", 0) != 0;
  Shape as = a.shape, bs = b.shape;
  bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  int64_t am = as[as.size() - 2], ak = as[as.size() - 1];
  if (ta) std::swap(am, ak);
  int64_t bk = bs[bs.size() - 2], bn = bs[bs.size() - 1];
  if (tb) std::swap(bk, bn);
  if (ak != bk)
    throw Error("inner dimensions differ: " + std::to_string(ak) + " vs " + std::to_string(bk));
  MatMulDims d;
  d.batch = broadcast_shapes(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2));
  d.m = am;
  d.n = bn;
  d.k = ak;
  d.out = d.batch;
  if (!a_vec) d.out.push_back(d.m);
  if (!b_vec) d.out.push_back(d.n);
  return d;
}

double matmul_flops(const Node& node, const std::vector<TensorType>& in) {
  MatMulDims d = matmul_dims(node, in[0], in[1]);
  return 2.0 * static_cast<double>(numel(d.batch)) * d.m * d.n * d.k;
}

OpSchema matmul_like(const char* name, const char* doc, int inputs) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.min_inputs = s.max_inputs = inputs;
  s.infer = [inputs](const Node& n, const std::vector<TensorType>& in) {
    MatMulDims d = matmul_dims(n, in[0], in[1]);
    if (inputs == 3) {
      if (in[2].dtype != DType::f32) throw Error("bias must be f32");
      Shape b = broadcast_shapes(d.out, in[2].shape);
      if (b != d.out) throw Error("bias " + shape_str(in[2].shape) + " does not broadcast to " + shape_str(d.out));
    }
    return std::vector<TensorType>{{DType::f32, d.out}};
  };
  s.flops = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>& out) {
    double extra = in.size() == 3 ? 2.0 * static_cast<double>(numel(out[0].shape)) : 0.0;
    return matmul_flops(n, in) + extra;
  };
  return s;
}

// Attention(Q, K, V): softmax(scale * Q K^T) V over the last two dims, leading dims equal.
// Q [..., Sq, D], K [..., Skv, D] (or [..., D, Skv] when k_transposed=1), V [..., Skv, Dv].
struct AttnDims {
  int64_t batch = 1, sq = 0, skv = 0, d = 0, dv = 0;
  Shape out;
};

AttnDims attention_dims(const Node& n, const std::vector<TensorType>& in) {
  for (const auto& t : in)
    if (t.dtype != DType::f32 || t.shape.size() < 2) throw Error("Attention inputs must be f32, rank >= 2");
  const Shape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
  if (q.size() != k.size() || q.size() != v.size()) throw Error("Q, K, V must have the same rank");
  size_t r = q.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (q[i] != k[i] || q[i] != v[i]) throw Error("Q, K, V leading dims differ");
  bool kt = n.attrs.get_int("k_transposed", 0) != 0;
  AttnDims a;
  for (size_t i = 0; i + 2 < r; ++i) a.batch *= q[i];
  a.sq = q[r - 2];
  a.d = q[r - 1];
  int64_t kd = kt ? k[r - 2] : k[r - 1];
  a.skv = kt ? k[r - 1] : k[r - 2];
  if (kd != a.d) throw Error("Q and K head sizes differ");
  if (v[r - 2] != a.skv) throw Error("K and V sequence lengths differ");
  a.dv = v[r - 1];
  a.out = q;
  a.out[r - 1] = a.dv;
  return a;
}

}  // namespace

void register_linalg_ops(OpRegistry& r) {
  r.add(matmul_like("MatMul", "alpha * op(A) op(B), batched; attributes transA, transB, alpha", 2));
  r.add(matmul_like("MatMulAdd",
                    "alpha * op(A) op(B) + C, C broadcast to the output (a bias or a residual)", 3));
  r.add(matmul_like("FusedBiasRelu", "relu(alpha * op(A) op(B) + bias)", 3));

  OpSchema s;
  s.name = "Attention";
  s.doc = "softmax(scale * Q K^T) V over the last two dims; attributes scale, k_transposed";
  s.min_inputs = s.max_inputs = 3;
  s.infer = [](const Node& n, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{{DType::f32, attention_dims(n, in).out}};
  };
  s.flops = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    AttnDims a = attention_dims(n, in);
    return static_cast<double>(a.batch) * a.sq * a.skv * (2.0 * a.d + 2.0 * a.dv + 5.0);
  };
  // One Sq x Skv score matrix per batch*head: the planner gives it a one-step arena region.
  s.scratch_bytes = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    AttnDims a = attention_dims(n, in);
    return static_cast<size_t>(a.batch * a.sq * a.skv) * sizeof(float);
  };
  r.add(std::move(s));
}

}  // namespace fusebox::ir
