// The Conv fusion patterns. conv_batchnorm: an inference BatchNorm after a Conv folds into the
// Conv's weight and bias (with or without a bias, grouped, strided), the folded values match a
// double computation, and what cannot fold is a near miss saying why. conv_relu, conv_clip,
// conv_hardswish, conv_hardsigmoid, conv_sigmoid: the activation after a Conv (after its folded
// BatchNorm too) becomes the Conv's, with its parameters.
#include <cmath>

#include "core/passes/fusion_patterns.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

struct ConvBn {
  int64_t c_in = 4, c_out = 6, group = 1, stride = 1;
  bool bias = true;
  bool scale_is_input = false;   // BatchNorm's scale fed at run time
  bool weight_is_input = false;  // the Conv's weight fed at run time
  bool conv_output_read_twice = false;
};

ir::Graph conv_bn_graph(const ConvBn& c) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, c.c_in, 7, 9});
  const ir::Shape w_shape{c.c_out, c.c_in / c.group, 3, 3};
  if (c.weight_is_input)
    g.add_input("w", ir::DType::f32, w_shape);
  else
    g.add_weight("w", random_tensor(w_shape, 1));
  std::vector<std::string> conv_in{"x", "w"};
  if (c.bias) {
    g.add_weight("b", random_tensor({c.c_out}, 2));
    conv_in.push_back("b");
  }
  ir::Attributes a;
  a.set("group", c.group);
  a.set("strides", std::vector<int64_t>{c.stride, c.stride});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  std::string y = g.add_node("Conv", conv_in, a, "Conv_1");
  if (c.scale_is_input)
    g.add_input("scale", ir::DType::f32, {c.c_out});
  else
    g.add_weight("scale", random_tensor({c.c_out}, 3));
  g.add_weight("shift", random_tensor({c.c_out}, 4));
  g.add_weight("mean", random_tensor({c.c_out}, 5));
  ir::Tensor var = random_tensor({c.c_out}, 6);
  for (int64_t i = 0; i < c.c_out; ++i) var.data<float>()[i] = 0.5f + std::abs(var.data<float>()[i]);
  g.add_weight("var", std::move(var));
  ir::Attributes bn;
  bn.set("epsilon", 1e-3);
  std::string z = g.add_node("BatchNorm", {y, "scale", "shift", "mean", "var"}, bn, "BatchNorm_2");
  g.outputs = {z};
  if (c.conv_output_read_twice) g.outputs.push_back(g.add_node("Relu", {y}, {}, "Relu_3"));
  return g;
}

TEST(ConvBatchNorm, FoldsIntoTheConvsWeightAndBias) {
  for (ConvBn c : {ConvBn{}, ConvBn{4, 6, 1, 1, false}, ConvBn{4, 6, 2, 2, true}, ConvBn{6, 6, 6, 1, false}}) {
    SCOPED_TRACE("group " + std::to_string(c.group) + " stride " + std::to_string(c.stride) +
                 (c.bias ? " with bias" : " without bias"));
    ir::Graph g = conv_bn_graph(c);
    const ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.rewrites, "fused Conv_1 + BatchNorm_2 -> Conv"));
    EXPECT_EQ(count_op(g, "BatchNorm"), 0);
    ASSERT_EQ(count_op(g, "Conv"), 1);
    const ir::Node& conv = *find_op(g, "Conv");
    ASSERT_EQ(conv.inputs.size(), 3u) << "the folded Conv always has a bias";
    EXPECT_EQ(conv.attrs.get_int("group", 1), c.group);
    expect_same_outputs(before, g);

    // The folded values, recomputed here in double from the original constants.
    const float* w = before.tensor("w").value->data<float>();
    const float* scale = before.tensor("scale").value->data<float>();
    const float* shift = before.tensor("shift").value->data<float>();
    const float* mean = before.tensor("mean").value->data<float>();
    const float* var = before.tensor("var").value->data<float>();
    const float* fw = g.tensor(conv.inputs[1]).value->data<float>();
    const float* fb = g.tensor(conv.inputs[2]).value->data<float>();
    const int64_t per = (c.c_in / c.group) * 9;
    for (int64_t o = 0; o < c.c_out; ++o) {
      const double s = scale[o] / std::sqrt(static_cast<double>(var[o]) + 1e-3);
      const double b = c.bias ? before.tensor("b").value->data<float>()[o] : 0.0;
      EXPECT_NEAR(fb[o], (b - mean[o]) * s + shift[o], 1e-6) << "bias " << o;
      for (int64_t k = 0; k < per; ++k) EXPECT_NEAR(fw[o * per + k], w[o * per + k] * s, 1e-6);
    }
  }
}

