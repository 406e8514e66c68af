// Structure of the builtin models: exactly the primitive ops a PyTorch -> ONNX export (opset < 17)
// emits, verified graphs, shapes, names, and exact tensor byte counts. Nothing is run here.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "core/base/error.h"
#include "core/ir/verifier.h"
#include "core/models/builtin_models.h"

namespace fusebox::models {
namespace {

using Histogram = std::map<std::string, int>;

// One encoder block, counted by hand from nn.TransformerEncoderLayer's export:
//   Transpose: 4 projection weights (q, k, v, out) + 2 FFN weights + 3 head splits + K^T + merge =
//   11 MatMul:    q, k, v, out, fc1, fc2 + Q K^T + P V                                            =
//   8 Add:       6 biases + 2 residuals + 2 x LayerNorm (eps, beta) + GELU (+1)                   =
//   13 Mul:       score scale + 2 x LayerNorm gamma + GELU (x *, * 0.5) = 5 Div:       2 x
//   LayerNorm + GELU (x / sqrt 2)                                                = 3 Sub, Pow,
//   Sqrt: 2 each (LayerNorm); ReduceMean 4 (mean, var per LayerNorm) Reshape:   3 head splits +
//   merge = 4; Softmax 1; Erf 1
const Histogram kBlockHistogram = {
    {"Add", 13},       {"Div", 3},     {"Erf", 1},     {"MatMul", 8}, {"Mul", 5}, {"Pow", 2},
    {"ReduceMean", 4}, {"Reshape", 4}, {"Softmax", 1}, {"Sqrt", 2},   {"Sub", 2}, {"Transpose", 11},
};
constexpr int kBlockNodes = 56;
constexpr int kBlockWeights = 24;  // 12 linear tensors, 4 LayerNorm vectors, 8 scalar constants

// Ops a PyTorch exporter emits for these models; no fused op may appear.
const std::set<std::string> kPrimitiveOps = {
    "Add",  "Sub",    "Mul",       "Div",     "Pow",     "Erf",       "Sqrt",
    "Relu", "MatMul", "Transpose", "Reshape", "Softmax", "ReduceMean"};

int sum(const Histogram& h) {
  int n = 0;
  for (const auto& [op, c] : h) n += c;
  return n;
}

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return n;
  throw Error("no node " + name);
}

const ir::Node* producer_of(const ir::Graph& g, const std::string& tensor) {
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (o == tensor) return &n;
  return nullptr;
}

float scalar_value(const ir::Graph& g, const std::string& name) {
  const ir::TensorInfo& t = g.tensor(name);
  EXPECT_EQ(t.kind, ir::TensorKind::Weight) << name;
  EXPECT_EQ(t.shape, ir::Shape{}) << name;
  return t.value->data<float>()[0];
}

double bytes_of(const ir::Graph& g, bool weights) {
  double total = 0;
  for (const auto& [name, t] : g.tensors())
    if ((t.kind == ir::TensorKind::Weight) == weights) total += static_cast<double>(t.nbytes());
  return total;
}

void expect_only_primitive_ops(const ir::Graph& g) {
  for (const auto& n : g.nodes) {
    EXPECT_TRUE(kPrimitiveOps.count(n.op))
        << g.name << ": unexpected op " << n.op << " (" << n.name << ")";
    if (n.op == "MatMul") {  // plain MatMul: transposes and scales are explicit nodes
      EXPECT_FALSE(n.attrs.has("transA")) << n.name;
      EXPECT_FALSE(n.attrs.has("transB")) << n.name;
      EXPECT_FALSE(n.attrs.has("alpha")) << n.name;
    }
  }
}

TEST(Mlp, DefaultStructure) {
  ir::Graph g = build_model("mlp", 0);
  ASSERT_NO_THROW(ir::verify(g));
  EXPECT_EQ(g.name, "mlp");
  EXPECT_EQ(g.op_histogram(),
            (Histogram{{"Transpose", 3}, {"MatMul", 3}, {"Add", 3}, {"Relu", 2}}));
  EXPECT_EQ(g.nodes.size(), 11u);
  ASSERT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.tensor("x").shape, (ir::Shape{1, 784}));
  EXPECT_EQ(g.tensor("x").kind, ir::TensorKind::Input);
  ASSERT_EQ(g.outputs, std::vector<std::string>{"logits"});
  EXPECT_EQ(g.tensor("logits").shape, (ir::Shape{1, 10}));
  EXPECT_EQ(g.nodes.back().outputs[0], "logits");
  EXPECT_EQ(g.nodes.back().op, "Add");                             // no Relu after the last layer
  EXPECT_EQ(g.tensor("fc0.weight").shape, (ir::Shape{512, 784}));  // nn.Linear [out, in]
  EXPECT_EQ(g.tensor("fc0.bias").shape, (ir::Shape{512}));
  EXPECT_EQ(g.tensor("fc2.weight").shape, (ir::Shape{10, 512}));
  expect_only_primitive_ops(g);
}

