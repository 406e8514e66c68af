// ir::softmax_split, ir::layer_norm_split and ir::reduce_mean_split against hand-computed splits
// of small shapes, and the errors a bad axis gives.
#include "core/ir/normalization_params.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"

namespace fusebox::ir {
namespace {

using Ints = std::vector<int64_t>;

std::vector<TensorType> f32(const std::vector<Shape>& shapes) {
  std::vector<TensorType> t;
  for (const Shape& s : shapes) t.push_back({DType::f32, s});
  return t;
}

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

// Every field of a split, in one line to compare with the hand-computed one.
std::string str(const LayerNormSplit& s) {
  return "norm " + shape_str(s.norm) + " rows " + std::to_string(s.rows) + " d " +
         std::to_string(s.d) + " eps " + std::to_string(s.epsilon) + " scale at " +
         std::to_string(s.first_param) + (s.has_bias ? " bias" : "") +
         (s.write_mean ? " mean" : "") + (s.write_inv_std ? " inv_std" : "");
}

TEST(LayerNormSplit, RowsAndNormalizedBlock) {
  Node n = node("LayerNorm");
  n.attrs.set("axis", int64_t{1});
  n.attrs.set("epsilon", 1e-3);
  EXPECT_EQ(str(layer_norm_split(n, f32({{2, 3, 4}, {3, 4}, {3, 4}}), 1)),
            "norm [3,4] rows 2 d 12 eps 0.001000 scale at 1 bias");
}

TEST(LayerNormSplit, DefaultsSkipInputAndOptionalOutputs) {
  Node n = node("SkipLayerNorm");
  n.outputs = {"y", "", "inv"};  // Mean omitted, InvStdDev named
  // x, skip, scale: no bias
  EXPECT_EQ(str(layer_norm_split(n, f32({{5, 8}, {5, 8}, {8}}), 2)),
            "norm [8] rows 5 d 8 eps 0.000010 scale at 2 inv_std");
}

TEST(LayerNormSplit, Errors) {
  EXPECT_THROW(layer_norm_split(node("LayerNorm"), f32({{}, {}}), 1), Error);
  Node n = node("LayerNorm");
  n.attrs.set("axis", int64_t{-4});
  EXPECT_THROW(layer_norm_split(n, f32({{2, 3, 4}, {4}}), 1), Error);
  try {  // SkipLayerNorm does not broadcast skip
    layer_norm_split(node("SkipLayerNorm"), f32({{2, 8}, {1, 8}, {8}}), 2);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "x [2,8] and skip [1,8] differ");
  }
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
