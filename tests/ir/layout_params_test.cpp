// ir::transpose_read, ir::slice_read, ir::concat_split, ir::gather_split and the many-input
// ir::broadcast_strides against hand-computed strides, offsets and splits of small shapes.
#include "core/ir/layout_params.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"

namespace fusebox::ir {
namespace {

using Ints = std::vector<int64_t>;

Node with_axis(const char* op, int64_t axis) {
  Node n;
  n.name = "n";
  n.op = op;
  n.attrs.set("axis", axis);
  return n;
}

TEST(TransposeRead, HeadSplit) {
  // [B=2, S=3, H=4, D=5] -> [B, H, S, D]; x's strides are 60, 20, 5, 1.
  const StridedRead r = transpose_read({2, 3, 4, 5}, {0, 2, 1, 3});
  EXPECT_EQ(r.shape, (Shape{2, 4, 3, 5}));
  EXPECT_EQ(r.strides, (Ints{60, 5, 20, 1}));
  EXPECT_EQ(r.offset, 0);
}

TEST(TransposeRead, EmptyPermReversesAndNegativeAxesCount) {
  const StridedRead r = transpose_read({2, 3, 4}, {});
  EXPECT_EQ(r.shape, (Shape{4, 3, 2}));
  EXPECT_EQ(r.strides, (Ints{1, 4, 12}));
  EXPECT_EQ(transpose_read({2, 3}, {-1, 0}).strides, (Ints{1, 3}));
}

TEST(TransposeRead, Errors) {
  EXPECT_THROW(transpose_read({2, 3}, {0}), Error);     // rank
  EXPECT_THROW(transpose_read({2, 3}, {0, 0}), Error);  // not a permutation
  EXPECT_THROW(transpose_read({2, 3}, {0, 2}), Error);  // out of range
}

TEST(SliceRead, StartAndStepBecomeOffsetAndStrides) {
  // x [4, 6] (strides 6, 1): rows 1..3, columns 0, 2, 4.
  const StridedRead r = slice_read({4, 6}, {3, 3}, {1, 0}, {}, {1, 2});
  EXPECT_EQ(r.shape, (Shape{3, 3}));
  EXPECT_EQ(r.strides, (Ints{6, 2}));
  EXPECT_EQ(r.offset, 6);
}

TEST(SliceRead, NegativeStartsAndStepsAndClamping) {
  // x [10]: start -1 (index 9), step -3: 9, 6, 3, 0.
  StridedRead r = slice_read({10}, {4}, {-1}, {0}, {-3});
  EXPECT_EQ(r.strides, (Ints{-3}));
  EXPECT_EQ(r.offset, 9);
  // A start past the end clamps to dim - 1 for a negative step, to dim for a positive one.
  r = slice_read({10}, {2}, {100}, {}, {-1});
  EXPECT_EQ(r.offset, 9);
  // Only axis 1 of [2, 5] (strides 5, 1) sliced, by its negative index.
  r = slice_read({2, 5}, {2, 2}, {3}, {-1}, {});
  EXPECT_EQ(r.strides, (Ints{5, 1}));
  EXPECT_EQ(r.offset, 3);
}

TEST(SliceRead, Errors) {
  EXPECT_THROW(slice_read({4}, {4}, {0}, {}, {0}), Error);              // step 0
  EXPECT_THROW(slice_read({4, 4}, {1, 1}, {0, 0}, {1, 1}, {}), Error);  // an axis twice
  EXPECT_THROW(slice_read({4}, {4}, {0, 1}, {0}, {}), Error);           // lengths differ
}

TEST(ConcatSplit, ChunksPerOuterIndex) {
  // [2, 3, 4] and [2, 5, 4] along axis 1 into [2, 8, 4]: per outer index 12 and 20 elements.
  const std::vector<TensorType> in{{DType::f32, {2, 3, 4}}, {DType::f32, {2, 5, 4}}};
  const ConcatSplit s = concat_split(with_axis("Concat", -2), in, {DType::f32, {2, 8, 4}});
  EXPECT_EQ(s.axis, 1);
  EXPECT_EQ(s.outer, 2);
  EXPECT_EQ(s.chunk, (Ints{12, 20}));
  EXPECT_EQ(s.row, 32);
}

TEST(ConcatSplit, Errors) {
  const std::vector<TensorType> in{{DType::f32, {2}}, {DType::i64, {2}}};
  EXPECT_THROW(concat_split(with_axis("Concat", 0), in, {DType::f32, {4}}),
               Error);                                                              // dtypes differ
  EXPECT_THROW(concat_split(with_axis("Concat", 0), {}, {DType::f32, {}}), Error);  // scalars
  EXPECT_THROW(concat_split(with_axis("Concat", 1), {}, {DType::f32, {4}}), Error);  // axis
}

TEST(GatherSplit, DataAroundTheAxis) {
  // data [3, 5, 7] along axis 1, indices [2, 4].
  const GatherSplit s = gather_split(with_axis("Gather", 1), {3, 5, 7}, {2, 4});
  EXPECT_EQ(s.axis, 1);
  EXPECT_EQ(s.outer, 3);
  EXPECT_EQ(s.axis_dim, 5);
  EXPECT_EQ(s.inner, 7);
  EXPECT_EQ(s.count, 8);
}

TEST(GatherSplit, Errors) {
  EXPECT_THROW(gather_split(with_axis("Gather", 0), {}, {1}), Error);
  EXPECT_THROW(gather_split(with_axis("Gather", 2), {3, 4}, {1}), Error);
}

TEST(BroadcastStrides, EveryInputAgainstOneOutput) {
  const auto s = broadcast_strides(std::vector<Shape>{{2, 3, 4}, {3, 1}, {}}, Shape{2, 3, 4});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], (Ints{12, 4, 1}));
  EXPECT_EQ(s[1], (Ints{0, 1, 0}));
  EXPECT_EQ(s[2], (Ints{0, 0, 0}));
  try {
    broadcast_strides(std::vector<Shape>{{3, 5}}, Shape{4, 6});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[3,5] does not broadcast to [4,6]");
  }
}

}  // namespace
}  // namespace fusebox::ir
