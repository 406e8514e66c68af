// StridedView against brute force: a "materialized" tensor holds, for each of its elements in
// row-major order, the source offset that element came from; transpose, slice and reshape are
// applied to it with explicit index arithmetic and every element's offset is compared with the
// view's. Then attention_layout(): the views an Attention node may carry, and their errors.
#include "core/ir/strided_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "core/base/error.h"
#include "core/ir/attention_layout.h"
#include "core/ir/graph.h"

namespace fusebox::ir {
namespace {

using Ints = std::vector<int64_t>;

// --- Brute force ---------------------------------------------------------------------------------

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Ints unravel(int64_t flat, const Shape& s) {
  Ints idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = flat % s[k];
    flat /= s[k];
  }
  return idx;
}

int64_t ravel(const Ints& idx, const Shape& s) {
  int64_t flat = 0;
  for (size_t k = 0; k < s.size(); ++k) flat = flat * s[k] + idx[k];
  return flat;
}

struct Materialized {
  Shape shape;
  Ints at;  // source offset of each element, row-major
};

Materialized source(const Shape& s) {
  Materialized m{s, Ints(static_cast<size_t>(count(s)))};
  std::iota(m.at.begin(), m.at.end(), 0);
  return m;
}

// out[i_0, .., i_r] = in[j] with j[perm[k]] = i_k.
Materialized transpose_slow(const Materialized& m, const Ints& perm) {
  Materialized out;
  for (int64_t p : perm) out.shape.push_back(m.shape[static_cast<size_t>(p)]);
  for (int64_t f = 0; f < count(out.shape); ++f) {
    Ints i = unravel(f, out.shape), j(i.size());
    for (size_t k = 0; k < perm.size(); ++k) j[static_cast<size_t>(perm[k])] = i[k];
    out.at.push_back(m.at[static_cast<size_t>(ravel(j, m.shape))]);
  }
  return out;
}

// out[.., i, ..] = in[.., start + i * step, ..] along `axis`.
Materialized slice_slow(const Materialized& m, size_t axis, int64_t start, int64_t n,
                        int64_t step) {
  Materialized out{m.shape, {}};
  out.shape[axis] = n;
  for (int64_t f = 0; f < count(out.shape); ++f) {
    Ints j = unravel(f, out.shape);
    j[axis] = start + j[axis] * step;
    out.at.push_back(m.at[static_cast<size_t>(ravel(j, m.shape))]);
  }
  return out;
}

// Same elements in the same row-major order.
Materialized reshape_slow(const Materialized& m, const Shape& s) {
  return {s, m.at};
}

// Whether some offset + strides (>= 0) reproduce every element's offset: what a view can express.
bool affine(const Materialized& m) {
  if (m.at.empty()) return true;
  const int64_t base = m.at[0];
  Ints strides(m.shape.size(), 0);
  for (size_t k = 0; k < m.shape.size(); ++k) {
    if (m.shape[k] < 2) continue;
    Ints e(m.shape.size(), 0);
    e[k] = 1;
    strides[k] = m.at[static_cast<size_t>(ravel(e, m.shape))] - base;
    if (strides[k] < 0) return false;
  }
  for (int64_t f = 0; f < count(m.shape); ++f) {
    Ints i = unravel(f, m.shape);
    int64_t o = base;
    for (size_t k = 0; k < i.size(); ++k) o += i[k] * strides[k];
    if (o != m.at[static_cast<size_t>(f)]) return false;
  }
  return true;
}

::testing::AssertionResult same_offsets(const StridedView& v, const Materialized& m) {
  if (v.shape != m.shape)
    return ::testing::AssertionFailure()
           << "shape " << shape_str(v.shape) << " vs " << shape_str(m.shape);
  for (int64_t f = 0; f < count(m.shape); ++f) {
    Ints i = unravel(f, m.shape);
    if (v.offset_of(i) != m.at[static_cast<size_t>(f)])
      return ::testing::AssertionFailure()
             << v.to_string() << ": element " << shape_str(i) << " at " << v.offset_of(i)
             << ", brute force says " << m.at[static_cast<size_t>(f)];
  }
  return ::testing::AssertionSuccess();
}

// Every offset of `v`, for views not made by the ops above (extent, covers_densely).
Ints all_offsets(const StridedView& v) {
  Ints out;
  for (int64_t f = 0; f < count(v.shape); ++f) {
    Ints i = unravel(f, v.shape);
    int64_t o = v.offset;
    for (size_t k = 0; k < i.size(); ++k) o += i[k] * v.strides[k];
    out.push_back(o);
  }
  return out;
}

bool dense_slow(const StridedView& v, int64_t storage) {
  Ints o = all_offsets(v);
  std::sort(o.begin(), o.end());
  Ints want(static_cast<size_t>(storage));
  std::iota(want.begin(), want.end(), 0);
  return o == want;
}

int64_t extent_slow(const StridedView& v) {
  Ints o = all_offsets(v);
  return o.empty() ? 0 : *std::max_element(o.begin(), o.end()) + 1;
}

// A random shape with the same element count as `s`: merges, splits, size-1 dims in and out, or a
// fresh factorization.
Shape random_reshape(const Shape& s, std::mt19937_64& rng) {
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  if (s.empty()) return {1, 1};
  Shape out = s;
  const int64_t n = count(s);
  switch (pick(5)) {
    case 0:  // merge two adjacent dims
      if (out.size() >= 2) {
        size_t k = static_cast<size_t>(pick(static_cast<int64_t>(out.size()) - 1));
        out[k] *= out[k + 1];
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(k) + 1);
      }
      break;
    case 1: {  // split a dim into two factors
      size_t k = static_cast<size_t>(pick(static_cast<int64_t>(out.size())));
      Ints divisors;
      for (int64_t f = 1; f <= out[k]; ++f)
        if (out[k] % f == 0) divisors.push_back(f);
      if (out[k] == 0) divisors = {0};
      int64_t f = divisors[static_cast<size_t>(pick(static_cast<int64_t>(divisors.size())))];
      int64_t rest = f == 0 ? 7 : out[k] / f;
      out[k] = rest;
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(k), f);
      break;
    }
    case 2:  // insert a size-1 dim
      out.insert(out.begin() + pick(static_cast<int64_t>(out.size()) + 1), 1);
      break;
    case 3:  // drop the size-1 dims
      out.erase(std::remove(out.begin(), out.end(), 1), out.end());
      break;
    default: {  // factor the element count afresh into up to 4 dims
      if (n == 0) return {0, 3};
      out.clear();
      int64_t rest = n;
      for (int dims = 0; dims < 3 && rest > 1; ++dims) {
        Ints divisors;
        for (int64_t f = 1; f <= rest; ++f)
          if (rest % f == 0) divisors.push_back(f);
        int64_t f = divisors[static_cast<size_t>(pick(static_cast<int64_t>(divisors.size())))];
        out.push_back(f);
        rest /= f;
      }
      out.push_back(rest);
      std::shuffle(out.begin(), out.end(), rng);
    }
  }
  return out;
}

