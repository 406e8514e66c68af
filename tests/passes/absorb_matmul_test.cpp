// absorb_matmul: transposes into transA/transB, scalar Mul/Div into alpha, and the near misses.
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

ir::Attributes perm(std::vector<int64_t> p) {
  ir::Attributes a;
  a.set("perm", std::move(p));
  return a;
}

TEST(AbsorbMatMul, WeightTransposeBecomesTransB) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4, 8});
  g.add_weight("W", random_tensor({6, 8}, 1));
  std::string wt = g.add_node("Transpose", {"W"}, perm({1, 0}), "Transpose_1");
  g.outputs = {g.add_node("MatMul", {"x", wt}, {}, "MatMul_2")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_TRUE(e.changed);
  EXPECT_TRUE(has_line(e.rewrites, "absorbed Transpose_1 into MatMul_2 as transB"));
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].pattern, "transpose_to_flag");
  EXPECT_EQ(e.rewrites[0].removed, (Names{"Transpose_1"}));
  EXPECT_EQ(e.rewrites[0].added, Names{});
  EXPECT_EQ(e.rewrites[0].changed, (Names{"MatMul_2"}));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs[1], "W");
  EXPECT_EQ(g.nodes[0].attrs.get_int("transB", 0), 1);
  EXPECT_FALSE(g.has_tensor(wt));
  expect_same_outputs(before, g);
}

TEST(AbsorbMatMul, BatchedTransposeOnInputABecomesTransA) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {2, 8, 4});
  g.add_input("b", ir::DType::f32, {2, 8, 5});
  std::string at = g.add_node("Transpose", {"a"}, perm({0, -1, -2}), "Transpose_0");
  g.outputs = {g.add_node("MatMul", {at, "b"}, {}, "MatMul_1")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_TRUE(has_line(e.rewrites, "absorbed Transpose_0 into MatMul_1 as transA"));
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attrs.get_int("transA", 0), 1);
  expect_same_outputs(before, g);
}

TEST(AbsorbMatMul, TransposeWithAnotherReaderIsKept) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4, 4});
  g.add_input("y", ir::DType::f32, {4, 4});
  std::string t = g.add_node("Transpose", {"y"}, {}, "Transpose_0");  // default perm: reversed
  std::string mm = g.add_node("MatMul", {"x", t}, {}, "MatMul_1");
  std::string r = g.add_node("Relu", {t}, {}, "Relu_2");
  g.outputs = {mm, r};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_TRUE(
      has_line(e.rewrites,
               "absorbed Transpose_0 into MatMul_1 as transB (Transpose_0 kept: read by Relu_2)"));
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].removed, Names{}) << "the Transpose stays";
  EXPECT_EQ(e.rewrites[0].changed, (Names{"MatMul_1"}));
  EXPECT_EQ(count_op(g, "Transpose"), 1);
  EXPECT_EQ(find_op(g, "MatMul")->inputs[1], "y");
  expect_same_outputs(before, g);
}

TEST(AbsorbMatMul, FlagAlreadySetIsToggledOff) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {3, 5});
  g.add_weight("W", random_tensor({5, 6}, 2));
  std::string t = g.add_node("Transpose", {"W"}, perm({1, 0}), "Transpose_0");
  ir::Attributes tb;
  tb.set("transB", int64_t{1});
  g.outputs = {g.add_node("MatMul", {"x", t}, tb, "MatMul_1")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_TRUE(has_line(e.rewrites, "as transB (cancelling the one it had)"));
  EXPECT_EQ(g.nodes[0].attrs.get_int("transB", 1), 0);
  expect_same_outputs(before, g);
}

TEST(AbsorbMatMul, OtherPermutationIsANearMiss) {
  ir::Graph h;
  h.add_input("q", ir::DType::f32, {1, 2, 4, 3});
  h.add_input("k", ir::DType::f32, {1, 3, 2, 4});
  std::string kt = h.add_node("Transpose", {"k"}, perm({0, 2, 1, 3}), "Transpose_9");
  h.outputs = {h.add_node("MatMul", {"q", kt}, {}, "MatMul_10")};
  PassLogEntry e = run_pass(h, "absorb_matmul");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(
      has_line(e.near_misses, "Transpose_9 perm [0,2,1,3] does not swap the last two dims"));
  ASSERT_EQ(e.near_misses.size(), 1u);
  EXPECT_EQ(e.near_misses[0].pattern, "transpose_to_flag");
  EXPECT_EQ(e.near_misses[0].node, "Transpose_9");
}

