// fuse_patterns: each builtin pattern, its accepted variants and its near misses.
#include <cmath>
#include <limits>

#include "core/passes/fusion_patterns.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

TEST(FusionRegistry, BuiltinPatternsInOrder) {
  std::vector<std::string> names;
  for (const auto& p : FusionRegistry::instance().entries()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"gelu", "layernorm", "skip_layernorm", "attention",
                                             "bias_relu", "bias_gelu", "bias_tanh", "bias_sigmoid",
                                             "matmul_add", "conv_batchnorm", "conv_relu", "conv_clip",
                                             "conv_hardswish", "conv_hardsigmoid", "conv_sigmoid"}));
}

// ---- GELU -------------------------------------------------------------------------------------

struct GeluSpelling {
  bool half_first = false;  // Mul(x, 0.5) first, then Mul with (1 + erf)
  bool commuted = false;    // constants on the left, x on the right
  bool mul_by_inv_sqrt2 = false;
  float one = 1.0f;
};

ir::Graph gelu_graph(const GeluSpelling& s) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 8});
  g.add_weight("sqrt2", scalar(s.mul_by_inv_sqrt2 ? static_cast<float>(std::sqrt(0.5))
                                                  : static_cast<float>(std::sqrt(2.0))));
  g.add_weight("one", scalar(s.one));
  g.add_weight("half", scalar(0.5f));
  auto bin = [&](const char* op, const std::string& a, const std::string& b,
                 const std::string& name) {
    return s.commuted && std::string(op) != "Div" ? g.add_node(op, {b, a}, {}, name)
                                                  : g.add_node(op, {a, b}, {}, name);
  };
  std::string d = bin(s.mul_by_inv_sqrt2 ? "Mul" : "Div", "x", "sqrt2", "Div_1");
  std::string e = g.add_node("Erf", {d}, {}, "Erf_2");
  std::string a = bin("Add", e, "one", "Add_3");
  if (s.half_first) {
    std::string h = bin("Mul", "x", "half", "Mul_4");
    g.outputs = {bin("Mul", h, a, "Mul_5")};
  } else {
    std::string m = bin("Mul", "x", a, "Mul_4");
    g.outputs = {bin("Mul", m, "half", "Mul_5")};
  }
  return g;
}

TEST(FusePatterns, GeluSpellings) {
  for (int variant = 0; variant < 8; ++variant) {
    GeluSpelling s{(variant & 1) != 0, (variant & 2) != 0, (variant & 4) != 0};
    ir::Graph g = gelu_graph(s);
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    SCOPED_TRACE("variant " + std::to_string(variant));
    EXPECT_TRUE(has_line(e.rewrites, "fused Div_1 + Erf_2 + Add_3 + Mul_4 + Mul_5 -> Gelu_"));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "Gelu");
    EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x"}));
    EXPECT_EQ(g.nodes[0].attrs.get_string("approximate", ""), "none");
    EXPECT_EQ(g.nodes[0].outputs, before.outputs);
    expect_same_outputs(before, g);
  }
}

// tanh GELU as PyTorch exports nn.GELU(approximate="tanh"): x^3 as Mul(x, Mul(x, x)) or
// Pow(x, 3), constants on either side, 0.5 applied last or first.
ir::Graph gelu_tanh_graph(bool pow, bool commuted, bool half_first, float c1 = 0.7978845608f) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 8});
  g.add_weight("c2", scalar(0.044715f));
  g.add_weight("c1", scalar(c1));
  g.add_weight("one", scalar(1.0f));
  g.add_weight("half", scalar(0.5f));
  g.add_weight("three", scalar(3.0f));
  auto bin = [&](const char* op, const std::string& a, const std::string& b,
                 const std::string& name) {
    return commuted ? g.add_node(op, {b, a}, {}, name) : g.add_node(op, {a, b}, {}, name);
  };
  std::string cube = pow ? g.add_node("Pow", {"x", "three"}, {}, "Pow_1")
                         : bin("Mul", "x", g.add_node("Mul", {"x", "x"}, {}, "Mul_0"), "Mul_1");
  std::string inner = bin("Add", "x", bin("Mul", "c2", cube, "Mul_2"), "Add_3");
  std::string t = g.add_node("Tanh", {bin("Mul", "c1", inner, "Mul_4")}, {}, "Tanh_5");
  std::string a = bin("Add", "one", t, "Add_6");
  if (half_first)
    g.outputs = {bin("Mul", bin("Mul", "x", "half", "Mul_7"), a, "Mul_8")};
  else
    g.outputs = {bin("Mul", "half", bin("Mul", "x", a, "Mul_7"), "Mul_8")};
  return g;
}

