// Graph layout and SVG through Graphviz: one box per node plus input and output boxes, edges
// between exactly those boxes, inputs above their consumers, no overlapping boxes, the SVG's
// groups and highlights, and the views around one pass of a run.
#include "app/workbench/graph_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/workbench/pipeline.h"
#include "core/base/error.h"
#include "core/ir/conv_params.h"
#include "core/models/builtin_models.h"
#include "core/passes/pass_manager.h"
#include "tests/support/small_graphs.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::workbench {
namespace {

using test::fixed_roofline;
using test::small_settings;

using fusebox::testing::linear_relu;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every pair of boxes is apart (touching borders allowed).
void expect_no_overlap(const GraphLayout& l) {
  for (size_t i = 0; i < l.boxes.size(); ++i)
    for (size_t j = i + 1; j < l.boxes.size(); ++j) {
      const LayoutBox& a = l.boxes[i];
      const LayoutBox& b = l.boxes[j];
      bool apart = std::abs(a.x - b.x) >= (a.width + b.width) / 2 - 0.01 ||
                   std::abs(a.y - b.y) >= (a.height + b.height) / 2 - 0.01;
      ASSERT_TRUE(apart) << a.name << " overlaps " << b.name;
    }
}

// Whether `p` lies on the border of `b`, within a point.
bool on_border(const LayoutBox& b, LayoutPoint p) {
  double dx = std::abs(p.x - b.x) - b.width / 2, dy = std::abs(p.y - b.y) - b.height / 2;
  return dx <= 1 && dy <= 1 && (std::abs(dx) <= 1 || std::abs(dy) <= 1);
}

// Boxes lie in the drawing and every edge runs from its producer's box down to its consumer's.
void expect_well_formed(const GraphLayout& l, const ir::Graph& g) {
  ASSERT_EQ(l.node_count, g.nodes.size());
  ASSERT_EQ(l.boxes.size(), g.nodes.size() + g.inputs.size() + g.outputs.size());
  EXPECT_GT(l.width, 0);
  EXPECT_GT(l.height, 0);
  for (const LayoutBox& b : l.boxes) {
    EXPECT_GT(b.width, 0) << b.name;
    EXPECT_GT(b.height, 0) << b.name;
    EXPECT_GE(b.x - b.width / 2, -0.5) << b.name;
    EXPECT_LE(b.x + b.width / 2, l.width + 0.5) << b.name;
    EXPECT_GE(b.y - b.height / 2, -0.5) << b.name;
    EXPECT_LE(b.y + b.height / 2, l.height + 0.5) << b.name;
  }
  for (const LayoutEdge& e : l.edges) {
    ASSERT_LT(e.from, l.boxes.size());
    ASSERT_LT(e.to, l.boxes.size());
    const LayoutBox& from = l.boxes[e.from];
    const LayoutBox& to = l.boxes[e.to];
    EXPECT_LT(from.y, to.y) << e.tensor << ": " << from.name << " -> " << to.name
                            << " must point down";
    ASSERT_GE(e.points.size(), 4u) << e.tensor;
    EXPECT_EQ((e.points.size() - 1) % 3, 0u) << e.tensor;
    // The curve leaves from the producer's box border and arrives at the consumer's.
    EXPECT_TRUE(on_border(from, e.points.front())) << e.tensor << " leaves " << from.name;
    EXPECT_TRUE(on_border(to, e.arrow_tip.value_or(e.points.back())))
        << e.tensor << " reaches " << to.name;
  }
}

TEST(GraphLayout, SmallGraphHasABoxPerNodeInputAndOutput) {
  ir::Graph g = linear_relu();
  GraphLayout l = layout_graph(g);
  expect_well_formed(l, g);
  expect_no_overlap(l);
  EXPECT_EQ(l.graph_name, "linear_relu");
  ASSERT_EQ(l.boxes.size(), 6u);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(l.boxes[i].node, static_cast<int>(i));
    EXPECT_EQ(l.boxes[i].name, g.nodes[i].name);
    EXPECT_EQ(l.boxes[i].op, g.nodes[i].op);
  }
  const LayoutBox& in = l.boxes[l.input_box(0)];
  const LayoutBox& out = l.boxes[l.output_box(0)];
  EXPECT_EQ(in.kind, NodeKind::Input);
  EXPECT_EQ(in.name, "x");
  EXPECT_EQ(in.node, -1);
  EXPECT_EQ(out.kind, NodeKind::Output);
  EXPECT_EQ(out.name, "Relu_3:out");  // the output tensor, as add_node names it
  EXPECT_EQ(out.node, -1);

