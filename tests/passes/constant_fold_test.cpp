// constant_fold: static subgraphs become weights; graph outputs, huge results and a missing
// evaluator are reported instead.
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

TEST(ConstantFold, FoldsAChainOfConstantNodesInOneSweep) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 3});
  g.add_weight("W", random_tensor({3, 2}, 1));
  g.add_weight("two", scalar(2.0f));
  ir::Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  std::string wt = g.add_node("Transpose", {"W"}, perm, "Transpose_0");
  std::string w2 = g.add_node("Mul", {wt, "two"}, {}, "Mul_1");
  g.outputs = {g.add_node("Add", {"x", w2}, {}, "Add_2")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "constant_fold");
  EXPECT_TRUE(e.changed);
  EXPECT_TRUE(has_line(e.rewrites,
                       "folded Transpose_0 (Transpose) into weight 'Transpose_0:out' f32[2,3]"));
  EXPECT_TRUE(has_line(e.rewrites, "folded Mul_1 (Mul) into weight 'Mul_1:out' f32[2,3]"));
  // A folded node is gone; the weight it became is a tensor, not a node.
  ASSERT_EQ(e.rewrites.size(), 2u);
  EXPECT_EQ(e.rewrites[0].removed, (Names{"Transpose_0"}));
  EXPECT_EQ(e.rewrites[1].removed, (Names{"Mul_1"}));
  for (const Rewrite& rw : e.rewrites) {
    EXPECT_EQ(rw.pattern, "fold");
    EXPECT_EQ(rw.added, Names{});
    EXPECT_EQ(rw.changed, Names{});
  }
  ASSERT_EQ(g.nodes.size(), 1u);
  ASSERT_TRUE(g.is_weight(w2));
  // Independent reference: w2[i][j] = 2 * W[j][i].
  const ir::Tensor& w = *g.tensor("W").value;
  const ir::Tensor& folded = *g.tensor(w2).value;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_FLOAT_EQ(folded.data<float>()[i * 3 + j], 2 * w.data<float>()[j * 2 + i]);
  expect_same_outputs(before, g);
}

TEST(ConstantFold, ResolvesI64ShapeArithmetic) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {3});
  g.add_weight("dims", i64_tensor({3}, {2, 3, 4}));
  g.add_weight("one", i64_tensor({}, {1}));
  std::string plus = g.add_node("Add", {"dims", "one"}, {}, "Add_0");
  std::string prod = g.add_node("Mul", {plus, plus}, {}, "Mul_1");
  ir::Attributes to_f32;
  to_f32.set("to", std::string("f32"));
  std::string as_f32 = g.add_node("Cast", {prod}, to_f32, "Cast_2");
  g.outputs = {g.add_node("Add", {"x", as_f32}, {}, "Add_3")};
  ir::Graph before = g;
  run_pass(g, "constant_fold");
  ASSERT_EQ(g.nodes.size(), 1u);
  const ir::Tensor& p = *g.tensor(prod).value;
  EXPECT_EQ(p.dtype(), ir::DType::i64);
  EXPECT_EQ(p.data<int64_t>()[0], 9);
  EXPECT_EQ(p.data<int64_t>()[2], 25);
  EXPECT_FLOAT_EQ(g.tensor(as_f32).value->data<float>()[1], 16.0f);
  expect_same_outputs(before, g);
}

TEST(ConstantFold, ViewsShareTheWeightsStorage) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 6});
  g.add_weight("W", random_tensor({3, 4}, 2));
  ir::Attributes shape;
  shape.set("shape", std::vector<int64_t>{2, 6});
  std::string r = g.add_node("Reshape", {"W"}, shape, "Reshape_0");
  g.outputs = {g.add_node("Add", {"x", r}, {}, "Add_1")};
  run_pass(g, "constant_fold");
  EXPECT_EQ(g.tensor(r).value->bytes(), g.tensor("W").value->bytes());
  EXPECT_EQ(g.tensor(r).value->shape(), (ir::Shape{2, 6}));
}

