// Conv, ConvTranspose, BatchNorm and the pools against double-precision direct loops written here from the ONNX
// definitions: every output position sums (or maxes) the window taps that fall inside the input.
// Conv runs on every Isa level this CPU runs, with the weight both as a constant (packed in
// prepare) and as a graph input (packed into the scratch at each run), at 1 and 2 threads.
#include <algorithm>
#include <limits>

#include "core/ir/conv_params.h"
#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

// The window geometry, computed here from the ONNX formulas (not by core/ir/conv_params.h).
struct RefWindow {
  std::vector<int64_t> in, k, s, dil, pb, pe, out;
};

RefWindow ref_window(const Shape& x, const std::vector<int64_t>& kernel, const ir::Attributes& a,
                     bool ceil_mode = false) {
  RefWindow w;
  const size_t r = x.size() - 2;
  w.in.assign(x.begin() + 2, x.end());
  w.k = kernel;
  w.s = a.get_ints("strides", std::vector<int64_t>(r, 1));
  w.dil = a.get_ints("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = a.get_ints("pads", std::vector<int64_t>(2 * r, 0));
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  for (size_t i = 0; i < r; ++i) {
    const int64_t ext = (w.k[i] - 1) * w.dil[i] + 1;
    int64_t pb = pads[i], pe = pads[i + r], out;
    if (auto_pad == "VALID") {
      pb = pe = 0;
      out = (w.in[i] - ext + w.s[i]) / w.s[i];  // ceil((in - ext + 1) / s)
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (w.in[i] + w.s[i] - 1) / w.s[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.s[i] + ext - w.in[i]);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      pe = total - pb;
    } else {
      const double o = static_cast<double>(w.in[i] + pb + pe - ext) / static_cast<double>(w.s[i]) + 1;
      out = static_cast<int64_t>(ceil_mode ? std::ceil(o) : std::floor(o));
      if (ceil_mode && (out - 1) * w.s[i] >= w.in[i] + pb) --out;
    }
    w.pb.push_back(pb);
    w.pe.push_back(pe);
    w.out.push_back(out);
  }
  return w;
}

Shape out_shape(const Shape& x, int64_t channels, const RefWindow& w) {
  Shape s{x[0], channels};
  s.insert(s.end(), w.out.begin(), w.out.end());
  return s;
}

// Calls fn(input index or -1 for padding, whether inside the padded input) for every tap of the
// window at spatial output position `o` (row-major over out).
template <typename Fn>
void for_taps(const RefWindow& w, int64_t o, Fn&& fn) {
  const size_t r = w.in.size();  // at most 3 in these tests
  int64_t pos[3] = {0, 0, 0}, j[3] = {0, 0, 0};
  for (size_t i = r; i-- > 0;) {
    pos[i] = o % w.out[i];
    o /= w.out[i];
  }
  const int64_t taps = ir::numel(w.k);
  for (int64_t t = 0; t < taps; ++t) {
    int64_t rem = t, flat = 0;
    bool inside = true, in_padded = true;
    for (size_t i = r; i-- > 0;) {
      j[i] = rem % w.k[i];
      rem /= w.k[i];
    }
    for (size_t i = 0; i < r; ++i) {
      const int64_t idx = pos[i] * w.s[i] - w.pb[i] + j[i] * w.dil[i];
      inside = inside && idx >= 0 && idx < w.in[i];
      in_padded = in_padded && idx >= -w.pb[i] && idx < w.in[i] + w.pe[i];
      flat = flat * w.in[i] + idx;
    }
    fn(inside ? flat : -1, t, in_padded);
  }
}

std::vector<double> ref_conv(const Tensor& x, const Tensor& wt, const Tensor* bias, const ir::Attributes& a) {
  const Shape& xs = x.shape();
  const Shape& ws = wt.shape();
  const int64_t group = a.get_int("group", 1);
  const RefWindow w = ref_window(xs, Shape(ws.begin() + 2, ws.end()), a);
  const int64_t n = xs[0], cin = xs[1], cout = ws[0], cig = cin / group, cog = cout / group;
  const int64_t in_size = ir::numel(w.in), out_size = ir::numel(w.out), taps = ir::numel(w.k);
  std::vector<double> y(static_cast<size_t>(n * cout * out_size));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t o = 0; o < out_size; ++o) {
        double acc = bias ? at(*bias, co) : 0.0;
        const int64_t g = co / cog;
        for (int64_t ci = 0; ci < cig; ++ci) {
          const int64_t xc = (b * cin + g * cig + ci) * in_size;
          const int64_t wc = (co * cig + ci) * taps;
          for_taps(w, o, [&](int64_t idx, int64_t t, bool) {
            if (idx >= 0) acc += at(x, xc + idx) * at(wt, wc + t);
          });
        }
        y[static_cast<size_t>((b * cout + co) * out_size + o)] = acc;
      }
  return y;
}

