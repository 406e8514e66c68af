// The transformer builders: nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward,
// dropout=0, activation="gelu", norm_first=False, batch_first=True) as torch.onnx.export writes
// it below opset 17. Every piece the optimizer should find is spelled out op by op:
//   - each projection: Transpose(W [out,in]) -> MatMul -> Add(bias)
//   - heads: Reshape [b,s,h,dh] -> Transpose [0,2,1,3]; K^T: one more Transpose [0,1,3,2]
//   - scores: MatMul(Q, K^T) -> Mul(1/sqrt(dh), a 0-d constant) -> Softmax(-1) -> MatMul(., V)
//   - LayerNorm: ReduceMean -> Sub -> Pow(2) -> ReduceMean -> Add(eps) -> Sqrt -> Div
//                -> Mul(gamma) -> Add(beta)
//   - GELU (erf form): Div(sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)
#include <cmath>

#include "core/base/error.h"
#include "core/models/builder_util.h"
#include "core/models/builtin_models.h"

namespace fusebox::models {

namespace {

void check_config(const TransformerConfig& c) {
  auto positive = [](const char* what, int64_t v) {
    if (v < 1)
      throw Error(std::string("transformer ") + what + " must be >= 1, got " + std::to_string(v));
  };
  positive("batch", c.batch);
  positive("seq", c.seq);
  positive("d", c.d);
  positive("heads", c.heads);
  positive("ffn", c.ffn);
  if (c.d % c.heads != 0)
    throw Error("transformer d (" + std::to_string(c.d) + ") must be divisible by heads (" +
                std::to_string(c.heads) + ")");
}

// Decomposed LayerNorm over the last dim, weights "<p>weight" (gamma) and "<p>bias" (beta).
std::string add_layer_norm(ir::Graph& g, const std::string& x, const std::string& p, int64_t d,
                           uint64_t seed) {
  const std::string gamma = add_noisy_weight(g, p + "weight", {d}, 1.0f, 0.1f, seed);
  const std::string beta = add_noisy_weight(g, p + "bias", {d}, 0.0f, 0.1f, seed);
  const std::string two = add_scalar_weight(g, p + "pow_exponent", 2.0f);
  const std::string eps = add_scalar_weight(g, p + "eps", 1e-5f);
  ir::Attributes reduce = attrs_ints("axes", {-1});
  reduce.set("keepdims", int64_t{1});
  std::string mean = g.add_node("ReduceMean", {x}, reduce, p + "mean.ReduceMean");
  std::string centered = g.add_node("Sub", {x, mean}, {}, p + "Sub");
  std::string squared = g.add_node("Pow", {centered, two}, {}, p + "Pow");
  std::string var = g.add_node("ReduceMean", {squared}, reduce, p + "var.ReduceMean");
  std::string var_eps = g.add_node("Add", {var, eps}, {}, p + "eps.Add");
  std::string stddev = g.add_node("Sqrt", {var_eps}, {}, p + "Sqrt");
  std::string normed = g.add_node("Div", {centered, stddev}, {}, p + "Div");
  std::string scaled = g.add_node("Mul", {normed, gamma}, {}, p + "weight.Mul");
  return g.add_node("Add", {scaled, beta}, {}, p + "bias.Add");
}

// GELU, erf form, as the exporter writes F.gelu below opset 20.
std::string add_gelu(ir::Graph& g, const std::string& x, const std::string& p) {
  const std::string sqrt2 = add_scalar_weight(g, p + "sqrt2", static_cast<float>(std::sqrt(2.0)));
  const std::string one = add_scalar_weight(g, p + "one", 1.0f);
  const std::string half = add_scalar_weight(g, p + "half", 0.5f);
  std::string scaled = g.add_node("Div", {x, sqrt2}, {}, p + "Div");
  std::string erf = g.add_node("Erf", {scaled}, {}, p + "Erf");
  std::string shifted = g.add_node("Add", {erf, one}, {}, p + "Add");
  std::string gated = g.add_node("Mul", {x, shifted}, {}, p + "Mul");
  return g.add_node("Mul", {gated, half}, {}, p + "half.Mul");
}

// Reshape [b,s,d] -> [b,s,h,dh] -> Transpose [0,2,1,3] -> [b,h,s,dh].
std::string split_heads(ir::Graph& g, const std::string& x, const std::string& p,
                        const TransformerConfig& c) {
  std::string r = g.add_node(
      "Reshape", {x}, attrs_ints("shape", {c.batch, c.seq, c.heads, c.d / c.heads}), p + "Reshape");
  return g.add_node("Transpose", {r}, attrs_ints("perm", {0, 2, 1, 3}), p + "Transpose");
}

}  // namespace

std::string add_encoder_block(ir::Graph& g, const std::string& x_in, const TransformerConfig& c,
                              const std::string& prefix, uint64_t seed) {
  check_config(c);
  const std::string x = x_in;  // copy: `x_in` may refer into the graph, which grows below
  const std::string a = prefix + "attn.";
  const int64_t head_dim = c.d / c.heads;

  // Self-attention.
  std::string q = add_linear(g, x, a + "q_proj.", c.d, c.d, seed);
  std::string k = add_linear(g, x, a + "k_proj.", c.d, c.d, seed);
  std::string v = add_linear(g, x, a + "v_proj.", c.d, c.d, seed);
  q = split_heads(g, q, a + "q_heads.", c);
  k = split_heads(g, k, a + "k_heads.", c);
  v = split_heads(g, v, a + "v_heads.", c);
  std::string k_t =
      g.add_node("Transpose", {k}, attrs_ints("perm", {0, 1, 3, 2}), a + "k_t.Transpose");
  const std::string scale = add_scalar_weight(
      g, a + "scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))));
  std::string scores = g.add_node("MatMul", {q, k_t}, {}, a + "scores.MatMul");
  scores = g.add_node("Mul", {scores, scale}, {}, a + "scores.Mul");
  std::string probs = g.add_node("Softmax", {scores}, attrs_int("axis", -1), a + "Softmax");
  std::string ctx = g.add_node("MatMul", {probs, v}, {}, a + "context.MatMul");
  ctx = g.add_node("Transpose", {ctx}, attrs_ints("perm", {0, 2, 1, 3}), a + "merge.Transpose");
  ctx =
      g.add_node("Reshape", {ctx}, attrs_ints("shape", {c.batch, c.seq, c.d}), a + "merge.Reshape");
  std::string attn = add_linear(g, ctx, a + "out_proj.", c.d, c.d, seed);

  std::string h = g.add_node("Add", {x, attn}, {}, prefix + "residual1.Add");
  h = add_layer_norm(g, h, prefix + "norm1.", c.d, seed);

  // Feed-forward.
  const std::string f = prefix + "ffn.";
  std::string ff = add_linear(g, h, f + "fc1.", c.d, c.ffn, seed);
  ff = add_gelu(g, ff, f + "gelu.");
  ff = add_linear(g, ff, f + "fc2.", c.ffn, c.d, seed);

  std::string out = g.add_node("Add", {h, ff}, {}, prefix + "residual2.Add");
  return add_layer_norm(g, out, prefix + "norm2.", c.d, seed);
}

ir::Graph build_transformer(const TransformerConfig& config, uint64_t seed,
                            const std::string& name) {
  check_config(config);
  ir::Graph g;
  g.name = name;
  std::string x = g.add_input("x", ir::DType::f32, {config.batch, config.seq, config.d});
  std::string y = add_encoder_block(g, x, config, "", seed);
  rename_tensor(g, y, "y");
  g.outputs = {"y"};
  return g;
}

ir::Graph build_transformer_stack(const TransformerConfig& config, int64_t layers, uint64_t seed,
                                  const std::string& name) {
  check_config(config);
  if (layers < 1) throw Error("stack layers must be >= 1, got " + std::to_string(layers));
  ir::Graph g;
  g.name = name;
  std::string h = g.add_input("x", ir::DType::f32, {config.batch, config.seq, config.d});
  for (int64_t i = 0; i < layers; ++i)
    h = add_encoder_block(g, h, config, "layer" + std::to_string(i) + ".", seed);
  rename_tensor(g, h, "y");
  g.outputs = {"y"};
  return g;
}

}  // namespace fusebox::models
