// The CUDA layout kernels' arithmetic, run on the host: parameters built by the same functions
// prepare() uses (ops/cuda/layout_params.h, the Concat batching in layout_kernels.h), then every
// output element placed by the kernels' own index helpers (ops/cuda/layout_index.cuh), the
// transpose tiles moved through a host copy of the shared-memory tile exactly as a block moves
// them. The result must equal the CPU kernel's, element for element. What this cannot check
// (launches, the device itself) is in cuda_kernels_test.cpp, which needs a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/cuda/layout_index.cuh"
#include "ops/cuda/layout_params.h"
#include "tests/ops/op_test_util.h"

using namespace fusebox;
using namespace fusebox::cuda;
using namespace fusebox::optest;

namespace {

// What launch_strided_copy computes, for float data, with index type I.
template <typename I>
std::vector<float> strided_copy_on_host(const StridedCopyParams& p, const float* x) {
  std::vector<float> y(static_cast<size_t>(p.numel), std::numeric_limits<float>::quiet_NaN());
  if (p.numel == 0) return y;
  switch (p.kind) {
    case CopyKind::Memcpy:
      std::memcpy(y.data(), x + p.base, y.size() * sizeof(float));
      break;
    case CopyKind::Gather:
      for (I i = 0; i < static_cast<I>(p.numel); ++i) y[static_cast<size_t>(i)] = x[strided_offset(p, i)];
      break;
    case CopyKind::Tiles: {
      // Each block: a 32 x 8 thread grid, each thread 4 rows of the tile, read then written.
      float tile[kTileDim * (kTileDim + 1)];
      constexpr int kPitch = kTileDim + 1;
      for (int64_t t = 0; t < transpose_tiles(p); ++t) {
        const TransposeTile w = transpose_tile(p, t);
        for (int ty = 0; ty < kTileBlockRows; ++ty)
          for (int tx = 0; tx < kTileDim; ++tx)
            for (int j = ty; j < kTileDim; j += kTileBlockRows) {
              const int64_t rr = w.r0 + tx, cc = w.c0 + j;
              if (rr < w.rows && cc < w.cols) tile[j * kPitch + tx] = x[w.in_base + rr + cc * w.col_stride];
            }
        for (int ty = 0; ty < kTileBlockRows; ++ty)
          for (int tx = 0; tx < kTileDim; ++tx)
            for (int j = ty; j < kTileDim; j += kTileBlockRows) {
              const int64_t rr = w.r0 + j, cc = w.c0 + tx;
              if (rr < w.rows && cc < w.cols)
                y[static_cast<size_t>(w.out_base + rr * w.cols + cc)] = tile[tx * kPitch + j];
            }
      }
      break;
    }
  }
  return y;
}

void expect_same_floats(const std::vector<float>& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel()) << what;
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_EQ(std::memcmp(&got[static_cast<size_t>(i)], want.data<float>() + i, sizeof(float)), 0)
        << what << ": element " << i << " is " << got[static_cast<size_t>(i)] << ", the CPU has "
        << want.data<float>()[i];
}

void check_strided(const StridedCopyParams& p, const Tensor& x, const Tensor& want, const std::string& what) {
  expect_same_floats(strided_copy_on_host<int64_t>(p, x.data<float>()), want, what + " (64-bit)");
  expect_same_floats(strided_copy_on_host<int32_t>(p, x.data<float>()), want, what + " (32-bit)");
}