// --- StridedView ---------------------------------------------------------------------------------

TEST(StridedView, RandomChainsMatchBruteForce) {
  std::mt19937_64 rng(20261122);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  const std::vector<Shape> sources = {{2, 3, 4}, {1, 6, 1, 4}, {4, 1, 6}, {2, 2, 3, 2},
                                      {24},      {3, 0, 2},    {1, 1},    {5, 4}};
  int reshapes_ok = 0, reshapes_refused = 0, slices = 0, transposes = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const Shape& src = sources[static_cast<size_t>(trial) % sources.size()];
    Materialized m = source(src);
    StridedView v = StridedView::contiguous(src);
    ASSERT_TRUE(same_offsets(v, m));
    std::string ops;
    for (int step = 0; step < 5; ++step) {
      SCOPED_TRACE("source " + shape_str(src) + ", ops" + ops);
      const int kind = static_cast<int>(pick(3));
      if (kind == 0 && !m.shape.empty()) {
        Ints perm(m.shape.size());
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        m = transpose_slow(m, perm);
        v = v.transposed(perm);
        ops += " transpose" + shape_str(perm);
        ++transposes;
      } else if (kind == 1 && !m.shape.empty()) {
        size_t axis = static_cast<size_t>(pick(static_cast<int64_t>(m.shape.size())));
        const int64_t dim = m.shape[axis];
        if (dim == 0) continue;
        int64_t start = pick(dim), stride = 1 + pick(3);
        int64_t n = pick((dim - 1 - start) / stride + 2);  // 0 .. as many as fit
        m = slice_slow(m, axis, start, n, stride);
        v = v.sliced(axis, start, n, stride);
        ops += " slice(" + std::to_string(axis) + "," + std::to_string(start) + "," +
               std::to_string(n) + "," + std::to_string(stride) + ")";
        ++slices;
      } else {
        Shape to = random_reshape(m.shape, rng);
        Materialized r = reshape_slow(m, to);
        auto rv = v.reshaped(to);
        ops += " reshape" + shape_str(to);
        ASSERT_EQ(rv.has_value(), affine(r)) << v.to_string() << " -> " << shape_str(to);
        if (!rv) {
          ++reshapes_refused;
          break;
        }
        ++reshapes_ok;
        m = r;
        v = *rv;
      }
      ASSERT_TRUE(same_offsets(v, m));
      ASSERT_EQ(v.numel(), count(m.shape));
      ASSERT_EQ(v.extent(), extent_slow(v));
      ASSERT_LE(v.extent(), count(src));
      ASSERT_EQ(v.covers_densely(count(src)), dense_slow(v, count(src))) << v.to_string();
    }
  }
  // The random walk exercised every op, and reshapes both ways.
  EXPECT_GT(transposes, 1000);
  EXPECT_GT(slices, 1000);
  EXPECT_GT(reshapes_ok, 1000);
  EXPECT_GT(reshapes_refused, 100);
}