TEST(FusePatterns, GeluTanhSpellings) {
  for (int variant = 0; variant < 8; ++variant) {
    ir::Graph g = gelu_tanh_graph(variant & 1, variant & 2, variant & 4);
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    SCOPED_TRACE("variant " + std::to_string(variant));
    ASSERT_EQ(g.nodes.size(), 1u) << (e.near_misses.empty() ? "" : e.near_misses[0].text);
    EXPECT_EQ(g.nodes[0].op, "Gelu");
    EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x"}));
    EXPECT_EQ(g.nodes[0].attrs.get_string("approximate", ""), "tanh");
    expect_same_outputs(before, g);
  }
  ir::Graph g = gelu_tanh_graph(false, false, false, 0.8f);
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_EQ(count_op(g, "Gelu"), 0);
  EXPECT_TRUE(has_line(e.near_misses, "gelu at Mul_8: Mul_4's factor is 0.8, expected 0.797885"));
}

TEST(FusePatterns, GeluWrongConstantIsANearMiss) {
  ir::Graph g = gelu_graph({false, false, false, 2.0f});
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses, "gelu at Mul_5: Add_3's constant is 2, expected 1"));
}

TEST(FusePatterns, GeluIntermediateWithAnotherReaderIsANearMiss) {
  ir::Graph g = gelu_graph({});
  g.outputs.push_back("Erf_2:out");
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses, "gelu at Mul_5: Erf_2's output is a graph output"));
}

// ---- LayerNorm --------------------------------------------------------------------------------

ir::Graph layernorm_graph(ir::Shape gamma_shape, std::vector<int64_t> axes = {-1},
                          bool gamma_weight = true) {
  ir::Graph g;
  const int64_t d = 8;
  g.add_input("x", ir::DType::f32, {2, 3, d});
  if (gamma_weight)
    g.add_weight("gamma", random_tensor(gamma_shape, 1));
  else
    g.add_input("gamma", ir::DType::f32, gamma_shape);
  g.add_weight("beta", random_tensor({d}, 2));
  g.add_weight("two", scalar(2.0f));
  g.add_weight("eps", scalar(1e-5f));
  ir::Attributes reduce;
  reduce.set("axes", axes);
  std::string mean = g.add_node("ReduceMean", {"x"}, reduce, "ReduceMean_0");
  std::string dd = g.add_node("Sub", {"x", mean}, {}, "Sub_1");
  std::string sq = g.add_node("Pow", {dd, "two"}, {}, "Pow_2");
  std::string var = g.add_node("ReduceMean", {sq}, reduce, "ReduceMean_3");
  std::string ve = g.add_node("Add", {"eps", var}, {}, "Add_4");
  std::string sd = g.add_node("Sqrt", {ve}, {}, "Sqrt_5");
  std::string n = g.add_node("Div", {dd, sd}, {}, "Div_6");
  std::string y = g.add_node("Mul", {"gamma", n}, {}, "Mul_7");
  g.outputs = {g.add_node("Add", {y, "beta"}, {}, "Add_8")};
  return g;
}

TEST(FusePatterns, LayerNorm) {
  for (ir::Shape gamma : {ir::Shape{8}, ir::Shape{1, 1, 8}}) {
    ir::Graph g = layernorm_graph(gamma);
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.rewrites,
                         "fused ReduceMean_0 + Sub_1 + Pow_2 + ReduceMean_3 + Add_4 + Sqrt_5 + "
                         "Div_6 + Mul_7 + Add_8 -> LayerNorm_0"));
    ASSERT_EQ(g.nodes.size(), 1u);
    const ir::Node& ln = g.nodes[0];
    EXPECT_EQ(ln.op, "LayerNorm");
    EXPECT_EQ(ln.attrs.get_int("axis", 0), -1);
    EXPECT_NEAR(ln.attrs.get_float("epsilon", 0), 1e-5, 1e-9);
    EXPECT_EQ(g.tensor(ln.inputs[1]).shape, (ir::Shape{8}));
    expect_same_outputs(before, g);
  }
}

