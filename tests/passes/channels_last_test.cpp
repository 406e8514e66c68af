// channels_last: a conv net's Convs and the pools and element-wise ops after them run
// channels-last, with one Transpose in where the layout starts and one out where it ends (a
// Reshape when only size-1 dims move), each counted in the log; constants are permuted once;
// what stays channels-first is a near miss saying why. Every graph computes what it computed
// before (node by node, against the graph the pass was given).
#include "core/ir/conv_params.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

ir::Attributes pads1() {
  ir::Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return a;
}

// x [1, C, 12, 10] -> Conv 3x3 (8) -> Relu -> Conv 3x3/2 (8) -> Add(b [8, 1, 1]) -> MaxPool 2x2
// -> y, and optionally Flatten after a GlobalAveragePool.
ir::Graph conv_chain(bool global_pool_tail, int64_t channels = 6) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {1, channels, 12, 10});
  g.add_weight("w1", random_tensor({8, channels, 3, 3}, 1));
  g.add_weight("b1", random_tensor({8}, 2));
  g.add_weight("w2", random_tensor({8, 8, 3, 3}, 3));
  g.add_weight("c", random_tensor({8, 1, 1}, 4));
  std::string h = g.add_node("Conv", {"x", "w1", "b1"}, pads1(), "conv1");
  h = g.add_node("Relu", {h}, {}, "relu1");
  ir::Attributes s2 = pads1();
  s2.set("strides", std::vector<int64_t>{2, 2});
  h = g.add_node("Conv", {h, "w2"}, s2, "conv2");
  h = g.add_node("Add", {h, "c"}, {}, "add_c");
  ir::Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  h = g.add_node("MaxPool", {h}, pool, "pool");
  if (global_pool_tail) {
    h = g.add_node("GlobalAveragePool", {h}, {}, "gap");
    h = g.add_node("Flatten", {h}, {}, "flatten");
  }
  g.outputs = {h};
  return g;
}

TEST(ChannelsLast, AConvChainRunsChannelsLastBetweenOneTransposeInAndOneOut) {
  ir::Graph g = conv_chain(false);
  const ir::Graph before = g;
  PassLogEntry e = run_pass(g, "channels_last");
  EXPECT_TRUE(e.changed);
  EXPECT_EQ(count_op(g, "NhwcConv"), 2);
  EXPECT_EQ(count_op(g, "NhwcMaxPool"), 1);
  EXPECT_EQ(count_op(g, "Conv") + count_op(g, "MaxPool"), 0);
  EXPECT_EQ(count_op(g, "Transpose"), 2) << "one in (x), one out (the graph's output)";
  EXPECT_TRUE(has_line(e.rewrites, "conv1: Conv -> NhwcConv (channels-last)"));
  EXPECT_TRUE(has_line(e.rewrites, "relu1 (Relu) follows its inputs channels-last"));
  EXPECT_TRUE(has_line(e.rewrites, "pool: MaxPool -> NhwcMaxPool"));
  // The transposes say what they copy: x is 6 x 12 x 10 floats, the output 8 x 5 x 4.
  EXPECT_TRUE(has_line(e.rewrites, "Transpose [0,2,3,1] of 'x' into channels-last for conv1: copies 2.8 KiB a run"));
  EXPECT_TRUE(has_line(e.rewrites, "back to channels-first for the graph's output: copies 640 B a run"));
  // The [8, 1, 1] constant, padded to [1, 8, 1, 1], is permuted to [1, 1, 1, 8].
  const ir::Node* add = nullptr;
  for (const auto& n : g.nodes)
    if (n.name == "add_c") add = &n;
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(g.tensor(add->inputs[1]).shape, (ir::Shape{1, 1, 1, 8}));
  EXPECT_TRUE(has_line(e.rewrites, "constant 'c' [8,1,1] -> [1,1,1,8] permuted once"));
  // The output keeps its name and channels-first shape.
  EXPECT_EQ(g.tensor(g.outputs[0]).shape, before.tensor(before.outputs[0]).shape);
  expect_same_outputs(before, g);
}