TEST(StridedView, MergingTransposedDimsNeedsACopy) {
  StridedView t = StridedView::contiguous({2, 3}).transposed({1, 0});
  EXPECT_FALSE(t.reshaped({6}).has_value());
  EXPECT_FALSE(t.reshaped({2, 3}).has_value());  // same count, but row-major order differs
  // Heads: [B,S,H,dh] -> [B,H,S,dh]. H and S cannot merge, nor B and H (B > 1).
  StridedView heads = StridedView::contiguous({2, 8, 4, 16}).transposed({0, 2, 1, 3});
  EXPECT_FALSE(heads.reshaped({2, 4, 128}).has_value());
  EXPECT_FALSE(heads.reshaped({8, 8, 16}).has_value());
  EXPECT_TRUE(heads.reshaped({2, 4, 8, 16, 1}).has_value()) << "appending a size-1 dim is fine";
  auto split = heads.reshaped({2, 4, 8, 4, 4});  // splitting the contiguous last dim is fine
  ASSERT_TRUE(split);
  EXPECT_EQ(split->strides, (Ints{512, 16, 64, 4, 1}));
  // With B = 1, B and H merge: B's stride does not matter.
  auto one = StridedView::contiguous({1, 8, 4, 16}).transposed({0, 2, 1, 3}).reshaped({4, 8, 16});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->strides, (Ints{16, 64, 1}));
  EXPECT_FALSE(StridedView::contiguous({2, 3}).reshaped({7}).has_value())
      << "element count differs";
}

TEST(StridedView, SplittingASlicedLastDim) {
  // The in_proj output [S,1,3D] sliced to K, split into heads, heads first.
  StridedView k = StridedView::contiguous({128, 1, 768}).sliced(2, 256, 256);
  EXPECT_EQ(k.to_string(), "[128,1,256] strides [768,768,1] + 256");
  auto heads = k.reshaped({128, 4, 64});
  ASSERT_TRUE(heads);
  EXPECT_EQ(heads->strides, (Ints{768, 64, 1}));
  EXPECT_EQ(heads->offset, 256);
  StridedView kt = heads->transposed({1, 2, 0});
  EXPECT_EQ(kt.to_string(), "[4,64,128] strides [64,1,768] + 256");
  EXPECT_EQ(kt.offset_of({3, 63, 127}), 256 + 3 * 64 + 63 + 127 * 768);
  EXPECT_EQ(kt.extent(), 127 * 768 + 512);
  // Merging the sliced dim with the one before it is not a view any more.
  EXPECT_FALSE(k.reshaped({128 * 256}).has_value());
}

