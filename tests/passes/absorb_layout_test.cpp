// absorb_layout: size-1 Transposes become Reshapes; Slice/Reshape/Transpose chains into and out of
// Attention become strided views (expected views worked out by hand below); near misses; the
// builtin models and the PyTorch exports lose their copies around attention and compute the same.
#include <filesystem>
#include <iostream>

#include "core/base/error.h"
#include "core/exec/session.h"
#include "core/ir/verifier.h"
#include "core/models/builtin_models.h"
#include "core/models/onnx_import.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

using Ints = std::vector<int64_t>;

ir::Attributes perm(Ints p) {
  ir::Attributes a;
  a.set("perm", std::move(p));
  return a;
}

ir::Attributes shape(Ints s) {
  ir::Attributes a;
  a.set("shape", std::move(s));
  return a;
}

ir::Attributes slice(Ints starts, Ints ends, Ints axes, Ints steps = {}) {
  ir::Attributes a;
  a.set("starts", std::move(starts));
  a.set("ends", std::move(ends));
  a.set("axes", std::move(axes));
  if (!steps.empty()) a.set("steps", std::move(steps));
  return a;
}

ir::Attributes attention(double scale, bool k_transposed) {
  ir::Attributes a;
  a.set("scale", scale);
  a.set("k_transposed", int64_t{k_transposed ? 1 : 0});
  return a;
}

// One attention block as torch.onnx.export writes nn.MultiheadAttention at opset 17 (batch 1,
// batch_first, the size-1 batch dim moved to the middle): x [S,1,3D] is the in_proj output.
//   Slice_0/1/2 (last axis, D each) -> Reshape_3/4/5 [S,H,dh] -> Transpose_6 (Q, [1,0,2]),
//   Transpose_7 (K^T, [1,2,0]), Transpose_8 (V, [1,0,2]) -> Attention_9 [H,S,dh]
//   -> Transpose_10 [1,0,2] -> Reshape_11 [S,D] -> Relu_12
constexpr int64_t kS = 5, kH = 2, kDh = 4, kD = kH * kDh;

ir::Graph exported_attention(bool relu_after = true) {
  ir::Graph g;
  g.name = "exported_attention";
  g.add_input("x", ir::DType::f32, {kS, 1, 3 * kD});
  std::string part[3];
  for (int i = 0; i < 3; ++i)
    part[i] = g.add_node("Slice", {"x"}, slice({i * kD}, {(i + 1) * kD}, {-1}),
                         "Slice_" + std::to_string(i));
  std::string heads[3];
  for (int i = 0; i < 3; ++i)
    heads[i] =
        g.add_node("Reshape", {part[i]}, shape({kS, kH, kDh}), "Reshape_" + std::to_string(3 + i));
  std::string q = g.add_node("Transpose", {heads[0]}, perm({1, 0, 2}), "Transpose_6");
  std::string kt = g.add_node("Transpose", {heads[1]}, perm({1, 2, 0}), "Transpose_7");
  std::string v = g.add_node("Transpose", {heads[2]}, perm({1, 0, 2}), "Transpose_8");
  std::string o = g.add_node("Attention", {q, kt, v}, attention(0.5, true), "Attention_9");
  std::string merged = g.add_node("Transpose", {o}, perm({1, 0, 2}), "Transpose_10");
  std::string flat = g.add_node("Reshape", {merged}, shape({kS, kD}), "Reshape_11");
  g.outputs = {relu_after ? g.add_node("Relu", {flat}, {}, "Relu_12") : flat};
  return g;
}

