// The channels-last kernels (NhwcConv and the Nhwc pools, ops/cpu/conv_nhwc.cpp) against the same
// double-precision references and cases as the channels-first ones (conv_reference.h): the input is
// permuted to [N, spatial..., C] here, and the reference's output permuted the same way. NhwcConv
// runs on every Isa level this CPU runs, at 1 and 2 threads, with its weight as a constant
// (reordered and packed once in prepare, as a compiled plan runs it; few input channels take the
// direct path) and as an input (reordered into the scratch at each run, as a node-by-node
// evaluation runs it), and with its input channels-last and channels-first (channels_first_input).
#include "core/ir/conv_params.h"
#include "tests/ops/conv_reference.h"

namespace fusebox::optest {
namespace {

// x [N, C, spatial...] as [N, spatial..., C].
Tensor to_last(const Tensor& x) {
  const Shape& s = x.shape();
  Tensor out(DType::f32, ir::channels_last(s));
  const int64_t n = s[0], c = s[1], sp = x.numel() / std::max<int64_t>(1, n * c);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < sp; ++p) out.data<float>()[(b * sp + p) * c + ch] = x.data<float>()[(b * c + ch) * sp + p];
  return out;
}

// A reference computed channels-first for `shape`, in channels-last order.
std::vector<double> to_last(const std::vector<double>& v, const Shape& shape) {
  const int64_t n = shape[0], c = shape[1], sp = ir::numel(shape) / std::max<int64_t>(1, n * c);
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < sp; ++p)
        out[static_cast<size_t>((b * sp + p) * c + ch)] = v[static_cast<size_t>((b * c + ch) * sp + p)];
  return out;
}

TEST(NhwcConv, MatchesDoubleReferenceOnEveryIsa) {
  std::mt19937 rng(81);
  for (const ConvCase& c : conv_cases()) {
    Tensor x = random_f32(c.x, rng), w = random_f32(c.w, rng);
    Tensor b = random_f32({c.w[0]}, rng);
    std::vector<Tensor> inputs{to_last(x), w};
    if (c.bias) inputs.push_back(b);
    const Shape first = out_shape(c.x, c.w[0], ref_window(c.x, Shape(c.w.begin() + 2, c.w.end()), c.attrs));
    const std::vector<double> want = to_last(ref_conv(x, w, c.bias ? &b : nullptr, c.attrs), first);
    const Shape shape = ir::channels_last(first);
    for (cpu::Isa isa : runnable_isas()) {
      ScopedIsa scoped(isa);
      for (int threads : {1, 2}) {
        const std::string what = c.what + " on " + cpu::isa_name(isa) + " at " + std::to_string(threads) + " threads";
        expect_close(run_with_constant_weight(inputs, c.attrs, threads, "NhwcConv"), shape, want, 1e-4, 1e-4,
                     what + ", constant weight");
        expect_close(run1("NhwcConv", inputs, c.attrs, threads), shape, want, 1e-4, 1e-4, what + ", weight as input");
        // The input as it comes, channels-first (a stem reading the graph's input in place).
        ir::Attributes first = c.attrs;
        first.set("channels_first_input", int64_t{1});
        std::vector<Tensor> nchw = inputs;
        nchw[0] = x;
        expect_close(run_with_constant_weight(nchw, first, threads, "NhwcConv"), shape, want, 1e-4, 1e-4,
                     what + ", channels-first input, constant weight");
        expect_close(run1("NhwcConv", nchw, first, threads), shape, want, 1e-4, 1e-4,
                     what + ", channels-first input, weight as input");
      }
    }
  }
}