TEST(FusePatterns, LayerNormNearMisses) {
  {
    ir::Graph g = layernorm_graph({8}, {1});
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(
        has_line(e.near_misses, "layernorm at Add_8: ReduceMean_0 reduces axes [1], not [-1]"));
  }
  {
    ir::Graph g = layernorm_graph({8}, {-1}, false);
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.near_misses, "layernorm at Add_8: scale 'gamma' is not a weight"));
  }
  {
    ir::Graph g = layernorm_graph({3, 8});
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.near_misses, "scale 'gamma' has shape [3,8], expected [8]"));
  }
}

// ---- Add + LayerNorm ----------------------------------------------------------------------------

// x [2,4,8] + r -> LayerNorm over the last dim; `r_shape` lets a test make the Add broadcast.
ir::Graph skip_layernorm_graph(const ir::Shape& r_shape, bool sum_read_twice = false) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 4, 8});
  g.add_input("r", ir::DType::f32, r_shape);
  g.add_weight("gamma", random_tensor({8}, 3));
  g.add_weight("beta", random_tensor({8}, 4));
  std::string s = g.add_node("Add", {"x", "r"}, {}, "Add_0");
  std::string y = g.add_node("LayerNorm", {s, "gamma", "beta"}, {}, "LayerNorm_1");
  g.outputs = {y};
  if (sum_read_twice) g.outputs.push_back(g.add_node("Relu", {s}, {}, "Relu_2"));
  return g;
}

TEST(FusePatterns, SkipLayerNorm) {
  ir::Graph g = skip_layernorm_graph({2, 4, 8});
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_TRUE(has_line(e.rewrites, "fused Add_0 + LayerNorm_1 -> SkipLayerNorm_0"));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, "SkipLayerNorm");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "r", "gamma", "beta"}));
  expect_same_outputs(before, g);
}

TEST(FusePatterns, SkipLayerNormNearMisses) {
  {
    ir::Graph g = skip_layernorm_graph({8});  // a bias-like Add: broadcasts
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.near_misses,
                         "skip_layernorm at LayerNorm_1: Add_0 broadcasts [8] to "
                         "[2,4,8] (SkipLayerNorm does not broadcast)"));
    EXPECT_EQ(count_op(g, "SkipLayerNorm"), 0);
  }
  {
    ir::Graph g = skip_layernorm_graph({2, 4, 8}, true);  // the sum is needed elsewhere too
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.near_misses,
                         "skip_layernorm at LayerNorm_1: Add_0's output is also "
                         "read by Relu_2"));
    EXPECT_EQ(count_op(g, "SkipLayerNorm"), 0);
  }
}

// ---- Attention --------------------------------------------------------------------------------

struct AttentionSpelling {
  const char* scale_op = "Mul";  // "Mul", "Div" or "" (scale folded into alpha: transB form)
  // 0: none; 1: Add of a random [3,5] constant; 2: Where(tril == 0, -inf, S) (GPT's causal
  // mask, cond [1,1,3,5]); 3: Where of a constant cond that is not causal; 4: Where of a cond
  // computed at run time; 5: Add of the causal 0 / -inf constant; 6: as 2, filling with -1e9
  int mask = 0;
  ir::Shape k_shape{2, 2, 5, 4};
};