  // Weights are listed, not drawn.
  EXPECT_EQ(l.boxes[0].weights, std::vector<std::string>{"W"});
  EXPECT_EQ(l.boxes[1].weights, std::vector<std::string>{});
  EXPECT_EQ(l.boxes[2].weights, std::vector<std::string>{"b"});

  // Exactly the data edges, with shapes: x -> MatMul, Transpose -> MatMul, MatMul -> Add,
  // Add -> Relu, Relu -> output.
  std::multimap<std::pair<size_t, size_t>, std::string> edges;
  for (const LayoutEdge& e : l.edges) edges.emplace(std::pair{e.from, e.to}, e.label);
  std::multimap<std::pair<size_t, size_t>, std::string> expected = {
      {{l.input_box(0), 1}, "[2,8]"},
      {{0, 1}, "[8,4]"},
      {{1, 2}, "[2,4]"},
      {{2, 3}, "[2,4]"},
      {{3, l.output_box(0)}, "[2,4]"}};
  EXPECT_EQ(edges, expected);
  for (const LayoutEdge& e : l.edges) EXPECT_TRUE(e.label_pos.has_value()) << e.tensor;

  // The input is above everything; the output below everything.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_LT(in.y, l.boxes[i].y);
    EXPECT_GT(out.y, l.boxes[i].y);
  }
  EXPECT_EQ(l.find_node("Add_2"), std::optional<size_t>(2));
  EXPECT_EQ(l.find_node("x"), std::nullopt) << "inputs are not nodes";
  EXPECT_EQ(l.box_at(l.boxes[2].x, l.boxes[2].y), std::optional<size_t>(2));
  EXPECT_EQ(l.box_at(-100, -100), std::nullopt);
}

// A box's kind is its op schema's (test_ir checks every op declares one).
TEST(GraphLayout, KindsComeFromTheOpSchemas) {
  EXPECT_EQ(node_kind("MatMul"), NodeKind::MatMul);
  EXPECT_EQ(node_kind("LSTM"), NodeKind::MatMul);
  EXPECT_EQ(node_kind("Conv"), NodeKind::Conv);
  EXPECT_EQ(node_kind("ConvTranspose"), NodeKind::Conv);
  EXPECT_EQ(node_kind(ir::channels_last_op("Conv")), NodeKind::Conv) << "the NHWC copy keeps it";
  EXPECT_EQ(node_kind("MaxPool"), NodeKind::Normalization);
  EXPECT_EQ(node_kind("BatchNorm"), NodeKind::Normalization);
  EXPECT_EQ(node_kind("LayerNorm"), NodeKind::Fused);
  EXPECT_EQ(node_kind("ScatterND"), NodeKind::Layout);
  EXPECT_EQ(node_kind("Attention"), NodeKind::Fused);
  EXPECT_EQ(node_kind("FusedBiasRelu"), NodeKind::Fused);
  EXPECT_EQ(node_kind("FusedElementwise"), NodeKind::Fused);
  EXPECT_EQ(node_kind("Gelu"), NodeKind::Fused) << "element-wise by schema, but a fusion";
  EXPECT_EQ(node_kind("Add"), NodeKind::Elementwise);
  EXPECT_EQ(node_kind("Relu"), NodeKind::Elementwise);
  EXPECT_EQ(node_kind("Reshape"), NodeKind::Layout) << "schema view";
  EXPECT_EQ(node_kind("Transpose"), NodeKind::Layout);
  EXPECT_EQ(node_kind("Softmax"), NodeKind::Normalization);
  EXPECT_EQ(node_kind("NoSuchOp"), NodeKind::Other);
  EXPECT_STREQ(node_kind_name(NodeKind::Fused), "fused");
  EXPECT_NE(node_kind_rgb(NodeKind::Fused), node_kind_rgb(NodeKind::MatMul));
  EXPECT_NE(node_kind_rgb(NodeKind::Conv), node_kind_rgb(NodeKind::MatMul));
}

TEST(GraphLayout, WithoutEdgeLabelsTheEdgesHaveNoLabelPosition) {
  ir::Graph g = linear_relu();
  GraphLayout l = layout_graph(g, LayoutOptions{.edge_labels = false});
  expect_well_formed(l, g);
  for (const LayoutEdge& e : l.edges) {
    EXPECT_FALSE(e.label_pos.has_value()) << e.tensor;
    EXPECT_FALSE(e.label.empty()) << "the label text is still there for the UI";
  }
}

