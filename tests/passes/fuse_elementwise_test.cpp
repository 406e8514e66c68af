// fuse_elementwise: chains (trees) of single-reader element-wise ops become one program.
#include "core/ir/elementwise_program.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

TEST(FuseElementwise, ChainBecomesOneProgram) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {3, 4});
  g.add_input("y", ir::DType::f32, {3, 4});
  g.add_weight("w", random_tensor({4}, 1));
  std::string a = g.add_node("Relu", {"x"}, {}, "Relu_0");
  std::string b = g.add_node("Mul", {a, "w"}, {}, "Mul_1");
  std::string c = g.add_node("Add", {"y", b}, {}, "Add_2");
  ir::Attributes tanh;
  tanh.set("approximate", std::string("tanh"));
  std::string d = g.add_node("Gelu", {c}, tanh, "Gelu_3");
  g.outputs = {g.add_node("Sigmoid", {d}, {}, "Sigmoid_4")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "fuse_elementwise");
  EXPECT_TRUE(has_line(e.rewrites,
                       "fused Relu_0 + Mul_1 + Add_2 + Gelu_3 + Sigmoid_4 -> FusedElementwise_0 "
                       "[Relu i0; Mul r0 i1; Add i2 r1; GeluTanh r2; Sigmoid r3]"));
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].pattern, "elementwise_chain");
  EXPECT_EQ(e.rewrites[0].removed,
            (std::vector<std::string>{"Relu_0", "Mul_1", "Add_2", "Gelu_3", "Sigmoid_4"}));
  EXPECT_EQ(e.rewrites[0].added, (std::vector<std::string>{"FusedElementwise_0"}));
  EXPECT_TRUE(e.rewrites[0].changed.empty());
  ASSERT_EQ(g.nodes.size(), 1u);
  const ir::Node& f = g.nodes[0];
  EXPECT_EQ(f.op, "FusedElementwise");
  EXPECT_EQ(f.inputs, (std::vector<std::string>{"x", "w", "y"}));
  EXPECT_EQ(f.outputs, before.outputs);
  EXPECT_FALSE(g.has_tensor(a));
  expect_same_outputs(before, g);
}

// A chain longer than one program runs as several: 1000 alternating Neg/Relu ops become
// ceil(1000 / 16) programs of at most 16 instructions, and compute what the chain computes.
TEST(FuseElementwise, LongChainIsCutIntoProgramsEveryBackendRuns) {
  ir::Graph g;
  std::string x = g.add_input("x", ir::DType::f32, {1, 16});
  for (int i = 0; i < 1000; ++i) x = g.add_node(i % 2 ? "Relu" : "Neg", {x});
  g.outputs = {x};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "fuse_elementwise");
  ASSERT_EQ(g.nodes.size(), 63u);
  for (const ir::Node& n : g.nodes) {
    EXPECT_EQ(n.op, "FusedElementwise");
    EXPECT_LE(n.attrs.get_strings("program").size(), 16u);
  }
  EXPECT_TRUE(has_line(e.near_misses, "starts a new program: the one it feeds has 16 ops"));
  expect_same_outputs(before, g);
}

TEST(FuseElementwise, TreeOfTwoBranchesAndARepeatedOperand) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {5});
  g.add_input("b", ir::DType::f32, {2, 5});
  std::string ea = g.add_node("Tanh", {"a"}, {}, "Tanh_0");
  std::string eb = g.add_node("Exp", {"b"}, {}, "Exp_1");
  std::string sq = g.add_node("Mul", {ea, ea}, {}, "Mul_2");
  g.outputs = {g.add_node("Sub", {sq, eb}, {}, "Sub_3")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "fuse_elementwise");
  EXPECT_TRUE(has_line(e.rewrites, "[Tanh i0; Exp i1; Mul r0 r0; Sub r2 r1]"));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.tensor(g.outputs[0]).shape, (ir::Shape{2, 5}));
  expect_same_outputs(before, g);
}

TEST(FuseElementwise, SharedIntermediateEndsAChain) {
  // x = Add(a, b) is read by two element-wise ops: it ends its chain, the rest fuses.
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {6});
  g.add_input("b", ir::DType::f32, {6});
  std::string x = g.add_node("Add", {"a", "b"}, {}, "Add_0");
  std::string e1 = g.add_node("Erf", {x}, {}, "Erf_1");
  std::string e2 = g.add_node("Neg", {e1}, {}, "Neg_2");
  g.outputs = {g.add_node("Mul", {x, e2}, {}, "Mul_3")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "fuse_elementwise");
  EXPECT_TRUE(has_line(e.near_misses,
                       "Add_0 ends an element-wise chain: its output is read by Erf_1 and Mul_3"));
  EXPECT_TRUE(has_line(
      e.rewrites, "fused Erf_1 + Neg_2 + Mul_3 -> FusedElementwise_1 [Erf i0; Neg r0; Mul i0 r1]"));
  ASSERT_EQ(e.near_misses.size(), 1u);
  EXPECT_EQ(e.near_misses[0].pattern, "elementwise_chain");
  EXPECT_EQ(e.near_misses[0].node, "Add_0");
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].removed, (Names{"Erf_1", "Neg_2", "Mul_3"}));
  EXPECT_EQ(e.rewrites[0].added, (Names{"FusedElementwise_1"}));
  EXPECT_EQ(g.nodes.size(), 2u);
  expect_same_outputs(before, g);
}

TEST(FuseElementwise, LeavesSingleOpsGraphOutputsAndI64Alone) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4});
  g.add_input("i", ir::DType::i64, {4});
  std::string r = g.add_node("Relu", {"x"}, {}, "Relu_0");
  std::string s = g.add_node("Sigmoid", {r}, {}, "Sigmoid_1");  // Relu_0 is a graph output too
  std::string i2 = g.add_node("Add", {"i", "i"}, {}, "Add_2");
  std::string i3 = g.add_node("Mul", {i2, "i"}, {}, "Mul_3");
  g.outputs = {r, s, i3};
  PassLogEntry e = run_pass(g, "fuse_elementwise");
  EXPECT_FALSE(e.changed);
  EXPECT_EQ(g.nodes.size(), 4u);
  EXPECT_TRUE(has_line(
      e.near_misses,
      "Relu_0 ends an element-wise chain: its output is read by Sigmoid_1 and a graph output"));
}

}  // namespace
}  // namespace fusebox::passes::test