ir::Graph attention_graph(const AttentionSpelling& s) {
  ir::Graph g;
  g.add_input("q", ir::DType::f32, {2, 2, 3, 4});
  g.add_input("k", ir::DType::f32, s.k_shape);
  g.add_input("v", ir::DType::f32, {2, 2, 5, 6});
  std::string scores;
  if (std::string(s.scale_op).empty()) {
    ir::Attributes a;
    a.set("transB", int64_t{1});
    a.set("alpha", 0.5);
    scores = g.add_node("MatMul", {"q", "k"}, a, "MatMul_1");
  } else {
    ir::Attributes perm;
    perm.set("perm", std::vector<int64_t>{0, 1, 3, 2});
    std::string kt = g.add_node("Transpose", {"k"}, perm, "Transpose_0");
    scores = g.add_node("MatMul", {"q", kt}, {}, "MatMul_1");
    g.add_weight("c", scalar(std::string(s.scale_op) == "Mul" ? 0.5f : 2.0f));
    scores = g.add_node(s.scale_op, {scores, "c"}, {}, "Scale_2");
  }
  const float inf = std::numeric_limits<float>::infinity();
  if (s.mask == 1) {
    g.add_weight("mask", random_tensor({3, 5}, 3));
    scores = g.add_node("Add", {scores, "mask"}, {}, "Mask_3");
  } else if (s.mask == 5) {
    ir::Tensor m(ir::DType::f32, {3, 5});
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) m.data<float>()[i * 5 + j] = j > i ? -inf : 0.0f;
    g.add_weight("mask", m);
    scores = g.add_node("Add", {"mask", scores}, {}, "Mask_3");
  } else if (s.mask >= 2) {
    if (s.mask == 4) {
      g.add_input("cond", ir::DType::i64, {3, 5});
    } else {
      ir::Tensor c(ir::DType::i64, {1, 1, 3, 5});
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 5; ++j)
          c.data<int64_t>()[i * 5 + j] = s.mask == 2 ? j > i : (i + j) % 3 == 1;
      g.add_weight("cond", c);
    }
    g.add_weight("neg_inf", scalar(s.mask == 6 ? -1e9f : -inf));
    scores = g.add_node("Where", {"cond", "neg_inf", scores}, {}, "Mask_3");
  }
  std::string p = g.add_node("Softmax", {scores}, {}, "Softmax_4");
  g.outputs = {g.add_node("MatMul", {p, "v"}, {}, "MatMul_5")};
  return g;
}

TEST(FusePatterns, AttentionWithScaleNode) {
  for (const char* op : {"Mul", "Div"}) {
    ir::Graph g = attention_graph({op});
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(
        has_line(e.rewrites, "fused MatMul_1 + Scale_2 + Softmax_4 + MatMul_5 -> Attention_1"));
    ASSERT_EQ(g.nodes.size(), 2u);  // the K transpose stays: Attention reads K^T (k_transposed=1)
    const ir::Node* a = find_op(g, "Attention");
    ASSERT_NE(a, nullptr);
    EXPECT_DOUBLE_EQ(a->attrs.get_float("scale", 0), 0.5);
    EXPECT_EQ(a->attrs.get_int("k_transposed", 0), 1);
    expect_same_outputs(before, g);
  }
}

TEST(FusePatterns, AttentionAfterAbsorbReadsKDirectly) {
  ir::Graph g = attention_graph({""});
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_TRUE(has_line(e.rewrites, "fused MatMul_1 + Softmax_4 + MatMul_5 -> Attention_1"));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"q", "k", "v"}));
  EXPECT_EQ(g.nodes[0].attrs.get_int("k_transposed", 1), 0);
  EXPECT_DOUBLE_EQ(g.nodes[0].attrs.get_float("scale", 0), 0.5);
  expect_same_outputs(before, g);
}

TEST(FusePatterns, AttentionWithMasks) {
  // GPT's tril mask through Where, or the same mask as an added 0 / -inf constant: causal=1, no
  // mask input (the kernel skips the hidden keys).
  for (int kind : {2, 5}) {
    for (const char* scale : {"Mul", ""}) {
      ir::Graph g = attention_graph({scale, kind});
      ir::Graph before = g;
      PassLogEntry e = run_pass(g, "fuse_patterns");
      SCOPED_TRACE("mask kind " + std::to_string(kind) + " scale '" + scale + "'");
      const ir::Node* a = find_op(g, "Attention");
      ASSERT_NE(a, nullptr);
      EXPECT_EQ(a->attrs.get_int("causal", 0), 1);
      EXPECT_EQ(a->inputs.size(), 3u);
      EXPECT_TRUE(has_line(e.rewrites, "-> Attention_1 (causal mask"));
      EXPECT_EQ(count_op(g, "Where") + count_op(g, "Add") + count_op(g, "Softmax"), 0);
      expect_same_outputs(before, g);
    }
  }
  // Any other constant Where mask: an additive 0 / -inf weight; an Add's M: passed as it is.
  for (int kind : {3, 1}) {
    ir::Graph g = attention_graph({"Mul", kind});
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    SCOPED_TRACE("mask kind " + std::to_string(kind));
    const ir::Node* a = find_op(g, "Attention");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->attrs.get_int("causal", 0), 0);
    ASSERT_EQ(a->inputs.size(), 4u);
    if (kind == 1) {
      EXPECT_EQ(a->inputs[3], "mask");
    }
    EXPECT_TRUE(has_line(e.rewrites, "fused MatMul_1 + Scale_2 + Mask_3 + Softmax_4 + MatMul_5 -> Attention_1 (additive mask '"));
    expect_same_outputs(before, g);
  }
}

