// A refused .onnx file drawn anyway (refused_model.h): the outline's display graph has every
// node and the edges the file names, the unsupported node is marked with why, and a refused open
// through the Runner carries the outline beside its error while the last good result stays.
#define ONNX_ML 1
#define ONNX_NAMESPACE onnx
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <chrono>
#include <fstream>
#include <set>
#include <tuple>

#include "app/workbench/graph_layout.h"
#include "app/workbench/graph_scopes.h"
#include "app/workbench/refused_model.h"
#include "app/workbench/runner.h"
#include "tests/support/temp_dir.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::workbench {
namespace {

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                          std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* where, const std::string& name,
               std::vector<int64_t> dims) {
  auto* v = where->Add();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// x -> Relu -> a -> MatMul(w) -> m -> Einsum(m, a) -> e -> Add(e, a) -> y, at opset 17:
// Einsum has no handler.
std::string write_refused_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("refused");
  add_value(g->mutable_input(), "x", {2, 4});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(4);
  for (int i = 0; i < 16; ++i) w->add_float_data(0.25f);
  add_node(g, "Relu", "/block/relu", {"x"}, {"a"});
  add_node(g, "MatMul", "/block/matmul", {"a", "w"}, {"m"});
  add_node(g, "Einsum", "/block/einsum", {"m", "a"}, {"e"});
  add_node(g, "Add", "/block/add", {"e", "a"}, {"y"});
  add_value(g->mutable_value_info(), "m", {2, 4});
  add_value(g->mutable_output(), "y", {2, 4});
  const std::string path = fusebox::test::process_temp_dir() + "/refused_einsum.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

TEST(RefusedModel, TheOutlineGraphHasEveryNodeItsEdgesAndTheUnsupportedOneMarked) {
  test::register_cpu();
  Settings s = test::small_settings(write_refused_model());
  const auto refused = refused_model(s);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->caption,
            "refused: 1 op fusebox does not import (Einsum) - drawn from the file, not run");
  ASSERT_EQ(refused->unsupported.size(), 1u);
  EXPECT_EQ(refused->unsupported.at("/block/einsum"), "no importer for op Einsum (opset 17)");
  EXPECT_FALSE(refused->drawing->optimized) << "nothing ran";

  const ir::Graph& g = refused->drawing->model->graph;
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[2].op, "Einsum");
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"y"}));
  EXPECT_TRUE(g.is_weight("w")) << "an initializer reads as a weight (not drawn as a box)";
  EXPECT_EQ(g.tensor("m").shape, (ir::Shape{2, 4})) << "value_info shapes label the edges";
  EXPECT_FALSE(g.has_tensor("e")) << "no shape in the file: drawn as [?]";

  // The edges as the file wires them, by box name (written out here, not derived).
  const GraphLayout l = layout_graph(g);
  std::set<std::tuple<std::string, std::string, std::string>> edges;
  for (const LayoutEdge& e : l.edges) edges.emplace(l.boxes[e.from].name, l.boxes[e.to].name, e.tensor);
  const std::set<std::tuple<std::string, std::string, std::string>> want{
      {"x", "/block/relu", "x"},
      {"/block/relu", "/block/matmul", "a"},
      {"/block/relu", "/block/einsum", "a"},
      {"/block/relu", "/block/add", "a"},
      {"/block/matmul", "/block/einsum", "m"},
      {"/block/einsum", "/block/add", "e"},
      {"/block/add", "y", "y"}};
  EXPECT_EQ(edges, want);
  EXPECT_EQ(l.boxes[l.box_of_node[1]].weights, (std::vector<std::string>{"w"}));
  const auto matmul_edge = std::find_if(l.edges.begin(), l.edges.end(), [](const LayoutEdge& e) { return e.tensor == "m"; });
  EXPECT_EQ(matmul_edge->label, "[2,4]");

  // The SVG export marks it too.
  SvgOptions svg;
  svg.unsupported = refused->unsupported;
  const std::string text = render_svg(g, svg);
  EXPECT_NE(text.find("class=\"node unsupported\""), std::string::npos);
  EXPECT_NE(text.find("no importer for op Einsum (opset 17)"), std::string::npos);
}

