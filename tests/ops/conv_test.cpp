// Conv, ConvTranspose, BatchNorm and the pools against double-precision direct loops written from the ONNX
// definitions (conv_reference.h; ConvTranspose's and BatchNorm's here): every output position sums (or maxes)
// the window taps that fall inside the input.
// Conv runs on every Isa level this CPU runs, with the weight both as a constant (packed in
// prepare) and as a graph input (packed into the scratch at each run), at 1 and 2 threads.
#include <algorithm>
#include <limits>

#include "core/ir/conv_params.h"
#include "tests/ops/conv_reference.h"

namespace fusebox::optest {
namespace {

TEST(Conv, MatchesDoubleReferenceOnEveryIsa) {
  std::mt19937 rng(71);
  for (const ConvCase& c : conv_cases()) {
    Tensor x = random_f32(c.x, rng), w = random_f32(c.w, rng);
    Tensor b = random_f32({c.w[0]}, rng);
    std::vector<Tensor> inputs{x, w};
    if (c.bias) inputs.push_back(b);
    const std::vector<double> want = ref_conv(x, w, c.bias ? &b : nullptr, c.attrs);
    const Shape shape = out_shape(c.x, c.w[0], ref_window(c.x, Shape(c.w.begin() + 2, c.w.end()), c.attrs));
    for (cpu::Isa isa : runnable_isas()) {
      ScopedIsa scoped(isa);
      for (int threads : {1, 2}) {
        const std::string what = c.what + " on " + cpu::isa_name(isa) + " at " + std::to_string(threads) + " threads";
        expect_close(run1("Conv", inputs, c.attrs, threads), shape, want, 1e-4, 1e-4, what + ", weight as input");
        expect_close(run_with_constant_weight(inputs, c.attrs, threads), shape, want, 1e-4, 1e-4,
                     what + ", constant weight");
      }
    }
  }
}

// A ResNet-sized layer, large enough that two threads each take a share of the tiles.
TEST(Conv, ResNetLayerAtTwoThreads) {
  std::mt19937 rng(72);
  const ir::Attributes attrs = A({{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  Tensor x = random_f32({1, 32, 28, 28}, rng), w = random_f32({48, 32, 3, 3}, rng), b = random_f32({48}, rng);
  const std::vector<double> want = ref_conv(x, w, &b, attrs);
  for (cpu::Isa isa : runnable_isas()) {
    ScopedIsa scoped(isa);
    expect_close(run_with_constant_weight({x, w, b}, attrs, 2), {1, 48, 28, 28}, want, 1e-4, 1e-4,
                 std::string("resnet layer on ") + cpu::isa_name(isa));
  }
}

// Shape inference refuses what does not fit, naming the attribute or shape.
void expect_refused(const std::string& op, const std::vector<Shape>& shapes, const ir::Attributes& attrs,
                    const std::string& fragment) {
  ir::Node node = make_node(op, shapes.size(), 1, attrs);
  std::vector<ir::TensorType> in;
  for (const auto& s : shapes) in.push_back({DType::f32, s});
  try {
    ir::infer_node(node, in);
    ADD_FAILURE() << op << " accepted " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Conv, RefusesInconsistentShapes) {
  using V = std::vector<int64_t>;
  expect_refused("Conv", {{1, 3, 8, 8}, {4, 2, 3, 3}}, {}, "input channels per group");
  expect_refused("Conv", {{1, 4, 8, 8}, {4, 1, 3, 3}}, A({{"group", int64_t{3}}}), "not divisible by group 3");
  expect_refused("Conv", {{1, 4, 8, 8}, {5, 2, 3, 3}}, A({{"group", int64_t{2}}}), "output channels 5");
  expect_refused("Conv", {{1, 3, 8, 8}, {4, 3, 3, 3}, {3}}, {}, "bias [3]");
  expect_refused("Conv", {{1, 3, 2, 2}, {4, 3, 3, 3}}, {}, "does not fit");
  expect_refused("Conv", {{1, 3, 8, 8}, {4, 3, 3}}, {}, "rank");
  expect_refused("Conv", {{1, 3, 2, 4, 8, 8}, {4, 3, 1, 1, 3, 3}}, {}, "1 to 3 spatial dims");
  expect_refused("Conv", {{1, 3, 8, 8}, {4, 3, 3, 3}}, A({{"auto_pad", std::string("SAME")}}), "auto_pad 'SAME'");
  expect_refused("Conv", {{1, 3, 8, 8}, {4, 3, 3, 3}}, A({{"strides", V{1}}}), "strides has 1 values");
  expect_refused("Conv", {{1, 3, 8, 8}, {4, 3, 3, 3}}, A({{"kernel_shape", V{2, 2}}}), "kernel_shape");
  expect_refused("MaxPool", {{1, 3, 8, 8}}, {}, "kernel_shape is required");
  expect_refused("AveragePool", {{1, 3, 8, 8}}, A({{"kernel_shape", V{3, 3}}, {"pads", V{1, 1}}}), "pads has 2 values");
  expect_refused("BatchNorm", {{2, 3, 4}, {3}, {3}, {4}, {3}}, {}, "mean [4]");
  expect_refused("GlobalAveragePool", {{2, 3}}, {}, "rank >= 3");
}

// FLOPs are the direct convolution's multiply-adds; the scratch holds the im2col tiles (a
// depthwise conv's: padded input planes).
TEST(Conv, CostAndScratch) {
  ir::Node node = make_node("Conv", 3, 1, A({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  std::vector<ir::TensorType> in{{DType::f32, {1, 64, 56, 56}}, {DType::f32, {64, 64, 3, 3}}, {DType::f32, {64}}};
  auto out = ir::infer_node(node, in);
  EXPECT_EQ(out[0].shape, (Shape{1, 64, 56, 56}));
  EXPECT_DOUBLE_EQ(ir::node_cost(node, in, out).flops, 2.0 * 64 * 64 * 9 * 56 * 56);
  EXPECT_GE(ir::node_scratch_bytes(node, in, out), size_t{ir::kConvTileRows * 64 * 9 * 4});
  ir::Node dw = make_node("Conv", 2, 1, A({{"group", int64_t{64}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  std::vector<ir::TensorType> dwin{{DType::f32, {1, 64, 56, 56}}, {DType::f32, {64, 1, 3, 3}}};
  // Depthwise: one padded plane per slot (8 slots for 64 planes): 56 rows of 1 + 56 + 1 floats
  // (58, one phase at stride 1), rounded up to 16 floats.
  EXPECT_EQ(ir::node_scratch_bytes(dw, dwin, ir::infer_node(dw, dwin)), size_t{8 * ((56 * 58 + 15) / 16 * 16) * 4});
  // At stride 2 a row is two phases of 28 + 1 floats: 0 1 2 ... of the padded row by parity.
  ir::Node dw2 = make_node("Conv", 2, 1,
                           A({{"group", int64_t{64}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                              {"strides", std::vector<int64_t>{2, 2}}}));
  EXPECT_EQ(ir::node_scratch_bytes(dw2, dwin, ir::infer_node(dw2, dwin)),
            size_t{8 * ((56 * 2 * 29 + 15) / 16 * 16) * 4});
}

// ---- ConvTranspose -------------------------------------------------------------------------

// The definition as a scatter: input position i of dim d, kernel tap j, lands on output
// i * s - pad_begin + j * dil. `out` (spatial) and `pb` are given by each case.
std::vector<double> ref_conv_transpose(const Tensor& x, const Tensor& wt, const Tensor* bias, int64_t group,
                                       const std::vector<int64_t>& s, const std::vector<int64_t>& dil,
                                       const std::vector<int64_t>& pb, const Shape& out) {
  const Shape& xs = x.shape();
  const Shape& ws = wt.shape();
  const size_t r = xs.size() - 2;
  const int64_t n = xs[0], cin = xs[1], cog = ws[1], cout = cog * group, cig = cin / group;
  const Shape in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end());
  const int64_t in_size = ir::numel(in), out_size = ir::numel(out), taps = ir::numel(k);
  std::vector<double> y(static_cast<size_t>(n * cout * out_size));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t o = 0; o < out_size; ++o) y[static_cast<size_t>((b * cout + co) * out_size + o)] = bias ? at(*bias, co) : 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int64_t p = 0; p < in_size; ++p)
        for (int64_t t = 0; t < taps; ++t) {
          const std::vector<int64_t> ip = unravel(p, in), kt = unravel(t, k);
          std::vector<int64_t> op(r);
          bool inside = true;
          for (size_t i = 0; i < r; ++i) {
            op[i] = ip[i] * s[i] - pb[i] + kt[i] * dil[i];
            inside = inside && op[i] >= 0 && op[i] < out[i];
          }
          if (!inside) continue;
          const int64_t g = ci / cig;
          for (int64_t c = 0; c < cog; ++c)
            y[static_cast<size_t>((b * cout + g * cog + c) * out_size + ravel(op, out))] +=
                at(x, (b * cin + ci) * in_size + p) * at(wt, (ci * cog + c) * taps + t);
        }
  return y;
}

TEST(ConvTranspose, MatchesDoubleReference) {
  using V = std::vector<int64_t>;
  std::mt19937 rng(76);
  struct Case {
    std::string what;
    Shape x, w;
    ir::Attributes a;
    int64_t group;
    V s, dil, pb;
    Shape out;  // spatial, worked out by hand from the ONNX formula
  };
  const std::vector<Case> cases = {
      {"1-D", {1, 2, 5}, {2, 3, 3}, {}, 1, {1}, {1}, {0}, {7}},
      {"2-D stride 2 pads 1", {2, 3, 4, 5}, {3, 2, 3, 3}, A({{"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}), 1,
       {2, 2}, {1, 1}, {1, 1}, {7, 9}},
      {"output_padding, asymmetric pads", {1, 2, 3, 4}, {2, 4, 3, 2},
       A({{"strides", V{3, 2}}, {"output_padding", V{1, 1}}, {"pads", V{0, 1, 1, 0}}}), 1, {3, 2}, {1, 1}, {0, 1},
       {9, 8}},
      {"group 2, dilation 2", {1, 4, 4, 4}, {4, 3, 2, 3}, A({{"group", int64_t{2}}, {"dilations", V{2, 2}}}), 2,
       {1, 1}, {2, 2}, {0, 0}, {6, 8}},
      {"output_shape larger than reached", {1, 1, 3, 3}, {1, 2, 3, 3},
       A({{"strides", V{3, 2}}, {"output_shape", V{10, 8}}}), 1, {3, 2}, {1, 1}, {0, 0}, {10, 8}},
      {"SAME_UPPER", {1, 2, 3, 3}, {2, 2, 3, 3}, A({{"strides", V{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}), 1,
       {2, 2}, {1, 1}, {0, 0}, {6, 6}},
      {"3-D", {1, 2, 3, 4, 3}, {2, 2, 2, 3, 2}, A({{"strides", V{2, 1, 2}}, {"pads", V{0, 1, 0, 1, 0, 0}}}), 1,
       {2, 1, 2}, {1, 1, 1}, {0, 1, 0}, {5, 5, 6}},
  };
  for (const Case& c : cases) {
    Tensor x = random_f32(c.x, rng), w = random_f32(c.w, rng), b = random_f32({c.w[1] * c.group}, rng);
    Shape shape{c.x[0], c.w[1] * c.group};
    shape.insert(shape.end(), c.out.begin(), c.out.end());
    for (bool with_bias : {true, false}) {
      std::vector<Tensor> in{x, w};
      if (with_bias) in.push_back(b);
      const auto want = ref_conv_transpose(x, w, with_bias ? &b : nullptr, c.group, c.s, c.dil, c.pb, c.out);
      for (int threads : {1, 2})
        expect_close(run1("ConvTranspose", in, c.a, threads), shape, want, 1e-4, 1e-4,
                     "ConvTranspose " + c.what + (with_bias ? " with bias" : ""));
    }
  }
  expect_refused("ConvTranspose", {{1, 3, 4, 4}, {2, 2, 3, 3}}, {}, "one per input channel");
  expect_refused("ConvTranspose", {{1, 4, 4, 4}, {4, 2, 3, 3}, {3}}, A({{"group", int64_t{2}}}), "bias [3]");
}

// ---- BatchNorm -----------------------------------------------------------------------------

TEST(BatchNorm, MatchesDoubleReference) {
  std::mt19937 rng(73);
  for (const Shape& s : {Shape{2, 3, 5, 7}, Shape{4, 6}, Shape{1, 5, 33}, Shape{2, 16, 9, 9}}) {
    const int64_t c = s[1];
    Tensor x = random_f32(s, rng), scale = random_f32({c}, rng), shift = random_f32({c}, rng),
           mean = random_f32({c}, rng), var = random_f32({c}, rng, 0.1f, 3.0f);
    const double eps = 1e-3;
    const int64_t inner = ir::numel(s) / (s[0] * c);
    std::vector<double> want(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t ch = (i / inner) % c;
      want[static_cast<size_t>(i)] =
          (at(x, i) - at(mean, ch)) / std::sqrt(at(var, ch) + eps) * at(scale, ch) + at(shift, ch);
    }
    for (int threads : {1, 2})
      expect_close(run1("BatchNorm", {x, scale, shift, mean, var}, A({{"epsilon", eps}}), threads), s, want, 1e-5,
                   1e-5, "BatchNorm " + shape_str(s));
  }
}

// ---- Pools ---------------------------------------------------------------------------------

TEST(Pool, MaxAndAverageMatchDoubleReference) {
  std::mt19937 rng(74);
  for (const PoolCase& c : pool_cases()) {
    Tensor x = random_f32(c.x, rng);
    const RefWindow w = ref_window(c.x, c.a.get_ints("kernel_shape"), c.a, c.a.get_int("ceil_mode", 0) != 0);
    const Shape shape = out_shape(c.x, c.x[1], w);
    for (cpu::Isa isa : runnable_isas()) {
      ScopedIsa scoped(isa);
      const std::string what = shape_str(c.x) + " " + c.a.to_string() + " on " + cpu::isa_name(isa);
      for (int threads : {1, 2}) {
        expect_close(run1("MaxPool", {x}, c.a, threads), shape, ref_pool(x, c.a, true), 0, 0, "MaxPool " + what);
        expect_close(run1("AveragePool", {x}, c.a, threads), shape, ref_pool(x, c.a, false), 1e-6, 1e-5,
                     "AveragePool " + what);
        ir::Attributes inc = c.a;
        inc.set("count_include_pad", int64_t{1});
        expect_close(run1("AveragePool", {x}, inc, threads), shape, ref_pool(x, inc, false), 1e-6, 1e-5,
                     "AveragePool count_include_pad " + what);
      }
    }
  }
}

// A window of 2^32 with pads of 2^32 - 1 and strides of 2^32 over a 2x2 input: each output's
// window holds exactly one input value (output (i, j) reads input (i, j)). The CPU MaxPool pools
// such a window in place, tap by tap over what each output reads: its planned scratch is none,
// where a padded plane per thread once asked for 64 GiB (issue 39).
TEST(Pool, AWindowFarWiderThanItsInputPoolsInPlaceWithNoScratch) {
  std::mt19937 rng(76);
  using V = std::vector<int64_t>;
  const int64_t k = int64_t{1} << 32;
  const ir::Attributes a =
      A({{"kernel_shape", V{k, k}}, {"pads", V{k - 1, k - 1, k - 1, k - 1}}, {"strides", V{k, k}}});
  const Shape shape{1, 1, 2, 2};
  Tensor x = random_f32(shape, rng);
  std::vector<double> want;
  for (int64_t i = 0; i < x.numel(); ++i) want.push_back(at(x, i));
  for (const char* op : {"MaxPool", "AveragePool"}) {
    ir::Node node = make_node(op, 1, 1, a);
    const std::vector<ir::TensorType> in{{DType::f32, shape}};
    const std::vector<ir::TensorType> out = ir::infer_node(node, in);
    ASSERT_EQ(out[0].shape, shape) << op;
    EXPECT_EQ(ir::node_scratch_bytes(node, in, out), 0u) << op;
    for (cpu::Isa isa : runnable_isas()) {
      ScopedIsa scoped(isa);
      for (int threads : {1, 2})
        expect_close(run1(op, {x}, a, threads), shape, want, 0, 0,
                     std::string(op) + " on " + cpu::isa_name(isa));
    }
  }
}

TEST(Pool, GlobalMatchesDoubleReference) {
  std::mt19937 rng(75);
  for (const Shape& s : {Shape{2, 3, 5, 7}, Shape{1, 4, 9}, Shape{1, 64, 56, 56}, Shape{1, 2, 3, 4, 5}}) {
    Tensor x = random_f32(s, rng);
    const std::vector<double> mean = ref_global_pool(x, false), mx = ref_global_pool(x, true);
    Shape out(s.size(), 1);
    out[0] = s[0];
    out[1] = s[1];
    for (int threads : {1, 2}) {
      expect_close(run1("GlobalAveragePool", {x}, {}, threads), out, mean, 1e-6, 1e-5, "GlobalAveragePool " + shape_str(s));
      expect_close(run1("GlobalMaxPool", {x}, {}, threads), out, mx, 0, 0, "GlobalMaxPool " + shape_str(s));
    }
  }
}

}  // namespace
}  // namespace fusebox::optest