// A stem of a few channels reads the graph's channels-first input in place: no transpose in.
TEST(ChannelsLast, AStemReadsItsFewChannelsInPlace) {
  ir::Graph g = conv_chain(false, 3);
  const ir::Graph before = g;
  PassLogEntry e = run_pass(g, "channels_last");
  EXPECT_EQ(count_op(g, "Transpose"), 1) << "the way out only";
  EXPECT_TRUE(has_line(e.rewrites, "conv1: Conv -> NhwcConv (channels-last; reads its 3-channel input 'x' "
                                   "channels-first, in place: no transpose)"));
  for (const auto& n : g.nodes)
    if (n.name == "conv1") {
      EXPECT_EQ(n.inputs[0], "x");
      EXPECT_EQ(n.attrs.get_int("channels_first_input", 0), 1);
    } else if (n.name == "conv2") {
      EXPECT_FALSE(n.attrs.has("channels_first_input")) << "its input is channels-last already";
    }
  expect_same_outputs(before, g);
}

// After a global pool only size-1 dims move: the way back is a Reshape (no copy), and the op
// that ends the layout is named.
TEST(ChannelsLast, TheWayOutAfterAGlobalPoolIsAReshape) {
  ir::Graph g = conv_chain(true);
  const ir::Graph before = g;
  PassLogEntry e = run_pass(g, "channels_last");
  EXPECT_EQ(count_op(g, "NhwcGlobalAveragePool"), 1);
  EXPECT_EQ(count_op(g, "Transpose"), 1) << "the input's only";
  EXPECT_EQ(count_op(g, "Reshape"), 1);
  EXPECT_TRUE(has_line(e.rewrites, "is a Reshape [1,1,1,8] -> [1,8,1,1] (only size-1 dims move: no copy)"));
  EXPECT_TRUE(has_line(e.near_misses, "flatten (Flatten) has no channels-last form: the layout ends there"));
  expect_same_outputs(before, g);
}

// A squeeze-and-excitation block (MobileNetV3): the pooled, convolved scale multiplies the
// feature map, both channels-last, so the Mul follows without any transpose between.
TEST(ChannelsLast, ASqueezeExcitationBlockStaysChannelsLast) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {1, 4, 9, 9});
  g.add_weight("w", random_tensor({16, 4, 3, 3}, 1));
  g.add_weight("w1", random_tensor({4, 16, 1, 1}, 2));
  g.add_weight("w2", random_tensor({16, 4, 1, 1}, 3));
  ir::Attributes dw = pads1();
  dw.set("group", int64_t{16});
  g.add_weight("wd", random_tensor({16, 1, 3, 3}, 4));
  std::string f = g.add_node("Conv", {"x", "w"}, pads1(), "conv");
  f = g.add_node("Conv", {f, "wd"}, dw, "depthwise");
  std::string s = g.add_node("GlobalAveragePool", {f}, {}, "se.pool");
  ir::Attributes relu;
  relu.set("activation", std::string("relu"));
  s = g.add_node("Conv", {s, "w1"}, relu, "se.fc1");
  ir::Attributes hs;
  hs.set("activation", std::string("hardsigmoid"));
  s = g.add_node("Conv", {s, "w2"}, hs, "se.fc2");
  g.outputs = {g.add_node("Mul", {f, s}, {}, "se.mul")};
  const ir::Graph before = g;
  PassLogEntry e = run_pass(g, "channels_last");
  EXPECT_EQ(count_op(g, "NhwcConv"), 4);
  EXPECT_EQ(count_op(g, "Transpose"), 1) << "4 channels in: read in place; one out";
  EXPECT_TRUE(has_line(e.rewrites, "se.mul (Mul) follows its inputs channels-last"));
  expect_same_outputs(before, g);
}