TEST(Mlp, LinearIsTransposeMatMulAdd) {
  ir::Graph g = build_model("mlp", 0);
  std::vector<std::string> order;
  for (const auto& n : g.nodes) order.push_back(n.name);
  EXPECT_EQ(order, (std::vector<std::string>{"fc0.Transpose", "fc0.MatMul", "fc0.Add", "fc0.Relu",
                                             "fc1.Transpose", "fc1.MatMul", "fc1.Add", "fc1.Relu",
                                             "fc2.Transpose", "fc2.MatMul", "fc2.Add"}));
  for (int i = 0; i < 3; ++i) {
    const std::string p = "fc" + std::to_string(i) + ".";
    const ir::Node& t = node_named(g, p + "Transpose");
    EXPECT_EQ(t.inputs, std::vector<std::string>{p + "weight"});
    EXPECT_EQ(t.attrs.get_ints("perm"), (std::vector<int64_t>{1, 0}));
    const ir::Node& mm = node_named(g, p + "MatMul");
    EXPECT_EQ(mm.inputs[1], t.outputs[0]);
    const ir::Node& add = node_named(g, p + "Add");
    EXPECT_EQ(add.inputs, (std::vector<std::string>{mm.outputs[0], p + "bias"}));
  }
  EXPECT_EQ(node_named(g, "fc0.MatMul").inputs[0], "x");
}

TEST(Mlp, CustomDimsAndBatch) {
  ir::Graph g = build_model("mlp:dims=32-64-48-16-4,batch=8", 1);
  ASSERT_NO_THROW(ir::verify(g));
  EXPECT_EQ(g.name, "mlp:dims=32-64-48-16-4,batch=8");
  EXPECT_EQ(g.op_histogram(),
            (Histogram{{"Transpose", 4}, {"MatMul", 4}, {"Add", 4}, {"Relu", 3}}));
  EXPECT_EQ(g.tensor("x").shape, (ir::Shape{8, 32}));
  EXPECT_EQ(g.tensor("logits").shape, (ir::Shape{8, 4}));
  EXPECT_EQ(g.tensor("fc1.weight").shape, (ir::Shape{48, 64}));

  ir::Graph one = build_model("mlp:dims=5-3", 1);  // a single layer: no Relu at all
  ASSERT_NO_THROW(ir::verify(one));
  EXPECT_EQ(one.op_histogram(), (Histogram{{"Transpose", 1}, {"MatMul", 1}, {"Add", 1}}));
}