TEST(LayoutIndex, TransposesMatchTheCpu) {
  std::mt19937 rng(41);
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 4, 5}, {0, 1, 2, 3}}, {{2, 7, 3, 16}, {0, 2, 1, 3}}, {{100, 70}, {1, 0}},  {{3, 64, 33}, {0, 2, 1}},
      {{4, 5, 6}, {2, 1, 0}},       {{1, 9, 1, 4}, {3, 1, 0, 2}},  {{2, 3}, {}},         {{}, {}},
      {{0, 4}, {1, 0}},             {{2, 33, 3, 40}, {2, 0, 3, 1}}, {{5, 2, 37}, {2, 0, 1}}, {{31, 65}, {1, 0}}};
  const CopyKind expected_kinds[] = {CopyKind::Memcpy, CopyKind::Gather, CopyKind::Tiles, CopyKind::Tiles,
                                     CopyKind::Gather, CopyKind::Tiles,  CopyKind::Tiles, CopyKind::Gather,
                                     CopyKind::Gather, CopyKind::Tiles,  CopyKind::Tiles, CopyKind::Tiles};
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& [shape, perm] = cases[c];
    ir::Attributes attrs;
    if (!perm.empty()) attrs.set("perm", perm);
    Tensor x = random_f32(shape, rng);
    const StridedCopyParams p = make_transpose(shape, DType::f32, perm);
    const std::string what = "Transpose " + ir::shape_str(shape) + " " + attrs.to_string();
    if (ir::numel(shape) > 0) {
      EXPECT_EQ(p.kind, expected_kinds[c]) << what;
    }
    check_strided(p, x, run1("Transpose", {x}, attrs), what);
  }
}

TEST(LayoutIndex, SlicesMatchTheCpu) {
  std::mt19937 rng(43);
  Tensor x = random_f32({6, 10, 8}, rng);
  const int64_t big = std::numeric_limits<int64_t>::max();
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<Case> cases = {{{1}, {4}, {}, {}},
                                   {{-1, 2}, {-big, big}, {1, 2}, {-2, 3}},
                                   {{20}, {-20}, {-1}, {-1}},
                                   {{3}, {3}, {}, {}},
                                   {{0, 0, 0}, {6, 10, 8}, {}, {2, 3, 1}},
                                   {{5, 9, 7}, {-big, -big, -big}, {}, {-1, -1, -1}},
                                   {{2}, {3}, {1}, {}}};
  for (const auto& c : cases) {
    ir::Attributes attrs = attrs_of({{"starts", c.starts}, {"ends", c.ends}});
    if (!c.axes.empty()) attrs.set("axes", c.axes);
    if (!c.steps.empty()) attrs.set("steps", c.steps);
    Tensor want = run1("Slice", {x}, attrs);
    const StridedCopyParams p = make_slice(x.shape(), want.shape(), DType::f32, c.starts, c.axes, c.steps);
    check_strided(p, x, want, "Slice " + attrs.to_string());
  }
}

TEST(LayoutIndex, StridedCopiesRefuseDeepWalks) {
  // Nine dims that cannot merge: a transpose alternating two interleaved halves.
  const Shape x = {2, 2, 2, 2, 2, 2, 2, 2, 2};
  EXPECT_THROW(make_transpose(x, DType::f32, {8, 6, 4, 2, 0, 7, 5, 3, 1}), Error);
  EXPECT_THROW(make_transpose({2, 3}, DType::f32, {0, 0}), Error);
  EXPECT_THROW(make_transpose({2, 3}, DType::f32, {0}), Error);
  EXPECT_THROW(make_slice({4}, {4}, DType::f32, {0}, {}, {0}), Error);
}

TEST(LayoutIndex, ConcatBatchesMatchTheCpu) {
  std::mt19937 rng(47);
  for (int64_t axis : {0, 1, 2}) {
    std::vector<Tensor> in;
    for (int k = 0; k < 70; ++k) {
      Shape s = {3, 4, 5};
      s[static_cast<size_t>(axis)] = k % 7 == 3 ? 0 : 1 + k % 3;
      in.push_back(random_f32(s, rng));
    }
    Tensor want = run1("Concat", in, attrs_of({{"axis", axis}}));
    // The parameters prepare_concat() builds, and run()'s batching.
    ConcatBatch proto{};
    proto.elem_bytes = 4;
    proto.outer = ir::numel(Shape(want.shape().begin(), want.shape().begin() + axis));
    const int64_t inner = ir::numel(Shape(want.shape().begin() + axis + 1, want.shape().end()));
    std::vector<int64_t> chunk;
    std::vector<const void*> ptrs;
    for (const auto& t : in) {
      chunk.push_back(t.shape()[static_cast<size_t>(axis)] * inner);
      proto.row += chunk.back();
      ptrs.push_back(t.data<float>());
    }
    std::vector<float> y(static_cast<size_t>(want.numel()), std::numeric_limits<float>::quiet_NaN());
    int launches = 0;
    for_each_concat_batch(proto, static_cast<int32_t>(in.size()), chunk.data(), ptrs.data(), [&](const ConcatBatch& b) {
      ++launches;
      EXPECT_GE(b.count, 1);
      EXPECT_LE(b.count, kConcatBatch);
      const int64_t n = b.outer * b.begin[b.count];
      for (int64_t e = 0; e < n; ++e) {
        int64_t src = 0, dst = 0;
        const int j = concat_locate(b, e, &src, &dst);
        y[static_cast<size_t>(dst)] = static_cast<const float*>(b.src[j])[src];
      }
    });
    EXPECT_EQ(launches, 2) << "60 non-empty inputs: batches of 32 and 28";
    expect_same_floats(y, want, "Concat axis " + std::to_string(axis));
  }
}