TEST(AbsorbMatMul, OutputMulAndDivFoldIntoAlpha) {
  for (const char* op : {"Mul", "Div"}) {
    ir::Graph g;
    g.add_input("a", ir::DType::f32, {3, 4});
    g.add_input("b", ir::DType::f32, {4, 5});
    g.add_weight("c", scalar(op == std::string("Mul") ? 0.125f : 8.0f));
    std::string mm = g.add_node("MatMul", {"a", "b"}, {}, "MatMul_6");
    g.outputs = {g.add_node(op, {mm, "c"}, {}, std::string(op) + "_7")};
    ir::Graph before = g;
    PassLogEntry e = run_pass(g, "absorb_matmul");
    std::string text = op == std::string("Mul") ? "folded Mul_7 (x 0.125) into MatMul_6 alpha"
                                                : "folded Div_7 (/ 8) into MatMul_6 alpha";
    EXPECT_TRUE(has_line(e.rewrites, text));
    ASSERT_EQ(e.rewrites.size(), 1u);
    EXPECT_EQ(e.rewrites[0].pattern, "scale_to_alpha");
    EXPECT_EQ(e.rewrites[0].removed, (Names{std::string(op) + "_7"}));
    EXPECT_EQ(e.rewrites[0].added, Names{});
    EXPECT_EQ(e.rewrites[0].changed, (Names{"MatMul_6"}));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_DOUBLE_EQ(g.nodes[0].attrs.get_float("alpha", 1), 0.125);
    EXPECT_EQ(g.nodes[0].outputs[0], before.outputs[0]);  // the graph output keeps its name
    expect_same_outputs(before, g);
  }
}

TEST(AbsorbMatMul, ScalarOnAnInputFoldsAndCommutes) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {3, 4});
  g.add_input("b", ir::DType::f32, {4, 5});
  g.add_weight("half", scalar(0.5f, {1}));
  std::string s = g.add_node("Mul", {"half", "b"}, {}, "Mul_5");
  g.outputs = {g.add_node("MatMul", {"a", s}, {}, "MatMul_6")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_TRUE(has_line(e.rewrites, "folded Mul_5 (x 0.5) on input B into MatMul_6 alpha"));
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].pattern, "scale_to_alpha");
  EXPECT_EQ(e.rewrites[0].removed, (Names{"Mul_5"}));
  EXPECT_EQ(e.rewrites[0].changed, (Names{"MatMul_6"}));
  EXPECT_EQ(g.nodes.size(), 1u);
  expect_same_outputs(before, g);
}

// After an element-wise op that FusedElementwise cannot run (LeakyRelu), fusion would leave the
// scale alone, so it folds into alpha.
TEST(AbsorbMatMul, ScaleAfterAnUnfusableElementwiseOpFolds) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {3, 4});
  g.add_input("b", ir::DType::f32, {4, 5});
  g.add_weight("two", scalar(2.0f));
  std::string r = g.add_node("LeakyRelu", {"a"}, {}, "LeakyRelu_1");
  std::string s = g.add_node("Mul", {r, "two"}, {}, "Mul_2");
  g.outputs = {g.add_node("MatMul", {s, "b"}, {}, "MatMul_3")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_TRUE(has_line(e.rewrites, "folded Mul_2 (x 2) on input A into MatMul_3 alpha"));
  EXPECT_EQ(g.nodes.size(), 2u);
  expect_same_outputs(before, g);
}

TEST(AbsorbMatMul, NearMisses) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {3, 4});
  g.add_input("b", ir::DType::f32, {4, 5});
  g.add_weight("v", random_tensor({5}, 3));
  g.add_weight("two", scalar(2.0f));
  // Mul by a vector: not a scale.
  std::string m1 = g.add_node("MatMul", {"a", "b"}, {}, "MatMul_1");
  std::string y1 = g.add_node("Mul", {m1, "v"}, {}, "Mul_12");
  // Scale read by a second node.
  std::string m2 = g.add_node("MatMul", {"a", "b"}, {}, "MatMul_2");
  std::string y2 = g.add_node("Mul", {m2, "two"}, {}, "Mul_13");
  std::string r2 = g.add_node("Relu", {m2}, {}, "Relu_14");
  // A scalar Mul after an element-wise op stays for element-wise fusion (erf-GELU ends this way).
  std::string r3 = g.add_node("Relu", {"a"}, {}, "Relu_15");
  std::string s3 = g.add_node("Mul", {r3, "two"}, {}, "Mul_16");
  std::string y3 = g.add_node("MatMul", {s3, "b"}, {}, "MatMul_3");
  // c / y is not a scale of y; a graph output cannot be folded away.
  std::string m4 = g.add_node("MatMul", {"a", "b"}, {}, "MatMul_4");
  std::string y4 = g.add_node("Div", {"two", m4}, {}, "Div_17");
  std::string m5 = g.add_node("MatMul", {"a", "b"}, {}, "MatMul_5");
  std::string y5 = g.add_node("Mul", {m5, "two"}, {}, "Mul_18");
  g.outputs = {y1, y2, r2, y3, y4, m5, y5};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_FALSE(e.changed);
  EXPECT_EQ(g.nodes.size(), before.nodes.size());
  EXPECT_TRUE(has_line(e.near_misses, "Mul_12 operand is not a scalar constant"));
  EXPECT_TRUE(has_line(e.near_misses,
                       "Mul_13 (x 2) not folded into MatMul_2: its output is read by Relu_14"));
  EXPECT_TRUE(has_line(e.near_misses,
                       "Mul_16 (x 2) left for element-wise fusion: its input comes from Relu_15"));
  EXPECT_TRUE(has_line(e.near_misses,
                       "Mul_18 (x 2) not folded into MatMul_5: its output is a graph output"));
  // Each stopped at its Mul, which a front end can light up.
  for (const char* mul : {"Mul_12", "Mul_13", "Mul_16", "Mul_18"}) {
    const NearMiss* m = find_line(e.near_misses, std::string(mul) + " ");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->pattern, "scale_to_alpha");
    EXPECT_EQ(m->node, mul);
  }
}

