// ir::softmax_split, ir::layer_norm_split and ir::reduce_mean_split against hand-computed splits
// of small shapes, and the errors a bad axis gives.
#include "core/ir/normalization_params.h"

#include <gtest/gtest.h>

#include "core/base/error.h"

namespace fusebox::ir {
namespace {

using Ints = std::vector<int64_t>;

Node node(const char* op) {
  Node n;
  n.name = "n";
  n.op = op;
  n.outputs = {"y"};
  return n;
}

TEST(SoftmaxSplit, AroundTheAxis) {
  Node n = node("Softmax");
  AxisSplit s = softmax_split(n, {2, 3, 4});  // default axis -1
  EXPECT_EQ(s.outer, 6);
  EXPECT_EQ(s.n, 4);
  EXPECT_EQ(s.inner, 1);
  n.attrs.set("axis", int64_t{1});
  s = softmax_split(n, {2, 3, 4});
  EXPECT_EQ(s.outer, 2);
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.inner, 4);
  n.attrs.set("axis", int64_t{-3});
  s = softmax_split(n, {2, 3, 4});
  EXPECT_EQ(s.outer, 1);
  EXPECT_EQ(s.n, 2);
  EXPECT_EQ(s.inner, 12);
}

TEST(SoftmaxSplit, ScalarIsOneRowOfOne) {
  const AxisSplit s = softmax_split(node("Softmax"), {});
  EXPECT_EQ(s.outer * s.n * s.inner, 1);
}

TEST(SoftmaxSplit, AxisOutOfRangeThrows) {
  Node n = node("Softmax");
  n.attrs.set("axis", int64_t{3});
  EXPECT_THROW(softmax_split(n, {2, 3, 4}), Error);
}

TEST(LayerNormSplit, RowsAndNormalizedBlock) {
  Node n = node("LayerNorm");
  n.attrs.set("axis", int64_t{1});
  n.attrs.set("epsilon", 1e-3);
  const LayerNormSplit s = layer_norm_split(n, {2, 3, 4}, 3, 1);
  EXPECT_EQ(s.norm, (Shape{3, 4}));
  EXPECT_EQ(s.rows, 2);
  EXPECT_EQ(s.d, 12);
  EXPECT_DOUBLE_EQ(s.epsilon, 1e-3);
  EXPECT_EQ(s.first_param, 1);
  EXPECT_TRUE(s.has_bias);
  EXPECT_FALSE(s.write_mean);
  EXPECT_FALSE(s.write_inv_std);
}

TEST(LayerNormSplit, DefaultsSkipInputAndOptionalOutputs) {
  Node n = node("SkipLayerNorm");
  n.outputs = {"y", "", "inv"};                                // Mean omitted, InvStdDev named
  const LayerNormSplit s = layer_norm_split(n, {5, 8}, 3, 2);  // x, skip, scale: no bias
  EXPECT_EQ(s.norm, (Shape{8}));
  EXPECT_EQ(s.rows, 5);
  EXPECT_EQ(s.d, 8);
  EXPECT_DOUBLE_EQ(s.epsilon, 1e-5);
  EXPECT_EQ(s.first_param, 2);
  EXPECT_FALSE(s.has_bias);
  EXPECT_FALSE(s.write_mean);
  EXPECT_TRUE(s.write_inv_std);
}

TEST(LayerNormSplit, Errors) {
  EXPECT_THROW(layer_norm_split(node("LayerNorm"), {}, 2, 1), Error);
  Node n = node("LayerNorm");
  n.attrs.set("axis", int64_t{-4});
  EXPECT_THROW(layer_norm_split(n, {2, 3, 4}, 2, 1), Error);
}

TEST(ReduceSplit, KeptAndReducedDimsWithTheirStrides) {
  Node n = node("ReduceMean");
  n.attrs.set("axes", Ints{0, -1});
  const ReduceSplit s = reduce_mean_split(n, {2, 3, 4});  // strides 12, 4, 1
  EXPECT_EQ(s.reduce, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(s.kept_dims, (Shape{3}));
  EXPECT_EQ(s.kept_strides, (Ints{4}));
  EXPECT_EQ(s.reduced_dims, (Shape{2, 4}));
  EXPECT_EQ(s.reduced_strides, (Ints{12, 1}));
  EXPECT_EQ(s.count, 8);
}

TEST(ReduceSplit, NoAxesReducesEverything) {
  const ReduceSplit s = reduce_mean_split(node("ReduceMean"), {2, 3});
  EXPECT_EQ(s.reduce, (std::vector<bool>{true, true}));
  EXPECT_TRUE(s.kept_dims.empty());
  EXPECT_EQ(s.reduced_strides, (Ints{3, 1}));
  EXPECT_EQ(s.count, 6);
}

TEST(ReduceSplit, AxisOutOfRangeThrows) {
  Node n = node("ReduceMean");
  n.attrs.set("axes", Ints{2});
  EXPECT_THROW(reduce_mean_split(n, {2, 3}), Error);
}

}  // namespace
}  // namespace fusebox::ir
