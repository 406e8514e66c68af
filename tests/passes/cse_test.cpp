// cse: twins (same op, attributes and inputs) merge into the first, chains of them whole; a
// different attribute, a different input or an output the caller receives keeps a node.
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

TEST(Cse, MergesTwinsAndTheirChainsIntoTheFirst) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 4});
  g.add_weight("w", random_tensor({4}, 1));
  const std::string a1 = g.add_node("Mul", {"x", "w"}, {}, "Mul_a");
  const std::string b1 = g.add_node("Tanh", {a1}, {}, "Tanh_a");
  const std::string a2 = g.add_node("Mul", {"x", "w"}, {}, "Mul_b");  // twin of Mul_a
  const std::string b2 = g.add_node("Tanh", {a2}, {}, "Tanh_b");      // twin once Mul_b is
  g.outputs = {g.add_node("Add", {b1, b2}, {}, "Add_out")};
  const ir::Graph before = g;
  const PassLogEntry e = run_pass(g, "cse");
  EXPECT_TRUE(e.changed);
  EXPECT_TRUE(has_line(e.rewrites, "merged Mul_b (Mul) into Mul_a: the same op, attributes and inputs"));
  EXPECT_TRUE(has_line(e.rewrites, "merged Tanh_b (Tanh) into Tanh_a"));
  ASSERT_EQ(e.rewrites.size(), 2u);
  EXPECT_EQ(e.rewrites[0].pattern, "merge_twin");
  EXPECT_EQ(e.rewrites[0].removed, (Names{"Mul_b"}));
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[2].inputs, (Names{b1, b1}));  // the Add reads the first Tanh twice
  EXPECT_FALSE(g.has_tensor(a2));
  EXPECT_FALSE(g.has_tensor(b2));
  expect_same_outputs(before, g);
}

TEST(Cse, KeepsNodesThatDifferOrThatTheCallerReceives) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 6});
  g.add_input("y", ir::DType::f32, {2, 6});
  ir::Attributes axis1, axis0;
  axis1.set("axis", int64_t{1});
  axis0.set("axis", int64_t{0});
  const std::string s1 = g.add_node("Softmax", {"x"}, axis1, "Softmax_1");
  const std::string s0 = g.add_node("Softmax", {"x"}, axis0, "Softmax_0");  // another attribute
  const std::string sy = g.add_node("Softmax", {"y"}, axis1, "Softmax_y");  // another input
  const std::string out = g.add_node("Softmax", {"x"}, axis1, "Softmax_out");  // a graph output
  const std::string sum = g.add_node("Add", {g.add_node("Add", {s1, s0}, {}, "Add_0"), sy}, {}, "Add_1");
  g.outputs = {sum, out};
  const ir::Graph before = g;
  const PassLogEntry e = run_pass(g, "cse");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(e.rewrites.empty());
  EXPECT_EQ(g.nodes.size(), 6u);
  expect_same_outputs(before, g);
}

TEST(Cse, ALaterTwinReadsTheFirstEvenWhenTheFirstIsReturned) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {3});
  const std::string first = g.add_node("Exp", {"x"}, {}, "Exp_first");
  const std::string twin = g.add_node("Exp", {"x"}, {}, "Exp_twin");
  const std::string neg = g.add_node("Neg", {twin}, {}, "Neg_0");
  g.outputs = {first, neg};
  const ir::Graph before = g;
  const PassLogEntry e = run_pass(g, "cse");
  EXPECT_TRUE(has_line(e.rewrites, "merged Exp_twin (Exp) into Exp_first"));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].inputs, (Names{first}));
  expect_same_outputs(before, g);
}

// The shipped decoder export with a preallocated cache, at a decode step: its two layers Expand
// the same mask and Reshape the same tensor. The whole pipeline with cse merges those two and
// computes what it computes without.
TEST(Cse, MergesTheStaticCacheDecodersTwinsAndKeepsItsOutputs) {
  models::OnnxImportOptions opt;
  opt.evaluator = &cpu();
  opt.dims = {{"batch", 1}, {"seq", 1}, {"cache", 8}};
  const ir::Graph imported = models::import_onnx_file(asset_path("gpt_small_static_opset17.onnx"), opt);
  std::vector<std::string> without;
  for (const std::string& name : PassRegistry::instance().names())
    if (name != "cse") without.push_back(name);
  ir::Graph a = imported, b = imported;
  run_pipeline(a, without, cpu_context());
  const PassLog log = run_pipeline(b, PassRegistry::instance().names(), cpu_context());
  const PassLogEntry* e = nullptr;
  for (const PassLogEntry& entry : log.entries)
    if (entry.pass == "cse") e = &entry;
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->rewrites.size(), 2u);
  EXPECT_EQ(count_op(a, "Expand") - count_op(b, "Expand"), 1);
  EXPECT_EQ(count_op(a, "Reshape") - count_op(b, "Reshape"), 1);
  EXPECT_EQ(a.nodes.size() - b.nodes.size(), 2u);
  expect_same_outputs(a, b);
}

}  // namespace
}  // namespace fusebox::passes::test