// run_op with the weight (input 1) handed to prepare as a constant, as a compiled plan does for a
// weight: the kernel packs it once there.
Tensor run_with_constant_weight(const std::vector<Tensor>& inputs, const ir::Attributes& attrs, int threads) {
  ir::Node node = make_node("Conv", inputs.size(), 1, attrs);
  std::vector<ir::TensorType> in_types;
  for (const auto& t : inputs) in_types.push_back({t.dtype(), t.shape()});
  std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
  const exec::KernelDef* kernel = cpu_backend().kernels().find("Conv");
  const size_t scratch_bytes = ir::node_scratch_bytes(node, in_types, out_types);
  std::vector<const Tensor*> constants(inputs.size(), nullptr);
  constants[1] = &inputs[1];
  exec::KernelContext ctx{node, in_types, out_types, scratch_bytes, &constants};
  exec::ExecContext exec_ctx;
  cpu::CpuContext cpu_ctx;
  apply_test_isa(ctx, exec_ctx, cpu_ctx);
  std::shared_ptr<const void> state = kernel->prepare(ctx);
  Tensor out(DType::f32, out_types[0].shape);
  fill_marker(out);
  Tensor scratch(DType::f32, {static_cast<int64_t>((scratch_bytes + 3) / 4)});
  fill_marker(scratch);
  std::vector<const void*> in_ptrs;
  for (const auto& t : inputs) in_ptrs.push_back(t.bytes());
  std::vector<void*> out_ptrs{out.bytes()};
  exec::KernelArgs args{in_ptrs.data(), out_ptrs.data(), scratch_bytes ? scratch.bytes() : nullptr, state.get()};
  cpu_backend().bind_threads(threads);
  kernel->run(args);
  cpu_backend().bind_threads(1);
  return out;
}

struct ConvCase {
  std::string what;
  Shape x, w;
  ir::Attributes attrs;
  bool bias = true;
};

ir::Attributes A(std::initializer_list<std::pair<const char*, ir::AttrValue>> v) { return attrs_of(v); }