TEST(GraphLayout, OptimizedTransformerHasABoxPerNode) {
  Pipeline p(fixed_roofline);
  auto r = p.run(small_settings("transformer"), nullptr, nullptr, Stage::Optimize);
  const ir::Graph& g = r->graph();
  ASSERT_LT(g.nodes.size(), r->model->graph.nodes.size())
      << "the passes should have fused something";
  GraphLayout l = layout_graph(g);
  expect_well_formed(l, g);
  expect_no_overlap(l);
  size_t fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(l.boxes[i].name, g.nodes[i].name);
    fused += l.boxes[i].fused;
    EXPECT_EQ(l.boxes[i].fused, l.boxes[i].kind == NodeKind::Fused);
  }
  EXPECT_GT(fused, 0u);
}

TEST(GraphLayout, AThousandNodeStackLaysOut) {
  ir::Graph g = models::build_model("stack:layers=18", 1);
  ASSERT_GE(g.nodes.size(), 1000u);
  GraphLayout l = layout_graph(g);
  EXPECT_EQ(l.simplified, "") << "within the caps dot lays it out";
  expect_well_formed(l, g);
  expect_no_overlap(l);
  // Reported, not asserted: speed belongs to benchmarks.
  std::cout << "[ layout   ] " << g.nodes.size() << " nodes, " << l.edges.size()
            << " edges: " << l.millis << " ms (" << l.width << " x " << l.height << " pt)\n";
  GraphLayout bare = layout_graph(g, LayoutOptions{.edge_labels = false});
  std::cout << "[ layout   ] without edge labels: " << bare.millis << " ms\n";
  RecordProperty("layout_ms", static_cast<int>(l.millis));
}

// `width` Relus of one input, each output a graph output: one rank `width` boxes wide.
ir::Graph wide_graph(int width) {
  ir::Graph g;
  g.name = "wide";
  g.add_input("x", ir::DType::f32, {2});
  for (int i = 0; i < width; ++i)
    g.outputs.push_back(g.add_node("Relu", {"x"}, {}, "Relu_" + std::to_string(i)));
  return g;
}

TEST(GraphLayout, BeyondTheCapsAGraphGetsTheSimpleLayoutAndSaysSo) {
  // dot took 13.5 s on 2,000 outputs and ran past 90 s on 10,000; the simple layout is linear.
  const ir::Graph g = wide_graph(10000);
  const auto start = std::chrono::steady_clock::now();
  GraphLayout l = layout_graph(g);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0) << "generous: it takes about 0.1 s";
  EXPECT_EQ(l.simplified, "10000 nodes: simple layout (20001 boxes, over the 1500 dot lays out)");
  expect_well_formed(l, g);
  // Rows of at most kSimpleLayoutRowBoxes boxes, so the drawing is not one endless line.
  std::map<double, size_t> row_sizes;
  for (const LayoutBox& b : l.boxes) ++row_sizes[b.y];
  for (const auto& [y, n] : row_sizes) EXPECT_LE(n, kSimpleLayoutRowBoxes) << "row at " << y;
}

TEST(GraphLayout, AWideRankAloneAlsoGetsTheSimpleLayout) {
  const ir::Graph g = wide_graph(static_cast<int>(kLayeredLayoutMaxRankWidth) + 1);
  GraphLayout l = layout_graph(g);
  EXPECT_EQ(l.simplified,
            "201 nodes: simple layout (201 boxes in one rank, over the 200 dot lays out)");
  expect_well_formed(l, g);
  expect_no_overlap(l);
}

TEST(GraphLayout, AStopFlagSetBeforehandCancelsTheLayout) {
  const std::atomic<bool> stop{true};
  EXPECT_THROW(layout_graph(linear_relu(), LayoutOptions{.stop = &stop}), LayoutCancelled);
  EXPECT_THROW(layout_graph(wide_graph(3000), LayoutOptions{.stop = &stop}), LayoutCancelled);
}

TEST(GraphLayout, LayoutsFromManyThreadsMatchOneAtATime) {
  ir::Graph g = linear_relu();
  GraphLayout serial = layout_graph(g);
  std::vector<std::future<GraphLayout>> runs;
  for (int i = 0; i < 8; ++i)
    runs.push_back(std::async(std::launch::async, [&] { return layout_graph(g); }));
  for (auto& f : runs) {
    GraphLayout l = f.get();
    ASSERT_EQ(l.boxes.size(), serial.boxes.size());
    for (size_t i = 0; i < l.boxes.size(); ++i) {
      EXPECT_EQ(l.boxes[i].x, serial.boxes[i].x);
      EXPECT_EQ(l.boxes[i].y, serial.boxes[i].y);
    }
  }
}