TEST(LayoutIndex, GathersMatchTheCpu) {
  std::mt19937 rng(53);
  struct Case {
    Shape data;
    Tensor indices;
    int64_t axis;
  };
  // In range, negative ones included: the CPU refuses an index out of range (the next test).
  Tensor idx1(DType::i64, {2, 4});
  const int64_t v1[] = {0, 9, -1, -10, 5, -6, 3, 3};
  std::memcpy(idx1.data<int64_t>(), v1, sizeof v1);
  Tensor idx2(DType::i64, {5});
  const int64_t v2[] = {6, -7, 0, 1, 2};
  std::memcpy(idx2.data<int64_t>(), v2, sizeof v2);
  Tensor idx3(DType::i64, {});
  idx3.data<int64_t>()[0] = -2;
  const std::vector<Case> cases = {{{10, 16}, idx1, 0}, {{3, 7, 2}, idx2, 1}, {{4, 5}, idx3, -1}};
  for (const auto& c : cases) {
    Tensor x = random_f32(c.data, rng);
    Tensor want = run1("Gather", {x, c.indices}, attrs_of({{"axis", c.axis}}));
    const int axis = ir::normalize_axis(c.axis, c.data.size(), "Gather");
    GatherParams p{};
    p.elem_bytes = 4;
    p.outer = ir::numel(Shape(c.data.begin(), c.data.begin() + axis));
    p.axis_dim = c.data[static_cast<size_t>(axis)];
    p.count = c.indices.numel();
    p.slice = ir::numel(Shape(c.data.begin() + axis + 1, c.data.end()));
    std::vector<float> y(static_cast<size_t>(want.numel()));
    for (int64_t e = 0; e < want.numel(); ++e) {
      const int64_t src = gather_source(p, c.indices.data<int64_t>(), e);
      y[static_cast<size_t>(e)] = src < 0 ? 0.0f : x.data<float>()[src];
    }
    expect_same_floats(y, want, "Gather " + ir::shape_str(c.data) + " axis " + std::to_string(c.axis));
  }
}

// An index out of range: the CPU kernel refuses it, naming it; the CUDA kernel's source index is
// -1 (it writes zeros: the device has no error path yet, which is noted in issue 24's work).
TEST(LayoutIndex, AGatherIndexOutOfRangeIsRefusedByTheCpuAndHasNoSourceOnTheDevice) {
  std::mt19937 rng(54);
  Tensor x = random_f32({10, 16}, rng);
  for (const int64_t bad : {int64_t{10}, int64_t{-11}}) {
    Tensor idx(DType::i64, {1});
    idx.data<int64_t>()[0] = bad;
    try {
      run1("Gather", {x, idx}, attrs_of({{"axis", int64_t{0}}}));
      ADD_FAILURE() << "index " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("index " + std::to_string(bad)), std::string::npos) << e.what();
    }
    GatherParams p{};
    p.elem_bytes = 4;
    p.outer = 1;
    p.axis_dim = 10;
    p.count = 1;
    p.slice = 16;
    EXPECT_LT(gather_source(p, idx.data<int64_t>(), 0), 0) << bad;
  }
}

}  // namespace
