// Transpose, Concat, Slice, Gather, Expand, Tile, Pad and the view-op copies against
// index-by-index reference loops (exact comparison: these only move data), for f32 and i64.
#include <algorithm>
#include <limits>

#include "core/exec/session.h"
#include "core/ir/graph.h"
#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

Tensor random_of(DType dt, const Shape& s, std::mt19937& rng) {
  return dt == DType::f32 ? random_f32(s, rng) : random_i64(s, rng, -1000000, 1000000);
}

// Values as doubles: exact for these f32 values and for i64 in +-1e6.
std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = at(t, i);
  return v;
}

// ---- Expand, Tile, Pad ---------------------------------------------------------------------

TEST(Expand, BroadcastsBothWays) {
  std::mt19937 rng(41);
  for (DType dt : {DType::f32, DType::i64})
    for (const auto& [xs, shape] : std::vector<std::pair<Shape, Shape>>{
             {{3, 1}, {2, 1, 6}}, {{3, 1}, {3, 4}}, {{}, {2, 3}}, {{1}, {0}}, {{2, 3}, {1}},
             {{5, 1, 7}, {5, 300, 7}}, {{4}, {1, 1, 4}}}) {
      Tensor x = random_of(dt, xs, rng);
      const Shape out = ir::broadcast_shapes(xs, shape);
      std::vector<double> want(static_cast<size_t>(ir::numel(out)));
      for (int64_t i = 0; i < ir::numel(out); ++i) want[i] = at(x, bcast_index(xs, out, i));
      for (int threads : {1, 2})
        expect_equal(run1("Expand", {x}, attrs_of({{"shape", shape}}), threads), out, want,
                     "Expand " + shape_str(xs) + " to " + shape_str(shape));
    }
  EXPECT_THROW(run1("Expand", {Tensor(DType::f32, {3})}, attrs_of({{"shape", std::vector<int64_t>{2}}})), Error);
}

TEST(Tile, RepeatsEveryDim) {
  std::mt19937 rng(42);
  for (DType dt : {DType::f32, DType::i64})
    for (const auto& [xs, rep] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
             {{2, 3}, {1, 1}}, {{2, 3}, {2, 3}}, {{3}, {4}}, {{2, 1, 3}, {1, 5, 2}}, {{2, 3}, {0, 2}},
             {{}, {}}, {{100, 70}, {3, 2}}}) {
      Tensor x = random_of(dt, xs, rng);
      Shape out;
      for (size_t d = 0; d < xs.size(); ++d) out.push_back(xs[d] * rep[d]);
      std::vector<double> want(static_cast<size_t>(ir::numel(out)));
      for (int64_t i = 0; i < ir::numel(out); ++i) {
        std::vector<int64_t> idx = unravel(i, out);
        for (size_t d = 0; d < xs.size(); ++d) idx[d] %= xs[d];
        want[i] = at(x, ravel(idx, xs));
      }
      for (int threads : {1, 2})
        expect_equal(run1("Tile", {x}, attrs_of({{"repeats", rep}}), threads), out, want,
                     "Tile " + shape_str(xs));
    }
  EXPECT_THROW(run1("Tile", {Tensor(DType::f32, {3})}, attrs_of({{"repeats", std::vector<int64_t>{1, 2}}})), Error);
}