TEST(Transformer, DefaultHistogramIsTheExporters) {
  ir::Graph g = build_model("transformer", 0);
  ASSERT_NO_THROW(ir::verify(g));
  EXPECT_EQ(g.name, "transformer");
  EXPECT_EQ(g.op_histogram(), kBlockHistogram);
  EXPECT_EQ(static_cast<int>(g.nodes.size()), kBlockNodes);
  EXPECT_EQ(sum(kBlockHistogram), kBlockNodes);
  int weights = 0;
  for (const auto& [name, t] : g.tensors()) weights += t.kind == ir::TensorKind::Weight;
  EXPECT_EQ(weights, kBlockWeights);
  expect_only_primitive_ops(g);
}

TEST(Transformer, InputsOutputsAndShapes) {
  ir::Graph g = build_model("transformer:seq=16,d=32,heads=2,ffn=48,batch=3", 0);
  ASSERT_NO_THROW(ir::verify(g));
  ASSERT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.tensor("x").shape, (ir::Shape{3, 16, 32}));
  ASSERT_EQ(g.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g.tensor("y").shape, (ir::Shape{3, 16, 32}));
  EXPECT_EQ(g.nodes.back().outputs[0], "y");
  EXPECT_EQ(g.nodes.back().name, "norm2.bias.Add");

  auto out_shape = [&](const std::string& node) {
    return g.tensor(node_named(g, node).outputs[0]).shape;
  };
  EXPECT_EQ(out_shape("attn.q_heads.Reshape"), (ir::Shape{3, 16, 2, 16}));
  EXPECT_EQ(out_shape("attn.q_heads.Transpose"), (ir::Shape{3, 2, 16, 16}));
  EXPECT_EQ(out_shape("attn.k_t.Transpose"), (ir::Shape{3, 2, 16, 16}));
  EXPECT_EQ(out_shape("attn.scores.MatMul"), (ir::Shape{3, 2, 16, 16}));
  EXPECT_EQ(out_shape("attn.context.MatMul"), (ir::Shape{3, 2, 16, 16}));
  EXPECT_EQ(out_shape("attn.merge.Reshape"), (ir::Shape{3, 16, 32}));
  EXPECT_EQ(out_shape("ffn.fc1.Add"), (ir::Shape{3, 16, 48}));
  EXPECT_EQ(out_shape("norm1.mean.ReduceMean"), (ir::Shape{3, 16, 1}));
  EXPECT_EQ(g.tensor("attn.q_proj.weight").shape, (ir::Shape{32, 32}));
  EXPECT_EQ(g.tensor("ffn.fc1.weight").shape, (ir::Shape{48, 32}));
  EXPECT_EQ(g.tensor("ffn.fc2.weight").shape, (ir::Shape{32, 48}));
  EXPECT_EQ(g.tensor("norm1.weight").shape, (ir::Shape{32}));
}