TEST(AbsorbLayout, TransposeOfSizeOneDimsBecomesAReshape) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {1, 6, 4});
  std::string t = g.add_node("Transpose", {"x"}, perm({1, 0, 2}), "Transpose_0");
  g.add_input("w", ir::DType::f32, {1, 5});
  std::string tw = g.add_node("Transpose", {"w"}, {}, "Transpose_1");  // reversed: [5,1]
  g.add_input("u", ir::DType::f32, {2, 1, 3});
  std::string tu = g.add_node("Transpose", {"u"}, perm({2, 1, 0}), "Transpose_2");  // a real move
  g.outputs = {g.add_node("Relu", {t}, {}, "Relu_3"), g.add_node("Relu", {tw}, {}, "Relu_4"),
               g.add_node("Relu", {tu}, {}, "Relu_5")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_TRUE(e.changed);
  EXPECT_TRUE(has_line(
      e.rewrites, "Transpose_0 perm [1,0,2] only moves size-1 dims -> Reshape [6,1,4] (no copy)"));
  EXPECT_TRUE(has_line(
      e.rewrites, "Transpose_1 perm (reversed) only moves size-1 dims -> Reshape [5,1] (no copy)"));
  ASSERT_EQ(e.rewrites.size(), 2u);
  EXPECT_EQ(e.rewrites[0].pattern, "transpose_to_reshape");
  EXPECT_EQ(e.rewrites[0].changed,
            (std::vector<std::string>{"Transpose_0"}));  // same node, now a Reshape
  EXPECT_TRUE(e.rewrites[0].removed.empty() && e.rewrites[0].added.empty());
  EXPECT_EQ(count_op(g, "Transpose"), 1);
  EXPECT_EQ(count_op(g, "Reshape"), 2);
  EXPECT_EQ(g.nodes[0].op, "Reshape");
  EXPECT_EQ(g.nodes[0].attrs.get_ints("shape"), (Ints{6, 1, 4}));
  EXPECT_EQ(g.nodes[2].op, "Transpose");
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, EmptyTensorTransposeBecomesAReshapeThatKeepsItsZeros) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {1, 0, 3});
  std::string t = g.add_node("Transpose", {"x"}, perm({1, 0, 2}), "Transpose_0");
  g.outputs = {g.add_node("Relu", {t}, {}, "Relu_1")};
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_TRUE(e.changed);
  EXPECT_EQ(g.nodes[0].op, "Reshape");
  EXPECT_EQ(g.tensor(t).shape, (ir::Shape{0, 1, 3}));
  EXPECT_NO_THROW(ir::verify(g));
}