// Reference Pad: per dim, the input index for an output index (or -1), by the mode's rule
// written out directly (reflect: mirror about the first and last element).
int64_t ref_pad_index(int64_t o, int64_t b, int64_t n, const std::string& mode) {
  int64_t i = o - b;
  if (mode == "constant") return i >= 0 && i < n ? i : -1;
  if (mode == "edge") return std::clamp<int64_t>(i, 0, n - 1);
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

TEST(Pad, ConstantReflectEdge) {
  std::mt19937 rng(43);
  struct Case {
    Shape x;
    std::vector<int64_t> pads;
  };
  const std::vector<Case> cases = {
      {{3, 4}, {0, 2, 0, 1}}, {{3, 4}, {1, 1, 2, 2}}, {{2, 3, 5}, {0, 1, 2, 1, 0, 3}},
      {{5}, {3, 4}},          {{4, 6}, {-1, 2, 0, -3}}, {{3, 4}, {0, 0, 0, 0}}, {{200, 300}, {2, 3, 1, 2}},
      {{3, 4}, {5, 0, 0, 7}}, {{1, 3}, {2, 1, 1, 0}},  // pads past the dim (reflect repeats)
  };
  for (DType dt : {DType::f32, DType::i64})
    for (const auto& c : cases)
      for (const std::string mode : {"constant", "reflect", "edge"}) {
        bool negative = false;
        for (int64_t p : c.pads) negative = negative || p < 0;
        if (negative && mode != "constant") continue;
        Tensor x = random_of(dt, c.x, rng);
        Shape out;
        const size_t r = c.x.size();
        for (size_t d = 0; d < r; ++d) out.push_back(c.x[d] + c.pads[d] + c.pads[d + r]);
        Tensor value = dt == DType::f32 ? f32_tensor({}, {7.5f}) : i64_tensor({}, {-9});
        for (bool with_value : {false, true}) {
          const double v = with_value ? at(value, 0) : 0.0;
          std::vector<double> want(static_cast<size_t>(ir::numel(out)));
          for (int64_t i = 0; i < ir::numel(out); ++i) {
            std::vector<int64_t> idx = unravel(i, out);
            bool inside = true;
            for (size_t d = 0; d < r; ++d) {
              idx[d] = ref_pad_index(idx[d], c.pads[d], c.x[d], mode);
              inside = inside && idx[d] >= 0;
            }
            want[i] = inside ? at(x, ravel(idx, c.x)) : v;
          }
          ir::Attributes a = attrs_of({{"pads", c.pads}, {"mode", mode}});
          std::vector<Tensor> in{x};
          if (with_value) in.push_back(value);
          for (int threads : {1, 2})
            expect_equal(run1("Pad", in, a, threads), out, want,
                         "Pad " + mode + " " + shape_str(c.x) + (with_value ? " value" : ""));
        }
      }
}

TEST(Pad, RejectsBadPadsAndModes) {
  Tensor x(DType::f32, {3, 4});
  EXPECT_THROW(run1("Pad", {x}, attrs_of({{"pads", std::vector<int64_t>{1, 1}}})), Error);
  EXPECT_THROW(run1("Pad", {x}, attrs_of({{"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"mode", std::string("wrap")}})),
               Error);
  EXPECT_THROW(run1("Pad", {Tensor(DType::f32, {0, 4})},
                    attrs_of({{"pads", std::vector<int64_t>{1, 0, 0, 0}}, {"mode", std::string("edge")}})),
               Error);  // nothing to repeat
  EXPECT_THROW(run1("Pad", {x}, attrs_of({{"pads", std::vector<int64_t>{-4, 0, 0, 0}}})), Error);
}

// ---- Transpose -----------------------------------------------------------------------------

TEST(Transpose, AnyPermutation) {
  std::mt19937 rng(41);
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{3, 4}, {}},
      {{33, 65}, {1, 0}},  // tile edges
      {{2, 3, 4}, {0, 2, 1}},
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4}, {1, 0, 2}},
      {{2, 3, 4}, {2, 1, 0}},
      {{2, 3, 4}, {0, 1, 2}},
      {{2, 5, 3, 7}, {0, 2, 1, 3}},  // head split
      {{2, 5, 3, 7}, {0, 2, 3, 1}},  // K^T per head
      {{2, 5, 3, 7}, {3, 1, 0, 2}},  // general
      {{1, 3, 1, 5}, {3, 2, 1, 0}},  // size-1 dims
      {{2, 3, 4, 5, 6}, {4, 0, 3, 1, 2}},
      {{0, 3}, {1, 0}},
      {{}, {}},
      {{4, 300, 200}, {0, 2, 1}},  // threaded tiles
      {{8, 128, 4, 32}, {0, 2, 1, 3}},
      {{3, 4}, {-1, -2}},
  };
  for (DType dt : {DType::f32, DType::i64}) {
    for (const auto& [shape, perm_attr] : cases) {
      Tensor x = random_of(dt, shape, rng);
      std::vector<int64_t> perm = perm_attr;
      if (perm.empty())
        for (size_t i = 0; i < shape.size(); ++i)
          perm.push_back(static_cast<int64_t>(shape.size() - 1 - i));
      for (auto& p : perm) p = p < 0 ? p + static_cast<int64_t>(shape.size()) : p;
      Shape out;
      for (int64_t p : perm) out.push_back(shape[p]);
      std::vector<double> want(static_cast<size_t>(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i) {
        std::vector<int64_t> oi = unravel(i, out), ii(shape.size());
        for (size_t d = 0; d < perm.size(); ++d) ii[perm[d]] = oi[d];
        want[i] = at(x, ravel(ii, shape));
      }
      ir::Attributes attrs;
      if (!perm_attr.empty()) attrs.set("perm", perm_attr);
      for (int threads : {1, 2}) {
        Tensor y = run1("Transpose", {x}, attrs, threads);
        EXPECT_EQ(y.dtype(), dt);
        expect_equal(y, out, want, "Transpose " + shape_str(shape) + " " + attrs.to_string());
      }
    }
  }
}

// ---- Concat --------------------------------------------------------------------------------

TEST(Concat, AnyAxis) {
  std::mt19937 rng(42);
  struct Case {
    std::vector<Shape> inputs;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{{2, 3}, {4, 3}}, 0},
      {{{2, 3}, {2, 5}, {2, 1}}, 1},
      {{{2, 3}, {2, 5}}, -1},
      {{{2, 3, 4}, {2, 0, 4}, {2, 7, 4}}, 1},
      {{{5}}, 0},
      {{{3, 2, 2}, {3, 2, 1}}, 2},
      {{{1, 4}, {1, 4}, {1, 4}, {1, 4}}, 0},
      {{{0, 3}, {0, 3}}, 0},
      {{{300, 600}, {300, 100}}, 1},
  };
  for (DType dt : {DType::f32, DType::i64}) {
    for (const auto& c : cases) {
      std::vector<Tensor> in;
      for (const auto& s : c.inputs) in.push_back(random_of(dt, s, rng));
      const size_t rank = c.inputs[0].size();
      const size_t axis =
          static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int64_t>(rank) : c.axis);
      Shape out = c.inputs[0];
      out[axis] = 0;
      for (const auto& s : c.inputs) out[axis] += s[axis];
      std::vector<double> want(static_cast<size_t>(ir::numel(out)));
      for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
        std::vector<int64_t> idx = unravel(i, out);
        size_t k = 0;
        while (idx[axis] >= c.inputs[k][axis]) idx[axis] -= c.inputs[k++][axis];
        want[i] = at(in[k], ravel(idx, c.inputs[k]));
      }
      for (int threads : {1, 2})
        expect_equal(run1("Concat", in, attrs_of({{"axis", c.axis}}), threads), out, want,
                     "Concat axis " + std::to_string(c.axis) + " " + shape_str(out));
    }
  }
}