TEST(ConvBatchNorm, WhatCannotFoldIsANearMissSayingWhy) {
  struct Miss {
    ConvBn c;
    std::string why;
  };
  for (const Miss& m : {Miss{{4, 6, 1, 1, true, true}, "BatchNorm_2's scale 'scale' is not an f32 constant"},
                        Miss{{4, 6, 1, 1, true, false, true}, "Conv_1's weight 'w' is computed at run time"},
                        Miss{{4, 6, 1, 1, true, false, false, true}, "Conv_1's output is"}}) {
    SCOPED_TRACE(m.why);
    ir::Graph g = conv_bn_graph(m.c);
    const ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.near_misses, m.why));
    EXPECT_EQ(count_op(g, "BatchNorm"), 1);
    expect_same_outputs(before, g);
  }
}

struct ActCase {
  const char* op;
  ir::Attributes attrs;
  const char* kind;
};

TEST(ConvActivation, EachActivationAfterAConvAndItsFoldedBatchNormBecomesTheConvs) {
  ir::Attributes clip, hs;
  clip.set("min", 0.0);
  clip.set("max", 6.0);
  hs.set("alpha", 0.25);
  hs.set("beta", 0.4);
  for (const ActCase& c : {ActCase{"Relu", {}, "relu"}, ActCase{"Clip", clip, "clip"},
                           ActCase{"HardSwish", {}, "hardswish"}, ActCase{"HardSigmoid", hs, "hardsigmoid"},
                           ActCase{"Sigmoid", {}, "sigmoid"}}) {
    SCOPED_TRACE(c.op);
    ir::Graph g = conv_bn_graph(ConvBn{});
    g.outputs = {g.add_node(c.op, {g.outputs[0]}, c.attrs, std::string(c.op) + "_3")};
    const ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.rewrites, "fused Conv_1 + BatchNorm_2 -> Conv"));
    EXPECT_TRUE(has_line(e.rewrites, std::string(" + ") + c.op + "_3 -> Conv"));
    ASSERT_EQ(g.nodes.size(), 1u) << "Conv + BatchNorm + " << c.op << " is one Conv";
    const ir::Node& conv = g.nodes[0];
    EXPECT_EQ(conv.attrs.get_string("activation", ""), c.kind);
    if (std::string(c.kind) == "clip") {
      EXPECT_EQ(conv.attrs.get_float("activation_min", -1), 0.0);
      EXPECT_EQ(conv.attrs.get_float("activation_max", -1), 6.0);
    }
    if (std::string(c.kind) == "hardsigmoid") {
      EXPECT_EQ(conv.attrs.get_float("activation_alpha", -1), 0.25);
      EXPECT_EQ(conv.attrs.get_float("activation_beta", -1), 0.4);
    }
    expect_same_outputs(before, g);
  }
}

TEST(ConvActivation, AConvOutputReadElsewhereOrAlreadyActivatedIsANearMiss) {
  {
    ir::Graph g = conv_bn_graph(ConvBn{});
    const std::string y = g.nodes[0].outputs[0];
    g.outputs = {g.add_node("Relu", {y}, {}, "Relu_3"), g.add_node("Sigmoid", {y}, {}, "Sigmoid_4")};
    const ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.near_misses, "Conv_1's output is read by"));
    EXPECT_EQ(count_op(g, "Relu"), 1);
    expect_same_outputs(before, g);
  }
  {
    ir::Graph g = conv_bn_graph(ConvBn{});
    g.nodes.pop_back();  // the BatchNorm: the Conv's output feeds two activations in a row
    g.remove_tensor("BatchNorm_2:out");
    g.outputs = {g.add_node("Sigmoid", {g.add_node("Relu", {g.nodes[0].outputs[0]}, {}, "Relu_3")}, {}, "Sigmoid_4")};
    const ir::Graph before = g;
    PassLogEntry e = run_pass(g, "fuse_patterns");
    EXPECT_TRUE(has_line(e.rewrites, "fused Conv_1 + Relu_3 -> Conv"));
    EXPECT_TRUE(has_line(e.near_misses, "already applies relu; a Conv applies one activation"));
    EXPECT_EQ(count_op(g, "Sigmoid"), 1);
    expect_same_outputs(before, g);
  }
}

}  // namespace
}  // namespace fusebox::passes::test