// Each fused activation, applied in the GEMM's store (relu, sigmoid) or to the tile's rows after it
// (clip, hardsigmoid, hardswish), on the GEMM path with one and with several column chunks, and on
// the depthwise loop.
TEST(NhwcConv, FusedActivationsOnEveryPath) {
  std::mt19937 rng(82);
  using V = std::vector<int64_t>;
  const struct {
    const char* name;
    ir::Attributes attrs;
  } acts[] = {
      {"relu", A({{"activation", std::string("relu")}})},
      {"sigmoid", A({{"activation", std::string("sigmoid")}})},
      {"clip", A({{"activation", std::string("clip")}, {"activation_min", 0.0}, {"activation_max", 0.5}})},
      {"hardsigmoid", A({{"activation", std::string("hardsigmoid")}, {"activation_alpha", 0.3}, {"activation_beta", 0.4}})},
      {"hardswish", A({{"activation", std::string("hardswish")}})},
  };
  const struct {
    const char* what;
    Shape x, w;
    ir::Attributes attrs;
  } convs[] = {
      {"3x3", {1, 6, 9, 10}, {40, 6, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      {"1x1", {1, 24, 7, 7}, {72, 24, 1, 1}, {}},
      {"depthwise 3x3 stride 2", {1, 20, 11, 13}, {20, 1, 3, 3},
       A({{"group", int64_t{20}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
  };
  for (const auto& conv : convs) {
    Tensor x = random_f32(conv.x, rng), w = random_f32(conv.w, rng), b = random_f32({conv.w[0]}, rng);
    const Shape first = out_shape(conv.x, conv.w[0], ref_window(conv.x, Shape(conv.w.begin() + 2, conv.w.end()), conv.attrs));
    const std::vector<double> plain = to_last(ref_conv(x, w, &b, conv.attrs), first);
    for (const auto& act : acts) {
      ir::Attributes attrs = conv.attrs;
      for (const auto& [k, v] : act.attrs.all()) attrs.set(k, v);
      std::vector<double> want = plain;
      const double lo = act.attrs.get_float("activation_min", 0), hi = act.attrs.get_float("activation_max", 0);
      const double alpha = act.attrs.get_float("activation_alpha", 0), beta = act.attrs.get_float("activation_beta", 0);
      for (double& v : want) {
        const std::string k = act.name;
        if (k == "relu") v = v < 0 ? 0 : v;
        else if (k == "sigmoid") v = 1 / (1 + std::exp(-v));
        else if (k == "clip") v = std::min(hi, std::max(lo, v));
        else if (k == "hardsigmoid") v = std::min(1.0, std::max(0.0, alpha * v + beta));
        else v = v * std::min(1.0, std::max(0.0, v / 6 + 0.5));
      }
      for (cpu::Isa isa : runnable_isas()) {
        ScopedIsa scoped(isa);
        for (int threads : {1, 2})
          expect_close(run_with_constant_weight({to_last(x), w, b}, attrs, threads, "NhwcConv"), ir::channels_last(first),
                       want, 1e-4, 1e-4,
                       std::string(conv.what) + " " + act.name + " on " + cpu::isa_name(isa) + " at " +
                           std::to_string(threads) + " threads");
      }
    }
  }
}

// Winograd F(2x2, 3x3) (attribute winograd, a constant weight: ops/cpu/conv_winograd.cpp) against
// the direct conv's double reference: channel counts off the vector width, odd output sizes (tiles
// that overhang the output), no padding and uneven padding, batches, more tiles than one block
// holds (the blocks shared between threads), each fused activation. A shape Winograd does not
// take (a stride, a dilation) runs the GEMM path with the attribute set, as correct as without it.
TEST(NhwcConv, WinogradMatchesDoubleReferenceOnEveryIsa) {
  std::mt19937 rng(83);
  using V = std::vector<int64_t>;
  const struct {
    const char* what;
    Shape x, w;
    ir::Attributes attrs;
    bool bias;
  } convs[] = {
      {"16->24 8x8 pads 1", {1, 16, 8, 8}, {24, 16, 3, 3}, A({{"pads", V{1, 1, 1, 1}}}), true},
      {"5->7 7x9 batch 2 (odd sizes, channel tails)", {2, 5, 7, 9}, {7, 5, 3, 3}, A({{"pads", V{1, 1, 1, 1}}}), true},
      {"8->8 6x5 no padding", {1, 8, 6, 5}, {8, 8, 3, 3}, {}, false},
      {"12->20 9x6 uneven pads", {1, 12, 9, 6}, {20, 12, 3, 3}, A({{"pads", V{0, 2, 1, 0}}}), true},
      {"64->64 14x14 (two blocks)", {1, 64, 14, 14}, {64, 64, 3, 3}, A({{"pads", V{1, 1, 1, 1}}}), true},
      {"32->48 30x30 batch 2 (many blocks)", {2, 32, 30, 30}, {48, 32, 3, 3}, A({{"pads", V{1, 1, 1, 1}}}), false},
      {"1x1 output", {1, 4, 3, 3}, {6, 4, 3, 3}, {}, true},
      {"one tile, 96 channels (split by weight panels)", {1, 8, 2, 2}, {96, 8, 3, 3}, A({{"pads", V{1, 1, 1, 1}}}), true},
      {"16 tiles, 128 channels (ResNet's last stage, smaller)", {1, 24, 7, 7}, {128, 24, 3, 3}, A({{"pads", V{1, 1, 1, 1}}}), true},
      {"stride 2: the GEMM path", {1, 16, 9, 9}, {16, 16, 3, 3}, A({{"pads", V{1, 1, 1, 1}}, {"strides", V{2, 2}}}), true},
      {"dilation 2: the GEMM path", {1, 8, 9, 9}, {8, 8, 3, 3}, A({{"pads", V{2, 2, 2, 2}}, {"dilations", V{2, 2}}}), true},
  };
  const struct {
    const char* name;
    ir::Attributes attrs;
  } acts[] = {
      {"none", {}},
      {"relu", A({{"activation", std::string("relu")}})},
      {"hardswish", A({{"activation", std::string("hardswish")}})},
  };
  for (const auto& conv : convs) {
    Tensor x = random_f32(conv.x, rng), w = random_f32(conv.w, rng), b = random_f32({conv.w[0]}, rng);
    const Shape first = out_shape(conv.x, conv.w[0], ref_window(conv.x, Shape(conv.w.begin() + 2, conv.w.end()), conv.attrs));
    const std::vector<double> plain = to_last(ref_conv(x, w, conv.bias ? &b : nullptr, conv.attrs), first);
    std::vector<Tensor> inputs{to_last(x), w};
    if (conv.bias) inputs.push_back(b);
    for (const auto& act : acts) {
      ir::Attributes attrs = conv.attrs;
      for (const auto& [k, v] : act.attrs.all()) attrs.set(k, v);
      attrs.set("winograd", int64_t{1});
      std::vector<double> want = plain;
      for (double& v : want) {
        const std::string k = act.name;
        if (k == "relu") v = v < 0 ? 0 : v;
        else if (k == "hardswish") v = v * std::min(1.0, std::max(0.0, v / 6 + 0.5));
      }
      for (cpu::Isa isa : runnable_isas()) {
        ScopedIsa scoped(isa);
        for (int threads : {1, 2})
          expect_close(run_with_constant_weight(inputs, attrs, threads, "NhwcConv"), ir::channels_last(first), want,
                       1e-4, 1e-4,
                       std::string(conv.what) + " " + act.name + " on " + cpu::isa_name(isa) + " at " +
                           std::to_string(threads) + " threads");
      }
    }
  }
}

// The Winograd kernel's scratch is its own (transformed input and GEMM results per thread slot,
// nothing for the weight) and only with a constant weight: without one (node-by-node evaluation)
// the node takes the GEMM path and its scratch. Its FLOPs are the Winograd kernel's.
TEST(NhwcConv, WinogradScratchAndFlopsAreItsOwn) {
  ir::Node node = make_node("NhwcConv", 2, 1, A({{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"winograd", int64_t{1}}}));
  const std::vector<ir::TensorType> in{{DType::f32, {1, 28, 28, 128}}, {DType::f32, {128, 128, 3, 3}}};
  const std::vector<ir::TensorType> out = ir::infer_node(node, in);
  Tensor w(DType::f32, {128, 128, 3, 3});
  const std::vector<const Tensor*> constant{nullptr, &w}, none{nullptr, nullptr};
  const ir::ConvShape c = ir::conv_shape(node, {1, 128, 28, 28}, {128, 128, 3, 3}, nullptr);
  ASSERT_TRUE(ir::winograd_shape(c));
  EXPECT_EQ(ir::winograd_tiles(c), 196);
  EXPECT_EQ(cpu_backend().scratch_bytes(exec::KernelContext{node, in, out, 0, &constant}),
            static_cast<size_t>(ir::kConvScratchSlots * 16 * ir::kWinogradBlockTiles * (128 + 128)) * sizeof(float));
  EXPECT_EQ(cpu_backend().scratch_bytes(exec::KernelContext{node, in, out, 0, &none}), ir::node_scratch_bytes(node, in, out));
  // 16 GEMMs of 196 x 128 x 128, the transforms' adds: 2.25x fewer than the direct conv's 2 x 784 x 128 x 1152.
  const double direct = 2.0 * 784 * 128 * 1152;
  EXPECT_DOUBLE_EQ(ir::node_cost(node, in, out).flops, 196.0 * (16 * 2 * 128 * 128 + 32 * 128 + 24 * 128));
  EXPECT_LT(ir::node_cost(node, in, out).flops, direct / 2.2);
}

TEST(NhwcPool, MaxAndAverageMatchDoubleReference) {
  std::mt19937 rng(83);
  for (const PoolCase& c : pool_cases()) {
    Tensor x = random_f32(c.x, rng);
    const Shape first = out_shape(c.x, c.x[1], ref_window(c.x, c.a.get_ints("kernel_shape"), c.a, c.a.get_int("ceil_mode", 0) != 0));
    const Shape shape = ir::channels_last(first);
    const std::string what = shape_str(c.x) + " " + c.a.to_string();
    ir::Attributes inc = c.a;
    inc.set("count_include_pad", int64_t{1});
    for (int threads : {1, 2}) {
      expect_close(run1("NhwcMaxPool", {to_last(x)}, c.a, threads), shape, to_last(ref_pool(x, c.a, true), first), 0, 0,
                   "NhwcMaxPool " + what);
      expect_close(run1("NhwcAveragePool", {to_last(x)}, c.a, threads), shape, to_last(ref_pool(x, c.a, false), first),
                   1e-6, 1e-5, "NhwcAveragePool " + what);
      expect_close(run1("NhwcAveragePool", {to_last(x)}, inc, threads), shape, to_last(ref_pool(x, inc, false), first),
                   1e-6, 1e-5, "NhwcAveragePool count_include_pad " + what);
    }
  }
}

TEST(NhwcPool, GlobalMatchesDoubleReference) {
  std::mt19937 rng(84);
  // 130 channels: two whole blocks of 64 and a partial one.
  for (const Shape& s : {Shape{2, 3, 5, 7}, Shape{1, 4, 9}, Shape{1, 130, 14, 14}, Shape{1, 2, 3, 4, 5}}) {
    Tensor x = random_f32(s, rng);
    const std::vector<double> mean = ref_global_pool(x, false), mx = ref_global_pool(x, true);
    Shape out(s.size(), 1);
    out[0] = s[0];
    out.back() = s[1];
    for (int threads : {1, 2}) {
      expect_close(run1("NhwcGlobalAveragePool", {to_last(x)}, {}, threads), out, mean, 1e-6, 1e-5,
                   "NhwcGlobalAveragePool " + shape_str(s));
      expect_close(run1("NhwcGlobalMaxPool", {to_last(x)}, {}, threads), out, mx, 0, 0, "NhwcGlobalMaxPool " + shape_str(s));
    }
  }
}

// A constant weight is packed in prepare, so the scratch the backend asks the planner for leaves
// out the room a run-time weight needs (C_out x K floats), for Conv and NhwcConv alike; the schema,
// which cannot tell, reserves it.
TEST(NhwcConv, AConstantWeightNeedsNoScratchForItself) {
  for (const char* op : {"Conv", "NhwcConv"}) {
    const bool nhwc = op[0] == 'N';
    ir::Node node = make_node(op, 2, 1, A({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
    const std::vector<ir::TensorType> in{{DType::f32, nhwc ? Shape{1, 14, 14, 256} : Shape{1, 256, 14, 14}},
                                         {DType::f32, {256, 256, 3, 3}}};
    const std::vector<ir::TensorType> out = ir::infer_node(node, in);
    Tensor w(DType::f32, {256, 256, 3, 3});
    const std::vector<const Tensor*> constant{nullptr, &w}, none{nullptr, nullptr};
    const size_t with = cpu_backend().scratch_bytes(exec::KernelContext{node, in, out, 0, &constant});
    const size_t without = cpu_backend().scratch_bytes(exec::KernelContext{node, in, out, 0, &none});
    EXPECT_EQ(without, ir::node_scratch_bytes(node, in, out)) << op;
    EXPECT_EQ(without - with, 256u * 256 * 9 * sizeof(float)) << op << ": the weight's room, no more";
  }
}

// The schema reads the geometry channels-first and stores the output channels-last; shapes that
// do not fit are refused naming what.
TEST(NhwcConv, ShapesAndRefusals) {
  const auto out = [](const std::vector<ir::TensorType>& in, const ir::Attributes& a) {
    return ir::infer_node(make_node("NhwcConv", in.size(), 1, a), in)[0].shape;
  };
  EXPECT_EQ(out({{DType::f32, {1, 56, 56, 64}}, {DType::f32, {128, 64, 3, 3}}},
                A({{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}})),
            (Shape{1, 28, 28, 128}));
  EXPECT_EQ(out({{DType::f32, {1, 7, 7, 512}}, {DType::f32, {512, 1, 3, 3}}},
                A({{"group", int64_t{512}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}})),
            (Shape{1, 7, 7, 512}));
  try {
    out({{DType::f32, {1, 56, 56, 64}}, {DType::f32, {128, 32, 3, 3}}}, {});
    FAIL() << "a weight of the wrong channel count was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input channels per group"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusebox::optest