// Asks `cache` for `g` until its layout is collected (or 60 s pass).
std::shared_ptr<const LaidOutGraph> laid_out(LayoutCache& cache, const ir::Graph& g) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto entry = cache.request(nullptr, g);
  while (entry->pending() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    entry = cache.request(nullptr, g);
  }
  return entry;
}

// The App's cache: a request starts a layout off the calling thread and says it is pending (and
// the cache busy) until the job is collected; the same graph again is the same entry; what a
// frame draws from (labels, node index, edge bounds) comes with it; beyond its capacity it drops
// the least recently asked-for layout, never one a caller still holds.
TEST(LayoutCache, LaysOutOffThreadCachesAndEvicts) {
  const ir::Graph g = linear_relu();
  LayoutCache cache(2);
  EXPECT_FALSE(cache.busy());
  auto first = cache.request(nullptr, g);
  EXPECT_TRUE(first->pending() || !cache.busy());
  EXPECT_EQ(first->graph, &g);
  EXPECT_TRUE(first->edge_labels) << "a small graph gets its shapes on the edges";
  auto done = laid_out(cache, g);
  ASSERT_FALSE(done->pending()) << done->error;
  EXPECT_EQ(done, first) << "the same graph is the same entry";
  EXPECT_FALSE(cache.busy()) << "collected";
  ASSERT_TRUE(done->layout);
  EXPECT_EQ(done->labels.size(), done->layout->boxes.size());
  EXPECT_EQ(done->edge_bounds.size(), done->layout->edges.size());
  EXPECT_EQ(done->labels[0], g.nodes[0].op + "\n" + g.nodes[0].name);
  EXPECT_EQ(done->node_index.at(g.nodes[1].name), 1u);
  for (size_t i = 0; i < done->edge_bounds.size(); ++i) {
    const LayoutRect& r = done->edge_bounds[i];
    for (const LayoutPoint& p : done->layout->edges[i].points) {
      EXPECT_LE(r.x0, p.x);
      EXPECT_GE(r.x1, p.x);
      EXPECT_LE(r.y0, p.y);
      EXPECT_GE(r.y1, p.y);
    }
  }
  first.reset();

  // Three more graphs through a cache of two: `held` stays, the others come and go.
  const ir::Graph a = linear_relu(), b = linear_relu(), c = linear_relu();
  const auto held = laid_out(cache, a);
  const std::weak_ptr<const LaidOutGraph> g_entry = done;
  done.reset();
  laid_out(cache, b);
  laid_out(cache, c);
  EXPECT_LE(cache.size(), 2u);
  EXPECT_EQ(cache.request(nullptr, a), held) << "held by a caller: never evicted";
  EXPECT_TRUE(g_entry.expired()) << "the least recently asked-for one, nobody holding it, dropped";
  // Asked for again, it is a new entry laid out again. A tiny graph's job may already be
  // collected by the request that started it, so "pending" alone would race (it did on CI).
  const auto again = cache.request(nullptr, g);
  EXPECT_TRUE(again->pending() || !cache.busy());
  EXPECT_FALSE(laid_out(cache, g)->pending());
  EXPECT_FALSE(cache.busy());
}

// The window's quit: the cache goes while big layouts are running and queued. Each stops at its
// next check or is left to finish on its own thread (holding its result); the cache does not
// wait for dot to lay out four 1,400-node graphs one after the other (seconds each).
TEST(LayoutCache, GoesWithinASecondWhileBigLayoutsArePending) {
  Pipeline pipeline;
  Settings s = test::small_settings("stack:layers=25,seq=8,d=32,heads=2,ffn=64");
  for (const std::string& pass : passes::PassRegistry::instance().names())
    s.passes_off.insert(pass);
  std::vector<std::shared_ptr<const RunResult>> results;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    s.seed = seed;
    results.push_back(pipeline.run(s, nullptr, nullptr, Stage::Optimize));
  }
  ASSERT_GT(results[0]->graph().nodes.size(), 1000u);
  ASSERT_LE(results[0]->graph().nodes.size() + 2, kLayeredLayoutMaxBoxes)
      << "dot's, not the simple one";
  auto cache = std::make_unique<LayoutCache>();
  std::vector<std::shared_ptr<const LaidOutGraph>> entries;
  for (const auto& r : results) entries.push_back(cache->request(r, r->graph()));
  EXPECT_TRUE(cache->busy());
  const auto start = std::chrono::steady_clock::now();
  cache.reset();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0) << "the cache waits kShutdownWait (0.4 s) at most";
}