TEST(StridedView, SizeOneDimsAnywhere) {
  // Size-1 dims carry any stride and sit anywhere without breaking contiguity.
  StridedView v{{1, 4, 1, 6}, {999, 6, 5, 1}, 3};
  auto flat = v.reshaped({24});
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat->strides, (Ints{1}));
  EXPECT_EQ(flat->offset, 3);
  auto moved = v.reshaped({4, 1, 1, 6, 1});
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->offset_of({3, 0, 0, 5, 0}), 3 + 18 + 5);
  auto scalar = StridedView{{1, 1}, {7, 9}, 4}.reshaped({});
  ASSERT_TRUE(scalar);
  EXPECT_EQ(scalar->offset, 4);
  EXPECT_EQ(scalar->extent(), 5);
  // A sliced [2, 3] with a size-1 dim between the pieces still splits and merges per chunk.
  StridedView w = StridedView::contiguous({2, 1, 8}).sliced(2, 1, 3, 2);  // strides [8,8,2] + 1
  auto ww = w.reshaped({1, 2, 3, 1});
  ASSERT_TRUE(ww);
  EXPECT_EQ(ww->offset_of({0, 1, 2, 0}), 1 + 8 + 4);
  EXPECT_FALSE(w.reshaped({6}).has_value());
}

TEST(StridedView, EmptyTensors) {
  StridedView e = StridedView::contiguous({3, 0, 4});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.extent(), 0);
  auto r = e.reshaped({0, 12});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->shape, (Shape{0, 12}));
  EXPECT_TRUE(e.transposed({2, 0, 1}).reshaped({4, 5, 0, 2}).has_value());
  StridedView none = StridedView::contiguous({3, 4}).sliced(1, 4, 0);  // start at the end, 0 wide
  EXPECT_EQ(none.numel(), 0);
  EXPECT_EQ(none.extent(), 0);
  EXPECT_TRUE(none.covers_densely(0));
  EXPECT_FALSE(none.covers_densely(12));
}

TEST(StridedView, Extent) {
  EXPECT_EQ(StridedView::contiguous({2, 3}).extent(), 6);
  EXPECT_EQ(StridedView::contiguous({2, 3}).transposed({1, 0}).extent(), 6);
  EXPECT_EQ(StridedView::contiguous({4, 5}).sliced(0, 1, 2).extent(), 15);     // rows 1..2
  EXPECT_EQ(StridedView::contiguous({4, 5}).sliced(1, 0, 2, 3).extent(), 19);  // cols 0, 3
  EXPECT_EQ((StridedView{{3}, {0}, 7}.extent()), 8);
  EXPECT_EQ(StridedView::contiguous({}).extent(), 1);
  // Far beyond int64: an error, not wrapped-around arithmetic.
  EXPECT_THROW((StridedView{{3, 2}, {int64_t{1} << 62, 1}, 0}.extent()), Error);
  EXPECT_THROW((StridedView{{2}, {1}, std::numeric_limits<int64_t>::max() - 1}.extent()), Error);
}

TEST(StridedView, CoversDensely) {
  // Every permutation of a contiguous tensor is a permutation of its buffer.
  Ints perm = {0, 1, 2, 3};
  do {
    StridedView v = StridedView::contiguous({2, 3, 1, 4}).transposed(perm);
    EXPECT_TRUE(v.covers_densely(24)) << v.to_string();
    EXPECT_FALSE(v.covers_densely(25)) << v.to_string();
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_TRUE((StridedView{{2, 1, 2}, {2, 99, 1}, 0}.covers_densely(4))) << "size-1 stride is free";
  EXPECT_FALSE((StridedView{{2, 2}, {1, 1}, 0}.covers_densely(4))) << "overlap";
  EXPECT_FALSE((StridedView{{4}, {0}, 0}.covers_densely(4))) << "broadcast overlap";
  EXPECT_FALSE((StridedView{{2, 2}, {3, 1}, 0}.covers_densely(4))) << "holes";
  EXPECT_FALSE((StridedView{{4}, {1}, 1}.covers_densely(4))) << "offset";
  EXPECT_FALSE((StridedView{{4}, {1}, 0}.covers_densely(5))) << "too few elements";

  // Random small views against brute force.
  std::mt19937_64 rng(7);
  int dense = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    StridedView v;
    const size_t rank = 1 + rng() % 3;
    for (size_t k = 0; k < rank; ++k) {
      v.shape.push_back(static_cast<int64_t>(rng() % 4));
      v.strides.push_back(static_cast<int64_t>(rng() % 7));
    }
    v.offset = rng() % 4 == 0 ? 1 : 0;
    const int64_t n = count(v.shape);
    ASSERT_EQ(v.covers_densely(n), dense_slow(v, n)) << v.to_string();
    ASSERT_EQ(v.extent(), extent_slow(v)) << v.to_string();
    dense += v.covers_densely(n) && n > 1;
  }
  EXPECT_GT(dense, 50);
}