TEST(AbsorbLayout, ExportedHeadSplitAndMergeBecomeViews) {
  ir::Graph g = exported_attention();
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_TRUE(e.changed);
  // Q: x[s, 0, h*dh + j] = offset s*3D + h*dh + j; as [H,S,dh]: strides [dh, 3D, 1].
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Slice_0 + Reshape_3 + Transpose_6 into Attention_9: Q read as "
                       "[2,5,4] strides [4,24,1] in x"));
  // K^T is [H,dh,S]; the canonical K [H,S,dh] starts at D.
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Slice_1 + Reshape_4 + Transpose_7 into Attention_9: K read as "
                       "[2,5,4] strides [4,24,1] + 8 in x"));
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Slice_2 + Reshape_5 + Transpose_8 into Attention_9: V read as "
                       "[2,5,4] strides [4,24,1] + 16 in x"));
  // Output [H,S,dh] into [S,D]: element (h,s,j) lands at s*D + h*dh + j.
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Transpose_10 + Reshape_11 into Attention_9: output [2,5,4] "
                       "written into Reshape_11:out"));
  EXPECT_TRUE(has_line(e.rewrites, "[5,8] at strides [4,8,1]")) << e.rewrites.back().text;
  // As data: each chain it absorbed is removed, Attention_9 is edited in place, nothing is new.
  ASSERT_EQ(e.rewrites.size(), 4u);
  EXPECT_EQ(e.rewrites[0].removed,
            (std::vector<std::string>{"Slice_0", "Reshape_3", "Transpose_6"}));
  EXPECT_EQ(e.rewrites[3].removed, (std::vector<std::string>{"Transpose_10", "Reshape_11"}));
  for (const Rewrite& rw : e.rewrites) {
    EXPECT_EQ(rw.pattern, "layout_view");
    EXPECT_EQ(rw.changed, (std::vector<std::string>{"Attention_9"}));
    EXPECT_TRUE(rw.added.empty());
  }
  EXPECT_TRUE(e.near_misses.empty()) << e.near_misses.front().text;
  ASSERT_EQ(g.nodes.size(), 2u);
  const ir::Node& a = g.nodes[0];
  EXPECT_EQ(a.op, "Attention");
  EXPECT_EQ(a.inputs, (std::vector<std::string>{"x", "x", "x"}));
  EXPECT_EQ(a.attrs.get_ints("q_shape"), (Ints{kH, kS, kDh}));
  EXPECT_EQ(a.attrs.get_ints("q_strides"), (Ints{kDh, 3 * kD, 1}));
  EXPECT_FALSE(a.attrs.has("q_offset"));
  EXPECT_EQ(a.attrs.get_ints("k_strides"), (Ints{kDh, 3 * kD, 1}));
  EXPECT_EQ(a.attrs.get_int("k_offset", 0), kD);
  EXPECT_EQ(a.attrs.get_int("k_transposed", 1), 0);
  EXPECT_EQ(a.attrs.get_int("v_offset", 0), 2 * kD);
  EXPECT_EQ(a.attrs.get_ints("out_shape"), (Ints{kS, kD}));
  EXPECT_EQ(a.attrs.get_ints("out_strides"), (Ints{kDh, kD, 1}));
  EXPECT_EQ(a.outputs[0], "Reshape_11:out");
  EXPECT_EQ(g.nodes[1].inputs[0], "Reshape_11:out");
  for (const char* gone : {"Slice_0:out", "Transpose_6:out", "Attention_9:out", "Transpose_10:out"})
    EXPECT_FALSE(g.has_tensor(gone)) << gone;
  EXPECT_DOUBLE_EQ(a.attrs.get_float("scale", 0), 0.5);
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, OutputChainMayEndAtAGraphOutput) {
  ir::Graph g = exported_attention(/*relu_after=*/false);
  ir::Graph before = g;
  run_pass(g, "absorb_layout");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].outputs[0], g.outputs[0]);
  expect_same_outputs(before, g);
}

// The builtin model's spelling: Reshape [B,S,H,dh] + Transpose [0,2,1,3] per operand, K^T one more
// Transpose [0,2,3,1] of the Reshape; merge: Transpose [0,2,1,3] + Reshape [B,S,D]. B = 2 so no
// dim is free to move.
TEST(AbsorbLayout, FourDimHeadLayoutsWithBatch) {
  const int64_t b = 2, s = 3, h = 2, dh = 4, d = h * dh;
  ir::Graph g;
  std::string heads[3];
  for (int i = 0; i < 3; ++i) {
    std::string in = g.add_input("x" + std::to_string(i), ir::DType::f32, {b, s, d});
    heads[i] = g.add_node("Reshape", {in}, shape({b, s, h, dh}), "Reshape_" + std::to_string(i));
  }
  std::string q = g.add_node("Transpose", {heads[0]}, perm({0, 2, 1, 3}), "Transpose_q");
  std::string kt = g.add_node("Transpose", {heads[1]}, perm({0, 2, 3, 1}), "Transpose_k");
  std::string v = g.add_node("Transpose", {heads[2]}, perm({0, 2, 1, 3}), "Transpose_v");
  std::string o = g.add_node("Attention", {q, kt, v}, attention(0.35, true), "Attention_0");
  std::string m = g.add_node("Transpose", {o}, perm({0, 2, 1, 3}), "Transpose_o");
  g.outputs = {g.add_node("Reshape", {m}, shape({b, s, d}), "Reshape_o")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  // x[b, s, h*dh + j] as [B,H,S,dh]: strides [S*D, dh, D, 1].
  EXPECT_TRUE(has_line(e.rewrites, "Q read as [2,2,3,4] strides [24,4,8,1] in x0"));
  EXPECT_TRUE(has_line(e.rewrites, "K read as [2,2,3,4] strides [24,4,8,1] in x1"));
  EXPECT_TRUE(has_line(e.rewrites, "V read as [2,2,3,4] strides [24,4,8,1] in x2"));
  EXPECT_TRUE(has_line(e.rewrites, "output [2,2,3,4] written into " + g.outputs[0] +
                                       " [2,3,8] at strides [24,4,8,1]"));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x0", "x1", "x2"}));
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, ReshapeThatWouldNeedACopyStopsTheChain) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {2, 3, 4});
  std::string t = g.add_node("Transpose", {"a"}, perm({1, 0, 2}), "Transpose_0");  // [3,2,4]
  std::string q = g.add_node("Reshape", {t}, shape({1, 6, 4}), "Reshape_1");       // merges 3 and 2
  g.add_input("k", ir::DType::f32, {1, 5, 4});
  g.add_input("v", ir::DType::f32, {1, 5, 4});
  g.outputs = {g.add_node("Attention", {q, "k", "v"}, attention(1.0, false), "Attention_2")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses,
                       "Attention_2 Q: Reshape_1 cannot view [3,2,4] strides [4,12,1] as [1,6,4] "
                       "without a copy"));
  EXPECT_EQ(g.nodes.size(), 3u);
  EXPECT_FALSE(find_op(g, "Attention")->attrs.has("q_shape"));
}