TEST(Transformer, AttentionIsSpelledOut) {
  ir::Graph g = build_model("transformer:seq=8,d=64,heads=4,ffn=32", 0);  // head dim 16
  // Q, K, V: Transpose(W) -> MatMul -> Add(bias) -> Reshape [b,s,h,dh] -> Transpose [0,2,1,3].
  for (const char* p : {"q", "k", "v"}) {
    const std::string proj = std::string("attn.") + p + "_proj.";
    const std::string heads = std::string("attn.") + p + "_heads.";
    EXPECT_EQ(node_named(g, proj + "MatMul").inputs[0], "x");
    const ir::Node& r = node_named(g, heads + "Reshape");
    EXPECT_EQ(r.inputs[0], node_named(g, proj + "Add").outputs[0]);
    EXPECT_EQ(r.attrs.get_ints("shape"), (std::vector<int64_t>{1, 8, 4, 16}));
    const ir::Node& t = node_named(g, heads + "Transpose");
    EXPECT_EQ(t.inputs[0], r.outputs[0]);
    EXPECT_EQ(t.attrs.get_ints("perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  }
  const ir::Node& kt = node_named(g, "attn.k_t.Transpose");
  EXPECT_EQ(kt.inputs[0], node_named(g, "attn.k_heads.Transpose").outputs[0]);
  EXPECT_EQ(kt.attrs.get_ints("perm"), (std::vector<int64_t>{0, 1, 3, 2}));

  const ir::Node& qk = node_named(g, "attn.scores.MatMul");
  EXPECT_EQ(qk.inputs, (std::vector<std::string>{node_named(g, "attn.q_heads.Transpose").outputs[0],
                                                 kt.outputs[0]}));
  const ir::Node& scale = node_named(g, "attn.scores.Mul");
  EXPECT_EQ(scale.inputs[0], qk.outputs[0]);
  EXPECT_FLOAT_EQ(scalar_value(g, scale.inputs[1]), 0.25f);  // 1/sqrt(16)
  const ir::Node& softmax = node_named(g, "attn.Softmax");
  EXPECT_EQ(softmax.inputs[0], scale.outputs[0]);
  EXPECT_EQ(softmax.attrs.get_int("axis", 0), -1);
  const ir::Node& pv = node_named(g, "attn.context.MatMul");
  EXPECT_EQ(pv.inputs,
            (std::vector<std::string>{softmax.outputs[0],
                                      node_named(g, "attn.v_heads.Transpose").outputs[0]}));
  const ir::Node& merge = node_named(g, "attn.merge.Transpose");
  EXPECT_EQ(merge.inputs[0], pv.outputs[0]);
  EXPECT_EQ(merge.attrs.get_ints("perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  const ir::Node& flat = node_named(g, "attn.merge.Reshape");
  EXPECT_EQ(flat.attrs.get_ints("shape"), (std::vector<int64_t>{1, 8, 64}));
  EXPECT_EQ(node_named(g, "attn.out_proj.MatMul").inputs[0], flat.outputs[0]);
  const ir::Node& res = node_named(g, "residual1.Add");
  EXPECT_EQ(res.inputs,
            (std::vector<std::string>{"x", node_named(g, "attn.out_proj.Add").outputs[0]}));
}

TEST(Transformer, LayerNormIsDecomposed) {
  ir::Graph g = build_model("transformer:seq=4,d=8,heads=2,ffn=16", 0);
  for (const char* norm : {"norm1.", "norm2."}) {
    const std::string p = norm;
    const ir::Node& mean = node_named(g, p + "mean.ReduceMean");
    EXPECT_EQ(mean.attrs.get_ints("axes"), std::vector<int64_t>{-1});
    EXPECT_EQ(mean.attrs.get_int("keepdims", 0), 1);
    const ir::Node& sub = node_named(g, p + "Sub");
    EXPECT_EQ(sub.inputs, (std::vector<std::string>{mean.inputs[0], mean.outputs[0]}));
    const ir::Node& pow = node_named(g, p + "Pow");
    EXPECT_EQ(pow.inputs[0], sub.outputs[0]);
    EXPECT_FLOAT_EQ(scalar_value(g, pow.inputs[1]), 2.0f);
    const ir::Node& var = node_named(g, p + "var.ReduceMean");
    EXPECT_EQ(var.inputs[0], pow.outputs[0]);
    EXPECT_EQ(var.attrs.get_ints("axes"), std::vector<int64_t>{-1});
    const ir::Node& eps = node_named(g, p + "eps.Add");
    EXPECT_EQ(eps.inputs[0], var.outputs[0]);
    EXPECT_FLOAT_EQ(scalar_value(g, eps.inputs[1]), 1e-5f);
    const ir::Node& sqrt = node_named(g, p + "Sqrt");
    EXPECT_EQ(sqrt.inputs[0], eps.outputs[0]);
    const ir::Node& div = node_named(g, p + "Div");
    EXPECT_EQ(div.inputs, (std::vector<std::string>{sub.outputs[0], sqrt.outputs[0]}));
    const ir::Node& mul = node_named(g, p + "weight.Mul");
    EXPECT_EQ(mul.inputs, (std::vector<std::string>{div.outputs[0], p + "weight"}));
    const ir::Node& add = node_named(g, p + "bias.Add");
    EXPECT_EQ(add.inputs, (std::vector<std::string>{mul.outputs[0], p + "bias"}));
  }
  EXPECT_EQ(node_named(g, "norm1.mean.ReduceMean").inputs[0],
            node_named(g, "residual1.Add").outputs[0]);
  EXPECT_EQ(node_named(g, "norm2.mean.ReduceMean").inputs[0],
            node_named(g, "residual2.Add").outputs[0]);
}

TEST(Transformer, GeluIsDecomposed) {
  ir::Graph g = build_model("transformer:seq=4,d=8,heads=2,ffn=16", 0);
  const std::string x = node_named(g, "ffn.fc1.Add").outputs[0];
  const ir::Node& div = node_named(g, "ffn.gelu.Div");
  EXPECT_EQ(div.inputs[0], x);
  EXPECT_FLOAT_EQ(scalar_value(g, div.inputs[1]), static_cast<float>(std::sqrt(2.0)));
  const ir::Node& erf = node_named(g, "ffn.gelu.Erf");
  EXPECT_EQ(erf.inputs[0], div.outputs[0]);
  const ir::Node& add = node_named(g, "ffn.gelu.Add");
  EXPECT_EQ(add.inputs[0], erf.outputs[0]);
  EXPECT_FLOAT_EQ(scalar_value(g, add.inputs[1]), 1.0f);
  const ir::Node& mul = node_named(g, "ffn.gelu.Mul");
  EXPECT_EQ(mul.inputs, (std::vector<std::string>{x, add.outputs[0]}));
  const ir::Node& half = node_named(g, "ffn.gelu.half.Mul");
  EXPECT_EQ(half.inputs[0], mul.outputs[0]);
  EXPECT_FLOAT_EQ(scalar_value(g, half.inputs[1]), 0.5f);
  EXPECT_EQ(node_named(g, "ffn.fc2.MatMul").inputs[0], half.outputs[0]);
  const ir::Node& res = node_named(g, "residual2.Add");
  EXPECT_EQ(res.inputs, (std::vector<std::string>{node_named(g, "norm1.bias.Add").outputs[0],
                                                  node_named(g, "ffn.fc2.Add").outputs[0]}));
}

TEST(Transformer, EveryProjectionIsTransposedLinear) {
  ir::Graph g = build_model("transformer:seq=4,d=8,heads=2,ffn=16", 0);
  int linears = 0;
  for (const auto& n : g.nodes) {
    if (n.op != "MatMul") continue;
    const ir::Node* b = producer_of(g, n.inputs[1]);
    ASSERT_NE(b, nullptr) << n.name;
    ASSERT_EQ(b->op, "Transpose") << n.name;
    if (g.is_weight(b->inputs[0])) {
      ++linears;
      EXPECT_EQ(b->attrs.get_ints("perm"), (std::vector<int64_t>{1, 0})) << n.name;
    }
  }
  EXPECT_EQ(linears, 6);  // q, k, v, out, fc1, fc2 (the other 2 MatMuls are attention)
}

TEST(Transformer, ScalarConstantsAreWeights) {
  ir::Graph g = build_model("transformer", 0);
  int scalars = 0;
  for (const auto& [name, t] : g.tensors())
    if (t.shape.empty()) {
      ++scalars;
      EXPECT_EQ(t.kind, ir::TensorKind::Weight) << name;
    }
  EXPECT_EQ(scalars, 8);
  EXPECT_FLOAT_EQ(scalar_value(g, "attn.scale"), 0.125f);  // head dim 64
}

TEST(Stack, IsNBlocks) {
  ir::Graph block = build_model("transformer:seq=128", 0);
  ir::Graph g = build_model("stack", 0);
  ASSERT_NO_THROW(ir::verify(g));
  EXPECT_EQ(g.name, "stack");
  EXPECT_EQ(g.nodes.size(), 4 * block.nodes.size());
  Histogram four;
  for (const auto& [op, c] : kBlockHistogram) four[op] = 4 * c;
  EXPECT_EQ(g.op_histogram(), four);
  EXPECT_EQ(g.tensors().size(), 4 * (block.tensors().size() - 1) + 1);  // one shared input "x"
  EXPECT_EQ(g.tensor("x").shape, (ir::Shape{1, 128, 256}));
  EXPECT_EQ(g.tensor("y").shape, (ir::Shape{1, 128, 256}));
  EXPECT_EQ(g.outputs, std::vector<std::string>{"y"});
  expect_only_primitive_ops(g);

  // Blocks in order, each named "layer<i>." and 56 nodes long; block i reads block i-1's output.
  for (int i = 0; i < 4; ++i) {
    const std::string p = "layer" + std::to_string(i) + ".";
    for (int j = 0; j < kBlockNodes; ++j) {
      const ir::Node& n = g.nodes[static_cast<size_t>(i * kBlockNodes + j)];
      EXPECT_EQ(n.name.rfind(p, 0), 0u) << n.name;
      EXPECT_EQ(n.name, p + block.nodes[static_cast<size_t>(j)].name);
    }
    const std::string in =
        i == 0 ? "x"
               : node_named(g, "layer" + std::to_string(i - 1) + ".norm2.bias.Add").outputs[0];
    EXPECT_EQ(node_named(g, p + "attn.q_proj.MatMul").inputs[0], in);
    EXPECT_EQ(node_named(g, p + "residual1.Add").inputs[0], in);
  }
  EXPECT_EQ(g.tensor("layer3.ffn.fc1.weight").shape, (ir::Shape{1024, 256}));
}

TEST(Stack, LayersOption) {
  for (int layers : {1, 2, 7}) {
    const std::string spec =
        "stack:layers=" + std::to_string(layers) + ",seq=8,d=16,heads=2,ffn=32";
    ir::Graph g = build_model(spec, 3);
    ASSERT_NO_THROW(ir::verify(g)) << spec;
    EXPECT_EQ(static_cast<int>(g.nodes.size()), layers * kBlockNodes) << spec;
    EXPECT_EQ(g.name, spec);
  }
}

TEST(Builders, FootprintIsExact) {
  for (const char* spec : {"mlp", "mlp:dims=7-3-9-2,batch=5", "transformer",
                           "transformer:seq=16,d=32,heads=2,ffn=48,batch=3", "stack",
                           "stack:layers=3,seq=5,d=12,heads=3,ffn=20,batch=2"}) {
    ModelSpec s = parse_model_spec(spec);
    ir::Graph g = build_model(s, 0);
    ModelFootprint f = model_footprint(s);
    EXPECT_EQ(f.weight_bytes, bytes_of(g, true)) << spec;
    EXPECT_EQ(f.activation_bytes, bytes_of(g, false)) << spec;
  }
}

TEST(Builders, DirectConfigsValidate) {
  EXPECT_THROW(build_mlp(MlpConfig{{784}, 1}, 0), Error);
  EXPECT_THROW(build_mlp(MlpConfig{{784, 0, 10}, 1}, 0), Error);
  TransformerConfig c;
  c.d = 30;
  c.heads = 4;
  EXPECT_THROW(build_transformer(c, 0), Error);
  EXPECT_THROW(build_transformer_stack(TransformerConfig{}, 0, 0), Error);
}

TEST(Builders, EveryBuiltinKindBuildsAndVerifies) {
  for (const auto& kind : builtin_model_names()) {
    ir::Graph g = build_model(kind, 0);
    EXPECT_NO_THROW(ir::verify(g)) << kind;
    EXPECT_EQ(g.name, kind);
    EXPECT_EQ(g.inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(g.outputs.size(), 1u);
  }
}

}  // namespace
}  // namespace fusebox::models