TEST(FusePatterns, AttentionNearMisses) {
  {
    ir::Graph g = attention_graph({"Mul", 4});
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_EQ(count_op(g, "Attention"), 0);
    EXPECT_TRUE(has_line(e.near_misses,
                         "attention at MatMul_5: Mask_3's condition 'cond' is computed at run "
                         "time, not a constant mask"));
  }
  {  // a finite fill value is not the same as hiding the key (a fully masked row differs)
    ir::Graph g = attention_graph({"Mul", 6});
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_EQ(count_op(g, "Attention"), 0);
    EXPECT_TRUE(has_line(e.near_misses,
                         "attention at MatMul_5: Mask_3 fills with neither -inf constant (neg_inf, "
                         "Scale_2:out): not a mask Attention takes"));
  }
  {
    ir::Graph g = attention_graph({"", false, {1, 2, 5, 4}});  // K broadcast over the batch
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_EQ(count_op(g, "Attention"), 0);
    EXPECT_TRUE(
        has_line(e.near_misses, "leading dims differ: Q [2,2,3,4], K [1,2,5,4], V [2,2,5,6]"));
  }
  {
    ir::Graph g = attention_graph({"Mul"});
    g.outputs.push_back("Softmax_4:out");  // the probabilities are wanted too
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_EQ(count_op(g, "Attention"), 0);
    EXPECT_TRUE(
        has_line(e.near_misses, "attention at MatMul_5: Softmax_4's output is a graph output"));
  }
}

// ---- MatMul + Add (+ Relu) --------------------------------------------------------------------

// An nn.Linear as exporters write it: x [4,8] times a weight W [8,6], plus a bias b [6] (on
// either side of the Add). Returns the Add's output.
std::string linear(ir::Graph& g, const std::string& matmul, const std::string& add,
                   bool bias_first = false) {
  g.add_input("x", ir::DType::f32, {4, 8});
  g.add_weight("W", random_tensor({8, 6}, 1));
  g.add_weight("b", random_tensor({6}, 2));
  std::string mm = g.add_node("MatMul", {"x", "W"}, {}, matmul);
  return bias_first ? g.add_node("Add", {"b", mm}, {}, add) : g.add_node("Add", {mm, "b"}, {}, add);
}

TEST(FusePatterns, MatMulAddReluWithBiasOnEitherSide) {
  for (bool bias_first : {false, true}) {
    ir::Graph g;
    std::string a = linear(g, "MatMul_3", "Add_4", bias_first);
    g.outputs = {g.add_node("Relu", {a}, {}, "Relu_5")};
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.rewrites, "fused MatMul_3 + Add_4 + Relu_5 -> FusedBiasRelu_3"));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "W", "b"}));
    expect_same_outputs(before, g);
  }
}

TEST(FusePatterns, RewriteNamesTheNodesItReplacedAndTheFusedNode) {
  ir::Graph g;
  std::string a = linear(g, "MatMul_3", "Add_4");
  g.outputs = {g.add_node("Relu", {a}, {}, "Relu_5")};
  PassLogEntry e = run_pass(g, "fuse_patterns");
  ASSERT_EQ(e.rewrites.size(), 1u);
  const Rewrite& rw = e.rewrites[0];
  EXPECT_EQ(rw.pattern, "bias_relu");
  EXPECT_EQ(rw.removed, (Names{"MatMul_3", "Add_4", "Relu_5"}));
  EXPECT_EQ(rw.added, (Names{"FusedBiasRelu_3"}));
  EXPECT_EQ(rw.changed, Names{});
  EXPECT_EQ(rw.text, "fused MatMul_3 + Add_4 + Relu_5 -> FusedBiasRelu_3");
  EXPECT_TRUE(e.near_misses.empty());
}