std::vector<ConvCase> conv_cases() {
  using V = std::vector<int64_t>;
  return {
      {"1-D pads 1", {2, 3, 11}, {4, 3, 3}, A({{"pads", V{1, 1}}})},
      {"1-D stride 2 dilation 2", {1, 3, 16}, {5, 3, 2}, A({{"strides", V{2}}, {"dilations", V{2}}}), false},
      {"1-D depthwise", {1, 4, 30}, {4, 1, 5}, A({{"group", int64_t{4}}, {"pads", V{2, 2}}})},
      {"2-D 3x3 pads 1", {1, 3, 7, 9}, {8, 3, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      {"group 2, stride 2, asymmetric pads", {2, 4, 6, 5}, {6, 2, 3, 3},
       A({{"group", int64_t{2}}, {"strides", V{2, 2}}, {"pads", V{0, 1, 2, 0}}})},
      {"depthwise 3x3", {2, 8, 9, 13}, {8, 1, 3, 3}, A({{"group", int64_t{8}}, {"pads", V{1, 1, 1, 1}}})},
      {"depthwise wide rows", {1, 3, 5, 37}, {3, 1, 3, 3}, A({{"group", int64_t{3}}, {"pads", V{1, 1, 1, 1}}}), false},
      {"depthwise stride 2", {1, 6, 10, 11}, {6, 1, 3, 3},
       A({{"group", int64_t{6}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      {"depthwise multiplier 2, 5x5 dilation 2", {1, 3, 8, 20}, {6, 1, 5, 5},
       A({{"group", int64_t{3}}, {"dilations", V{2, 2}}, {"pads", V{2, 3, 4, 1}}})},
      {"dilation 2", {1, 3, 12, 12}, {4, 3, 3, 3}, A({{"dilations", V{2, 2}}})},
      {"1x1", {2, 16, 7, 7}, {24, 16, 1, 1}, {}},
      {"1x1 stride 2", {1, 8, 9, 9}, {4, 8, 1, 1}, A({{"strides", V{2, 2}}})},
      {"1x1 one position", {1, 4, 1, 1}, {3, 4, 1, 1}, {}},
      {"one output position", {1, 4, 3, 3}, {5, 4, 3, 3}, {}},
      {"SAME_UPPER", {1, 2, 7, 8}, {3, 2, 4, 3}, A({{"auto_pad", std::string("SAME_UPPER")}, {"strides", V{2, 2}}})},
      {"SAME_LOWER", {1, 2, 7, 8}, {3, 2, 4, 3}, A({{"auto_pad", std::string("SAME_LOWER")}, {"strides", V{2, 2}}})},
      {"VALID", {1, 2, 7, 8}, {3, 2, 4, 3}, A({{"auto_pad", std::string("VALID")}, {"strides", V{2, 1}}})},
      {"NOTSET", {1, 2, 7, 8}, {3, 2, 4, 3}, A({{"auto_pad", std::string("NOTSET")}})},
      {"odd sizes, several tiles", {1, 5, 17, 19}, {7, 5, 3, 3}, A({{"pads", V{1, 0, 0, 1}}})},
      {"several weight panels", {1, 40, 10, 10}, {70, 40, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      // K = 97 * 9 = 873: more than one of the AVX2 GEMM's K blocks (256).
      {"deep K", {1, 97, 5, 6}, {40, 97, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      {"3-D", {2, 3, 4, 5, 6}, {4, 3, 2, 3, 2}, A({{"pads", V{1, 0, 1, 0, 1, 0}}, {"strides", V{1, 2, 1}}})},
      {"3-D 1x1x1 kernel, stride 2", {1, 4, 5, 5, 5}, {3, 4, 1, 1, 1}, A({{"strides", V{2, 2, 2}}})},
      {"3-D depthwise", {1, 4, 3, 6, 12}, {4, 1, 2, 3, 3},
       A({{"group", int64_t{4}}, {"pads", V{1, 1, 1, 0, 1, 1}}, {"dilations", V{2, 1, 1}}})},
      // The depthwise loop's phases (stride 3, dilation 2 across phases), its 4-row blocks with 16-
      // and 8-wide vectors and a masked tail, rows wholly in the padding, a kernel wider than 16.
      {"depthwise stride 3, dilation 2", {1, 3, 14, 29}, {3, 1, 3, 5},
       A({{"group", int64_t{3}}, {"strides", V{3, 3}}, {"dilations", V{1, 2}}, {"pads", V{1, 2, 0, 3}}})},
      {"depthwise 5x5 stride 2, 29 columns", {1, 2, 21, 61}, {2, 1, 5, 5},
       A({{"group", int64_t{2}}, {"strides", V{2, 2}}, {"pads", V{2, 2, 2, 2}}})},
      {"depthwise, pads beyond the kernel", {1, 2, 3, 4}, {2, 1, 3, 3}, A({{"group", int64_t{2}}, {"pads", V{4, 4, 4, 4}}})},
      {"depthwise 1x17", {1, 2, 3, 40}, {2, 1, 1, 17}, A({{"group", int64_t{2}}, {"pads", V{0, 8, 0, 8}}})},
      {"depthwise, 65 kernel rows (grouped GEMM path)", {1, 2, 70, 3}, {2, 1, 65, 1}, A({{"group", int64_t{2}}})},
      {"grouped, several tiles", {2, 12, 14, 15}, {9, 4, 3, 3},
       A({{"group", int64_t{3}}, {"pads", V{1, 1, 1, 1}}, {"strides", V{1, 2}}})},
  };
}

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

std::vector<double> ref_pool(const Tensor& x, const ir::Attributes& a, bool max) {
  const Shape& xs = x.shape();
  const RefWindow w = ref_window(xs, a.get_ints("kernel_shape"), a, a.get_int("ceil_mode", 0) != 0);
  const bool include_pad = a.get_int("count_include_pad", 0) != 0;
  const int64_t planes = xs[0] * xs[1], in_size = ir::numel(w.in), out_size = ir::numel(w.out);
  std::vector<double> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o = 0; o < out_size; ++o) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t count = 0, padded = 0;
      for_taps(w, o, [&](int64_t idx, int64_t, bool in_padded) {
        padded += in_padded;
        if (idx < 0) return;
        mx = std::max(mx, at(x, p * in_size + idx));
        sum += at(x, p * in_size + idx);
        ++count;
      });
      y.push_back(max ? mx : sum / static_cast<double>(include_pad ? padded : count));
    }
  return y;
}

TEST(Pool, MaxAndAverageMatchDoubleReference) {
  using V = std::vector<int64_t>;
  std::mt19937 rng(74);
  struct Case {
    Shape x;
    ir::Attributes a;
  };
  const std::vector<Case> cases = {
      {{1, 2, 13}, A({{"kernel_shape", V{3}}, {"strides", V{2}}})},
      {{2, 3, 8, 9}, A({{"kernel_shape", V{3, 3}}})},
      {{2, 3, 8, 9}, A({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      {{1, 2, 7, 10}, A({{"kernel_shape", V{3, 2}}, {"strides", V{2, 3}}, {"pads", V{0, 1, 2, 0}}})},
      {{1, 2, 7, 10}, A({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"ceil_mode", int64_t{1}}})},
      {{1, 2, 6, 6},
       A({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}, {"ceil_mode", int64_t{1}}})},
      {{1, 2, 9, 9}, A({{"kernel_shape", V{2, 2}}, {"dilations", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      {{1, 3, 7, 8}, A({{"kernel_shape", V{4, 3}}, {"strides", V{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}})},
      {{1, 3, 7, 8}, A({{"kernel_shape", V{4, 3}}, {"strides", V{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}})},
      {{1, 3, 7, 8}, A({{"kernel_shape", V{4, 3}}, {"auto_pad", std::string("VALID")}})},
      {{1, 2, 5, 6, 7}, A({{"kernel_shape", V{2, 3, 2}}, {"pads", V{1, 0, 1, 0, 1, 1}}})},
      {{1, 16, 56, 56}, A({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      // MaxPool's vector path: three phases with a dilation across them, 16- and 8-wide columns
      // and a masked tail, and a window wider than its tap table (the plain loop).
      {{1, 2, 11, 70}, A({{"kernel_shape", V{2, 3}}, {"strides", V{1, 3}}, {"dilations", V{1, 2}}, {"pads", V{0, 2, 1, 1}}})},
      {{1, 2, 4, 40}, A({{"kernel_shape", V{1, 17}}, {"pads", V{0, 8, 0, 8}}})},
  };
  for (const Case& c : cases) {
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

TEST(Pool, GlobalMatchesDoubleReference) {
  std::mt19937 rng(75);
  for (const Shape& s : {Shape{2, 3, 5, 7}, Shape{1, 4, 9}, Shape{1, 64, 56, 56}, Shape{1, 2, 3, 4, 5}}) {
    Tensor x = random_f32(s, rng);
    const int64_t planes = s[0] * s[1], size = x.numel() / planes;
    std::vector<double> mean, mx;
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0, m = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < size; ++i) {
        sum += at(x, p * size + i);
        m = std::max(m, at(x, p * size + i));
      }
      mean.push_back(sum / static_cast<double>(size));
      mx.push_back(m);
    }
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