TEST(AbsorbLayout, ChainStopsWhereStridesStopAndReadsTheTensorBefore) {
  // Transpose_0 -> Reshape_1 (merge: no view of a) -> Transpose_2 -> Q: only Reshape_1 +
  // Transpose_2 are absorbed, reading Transpose_0's output.
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {2, 3, 4});
  std::string t0 = g.add_node("Transpose", {"a"}, perm({1, 0, 2}), "Transpose_0");  // [3,2,4]
  std::string r = g.add_node("Reshape", {t0}, shape({6, 4}), "Reshape_1");
  std::string q = g.add_node("Transpose", {r}, perm({1, 0}), "Transpose_2");  // [4,6]
  g.add_input("kt", ir::DType::f32, {6, 5});
  g.add_input("v", ir::DType::f32, {5, 3});
  g.outputs = {g.add_node("Attention", {q, "kt", "v"}, attention(1.0, true), "Attention_3")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_TRUE(has_line(e.near_misses, "Attention_3 Q: Reshape_1 cannot view"));
  EXPECT_TRUE(
      has_line(e.near_misses, "read from Transpose_0:out instead (Transpose_0 not absorbed)"));
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Reshape_1 + Transpose_2 into Attention_3: Q read as "
                       "[4,6] strides [1,4] in Transpose_0:out"));
  EXPECT_EQ(count_op(g, "Transpose"), 1);
  EXPECT_EQ(count_op(g, "Reshape"), 0);
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, NegativeStepSliceIsANearMiss) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4, 6});
  std::string rev = g.add_node("Slice", {"x"}, slice({-1}, {-100}, {0}, {-1}), "Slice_0");
  std::string q = g.add_node("Transpose", {rev}, perm({1, 0}), "Transpose_1");  // [6,4]
  g.add_input("kt", ir::DType::f32, {4, 3});
  g.add_input("v", ir::DType::f32, {3, 2});
  g.outputs = {g.add_node("Attention", {q, "kt", "v"}, attention(1.0, true), "Attention_2")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_TRUE(has_line(e.near_misses, "Attention_2 Q: Slice_0 has step -1"));
  // The Transpose alone is still absorbed: Q reads Slice_0's output transposed.
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Transpose_1 into Attention_2: Q read as [6,4] "
                       "strides [1,6] in Slice_0:out"));
  EXPECT_EQ(count_op(g, "Slice"), 1);
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, SliceClampsLikeOnnxAndSteps) {
  // Slice rows 1, 3 (starts 1, ends 2^62 clamped to 5, step 2) and columns -3.. of x [5,6];
  // then Q = its transpose [3,2].
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {5, 6});
  std::string s =
      g.add_node("Slice", {"x"}, slice({1, -3}, {int64_t{1} << 62, 100}, {0, 1}, {2, 1}),
                 "Slice_0");  // [2,3]
  std::string q = g.add_node("Transpose", {s}, perm({1, 0}), "Transpose_1");
  g.add_input("kt", ir::DType::f32, {2, 4});
  g.add_input("v", ir::DType::f32, {4, 3});
  g.outputs = {g.add_node("Attention", {q, "kt", "v"}, attention(1.0, true), "Attention_2")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  // Element (j, i) of Q is x[1 + 2i, 3 + j] = 6 + 12i + 3 + j: [3,2] strides [1,12] + 9.
  EXPECT_TRUE(has_line(e.rewrites, "Q read as [3,2] strides [1,12] + 9 in x"));
  EXPECT_EQ(g.nodes.size(), 1u);
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, SharedChainNodesAreKept) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {3, 8});
  std::string s = g.add_node("Slice", {"x"}, slice({0}, {4}, {1}), "Slice_0");  // [3,4]
  std::string q = g.add_node("Transpose", {s}, perm({1, 0}), "Transpose_1");    // [4,3]
  g.add_input("kt", ir::DType::f32, {3, 5});
  g.add_input("v", ir::DType::f32, {5, 2});
  std::string o = g.add_node("Attention", {q, "kt", "v"}, attention(1.0, true), "Attention_2");
  g.outputs = {o, g.add_node("Relu", {s}, {}, "Relu_3")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Slice_0 + Transpose_1 into Attention_2: Q read as "
                       "[4,3] strides [1,8] in x (Slice_0 kept: read by Relu_3)"));
  EXPECT_EQ(count_op(g, "Slice"), 1);
  EXPECT_EQ(count_op(g, "Transpose"), 0);
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, OperandsSharingATensorAreAbsorbedTogether) {
  // Q = K = V = Transpose(x): x [S=5, H=2, d=4] read as [H,S,d] strides [4,8,1].
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {5, 2, 4});
  std::string t = g.add_node("Transpose", {"x"}, perm({1, 0, 2}), "Transpose_0");
  g.outputs = {g.add_node("Attention", {t, t, t}, attention(0.5, false), "Attention_1")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  ASSERT_EQ(e.rewrites.size(), 1u);
  EXPECT_EQ(e.rewrites[0].text,
            "absorbed Transpose_0 into Attention_1: Q read as [2,5,4] strides [4,8,1], K read as "
            "[2,5,4] strides [4,8,1], V read as [2,5,4] strides [4,8,1] in x");
  ASSERT_EQ(g.nodes.size(), 1u);
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, OnlyViewOpsInTheChainIsNoRewrite) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {12});
  std::string q = g.add_node("Reshape", {"x"}, shape({3, 4}), "Reshape_0");
  g.add_input("k", ir::DType::f32, {5, 4});
  g.add_input("v", ir::DType::f32, {5, 4});
  std::string o = g.add_node("Attention", {q, "k", "v"}, attention(1.0, false), "Attention_1");
  g.outputs = {g.add_node("Reshape", {o}, shape({12}), "Reshape_2")};
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(e.rewrites.empty());
  EXPECT_TRUE(e.near_misses.empty());
  EXPECT_EQ(g.nodes.size(), 3u);
}