TEST(FusePatterns, ASwitchedOffPatternIsSkippedAndTheNextOneStillRuns) {
  ir::Graph g;
  std::string a = linear(g, "MatMul_3", "Add_4");
  g.outputs = {g.add_node("Relu", {a}, {}, "Relu_5")};
  ir::Graph before = g;
  PassContext ctx = cpu_context();
  ctx.disabled_patterns = {"bias_relu"};
  ir::Graph h = g;
  PassLogEntry e = run_pass(g, "fuse_patterns", ctx);
  // bias_relu comes before matmul_add; skipped, it leaves its MatMul + Add to matmul_add.
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].pattern, "matmul_add");
  EXPECT_EQ(e.rewrites[0].removed, (Names{"MatMul_3", "Add_4"}));
  EXPECT_EQ(e.rewrites[0].added, (Names{"MatMulAdd_3"}));
  EXPECT_EQ(e.rewrites[0].text, "fused MatMul_3 + Add_4 -> MatMulAdd_3");
  EXPECT_EQ(count_op(g, "Relu"), 1);
  expect_same_outputs(before, g);

  ctx.disabled_patterns = {"bias_relu", "matmul_add"};
  e = run_pass(h, "fuse_patterns", ctx);
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(e.rewrites.empty());
  EXPECT_EQ(h.nodes.size(), 3u);
}

TEST(FusePatterns, ASwitchedOffPatternReportsNoNearMiss) {
  ir::Graph g = gelu_graph({false, false, false, 2.0f});  // gelu's near miss at Mul_5
  PassContext ctx = cpu_context();
  ctx.disabled_patterns = {"gelu"};
  PassLogEntry e = run_pass(g, "fuse_patterns", ctx);
  EXPECT_TRUE(e.near_misses.empty()) << e.near_misses.front().text;
  ir::Graph h = gelu_graph({false, false, false, 2.0f});
  e = run_pass(h, "fuse_patterns");
  ASSERT_EQ(e.near_misses.size(), 1u);
  EXPECT_EQ(e.near_misses[0].pattern, "gelu");
  EXPECT_EQ(e.near_misses[0].node, "Mul_5");
}

TEST(FusePatterns, MatMulAddGelu) {
  for (std::string approx : {"none", "tanh"}) {
    ir::Graph g;
    std::string a = linear(g, "MatMul_3", "Add_4");
    ir::Attributes gelu;
    gelu.set("approximate", approx);
    g.outputs = {g.add_node("Gelu", {a}, gelu, "Gelu_5")};
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.rewrites, "fused MatMul_3 + Add_4 + Gelu_5 -> FusedBiasGelu_3"));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "FusedBiasGelu");
    EXPECT_EQ(g.nodes[0].attrs.get_string("approximate", "?"), approx);
    expect_same_outputs(before, g);
  }
}

TEST(FusePatterns, MatMulAddTanhAndSigmoid) {
  for (std::string act : {"Tanh", "Sigmoid"}) {
    ir::Graph g;
    std::string a = linear(g, "MatMul_3", "Add_4");
    g.outputs = {g.add_node(act, {a}, {}, act + "_5")};
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.rewrites, "fused MatMul_3 + Add_4 + " + act + "_5 -> FusedBias" + act + "_3"));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "FusedBias" + act);
    expect_same_outputs(before, g);
  }
}

TEST(FusePatterns, MatMulAddKeepsFlagsAndTakesAResidualComputedLater) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4, 8});
  g.add_input("r", ir::DType::f32, {4, 6});
  g.add_weight("W", random_tensor({6, 8}, 1));
  ir::Attributes a;
  a.set("transB", int64_t{1});
  a.set("alpha", 0.5);
  std::string mm = g.add_node("MatMul", {"x", "W"}, a, "MatMul_0");
  std::string res = g.add_node("Tanh", {"r"}, {}, "Tanh_1");  // C is produced after the MatMul
  std::string sum = g.add_node("Add", {res, mm}, {}, "Add_2");
  // (the Sigmoid after it is now the GEMM's epilogue as well)
  g.outputs = {g.add_node("Sigmoid", {sum}, {}, "Sigmoid_3")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_TRUE(has_line(e.rewrites, "fused MatMul_0 + Add_2 + Sigmoid_3 -> FusedBiasSigmoid_0"));
  const ir::Node* f = find_op(g, "FusedBiasSigmoid");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->inputs, (std::vector<std::string>{"x", "W", res}));
  EXPECT_EQ(f->attrs.get_int("transB", 0), 1);
  EXPECT_DOUBLE_EQ(f->attrs.get_float("alpha", 1), 0.5);
  expect_same_outputs(before, g);
}