// ---- Slice ---------------------------------------------------------------------------------

// Indices read along one axis, by the ONNX rules, written independently of the schema: a
// Python-style range after clamping.
std::vector<int64_t> slice_indices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto fix = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v = v < std::numeric_limits<int64_t>::min() + dim ? lo : v + dim;
    return std::min(std::max(v, lo), hi);
  };
  std::vector<int64_t> out;
  if (step > 0) {
    for (int64_t i = fix(start, 0, dim), e = fix(end, 0, dim); i < e; i += step) out.push_back(i);
  } else {
    for (int64_t i = fix(start, 0, dim - 1), e = fix(end, -1, dim - 1); i > e; i += step)
      out.push_back(i);
  }
  return out;
}

TEST(Slice, StartsEndsAxesSteps) {
  std::mt19937 rng(43);
  const int64_t big = std::numeric_limits<int64_t>::max(),
                small = std::numeric_limits<int64_t>::min();
  struct Case {
    Shape x;
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<Case> cases = {
      {{10}, {2}, {7}, {}, {}},
      {{10}, {-3}, {big}, {}, {}},
      {{10}, {0}, {10}, {0}, {2}},
      {{10}, {9}, {small}, {0}, {-1}},  // full reverse
      {{10}, {8}, {1}, {0}, {-3}},
      {{10}, {20}, {30}, {}, {}},  // empty
      {{10}, {-100}, {3}, {}, {}},
      {{4, 6}, {1, 1}, {3, 5}, {}, {}},
      {{4, 6}, {1}, {-1}, {-1}, {}},  // negative axis
      {{4, 6}, {0, 5}, {4, 0}, {0, 1}, {2, -2}},
      {{3, 4, 5}, {1}, {2}, {1}, {}},  // middle axis
      {{3, 4, 5}, {2, 0}, {0, 5}, {0, 2}, {-1, 2}},
      {{2, 3, 64}, {0}, {32}, {2}, {}},  // first half of the last dim (rows)
      {{2, 3, 64}, {32}, {64}, {-1}, {}},
      {{5, 7}, {0}, {-100}, {1}, {-1}},  // step -1 from 0: only index 0
      {{5, 7}, {0}, {7}, {1}, {-1}},     // step -1 towards a larger end: empty
      {{0, 4}, {0}, {3}, {1}, {}},
      {{400, 300}, {1, 5}, {399, 295}, {0, 1}, {1, 1}},  // threaded
  };
  for (DType dt : {DType::f32, DType::i64}) {
    for (const auto& c : cases) {
      Tensor x = random_of(dt, c.x, rng);
      std::vector<std::vector<int64_t>> picks(c.x.size());
      for (size_t d = 0; d < c.x.size(); ++d)
        for (int64_t i = 0; i < c.x[d]; ++i) picks[d].push_back(i);
      for (size_t i = 0; i < c.starts.size(); ++i) {
        int64_t ax = c.axes.empty() ? static_cast<int64_t>(i) : c.axes[i];
        if (ax < 0) ax += static_cast<int64_t>(c.x.size());
        const int64_t step = c.steps.empty() ? 1 : c.steps[i];
        picks[ax] = slice_indices(c.x[ax], c.starts[i], c.ends[i], step);
      }
      Shape out;
      for (const auto& p : picks) out.push_back(static_cast<int64_t>(p.size()));
      std::vector<double> want(static_cast<size_t>(ir::numel(out)));
      for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
        std::vector<int64_t> idx = unravel(i, out);
        for (size_t d = 0; d < idx.size(); ++d) idx[d] = picks[d][idx[d]];
        want[i] = at(x, ravel(idx, c.x));
      }
      ir::Attributes attrs = attrs_of({{"starts", c.starts}, {"ends", c.ends}});
      if (!c.axes.empty()) attrs.set("axes", c.axes);
      if (!c.steps.empty()) attrs.set("steps", c.steps);
      for (int threads : {1, 2})
        expect_equal(run1("Slice", {x}, attrs, threads), out, want,
                     "Slice " + shape_str(c.x) + " " + attrs.to_string());
    }
  }
}