TEST(GraphSvg, OneGroupPerBoxAndTheHighlightedNodesMarked) {
  ir::Graph g = linear_relu();
  std::string svg =
      render_svg(g, {.layout = {}, .highlight = {"MatMul_1", "Relu_3"}, .title = "a title", .unsupported = {}});
  EXPECT_TRUE(svg.starts_with("<?xml") || svg.starts_with("<svg")) << svg.substr(0, 100);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(count(svg, "<g id=\"node"), g.nodes.size() + 2) << svg;
  EXPECT_EQ(count(svg, "<g id=\"edge"), 5u);
  EXPECT_EQ(count(svg, "class=\"node highlight\""), 2u);
  // The highlight is on the named nodes' groups: each such group's title is the node.
  for (const char* name : {"MatMul_1", "Relu_3"}) {
    size_t at = svg.find(std::string("<title>") + name + "</title>");
    ASSERT_NE(at, std::string::npos) << name;
    size_t group = svg.rfind("<g id=\"node", at);
    EXPECT_NE(svg.substr(group, at - group).find("highlight"), std::string::npos) << name;
  }
  EXPECT_NE(svg.find("stroke-width=\"4\""), std::string::npos);
  EXPECT_NE(svg.find("a title"), std::string::npos);
  EXPECT_NE(svg.find("[2,8]"), std::string::npos) << "edge labels are shapes";
  EXPECT_NE(svg.find("weights: W"), std::string::npos) << "weights are in the tooltip";
  // Fill colours by kind.
  char matmul[8];
  std::snprintf(matmul, sizeof matmul, "#%06x", node_kind_rgb(NodeKind::MatMul));
  EXPECT_NE(svg.find(std::string("fill=\"") + matmul + "\""), std::string::npos);
}

TEST(GraphSvg, NamesAreDrawnAsWritten) {
  ir::Graph g;
  g.name = "odd <names> & \\N";
  g.add_input("x<1>", ir::DType::f32, {2});
  g.outputs = {g.add_node("Relu", {"x<1>"}, {}, "relu\\N&")};
  std::string svg = render_svg(g);
  EXPECT_EQ(count(svg, "<g id=\"node"), 3u);
  EXPECT_NE(svg.find("relu\\N&amp;"), std::string::npos) << "a backslash is not an escape:\n"
                                                         << svg;
  EXPECT_NE(svg.find("x&lt;1&gt;"), std::string::npos) << svg;
}

TEST(GraphPassView, AfterHighlightsWhatThePassAddedBeforeWhatItRemoved) {
  Pipeline p(fixed_roofline);
  auto r = p.run(small_settings(), nullptr, nullptr, Stage::Optimize);
  PassView after = pass_view(*r, "fuse_patterns", false);
  PassView before = pass_view(*r, "fuse_patterns", true);
  ASSERT_NE(after.graph, nullptr);
  ASSERT_NE(before.graph, nullptr);
  EXPECT_LT(after.graph->nodes.size(), before.graph->nodes.size());
  EXPECT_FALSE(after.highlight.empty());
  EXPECT_FALSE(before.highlight.empty());
  auto has = [](const ir::Graph& g, const std::string& name) {
    return std::any_of(g.nodes.begin(), g.nodes.end(),
                       [&](const ir::Node& n) { return n.name == name; });
  };
  for (const std::string& n : after.highlight) EXPECT_TRUE(has(*after.graph, n)) << n;
  for (const std::string& n : before.highlight) {
    EXPECT_TRUE(has(*before.graph, n)) << n;
    EXPECT_FALSE(has(*after.graph, n)) << n << " was removed";
  }
  bool attention_highlighted = false;
  for (const ir::Node& n : after.graph->nodes)
    attention_highlighted |= n.op == "Attention" && after.highlight.count(n.name);
  EXPECT_TRUE(attention_highlighted);
  // Before the first pass that changed anything is the model as loaded.
  PassView first = pass_view(*r, "absorb_matmul", true);
  EXPECT_EQ(first.graph, &r->model->graph);
  EXPECT_NE(after.caption.find("after fuse_patterns"), std::string::npos) << after.caption;
}

TEST(GraphPassView, UnknownOffAndUnchangedPassesSaySo) {
  Pipeline p(fixed_roofline);
  Settings s = small_settings();
  apply(s, "passes=dce", "test");
  auto r = p.run(s, nullptr, nullptr, Stage::Optimize);
  auto error_of = [&](const std::string& pass) {
    try {
      pass_view(*r, pass, false);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error_of("fuse").find("valid: absorb_matmul"), std::string::npos) << error_of("fuse");
  EXPECT_NE(error_of("fuse_patterns").find("switched off"), std::string::npos)
      << error_of("fuse_patterns");
  EXPECT_NE(error_of("dce").find("did not change"), std::string::npos) << error_of("dce");
}

}  // namespace
}  // namespace fusebox::workbench