TEST(RefusedModel, NothingForModelsThatImportOrFilesThatDoNotParse) {
  EXPECT_EQ(refused_model(test::small_settings("mlp")), nullptr);
  const std::string ok = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/mlp_opset17.onnx";
  EXPECT_EQ(refused_model(test::small_settings(ok)), nullptr);
  const std::string junk = fusebox::test::process_temp_dir() + "/junk.onnx";
  std::ofstream(junk) << "not a model";
  EXPECT_EQ(refused_model(test::small_settings(junk)), nullptr);
}

// A refused open keeps the last good result published, and its error carries the outline (read
// on the worker thread) with the settings that were refused.
TEST(RefusedModel, ARefusedOpenCarriesTheOutlineBesideItsError) {
  Runner runner(test::fixed_roofline);
  runner.request(test::small_settings("mlp"));
  ASSERT_TRUE(runner.wait_idle(std::chrono::seconds(60)));
  const auto good = runner.result();
  ASSERT_TRUE(good);
  const std::string path = write_refused_model();
  runner.request(test::small_settings(path));
  ASSERT_TRUE(runner.wait_idle(std::chrono::seconds(60)));
  const Runner::Snapshot snap = runner.snapshot();
  EXPECT_EQ(snap.result, good) << "the last good result stays";
  ASSERT_TRUE(snap.error);
  EXPECT_NE(snap.error->message.find("Einsum"), std::string::npos) << snap.error->message;
  EXPECT_EQ(snap.error->settings.model, path);
  ASSERT_TRUE(snap.error->refused);
  EXPECT_EQ(snap.error->refused->drawing->model->graph.nodes.size(), 4u);
  EXPECT_EQ(snap.error->refused->drawing->settings.model, path);

  // Any other failure carries none.
  runner.request(test::small_settings(fusebox::test::process_temp_dir() + "/missing.onnx"));
  ASSERT_TRUE(runner.wait_idle(std::chrono::seconds(60)));
  ASSERT_TRUE(runner.snapshot().error);
  EXPECT_FALSE(runner.snapshot().error->refused);
}

// A file of 100,000 nodes (a chain of unsupported ones in 100 name scopes) is outlined and laid
// out in bounded time: the simple layout past dot's caps, folded by scope as the panel folds it.
TEST(RefusedModel, AHundredThousandNodeFileIsOutlinedAndLaidOutFolded) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_version(17);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "t0", {1});
  constexpr int kNodes = 100000;
  for (int i = 0; i < kNodes; ++i)
    add_node(g, i % 2 ? "Relu" : "Einsum", "/layer" + std::to_string(i / 1000) + "/n" + std::to_string(i),
             {"t" + std::to_string(i)}, {"t" + std::to_string(i + 1)});
  add_value(g->mutable_output(), "t" + std::to_string(kNodes), {1});
  const std::string path = fusebox::test::process_temp_dir() + "/huge_refused.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();

  const auto start = std::chrono::steady_clock::now();
  const auto refused = refused_model(test::small_settings(path));
  ASSERT_NE(refused, nullptr);
  const ir::Graph& graph = refused->drawing->model->graph;
  EXPECT_EQ(graph.nodes.size(), static_cast<size_t>(kNodes));
  EXPECT_EQ(refused->unsupported.size(), static_cast<size_t>(kNodes / 2));
  const ScopeTree scopes = build_scopes(graph);
  LayoutOptions options;
  options.edge_labels = false;
  const std::set<std::string> folds = default_folds(scopes);
  options.folded.assign(folds.begin(), folds.end());
  const GraphLayout l = layout_graph(graph, options);
  EXPECT_LE(l.node_count, 200u) << "folded by scope";
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("100,000-node refused file: outlined, scoped and laid out in %.2f s\n", seconds);
}

}  // namespace
}  // namespace fusebox::workbench
