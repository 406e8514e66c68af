// The broadcast walks the CUDA element-wise and FusedElementwise kernels use
// (ops/cuda/strided_walk.h, ops/cuda/broadcast_index.cuh), checked on the host: for every
// output element, the offset each operand reads, rebuilt from the collapsed dims and the
// operand's dim mask as the device does (in 32- and 64-bit indices), equals the offset the
// uncollapsed numpy broadcast strides give. Also the collapse itself and what it refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/shape.h"
#include "ops/cuda/broadcast_index.cuh"
#include "ops/cuda/strided_walk.h"

using namespace fusebox;
using namespace fusebox::cuda;
using ir::Shape;

namespace {

constexpr int kDims = 8;

// Offset of operand `in` for output element `flat` from the uncollapsed broadcast strides.
int64_t reference_offset(const Shape& in, const Shape& out, int64_t flat) {
  const std::vector<int64_t> strides = ir::broadcast_strides(in, out);
  int64_t off = 0;
  for (size_t d = out.size(); d-- > 0;) {
    off += (flat % out[d]) * strides[d];
    flat /= out[d];
  }
  return off;
}

template <typename I>
void check_walk(const std::vector<Shape>& inputs, const Shape& out) {
  const BroadcastWalk w = make_broadcast_walk(inputs, out, kDims);
  ASSERT_EQ(w.masks.size(), inputs.size());
  const int rank = static_cast<int>(w.dims.size());
  ASSERT_GE(rank, 1);
  ASSERT_LE(rank, kDims);
  int64_t dims[kDims] = {};
  for (int d = 0; d < rank; ++d) dims[d] = w.dims[static_cast<size_t>(d)];
  ASSERT_EQ(ir::numel(w.dims), ir::numel(out));
  for (int64_t flat = 0; flat < ir::numel(out); ++flat) {
    I idx[kDims];
    decompose_index<kDims>(static_cast<I>(flat), rank, dims, idx);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const I got = masked_offset<kDims>(w.masks[k], static_cast<I>(flat), rank, dims, idx);
      ASSERT_EQ(static_cast<int64_t>(got), reference_offset(inputs[k], out, flat))
          << "operand " << k << " " << ir::shape_str(inputs[k]) << " -> " << ir::shape_str(out) << " at " << flat;
    }
  }
}

void check_both(const std::vector<Shape>& inputs) {
  Shape out;
  for (const auto& s : inputs) out = ir::broadcast_shapes(out, s);
  check_walk<int32_t>(inputs, out);
  check_walk<int64_t>(inputs, out);
}

TEST(BroadcastWalk, OffsetsMatchTheBroadcastStrides) {
  check_both({{1000}, {1000}});
  check_both({{64, 256}, {256}});
  check_both({{64, 1}, {1, 48}});
  check_both({{3, 1, 5, 1}, {1, 4, 1, 6}});
  check_both({{2, 3, 4}, {}});
  check_both({{}, {7}});
  check_both({{}, {}});
  check_both({{5, 1, 1, 7}, {1, 3, 2, 1}});
  check_both({{4, 1, 6}, {5, 1}, {4, 5, 6}});  // Where's three operands
  check_both({{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}});  // 8 dims: the most there is
  // FusedElementwise: many inputs, each its own pattern.
  check_both({{4, 1, 8}, {1, 5, 1}, {8}, {4, 5, 8}, {}, {5, 8}, {4, 1, 1}, {1, 1, 1}});
}

TEST(BroadcastWalk, CollapsesLikeTheCpu) {
  // Same shapes: one dim. A bias: two dims. Size-1 dims vanish.
  BroadcastWalk w = make_broadcast_walk({{4, 8, 16}, {4, 8, 16}}, {4, 8, 16}, kDims);
  EXPECT_EQ(w.dims, (std::vector<int64_t>{512}));
  EXPECT_EQ(w.masks, (std::vector<uint32_t>{1, 1}));
  w = make_broadcast_walk({{64, 256}, {256}}, {64, 256}, kDims);
  EXPECT_EQ(w.dims, (std::vector<int64_t>{64, 256}));
  EXPECT_EQ(w.masks, (std::vector<uint32_t>{3, 2}));
  w = make_broadcast_walk({{2, 3, 4}, {}}, {2, 3, 4}, kDims);
  EXPECT_EQ(w.dims, (std::vector<int64_t>{24}));
  EXPECT_EQ(w.masks, (std::vector<uint32_t>{1, 0}));
  w = make_broadcast_walk({{1, 1}}, {1, 1}, kDims);
  EXPECT_EQ(w.dims, (std::vector<int64_t>{1}));
  w = make_broadcast_walk({{0, 5}, {5}}, {0, 5}, kDims);
  EXPECT_EQ(ir::numel(w.dims), 0);
}

TEST(BroadcastWalk, RefusesWhatItCannotWalk) {
  EXPECT_THROW(make_broadcast_walk({{3}}, {4}, kDims), Error);
  EXPECT_THROW(make_broadcast_walk({{2, 4}}, {4}, kDims), Error);
  const Shape a = {2, 1, 2, 1, 2, 1, 2, 1, 2}, b = {1, 2, 1, 2, 1, 2, 1, 2, 1};
  try {
    make_broadcast_walk({a, b}, ir::broadcast_shapes(a, b), kDims);
    ADD_FAILURE() << "a 9-dim walk was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs 9 dims"), std::string::npos) << e.what();
  }
}

TEST(CollapseWalk, MergesOnlyWhatEveryOperandWalksAsOne) {
  // A transpose (0, 2, 1, 3) of [2, 7, 3, 16]: the innermost 16 stay contiguous, nothing merges.
  CollapsedWalk w = collapse_walk({2, 3, 7, 16}, {{336, 16, 48, 1}});
  EXPECT_EQ(w.dims, (std::vector<int64_t>{2, 3, 7, 16}));
  // The identity permutation: one run.
  w = collapse_walk({2, 3, 4}, {{12, 4, 1}});
  EXPECT_EQ(w.dims, (std::vector<int64_t>{24}));
  EXPECT_EQ(w.strides[0], (std::vector<int64_t>{1}));
  // A reversed slice (negative stride) keeps its sign; a scalar is one dim of one element.
  w = collapse_walk({4, 5}, {{-5, 1}});
  EXPECT_EQ(w.dims, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(w.strides[0], (std::vector<int64_t>{-5, 1}));
  w = collapse_walk({}, {{}});
  EXPECT_EQ(w.dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(w.strides[0], (std::vector<int64_t>{0}));
}

}  // namespace