TEST(AbsorbLayout, OutputReadBySomethingElseIsANearMiss) {
  ir::Graph g;
  for (const char* n : {"q", "k", "v"}) g.add_input(n, ir::DType::f32, {2, 3, 4});
  std::string o = g.add_node("Attention", {"q", "k", "v"}, attention(1.0, false), "Attention_0");
  std::string t = g.add_node("Transpose", {o}, perm({1, 0, 2}), "Transpose_1");
  g.outputs = {t, g.add_node("Relu", {o}, {}, "Relu_2")};
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses,
                       "Attention_0 output not written through Transpose_1: "
                       "Attention_0:out is read by Relu_2 too"));
  EXPECT_EQ(count_op(g, "Transpose"), 1);
}

TEST(AbsorbLayout, OutputChainWithASharedIntermediateEndsThere) {
  ir::Graph g;
  for (const char* n : {"q", "k", "v"}) g.add_input(n, ir::DType::f32, {2, 3, 4});
  std::string o = g.add_node("Attention", {"q", "k", "v"}, attention(1.0, false), "Attention_0");
  std::string t = g.add_node("Transpose", {o}, perm({1, 0, 2}), "Transpose_1");
  std::string r = g.add_node("Reshape", {t}, shape({3, 8}), "Reshape_2");
  g.outputs = {r, t};  // Transpose_1's output is a graph output too
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_TRUE(has_line(e.near_misses,
                       "not written through Reshape_2: Transpose_1:out is a "
                       "graph output too"));
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Transpose_1 into Attention_0: output [2,3,4] written "
                       "into Transpose_1:out [3,2,4] at strides [4,8,1]"));
  EXPECT_EQ(g.nodes.size(), 2u);
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, OutputRowsMustStayContiguous) {
  // [H,S,Dv] -> Transpose [2,1,0]: consecutive elements of a row would land H*S apart.
  ir::Graph g;
  for (const char* n : {"q", "k", "v"}) g.add_input(n, ir::DType::f32, {2, 3, 4});
  std::string o = g.add_node("Attention", {"q", "k", "v"}, attention(1.0, false), "Attention_0");
  g.outputs = {g.add_node("Transpose", {o}, perm({2, 1, 0}), "Transpose_1")};
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(has_line(e.near_misses,
                       "Attention_0 output not written through the whole chain: "
                       "Transpose_1 would put consecutive elements of a Dv row at "
                       "stride 6"));
}