TEST(Slice, RejectsRepeatedAxis) {
  EXPECT_THROW(prepare_only("Slice", {{DType::f32, {4, 4}}}, {{DType::f32, {2, 4}}},
                            attrs_of({{"starts", std::vector<int64_t>{0, 1}},
                                      {"ends", std::vector<int64_t>{2, 3}},
                                      {"axes", std::vector<int64_t>{0, 0}}})),
               Error);
}

// ---- Gather --------------------------------------------------------------------------------

TEST(Gather, AnyAxisAndNegativeIndices) {
  std::mt19937 rng(44);
  struct Case {
    Shape data, indices;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{10, 4}, {2, 3}, 0},  // embedding lookup
      {{10, 4}, {}, 0},      // scalar index drops the axis
      {{3, 7, 5}, {4}, 1},       {{3, 7, 5}, {2, 2}, -1},
      {{6}, {3, 1}, 0},          {{6, 3}, {0}, 0},  // no indices
      {{1000, 64}, {16, 64}, 0},                    // threaded
  };
  for (DType dt : {DType::f32, DType::i64}) {
    for (const auto& c : cases) {
      Tensor x = random_of(dt, c.data, rng);
      const size_t axis =
          static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int64_t>(c.data.size()) : c.axis);
      const int64_t dim = c.data[axis];
      Tensor idx = random_i64(c.indices, rng, -dim, dim - 1);
      Shape out(c.data.begin(), c.data.begin() + static_cast<int64_t>(axis));
      out.insert(out.end(), c.indices.begin(), c.indices.end());
      out.insert(out.end(), c.data.begin() + static_cast<int64_t>(axis) + 1, c.data.end());
      std::vector<double> want(static_cast<size_t>(ir::numel(out)));
      for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
        std::vector<int64_t> oi = unravel(i, out), di;
        di.insert(di.end(), oi.begin(), oi.begin() + static_cast<int64_t>(axis));
        std::vector<int64_t> ii(oi.begin() + static_cast<int64_t>(axis),
                                oi.begin() + static_cast<int64_t>(axis + c.indices.size()));
        int64_t j = idx.data<int64_t>()[ravel(ii, c.indices)];
        di.push_back(j < 0 ? j + dim : j);
        di.insert(di.end(), oi.begin() + static_cast<int64_t>(axis + c.indices.size()), oi.end());
        want[i] = at(x, ravel(di, c.data));
      }
      for (int threads : {1, 2})
        expect_equal(run1("Gather", {x, idx}, attrs_of({{"axis", c.axis}}), threads), out, want,
                     "Gather " + shape_str(c.data) + " " + shape_str(c.indices) + " axis " +
                         std::to_string(c.axis));
    }
  }
}