TEST(StridedView, ToStringAndOffsetOf) {
  StridedView v{{4, 128, 64}, {64, 768, 1}, 256};
  EXPECT_EQ(v.to_string(), "[4,128,64] strides [64,768,1] + 256");
  EXPECT_EQ(StridedView::contiguous({2, 3}).to_string(), "[2,3] strides [3,1]");
  EXPECT_EQ(v.offset_of({1, 2, 3}), 256 + 64 + 2 * 768 + 3);
}

// --- attention_layout ----------------------------------------------------------------------------

Node attention_node(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Node n{"Attention_7", "Attention", {"q", "k", "v"}, {"o"}, {}};
  for (const auto& [k, v] : kv) n.attrs.set(k, v);
  return n;
}

std::vector<TensorType> f32(std::initializer_list<Shape> shapes) {
  std::vector<TensorType> out;
  for (const auto& s : shapes) out.push_back({DType::f32, s});
  return out;
}

std::string error_of(const Node& n, const std::vector<TensorType>& in) {
  try {
    attention_layout(n, in);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AttentionLayout, DefaultsAreWholeTensorsRowMajor) {
  AttentionLayout a = attention_layout(attention_node({{"scale", 0.25}}),
                                       f32({{2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4}}));
  EXPECT_EQ(a.lead, (Shape{2, 3}));
  EXPECT_EQ(a.batch, 6);
  EXPECT_EQ(a.sq, 5);
  EXPECT_EQ(a.skv, 7);
  EXPECT_EQ(a.d, 8);
  EXPECT_EQ(a.dv, 4);
  EXPECT_DOUBLE_EQ(a.scale, 0.25);
  EXPECT_EQ(a.q.strides, (Ints{120, 40, 8, 1}));
  EXPECT_EQ(a.k.strides, (Ints{168, 56, 8, 1}));
  EXPECT_EQ(a.out_shape, (Shape{2, 3, 5, 4}));
  EXPECT_EQ(a.out.strides, (Ints{60, 20, 4, 1}));
}

TEST(AttentionLayout, KTransposedIsResolvedIntoKsStrides) {
  // K stored [B, D, Skv] = [2, 8, 7]: K[b, s, j] is at b*56 + j*7 + s.
  AttentionLayout a = attention_layout(attention_node({{"k_transposed", int64_t{1}}}),
                                       f32({{2, 5, 8}, {2, 8, 7}, {2, 7, 3}}));
  EXPECT_EQ(a.k.shape, (Shape{2, 7, 8}));
  EXPECT_EQ(a.k.strides, (Ints{56, 1, 7}));
  EXPECT_EQ(a.skv, 7);
  // A K view with k_transposed=1 describes K^T [.., D, Skv] and is swapped the same way.
  Node n = attention_node({{"k_transposed", int64_t{1}},
                           {"k_shape", Ints{2, 8, 7}},
                           {"k_strides", Ints{8, 1, 16}},
                           {"k_offset", int64_t{3}}});
  AttentionLayout b = attention_layout(n, f32({{2, 5, 8}, {8, 16}, {2, 7, 3}}));
  EXPECT_EQ(b.k.shape, (Shape{2, 7, 8}));
  EXPECT_EQ(b.k.strides, (Ints{8, 16, 1}));
  EXPECT_EQ(b.k.offset, 3);
  // set_attention_input_view takes the canonical K and clears k_transposed.
  set_attention_input_view(n, 1, b.k);
  EXPECT_EQ(n.attrs.get_int("k_transposed", 1), 0);
  AttentionLayout c = attention_layout(n, f32({{2, 5, 8}, {8, 16}, {2, 7, 3}}));
  EXPECT_EQ(c.k.strides, (Ints{8, 16, 1}));
  EXPECT_EQ(c.k.offset, 3);
}

TEST(AttentionLayout, SlicesOfOneProjectionAndAMergedOutput) {
  // x [S=5, 1, 3D=24], H=2, dh=4: Q/K/V are [2,5,4] strides [4,24,1] at 0, 8, 16; the output
  // [2,5,4] lands in [5,8] at strides [4,8,1].
  Node n = attention_node({});
  for (int slot = 0; slot < 3; ++slot)
    set_attention_input_view(n, slot, StridedView{{2, 5, 4}, {4, 24, 1}, 8 * slot});
  set_attention_output_view(n, StridedView{{2, 5, 4}, {4, 8, 1}, 0}, {5, 8});
  AttentionLayout a = attention_layout(n, f32({{5, 1, 24}, {5, 1, 24}, {5, 1, 24}}));
  EXPECT_EQ(a.q.offset, 0);
  EXPECT_FALSE(n.attrs.has("q_offset"));
  EXPECT_EQ(a.k.offset, 8);
  EXPECT_EQ(a.v.offset, 16);
  EXPECT_EQ(a.out_shape, (Shape{5, 8}));
  EXPECT_EQ(a.out.shape, (Shape{2, 5, 4}));
  EXPECT_EQ(a.out.strides, (Ints{4, 8, 1}));
  // The schema infers the output tensor's shape from out_shape.
  Graph g;
  for (const char* t : {"q", "k", "v"}) g.add_input(t, DType::f32, {5, 1, 24});
  g.add_node("Attention", {"q", "k", "v"}, n.attrs, "Attention_7");
  EXPECT_EQ(g.tensor(g.nodes[0].outputs[0]).shape, (Shape{5, 8}));
}

TEST(AttentionLayout, InputViewErrorsNameTheOperand) {
  const auto in = f32({{2, 4, 8}, {2, 4, 8}, {2, 4, 8}});
  std::string e = error_of(
      attention_node(
          {{"q_shape", Ints{2, 4, 8}}, {"q_strides", Ints{32, 8, 1}}, {"q_offset", int64_t{1}}}),
      in);
  EXPECT_NE(e.find("q view [2,4,8] strides [32,8,1] + 1 reaches element 64 of input 0 [2,4,8]"),
            std::string::npos)
      << e;
  e = error_of(attention_node({{"v_shape", Ints{2, 4, 8}}, {"v_strides", Ints{8, 1}}}), in);
  EXPECT_NE(e.find("v view"), std::string::npos) << e;
  EXPECT_NE(e.find("one stride per dim"), std::string::npos) << e;
  e = error_of(attention_node({{"k_shape", Ints{2, 4, 8}}}), in);
  EXPECT_NE(e.find("k_shape and k_strides go together"), std::string::npos) << e;
  e = error_of(attention_node({{"k_offset", int64_t{2}}}), in);
  EXPECT_NE(e.find("k_shape and k_strides go together"), std::string::npos) << e;
  e = error_of(attention_node({{"q_shape", Ints{2, 4, 8}}, {"q_strides", Ints{32, -8, 1}}}), in);
  EXPECT_NE(e.find("negative size or stride"), std::string::npos) << e;
  e = error_of(attention_node({{"q_shape", Ints{64}}, {"q_strides", Ints{1}}}), in);
  EXPECT_NE(e.find("rank >= 2"), std::string::npos) << e;
  e = error_of(
      attention_node({{"q_shape", Ints{3, 4, 8}}, {"q_strides", Ints{int64_t{1} << 62, 8, 1}}}),
      in);
  EXPECT_NE(e.find("q view [3,4,8] strides [4611686018427387904,8,1]: too many elements"),
            std::string::npos)
      << e;
  // A view that fits exactly is fine, and one into a bigger tensor is too.
  EXPECT_EQ(error_of(attention_node({{"q_shape", Ints{2, 4, 8}},
                                     {"q_strides", Ints{8, 16, 1}},
                                     {"q_offset", int64_t{0}}}),
                     in),
            "(no error)");
  EXPECT_EQ(error_of(attention_node({{"v_shape", Ints{2, 4, 8}}, {"v_strides", Ints{8, 16, 1}}}),
                     f32({{2, 4, 8}, {2, 4, 8}, {64}})),
            "(no error)");
}

TEST(AttentionLayout, OutputViewMustCoverItsTensorOnceWithContiguousRows) {
  const auto in = f32({{2, 4, 8}, {2, 4, 8}, {2, 4, 8}});  // logical output [2,4,8]
  auto out_error = [&](Ints strides, Shape shape) {
    return error_of(attention_node({{"out_shape", shape}, {"out_strides", strides}}), in);
  };
  EXPECT_EQ(out_error({8, 16, 1}, {4, 16}), "(no error)");
  std::string e = out_error({0, 16, 1}, {4, 16});
  EXPECT_NE(e.find("out view [2,4,8] strides [0,16,1] into [4,16]"), std::string::npos) << e;
  EXPECT_NE(e.find("exactly once"), std::string::npos) << e;
  EXPECT_NE(out_error({8, 32, 1}, {4, 16}).find("exactly once"), std::string::npos) << "holes";
  EXPECT_NE(out_error({8, 16, 1}, {4, 17}).find("exactly once"), std::string::npos) << "size";
  EXPECT_NE(out_error({1, 2, 8}, {64}).find("the last stride must be 1"), std::string::npos);
  EXPECT_NE(out_error({8, 1}, {64}).find("one stride per output dim"), std::string::npos);
  EXPECT_NE(error_of(attention_node({{"out_shape", Ints{64}}}), in).find("go together"),
            std::string::npos);
  // Dv = 1: any dense layout will do.
  EXPECT_EQ(error_of(attention_node({{"out_shape", Ints{8}}, {"out_strides", Ints{1, 2, 5}}}),
                     f32({{2, 4, 8}, {2, 4, 8}, {2, 4, 1}})),
            "(no error)");
}

TEST(AttentionLayout, ShapeMismatchesAreErrors) {
  EXPECT_NE(error_of(attention_node({}), f32({{2, 4, 8}, {2, 5, 6}, {2, 5, 8}})).find("head sizes"),
            std::string::npos);
  EXPECT_NE(
      error_of(attention_node({}), f32({{2, 4, 8}, {2, 5, 8}, {2, 6, 8}})).find("sequence lengths"),
      std::string::npos);
  EXPECT_NE(error_of(attention_node({}), f32({{2, 4, 8}, {3, 5, 8}, {3, 5, 8}})).find("leading"),
            std::string::npos);
  EXPECT_NE(error_of(attention_node({}), f32({{4, 8}, {2, 5, 8}, {2, 5, 8}})).find("same rank"),
            std::string::npos);
}

}  // namespace
}  // namespace fusebox::ir