TEST(AbsorbLayout, OutputChainIsCutWhereTheInverseNeedsACopy) {
  // Attention [2,3,4] -> Transpose [1,0,2] -> Reshape [6,4] -> Transpose [1,0] -> [4,6]: the last
  // Transpose would scatter rows; up to the Reshape the output is [2,3,4] strides [4,8,1] in [6,4].
  ir::Graph g;
  for (const char* n : {"q", "k", "v"}) g.add_input(n, ir::DType::f32, {2, 3, 4});
  std::string o = g.add_node("Attention", {"q", "k", "v"}, attention(1.0, false), "Attention_0");
  std::string t = g.add_node("Transpose", {o}, perm({1, 0, 2}), "Transpose_1");
  std::string r = g.add_node("Reshape", {t}, shape({6, 4}), "Reshape_2");
  g.outputs = {g.add_node("Transpose", {r}, perm({1, 0}), "Transpose_3")};
  ir::Graph before = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_TRUE(has_line(e.near_misses, "not written through the whole chain"));
  EXPECT_TRUE(has_line(e.rewrites,
                       "absorbed Transpose_1 + Reshape_2 into Attention_0: output "
                       "[2,3,4] written into Reshape_2:out [6,4] at strides "
                       "[4,8,1]"));
  EXPECT_EQ(count_op(g, "Transpose"), 1);
  expect_same_outputs(before, g);
}

TEST(AbsorbLayout, InverseReshapeThatStridesCannotExpressIsANearMiss) {
  // [1,4,6] -> Reshape [1,4,2,3] -> Transpose [0,1,3,2]: written back, the 6 elements of a row
  // would go to offsets 0,2,4,1,3,5 of its block: no single stride.
  ir::Graph g;
  for (const char* n : {"q", "k", "v"}) g.add_input(n, ir::DType::f32, {1, 4, 6});
  std::string o = g.add_node("Attention", {"q", "k", "v"}, attention(1.0, false), "Attention_0");
  std::string r = g.add_node("Reshape", {o}, shape({1, 4, 2, 3}), "Reshape_1");
  g.outputs = {g.add_node("Transpose", {r}, perm({0, 1, 3, 2}), "Transpose_2")};
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_FALSE(e.changed);
  EXPECT_TRUE(
      has_line(e.near_misses, "Reshape_1 would need its input [1,4,6] written as a view of"));
  EXPECT_EQ(g.nodes.size(), 3u);
}