TEST(ConstantFold, NearMisses) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {1});
  g.add_weight("col", random_tensor({4096, 1}, 3));
  g.add_weight("row", random_tensor({1, 4200}, 4));
  g.add_weight("c", scalar(3.0f, {1}));
  std::string big = g.add_node("Add", {"col", "row"}, {}, "Add_0");  // 4096 x 4200 f32 > 64 MiB
  std::string s = g.add_node("ReduceMean", {big}, {}, "ReduceMean_1");
  std::string out_const = g.add_node("Neg", {"c"}, {}, "Neg_2");
  g.outputs = {g.add_node("Add", {"x", s}, {}, "Add_3"), out_const};
  PassLogEntry e = run_pass(g, "constant_fold");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses,
                       "Add_0 not folded: its result would take 65.62 MiB (limit 64.00 MiB)"));
  EXPECT_TRUE(
      has_line(e.near_misses,
               "Neg_2 has only constant inputs but its output 'Neg_2:out' is a graph output"));
  ASSERT_EQ(e.near_misses.size(), 2u);
  EXPECT_EQ(e.near_misses[0].node, "Add_0");
  EXPECT_EQ(e.near_misses[1].node, "Neg_2");
  for (const NearMiss& m : e.near_misses) EXPECT_EQ(m.pattern, "fold");
  EXPECT_EQ(g.nodes.size(), 4u);
}

// A graph of a few KiB of weights whose constant nodes are each under the per-node limit (62.5
// MiB) but would add 312 MiB together: folding stops at its budget (the graph's weights + 256
// MiB) and leaves the rest for run time, saying so.
TEST(ConstantFold, AGraphHasATotalBudget) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4096, 4000});
  g.add_weight("col", random_tensor({4096, 1}, 3));
  g.add_weight("row", random_tensor({1, 4000}, 4));
  std::string sum = "x";
  for (int k = 0; k < 5; ++k) {
    std::string big = g.add_node("Add", {"col", "row"}, {}, "Add_" + std::to_string(k));
    sum = g.add_node("Add", {sum, big}, {}, "Sum_" + std::to_string(k));
  }
  g.outputs = {sum};
  PassLogEntry e = run_pass(g, "constant_fold");
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(g.is_weight("Add_" + std::to_string(k) + ":out")) << k;
  EXPECT_FALSE(g.is_weight("Add_4:out"));
  EXPECT_TRUE(has_line(e.near_misses,
                       "Add_4 not folded: its result (62.50 MiB) would take folding past its "
                       "budget for this graph (250.00 MiB made of 256.03 MiB)"));
  EXPECT_EQ(g.nodes.size(), 6u);
}

// A Gather of constants with an index out of range is not folded into a zeroed row: the kernel's
// error leaves it for run time, where it fails naming the node.
TEST(ConstantFold, GatherWithAnOutOfRangeIndexIsNotFolded) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {1, 2});
  g.add_weight("table", random_tensor({97, 2}, 6));
  g.add_weight("ids", i64_tensor({1}, {97}));
  std::string row = g.add_node("Gather", {"table", "ids"}, {}, "Gather_0");
  g.outputs = {g.add_node("Add", {"x", row}, {}, "Add_1")};
  PassLogEntry e = run_pass(g, "constant_fold");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses,
                       "Gather_0 not folded: node 'Gather_0' (Gather): input 'ids' element 0 is "
                       "index 97, out of range for axis 0 of size 97 (valid: -97..96)"));
  EXPECT_FALSE(g.is_weight(row));
}

TEST(ConstantFold, WithoutAnEvaluatorDoesNothingAndSaysSo) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2});
  g.add_weight("w", random_tensor({2}, 5));
  std::string n = g.add_node("Neg", {"w"}, {}, "Neg_0");
  g.outputs = {g.add_node("Add", {"x", n}, {}, "Add_1")};
  PassLogEntry e = run_pass(g, "constant_fold", PassContext{});
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses, "no evaluator backend: constant folding skipped"));
  ASSERT_EQ(e.near_misses.size(), 1u);
  EXPECT_EQ(e.near_misses[0].node, "") << "no node to point at";
  EXPECT_EQ(g.nodes.size(), 2u);
}

}  // namespace
}  // namespace fusebox::passes::test