namespace fusebox::ir {
namespace {

// leading_offsets(n) lists offset_of((i_0, .., i_{n-1}, 0, ..)) for every leading index,
// row-major: checked against offset_of on a transposed, sliced view and on broadcast (0) strides.
TEST(StridedView, LeadingOffsetsEnumerateTheLeadingIndices) {
  const StridedView base =
      StridedView::contiguous({3, 4, 5, 6}).transposed({1, 0, 2, 3}).sliced(2, 1, 3, 2);
  const StridedView broadcast{{2, 3, 7}, {0, 7, 1}, 5};
  for (const StridedView& v : {base, broadcast}) {
    for (size_t dims = 0; dims <= v.shape.size(); ++dims) {
      const std::vector<int64_t> got = v.leading_offsets(dims);
      std::vector<int64_t> index(v.shape.size(), 0), want;
      // Row-major walk over the first `dims` dims.
      const int64_t count = numel(Shape(v.shape.begin(), v.shape.begin() + dims));
      for (int64_t i = 0; i < count; ++i) {
        int64_t rem = i;
        for (size_t d = dims; d-- > 0;) {
          index[d] = rem % v.shape[d];
          rem /= v.shape[d];
        }
        want.push_back(v.offset_of(index));
      }
      EXPECT_EQ(got, want) << v.to_string() << " dims " << dims;
    }
  }
}

}  // namespace
}  // namespace fusebox::ir