TEST(AbsorbLayout, RunningTwiceChangesNothingMore) {
  ir::Graph g = exported_attention();
  run_pass(g, "absorb_layout");
  ir::Graph once = g;
  PassLogEntry e = run_pass(g, "absorb_layout");
  EXPECT_FALSE(e.changed);
  EXPECT_EQ(g.nodes.size(), once.nodes.size());
}

// The planner aliases the new Reshapes and plans the tensors Attention now reads and writes
// through views: every executor runs the rewritten graphs to the reference of the original.
TEST(AbsorbLayout, ExecutorsRunTheRewrittenGraphs) {
  cpu::register_backend();
  ir::Graph unit;  // graph input -> (size-1) Transpose -> graph output: a view of the input,
  unit.add_input("x", ir::DType::f32, {1, 6, 4});
  unit.add_weight("w", random_tensor({4, 1}, 3));  // and a weight -> Transpose -> Add
  unit.add_input("y", ir::DType::f32, {3, 4});
  std::string wt = unit.add_node("Transpose", {"w"}, {}, "Transpose_1");
  unit.outputs = {unit.add_node("Transpose", {"x"}, perm({1, 0, 2}), "Transpose_0"),
                  unit.add_node("Add", {"y", wt}, {}, "Add_2")};
  for (const ir::Graph& g : {exported_attention(), exported_attention(false), unit}) {
    const auto inputs = fusebox::testing::random_inputs(g, 21);
    const auto want = fusebox::testing::evaluate_graph(g, inputs);
    for (const char* executor : {"eager", "interpreted", "compiled"}) {
      exec::SessionOptions opt;
      opt.executor = executor;
      opt.passes = "absorb_layout";
      exec::Session session(g, opt);
      const auto& entries = session.pass_log().entries;
      auto absorb = std::find_if(entries.begin(), entries.end(),
                                 [](const PassLogEntry& e) { return e.pass == "absorb_layout"; });
      ASSERT_TRUE(absorb != entries.end() && absorb->changed) << g.name;
      session.run(inputs);
      auto got = session.run(inputs);  // the second run reuses the arena
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_LE(fusebox::testing::tolerance_ratio(got[i], want[i], 1e-4, 1e-4), 1.0)
            << g.name << " " << executor << " output " << i;
    }
  }
}

// --- Whole models --------------------------------------------------------------------------------

PassLog run_all(ir::Graph& g) {
  return run_pipeline(g, parse_pass_list("all"), cpu_context());
}

const PassLogEntry& entry(const PassLog& log, const std::string& pass) {
  for (const auto& e : log.entries)
    if (e.pass == pass) return e;
  throw Error("no entry for " + pass);
}

TEST(AbsorbLayoutModels, DefaultTransformerLosesEveryHeadCopy) {
  const ir::Graph original = models::build_model("transformer", models::kDefaultSeed);
  ir::Graph g = original;
  PassLog log = run_all(g);
  const PassLogEntry& e = entry(log, "absorb_layout");
  EXPECT_TRUE(e.changed) << log.to_text();
  // 3 x (Reshape + Transpose) in, Transpose + Reshape out.
  EXPECT_EQ(e.nodes_before - e.nodes_after, 8u) << log.to_text();
  auto ops = g.op_histogram();
  EXPECT_EQ(ops["Transpose"], 0) << log.to_text();
  EXPECT_EQ(ops["Reshape"], 0) << log.to_text();
  EXPECT_EQ(ops["Attention"], 1);
  EXPECT_EQ(ops["MatMulAdd"] + ops["FusedBiasGelu"], 6);  // the FFN's first Linear takes the Gelu
  EXPECT_TRUE(has_line(e.rewrites,
                       "attn.q_heads.Reshape + attn.q_heads.Transpose into "
                       "attn.scores.Attention: Q read as [1,4,64,64] strides [16384,64,256,1]"))
      << log.to_text();
  EXPECT_TRUE(has_line(e.rewrites, "output [1,4,64,64] written into")) << log.to_text();
  expect_same_outputs(original, g, 3);
}

