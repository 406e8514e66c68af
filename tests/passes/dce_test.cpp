// dce: dead nodes and unreferenced tensors go; graph inputs and live multi-output nodes stay.
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

TEST(Dce, RemovesDeadNodesAndUnusedTensorsButNotInputs) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4});
  g.add_input("unused_input", ir::DType::f32, {4});
  g.add_weight("w", random_tensor({4}, 1));
  g.add_weight("orphan", random_tensor({256}, 2));
  std::string dead1 = g.add_node("Mul", {"x", "w"}, {}, "Mul_0");
  g.add_node("Relu", {dead1}, {}, "Relu_1");  // dead chain: Mul_0 -> Relu_1
  g.outputs = {g.add_node("Neg", {"x"}, {}, "Neg_2")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "dce");
  EXPECT_TRUE(e.changed);
  EXPECT_TRUE(has_line(e.rewrites, "removed Mul_0 (Mul): nothing reads its output"));
  EXPECT_TRUE(has_line(e.rewrites, "removed Relu_1 (Relu): nothing reads its output"));
  EXPECT_TRUE(has_line(e.rewrites, "removed unused weight 'orphan' (1.0 KiB)"));
  EXPECT_TRUE(has_line(e.rewrites, "removed unused weight 'w'"));
  ASSERT_EQ(e.rewrites.size(), 4u);
  EXPECT_EQ(e.rewrites[0].pattern, "remove_node");
  EXPECT_EQ(e.rewrites[0].removed, (Names{"Mul_0"}));
  EXPECT_EQ(e.rewrites[1].pattern, "remove_node");
  EXPECT_EQ(e.rewrites[1].removed, (Names{"Relu_1"}));
  for (const Rewrite& rw : e.rewrites) {
    EXPECT_EQ(rw.added, Names{});
    EXPECT_EQ(rw.changed, Names{});
  }
  for (const char* w : {"'orphan'", "'w'"}) {  // a weight is not a node: nothing to name
    const Rewrite* rw = find_line(e.rewrites, std::string("removed unused weight ") + w);
    ASSERT_NE(rw, nullptr);
    EXPECT_EQ(rw->pattern, "remove_weight");
    EXPECT_EQ(rw->removed, Names{});
  }
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_TRUE(g.has_tensor("unused_input"));
  EXPECT_FALSE(g.has_tensor(dead1));
  expect_same_outputs(before, g);
}

TEST(Dce, KeepsALiveNodeWithUnreadOutputs) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 4});
  g.add_weight("s", random_tensor({4}, 1));
  g.add_weight("b", random_tensor({4}, 2));
  g.add_node("LayerNorm", {"x", "s", "b"}, {}, "LayerNorm_0", 3);
  g.outputs = {"LayerNorm_0_0:out"};
  PassLogEntry e = run_pass(g, "dce");
  EXPECT_FALSE(e.changed);
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_TRUE(g.has_tensor("LayerNorm_0_1:out"));
}

}  // namespace
}  // namespace fusebox::passes::test
