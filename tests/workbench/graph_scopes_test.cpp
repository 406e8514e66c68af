// Name scopes and folding: scopes read from the names our builders and torch.onnx.export write,
// the default folds of a 1,008-node stack (one box per layer), a folded layout's boxes and edges,
// and node search. The counts are worked out from the builders' structure, not from the code
// under test.
#include "app/workbench/graph_scopes.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "app/workbench/graph_layout.h"
#include "core/models/builtin_models.h"

namespace fusebox::workbench {
namespace {

using Chain = std::vector<std::string>;

models::TransformerConfig small_config() {
  models::TransformerConfig c;
  c.seq = 4;
  c.d = 8;
  c.heads = 2;
  c.ffn = 16;
  return c;
}

TEST(GraphScopes, ScopesComeFromSlashesOrDotsAndDigitsStayWithTheirName) {
  EXPECT_EQ(scope_chain("/0/self_attn/MatMul"), (Chain{"/0", "/0/self_attn"}));
  EXPECT_EQ(scope_chain("/attn/c_attn/MatMul_1"), (Chain{"/attn", "/attn/c_attn"}));
  EXPECT_EQ(scope_chain("layer0.attn.q_proj.MatMul"),
            (Chain{"layer0", "layer0.attn", "layer0.attn.q_proj"}));
  EXPECT_EQ(scope_chain("layers.0.attn.out_proj.MatMul"),
            (Chain{"layers.0", "layers.0.attn", "layers.0.attn.out_proj"}));
  EXPECT_EQ(scope_chain("MatMul_3"), Chain{});
  EXPECT_EQ(scope_chain("/Add"), Chain{});
}

// A stack of 18 encoder blocks, no passes: 56 nodes a block (each layer's names start with
// "layerN."), 1,008 in all.
TEST(GraphScopes, TheStackFoldsIntoOneBoxPerLayerByDefault) {
  const ir::Graph g = models::build_transformer_stack(small_config(), 18, 1, "stack");
  ASSERT_EQ(g.nodes.size(), 1008u);
  const ScopeTree t = build_scopes(g);
  ASSERT_EQ(t.top.size(), 18u);
  for (size_t s : t.top) EXPECT_EQ(t.scopes[s].nodes, 56u) << t.scopes[s].path;
  const std::set<std::string> folds = default_folds(t);
  std::set<std::string> layers;
  for (int i = 0; i < 18; ++i) layers.insert("layer" + std::to_string(i));
  // Level 2 (attn, ffn, norms, residuals of each layer) would leave 18 x 7 boxes, over 64.
  EXPECT_EQ(folds, layers);
  EXPECT_EQ(t.visible_boxes(folds), 18u);
  EXPECT_EQ(t.visible_boxes({}), 1008u);

  // One layer unfolded: its 56 nodes and the 17 other folds.
  std::set<std::string> open = folds;
  open.erase("layer3");
  EXPECT_EQ(t.visible_boxes(open), 56u + 17u);
  // Folding inside: layer3's attention (20 nodes: 4 projections x 3, heads 3 x 2, k_t, scores
  // x 2, softmax, context, merge x 2 -> counted by the builder's name prefix).
  const std::optional<size_t> attn = t.find("layer3.attn");
  ASSERT_TRUE(attn);
  size_t in_attn = 0;
  for (const ir::Node& n : g.nodes) in_attn += n.name.starts_with("layer3.attn.");
  EXPECT_EQ(t.scopes[*attn].nodes, in_attn);
  open.insert("layer3.attn");
  EXPECT_EQ(t.visible_boxes(open), 56u - in_attn + 1 + 17u);
}

TEST(GraphScopes, SmallGraphsAndGraphsWithoutScopesAreNotFolded) {
  const ir::Graph block = models::build_transformer(small_config(), 1, "transformer");
  EXPECT_TRUE(default_folds(build_scopes(block)).empty()) << "56 nodes: under the 200 threshold";
  ir::Graph flat = models::build_transformer_stack(small_config(), 5, 1, "flat");
  for (size_t i = 0; i < flat.nodes.size(); ++i) flat.nodes[i].name = "n" + std::to_string(i);
  EXPECT_TRUE(build_scopes(flat).scopes.empty());
  EXPECT_TRUE(default_folds(build_scopes(flat)).empty());
}

// The folded layout: one box per folded layer, no edge inside a fold, and every node maps to
// the box that draws it.
TEST(GraphScopes, AFoldedLayoutHasOneBoxPerFoldAndEdgesBetweenBoxes) {
  const ir::Graph g = models::build_transformer_stack(small_config(), 3, 1, "stack3");
  LayoutOptions o;
  o.edge_labels = false;
  o.folded = {"layer0", "layer2"};  // two of the three layers
  const GraphLayout l = layout_graph(g, o);
  EXPECT_EQ(l.node_count, 1u + 56u + 1u);
  EXPECT_EQ(l.boxes.size(), l.node_count + g.inputs.size() + g.outputs.size());
  size_t folds = 0;
  for (const LayoutBox& b : l.boxes) {
    if (b.folded == 0) continue;
    ++folds;
    EXPECT_EQ(b.kind, NodeKind::Scope);
    EXPECT_EQ(b.folded, 56u);
    EXPECT_EQ(b.node, -1);
  }
  EXPECT_EQ(folds, 2u);
  ASSERT_EQ(l.box_of_node.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const LayoutBox& b = l.boxes[l.box_of_node[i]];
    if (g.nodes[i].name.starts_with("layer1.")) EXPECT_EQ(b.name, g.nodes[i].name);
    else EXPECT_EQ(b.name, g.nodes[i].name.substr(0, 6)) << g.nodes[i].name;
  }
  for (const LayoutEdge& e : l.edges) {
    EXPECT_NE(e.from, e.to) << e.tensor;
    EXPECT_LT(l.boxes[e.from].y, l.boxes[e.to].y) << e.tensor << " points down";
  }
  // layer0's fold feeds layer1 (its output is layer1's input and residual), layer1 feeds layer2.
  const size_t fold0 = l.box_of_node[0];
  bool fold0_out = false;
  for (const LayoutEdge& e : l.edges) fold0_out |= e.from == fold0 && l.boxes[e.to].name.starts_with("layer1.");
  EXPECT_TRUE(fold0_out);
}

TEST(GraphScopes, SearchMatchesNamesAndOpsIgnoringCase) {
  const ir::Graph g = models::build_transformer(small_config(), 1, "transformer");
  const std::vector<size_t> softmax = find_nodes(g, "softMAX");
  ASSERT_EQ(softmax.size(), 1u);
  EXPECT_EQ(g.nodes[softmax[0]].op, "Softmax");
  size_t matmuls = 0;
  for (const ir::Node& n : g.nodes) matmuls += n.op == "MatMul" || n.name.find("MatMul") != std::string::npos;
  EXPECT_EQ(find_nodes(g, "matmul").size(), matmuls);
  EXPECT_TRUE(find_nodes(g, "").empty());
  EXPECT_TRUE(find_nodes(g, "no such node").empty());
  const std::vector<size_t> q = find_nodes(g, "q_proj.");
  EXPECT_FALSE(q.empty());
  for (size_t i = 1; i < q.size(); ++i) EXPECT_LT(q[i - 1], q[i]) << "graph order";
}

}  // namespace
}  // namespace fusebox::workbench