TEST(AbsorbMatMul, ScalarThatBroadcastsUpIsNotFolded) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {3, 4});
  g.add_input("b", ir::DType::f32, {4, 5});
  g.add_weight("c", scalar(2.0f, {1, 1, 1}));
  std::string mm = g.add_node("MatMul", {"a", "b"}, {}, "MatMul_1");
  g.outputs = {g.add_node("Mul", {mm, "c"}, {}, "Mul_2")};
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses, "Mul_2 broadcasts its input to [1,3,5]"));
}

TEST(AbsorbMatMul, TransposeAndScaleTogether) {
  // Mul(Transpose(K), s) feeding a MatMul: the scale folds first, then the transpose.
  ir::Graph g;
  g.add_input("q", ir::DType::f32, {2, 3, 4});
  g.add_input("k", ir::DType::f32, {2, 5, 4});
  g.add_weight("s", scalar(0.5f));
  std::string kt = g.add_node("Transpose", {"k"}, perm({0, 2, 1}), "Transpose_0");
  std::string ks = g.add_node("Mul", {kt, "s"}, {}, "Mul_1");
  g.outputs = {g.add_node("MatMul", {"q", ks}, {}, "MatMul_2")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  ASSERT_EQ(e.rewrites.size(), 2u);
  EXPECT_EQ(e.rewrites[0].pattern, "scale_to_alpha");
  EXPECT_EQ(e.rewrites[0].removed, (Names{"Mul_1"}));
  EXPECT_EQ(e.rewrites[1].pattern, "transpose_to_flag");
  EXPECT_EQ(e.rewrites[1].removed, (Names{"Transpose_0"}));
  for (const Rewrite& rw : e.rewrites) EXPECT_EQ(rw.changed, (Names{"MatMul_2"}));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"q", "k"}));
  EXPECT_EQ(g.nodes[0].attrs.get_int("transB", 0), 1);
  EXPECT_DOUBLE_EQ(g.nodes[0].attrs.get_float("alpha", 1), 0.5);
  expect_same_outputs(before, g);
}

// K blocks of: T = Transpose(W), a = MatMul(h, T), b = MatMul(a, T), h = Mul(b, 0.5). The first
// MatMul keeps T (the second still reads it), the second removes it and folds the Mul.
ir::Graph shared_transpose_chain(int blocks) {
  ir::Graph g;
  std::string h = g.add_input("x", ir::DType::f32, {4, 4});
  g.add_weight("half", scalar(0.5f));
  for (int i = 0; i < blocks; ++i) {
    const std::string n = std::to_string(i);
    g.add_weight("W" + n, random_tensor({4, 4}, static_cast<uint64_t>(i) + 1));
    std::string t = g.add_node("Transpose", {"W" + n}, perm({1, 0}), "Transpose_" + n);
    std::string a = g.add_node("MatMul", {h, t}, {}, "MatMulA_" + n);
    std::string b = g.add_node("MatMul", {a, t}, {}, "MatMulB_" + n);
    h = g.add_node("Mul", {b, "half"}, {}, "Mul_" + n);
  }
  g.outputs = {h};
  return g;
}

TEST(AbsorbMatMul, TransposeSharedByTwoMatMulsGoesWithTheSecond) {
  ir::Graph g = shared_transpose_chain(2);
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_matmul");
  ASSERT_EQ(e.rewrites.size(), 6u);
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Transpose_0 into MatMulA_0 as transB (Transpose_0 kept: read "
                       "by MatMulB_0)"));
  EXPECT_EQ(e.rewrites[1].removed, (Names{"Transpose_0"}));
  EXPECT_EQ(e.rewrites[2].removed, (Names{"Mul_0"}));
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[3].name, "MatMulB_1");
  EXPECT_EQ(g.outputs[0], g.nodes[3].outputs[0]);
  expect_same_outputs(before, g);
}

TEST(AbsorbMatMul, LinearInTheGraphSize) {
  // Rebuilding the use lists per MatMul made this pass quadratic: 3,584 nodes took 20 s and
  // stack:layers=256 (14,336) ran for minutes. Updated in place it is linear: these 8,192 nodes
  // take about 0.1 s; the bound leaves room for sanitizers and a loaded machine.
  constexpr int kBlocks = 2048;
  ir::Graph g = shared_transpose_chain(kBlocks);
  PassLogEntry e = run_pass(g, "absorb_matmul");
  EXPECT_EQ(e.rewrites.size(), 3u * kBlocks);
  EXPECT_EQ(g.nodes.size(), 2u * kBlocks);
  EXPECT_LT(e.millis, 20000.0) << "absorb_matmul on " << 4 * kBlocks << " nodes";
}

}  // namespace
}  // namespace fusebox::passes::test