// An index outside [-n, n-1] is an error naming the node, its indices input and the index, not a
// zeroed row and exit 0. Negative indices inside the range keep working (ONNX allows them).
TEST(Gather, OutOfRangeIndicesAreErrorsNamingTheNodeAndIndex) {
  Tensor table = f32_tensor({97, 2}, std::vector<float>(194, 1.0f));
  EXPECT_EQ(values(run1("Gather", {table, i64_tensor({2}, {-97, 96})})),
            std::vector<double>(4, 1.0));
  for (int64_t bad : {int64_t{97}, int64_t{-98}, int64_t{1000000000},
                      std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    for (int threads : {1, 2}) {
      try {
        run1("Gather", {table, i64_tensor({3}, {0, bad, 1})}, {}, threads);
        ADD_FAILURE() << "no error for index " << bad;
      } catch (const Error& e) {
        std::string m = e.what();
        EXPECT_NE(
            m.find("node 'test_Gather' (Gather): input 'in1' element 1 is index " +
                   std::to_string(bad) + ", out of range for axis 0 of size 97 (valid: -97..96)"),
            std::string::npos)
            << m;
      }
    }
  }
  Tensor x = f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(run1("Gather", {x, i64_tensor({1}, {3})}, attrs_of({{"axis", int64_t{1}}})), Error);
  EXPECT_EQ(values(run1("Gather", {x, i64_tensor({1}, {-3})}, attrs_of({{"axis", int64_t{1}}}))),
            (std::vector<double>{1, 4}));
}

// The same through a session on every executor: the error reaches the caller of run().
TEST(Gather, OutOfRangeIndexFailsASessionRunOnEveryExecutor) {
  cpu::register_backend();
  ir::Graph g;
  g.name = "embed";
  g.add_input("ids", DType::i64, {2});
  g.add_weight("table", f32_tensor({97, 2}, std::vector<float>(194, 0.5f)));
  g.outputs = {g.add_node("Gather", {"table", "ids"}, {}, "embedding")};
  for (const char* executor : {"eager", "interpreted", "compiled"}) {
    exec::SessionOptions opt;
    opt.executor = executor;
    exec::Session session(g, opt);
    EXPECT_EQ(values(session.run({i64_tensor({2}, {96, -97})})[0]), std::vector<double>(4, 0.5))
        << executor;
    try {
      session.run({i64_tensor({2}, {3, 97})});
      ADD_FAILURE() << executor << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "node 'embedding' (Gather): input 'ids' element 1 is index 97"),
                std::string::npos)
          << executor << ": " << e.what();
    }
  }
}

// ---- views ---------------------------------------------------------------------------------

TEST(ViewOps, CopyWhenNotAliased) {
  std::mt19937 rng(45);
  Tensor x = random_f32({2, 3, 4}, rng);
  Tensor i = random_i64({2, 1, 3}, rng, -5, 5);
  expect_equal(run1("Reshape", {x}, attrs_of({{"shape", std::vector<int64_t>{6, -1}}})), {6, 4},
               values(x), "Reshape");
  expect_equal(run1("Identity", {i}), {2, 1, 3}, values(i), "Identity");
  expect_equal(run1("Flatten", {x}), {2, 12}, values(x), "Flatten");
  expect_equal(run1("Squeeze", {i}), {2, 3}, values(i), "Squeeze");
  expect_equal(run1("Unsqueeze", {x}, attrs_of({{"axes", std::vector<int64_t>{0, -1}}})),
               {1, 2, 3, 4, 1}, values(x), "Unsqueeze");
}

}  // namespace
}  // namespace fusebox::optest