TEST(AbsorbLayoutModels, StackOfBlocksWithBatch) {
  const ir::Graph original =
      models::build_model("stack:layers=2,seq=8,d=32,heads=4,ffn=64,batch=3", 5);
  ir::Graph g = original;
  PassLog log = run_all(g);
  auto ops = g.op_histogram();
  EXPECT_EQ(ops["Attention"], 2) << log.to_text();
  EXPECT_EQ(ops["Transpose"], 0) << log.to_text();
  EXPECT_EQ(ops["Reshape"], 0) << log.to_text();
  EXPECT_TRUE(entry(log, "absorb_layout").near_misses.empty()) << log.to_text();
  expect_same_outputs(original, g, 9);
}

class AbsorbLayoutAssets : public ::testing::TestWithParam<std::string> {};

// What torch.onnx.export writes for nn.TransformerEncoderLayer: a Transpose into and out of the
// [S,1,D] layout (size-1 moves), Slices of the in_proj, head Reshapes and Transposes.
TEST_P(AbsorbLayoutAssets, NoTransposeOrSliceSurvives) {
  const std::string path = asset_path(GetParam());
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  const ir::Graph original = import_asset(GetParam());
  ir::Graph g = original;
  PassLog log = run_all(g);
  const PassLogEntry& e = entry(log, "absorb_layout");
  auto before = entry(log, "fuse_patterns").snapshot->op_histogram();
  auto ops = g.op_histogram();
  const int blocks = ops["Attention"];
  ASSERT_GE(blocks, 1) << log.to_text();
  EXPECT_EQ(before["Transpose"], 6 * blocks) << log.to_text();
  EXPECT_EQ(before["Slice"], 3 * blocks) << log.to_text();
  EXPECT_EQ(ops["Transpose"], 0) << log.to_text();
  EXPECT_EQ(ops["Slice"], 0) << log.to_text();
  EXPECT_TRUE(has_line(e.rewrites, "only moves size-1 dims -> Reshape")) << log.to_text();
  EXPECT_TRUE(has_line(e.rewrites, "Q read as")) << log.to_text();
  EXPECT_TRUE(has_line(e.rewrites, "K read as")) << log.to_text();
  EXPECT_TRUE(has_line(e.rewrites, "V read as")) << log.to_text();
  EXPECT_TRUE(has_line(e.rewrites, "written into")) << log.to_text();
  EXPECT_TRUE(e.near_misses.empty()) << log.to_text();
  for (const auto& n : g.nodes)
    if (n.op == "Attention") {
      EXPECT_EQ(n.inputs[0], n.inputs[1]) << n.name << ": Q and K read one projection";
      EXPECT_EQ(n.inputs[0], n.inputs[2]) << n.name << ": Q and V read one projection";
    }
  expect_same_outputs(original, g, 4);
}

INSTANTIATE_TEST_SUITE_P(Exports, AbsorbLayoutAssets,
                         ::testing::Values("transformer_opset13.onnx", "transformer_opset17.onnx",
                                           "stack_opset13.onnx", "stack_opset17.onnx"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// The absorb_layout log of the assets, for reading: run with
// --gtest_also_run_disabled_tests --gtest_filter='*PrintLogs*'.
TEST(AbsorbLayoutModels, DISABLED_PrintLogs) {
  for (const char* name : {"transformer_opset17.onnx", "stack_opset13.onnx"}) {
    ir::Graph g = import_asset(name);
    std::cout << "== " << name << "\n" << run_all(g).to_text();
  }
  ir::Graph g = models::build_model("transformer", models::kDefaultSeed);
  std::cout << "== transformer\n" << run_all(g).to_text();
}

}  // namespace
}  // namespace fusebox::passes::test