// What stays channels-first, and why.
TEST(ChannelsLast, NearMissesSayWhatStaysChannelsFirst) {
  {  // a weight fed at run time
    ir::Graph g;
    g.add_input("x", ir::DType::f32, {1, 2, 5, 5});
    g.add_input("w", ir::DType::f32, {3, 2, 3, 3});
    g.outputs = {g.add_node("Conv", {"x", "w"}, {}, "conv")};
    PassLogEntry e = run_pass(g, "channels_last");
    EXPECT_FALSE(e.changed);
    EXPECT_TRUE(has_line(e.near_misses, "conv stays channels-first: its weight 'w' is computed at run time"));
  }
  {  // an element-wise op with a channels-first operand computed at run time
    ir::Graph g;
    g.add_input("x", ir::DType::f32, {1, 2, 5, 5});
    g.add_input("z", ir::DType::f32, {1, 3, 3, 3});
    g.add_weight("w", random_tensor({3, 2, 3, 3}, 1));
    std::string y = g.add_node("Conv", {"x", "w"}, {}, "conv");
    g.outputs = {g.add_node("Add", {y, "z"}, {}, "add")};
    const ir::Graph before = g;
    PassLogEntry e = run_pass(g, "channels_last");
    EXPECT_TRUE(has_line(e.near_misses, "add (Add) stays channels-first: its input 'z' [1,3,3,3] is computed "
                                        "channels-first at run time"));
    EXPECT_EQ(count_op(g, "NhwcConv"), 1);
    EXPECT_EQ(count_op(g, "Transpose"), 1) << "2 channels in: read in place; the Add gets it back channels-first";
    expect_same_outputs(before, g);
  }
  {  // a pool alone stays: it would only add transposes
    ir::Graph g;
    g.add_input("x", ir::DType::f32, {1, 2, 6, 6});
    ir::Attributes pool;
    pool.set("kernel_shape", std::vector<int64_t>{2, 2});
    g.outputs = {g.add_node("MaxPool", {"x"}, pool, "pool")};
    PassLogEntry e = run_pass(g, "channels_last");
    EXPECT_FALSE(e.changed);
    EXPECT_EQ(count_op(g, "MaxPool"), 1);
  }
}

// The conv nets in the repository: MobileNetV3-Small runs channels-last from its stem, which reads
// the 3-channel image in place, to the global pool before its classifier, whose way back is a
// Reshape: no transpose copies anything.
TEST(ChannelsLast, MobileNetV3SmallCopiesNoTranspose) {
  ir::Graph g = import_asset("mobilenet_v3_small_opset17.onnx");
  const ir::Graph before = g;
  PassLog log = run_pipeline(g, parse_pass_list("all"), cpu_context());
  int transposes = 0, conv = 0, nhwc = 0;
  for (const auto& n : g.nodes) {
    transposes += n.op == "Transpose";
    conv += n.op == "Conv";
    nhwc += n.op == "NhwcConv";
  }
  EXPECT_EQ(transposes, 0);
  EXPECT_EQ(conv, 0);
  EXPECT_EQ(nhwc, 52);
  expect_same_outputs(before, g, 7, 1e-3);
}

// winograd (core/passes/winograd.cpp) after channels_last: the 3x3 stride-1 conv is marked, saying
// what it saves; the stride-2 one and a stem reading its input channels-first are near misses
// saying why; the graph computes what it did.
TEST(Winograd, MarksThe3x3Stride1ConvsAndSaysWhyNotTheOthers) {
  ir::Graph g = conv_chain(false, 16);
  const ir::Graph before = g;
  run_pass(g, "channels_last");
  PassLogEntry e = run_pass(g, "winograd");
  EXPECT_TRUE(e.changed);
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].changed, (std::vector<std::string>{"conv1"}));
  // 2 x 120 positions x 8 x 144 = 276480 FLOPs direct; 30 tiles x (16 x 2 x 16 x 8 + 32 x 16 + 24 x 8)
  // + 960 for the bias = 147,840 + 960.
  EXPECT_TRUE(has_line(e.rewrites, "conv1: 3x3 conv 16 -> 8 channels over 12x10 as Winograd F(2x2, 3x3): 16 GEMMs "
                                   "over 30 tiles, 0.3 -> 0.1 MFLOP a run"));
  EXPECT_TRUE(has_line(e.near_misses, "conv2 stays on the im2col GEMM: stride 2 (F(2x2, 3x3) needs stride 1)"));
  for (const auto& n : g.nodes) EXPECT_EQ(ir::wants_winograd(n), n.name == "conv1") << n.name;
  expect_same_outputs(before, g);

  ir::Graph stem = conv_chain(false, 3);
  run_pass(stem, "channels_last");
  PassLogEntry s = run_pass(stem, "winograd");
  EXPECT_FALSE(s.changed);
  EXPECT_TRUE(has_line(s.near_misses, "conv1 stays on the im2col GEMM: it reads its input channels-first (a stem)"));
}

}  // namespace
}  // namespace fusebox::passes::test