TEST(FusePatterns, MatMulAddNearMisses) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4, 8});
  g.add_input("big", ir::DType::f32, {2, 4, 6});
  g.add_weight("W", random_tensor({8, 6}, 1));
  // The MatMul output is read twice.
  std::string m1 = g.add_node("MatMul", {"x", "W"}, {}, "MatMul_1");
  std::string a1 = g.add_node("Add", {m1, m1}, {}, "Add_2");
  std::string t1 = g.add_node("Tanh", {m1}, {}, "Tanh_3");
  // The added tensor would enlarge the output.
  std::string m2 = g.add_node("MatMul", {"x", "W"}, {}, "MatMul_4");
  std::string a2 = g.add_node("Add", {m2, "big"}, {}, "Add_5");
  g.outputs = {a1, t1, a2};
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(
      has_line(e.near_misses, "matmul_add at Add_2: Add_2 adds MatMul_1's output to itself"));
  EXPECT_TRUE(
      has_line(e.near_misses,
               "matmul_add at Add_5: 'big' [2,4,6] does not broadcast to MatMul_4's output [4,6]"));
}

TEST(FusePatterns, BiasReluFallsBackToMatMulAddWhenTheSumIsAlsoRead) {
  ir::Graph g;
  std::string a = linear(g, "MatMul_0", "Add_1");
  std::string r = g.add_node("Relu", {a}, {}, "Relu_2");
  g.outputs = {r, a};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_TRUE(has_line(e.near_misses, "bias_relu at Relu_2: Add_1's output is a graph output"));
  EXPECT_TRUE(has_line(e.rewrites, "fused MatMul_0 + Add_1 -> MatMulAdd_0"));
  ASSERT_EQ(e.near_misses.size(), 1u);
  EXPECT_EQ(e.near_misses[0].pattern, "bias_relu");
  EXPECT_EQ(e.near_misses[0].node, "Relu_2");
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].pattern, "matmul_add");
  EXPECT_EQ(e.rewrites[0].removed, (Names{"MatMul_0", "Add_1"}));
  EXPECT_EQ(e.rewrites[0].added, (Names{"MatMulAdd_0"}));
  EXPECT_EQ(count_op(g, "Relu"), 1);
  expect_same_outputs(before, g);
}

TEST(FusePatterns, LinearInTheNumberOfRewrites) {
  // Rebuilding the use maps and erasing from the node list after every rewrite made this pass
  // quadratic: stack:layers=128 took 9 s. Rewritten in place and compacted once per pattern,
  // these 4,096 fusions over 12,288 nodes take well under a second here (the old pass took over
  // 10 s); the bound leaves room for sanitizers and a loaded machine.
  constexpr int kBlocks = 4096;
  ir::Graph g;
  std::string h = g.add_input("x", ir::DType::f32, {2, 4});
  for (int i = 0; i < kBlocks; ++i) {
    const std::string n = std::to_string(i);
    g.add_weight("W" + n, random_tensor({4, 4}, static_cast<uint64_t>(i) + 1));
    g.add_weight("b" + n, random_tensor({4}, static_cast<uint64_t>(i) + 7));
    std::string m = g.add_node("MatMul", {h, "W" + n}, {}, "MatMul_" + n);
    std::string a = g.add_node("Add", {m, "b" + n}, {}, "Add_" + n);
    h = g.add_node("Relu", {a}, {}, "Relu_" + n);
  }
  g.outputs = {h};
  PassLogEntry e = run_pass(g, "fuse_patterns");
  EXPECT_EQ(e.rewrites.size(), static_cast<size_t>(kBlocks));
  EXPECT_EQ(g.nodes.size(), static_cast<size_t>(kBlocks));
  EXPECT_EQ(g.nodes.back().op, "FusedBiasRelu");
  EXPECT_LT(e.millis, 6000.0) << "fuse_patterns on " << 3 * kBlocks << " nodes";
}

}  // namespace
}  // namespace fusebox::passes::test
