#pragma once
// Graph drawing as data. layout_graph lays a graph out with Graphviz `dot` (top to bottom) and
// returns boxes and curves in screen coordinates (points, y pointing down, origin at the top
// left) for the UI's graph panel to draw; render_svg draws the same layout as SVG for the CLI.
// No ImGui here.
//
//   boxes   one per node, or one per folded scope for the nodes in it (LayoutOptions::folded;
//           without folds box i is g.nodes[i]), in graph order; then one per graph input (drawn
//           at the top), then one per graph output. box_of_node maps every node to its box.
//           Weights get no box (hundreds of them would swamp the picture); each node lists the
//           weights it reads instead.
//   edges   one per (producer, consumer, tensor) between different boxes: from the producing
//           node (or its fold) or the input box to the consuming one or the output box, labelled with the tensor's shape, with the spline
//           Graphviz routed.
//
// Graphviz is not thread-safe: every call into it here holds one process-wide mutex, so layouts
// may be requested from any thread (they run one at a time). Errors throw fusebox::Error naming
// the graph.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "app/workbench/run_result.h"
#include "core/ir/graph.h"

namespace fusebox::workbench {

// What a box is, for colouring: an op node's kind is its op schema's (core/ir/op_schema.h:
// OpKind), the rest are the graph's own boxes.
enum class NodeKind : uint8_t {
  MatMul,         // MatMul, LSTM, GRU, RNN
  Conv,           // Conv, ConvTranspose
  Fused,          // what the passes create: Fused*, Attention, LayerNorm, SkipLayerNorm, Gelu, ...
  Elementwise,    // Add, Relu, Cast, ...
  Normalization,  // Softmax, BatchNorm, Reduce*, pools
  Layout,         // views, Transpose, Concat, Slice, Gather, Scatter*, Resize
  Other,          // an op no schema names
  Input,          // a graph input box
  Output,         // a graph output box
  Scope,          // a folded name scope: one box for the nodes in it (see graph_scopes.h)
};
const char* node_kind_name(NodeKind kind);  // "matmul", "fused", ..., "input", "output"
// The kind of a node with this op type (never Input or Output; Other for an unknown op).
NodeKind node_kind(const std::string& op);
// Fill colour of a kind as 0xRRGGBB: the SVG and the UI use the same palette.
uint32_t node_kind_rgb(NodeKind kind);

struct LayoutPoint {
  double x = 0, y = 0;
};

struct LayoutBox {
  NodeKind kind = NodeKind::Other;
  int node = -1;                     // index into g.nodes; -1 for an input, output or scope box
  std::string name;                  // the node's name, the input / output tensor's name, or the
                                     // folded scope's path ("layer3")
  std::string op;                    // the node's op; "input", "output" or "scope" for those boxes
  size_t folded = 0;                 // a folded scope's box: the nodes in it (0 otherwise)
  bool fused = false;                // kind == Fused
  std::vector<std::string> weights;  // weight tensors the node reads (not drawn), in input order
  double x = 0, y = 0;               // centre
  double width = 0, height = 0;

  bool contains(double px, double py) const {
    return px >= x - width / 2 && px <= x + width / 2 && py >= y - height / 2 &&
           py <= y + height / 2;
  }
};

struct LayoutEdge {
  size_t from = 0, to = 0;  // box indices
  std::string tensor;
  std::string label;  // the tensor's shape, "[1,64,256]"
  // A cubic Bezier spline as Graphviz routes it: the start point, then (control, control, end)
  // triples, so points.size() == 1 + 3k. It ends at the arrowhead's base when there is one.
  std::vector<LayoutPoint> points;
  std::optional<LayoutPoint> arrow_tip;  // the arrowhead runs from points.back() to here
  std::optional<LayoutPoint> label_pos;  // centre of the label (when edge labels are on)
};

struct LayoutOptions {
  // Shapes on the edges. dot places edge labels as extra nodes, so a layout with them takes
  // roughly twice as long and is taller.
  bool edge_labels = true;
  // Checked between the steps of a layout (and while the simple layout places boxes): once set,
  // layout_graph throws LayoutCancelled. dot itself cannot be interrupted, but it only gets
  // graphs within the caps below, which it lays out in seconds at most.
  const std::atomic<bool>* stop = nullptr;
  // Name scopes drawn as one box each, labelled with their node count (see graph_scopes.h). A
  // scope inside a folded one is hidden by it; one of fewer than two nodes never folds. (A
  // vector: GCC 12 sees a std::set member of a designated-initialized temporary as
  // maybe-uninitialized.)
  std::vector<std::string> folded = {};
};

// dot's crossing minimisation grows much faster than the graph: 2,000 boxes in one rank took
// 13.5 s, 10,000 ran past 90 s. Beyond either cap layout_graph places the boxes itself, in
// topological rows (see GraphLayout::simplified), in time linear in the graph.
inline constexpr size_t kLayeredLayoutMaxBoxes = 1500;     // nodes + inputs + outputs
inline constexpr size_t kLayeredLayoutMaxRankWidth = 200;  // boxes in the widest rank
// The simple layout wraps a rank wider than this onto several rows.
inline constexpr size_t kSimpleLayoutRowBoxes = 40;

// What layout_graph throws when LayoutOptions::stop was set.
struct LayoutCancelled : std::exception {
  const char* what() const noexcept override { return "layout cancelled"; }
};

struct GraphLayout {
  std::string graph_name;
  std::vector<LayoutBox> boxes;  // nodes (or folded scopes) in graph order, inputs, outputs
  std::vector<LayoutEdge> edges;
  // node_count: the boxes before the inputs (nodes shown, and folded scopes).
  size_t node_count = 0, input_count = 0, output_count = 0;
  std::vector<size_t> box_of_node;  // g.nodes[i] is drawn in boxes[box_of_node[i]]
  double width = 0, height = 0;  // of the whole drawing, in points
  double millis = 0;             // spent in Graphviz (building, laying out, reading back)
  // Empty for dot's layered layout; over the caps, what the panel says instead:
  // "12,000 boxes: simple layout (dot takes at most 1,500)".
  std::string simplified;

  size_t input_box(size_t i) const { return node_count + i; }
  size_t output_box(size_t i) const { return node_count + input_count + i; }
  // The box of the node named `name`, if the graph has one.
  std::optional<size_t> find_node(const std::string& name) const;
  // The topmost box containing the point, for hit testing.
  std::optional<size_t> box_at(double x, double y) const;
};

// Lays `g` out with dot (rankdir TB, box nodes labelled "op\nname", edges labelled with shapes),
// or, beyond kLayeredLayoutMaxBoxes / kLayeredLayoutMaxRankWidth, with the simple layout.
GraphLayout layout_graph(const ir::Graph& g, const LayoutOptions& options = {});

struct SvgOptions {
  LayoutOptions layout;
  std::set<std::string> highlight;  // node names drawn with a thick red border (class "highlight")
  std::string title;                // a caption above the drawing; none when empty
  // A refused model's nodes fusebox cannot import (node name -> why): filled red, "unsupported"
  // under the name, the reason in the tooltip (class "unsupported").
  std::map<std::string, std::string> unsupported;
};

// The same drawing rendered by Graphviz as a standalone SVG document, boxes filled by kind, each
// node's weights in its tooltip.
std::string render_svg(const ir::Graph& g, const SvgOptions& options = {});

// A graph to draw around one pass of a run, with the nodes that pass touched.
struct PassView {
  const ir::Graph* graph = nullptr;  // points into the RunResult
  std::set<std::string> highlight;   // after: the nodes it added or edited; before: it removed
  std::string caption;               // "after fuse_patterns: 12 nodes, 4 added or edited (red)"
};

// The graph after `pass` (its snapshot) or, with `before`, the graph it started from (the
// previous snapshot, or the model as loaded). Needs a result that ran at least Stage::Optimize.
// Throws fusebox::Error for an unknown pass (listing the valid ones), a pass switched off, or a
// pass that did not change the graph (there is nothing to show).
PassView pass_view(const RunResult& result, const std::string& pass, bool before);

// Edge labels' font size as dot is given it, in points (boxes were sized for text this big).
inline constexpr double kEdgeLabelFontPt = 8;

// A rectangle in layout coordinates (points, y down).
struct LayoutRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// One graph's layout as a LayoutCache hands it out: pending until `layout` (or `error`) is set,
// then with what drawing it every frame needs, computed once.
struct LaidOutGraph {
  std::shared_ptr<const RunResult> owner;  // keeps `graph` alive
  const ir::Graph* graph = nullptr;
  bool edge_labels = false;
  std::optional<GraphLayout> layout;  // set once the job finished
  std::string error;                  // the layout failed (or could not start)
  std::vector<LayoutRect> edge_bounds;  // per edge, with its arrowhead and label: for culling
  std::vector<std::string> labels;      // the two lines of each box, "\n" between
  // node name -> box; a node inside a folded scope maps to the scope's box.
  std::unordered_map<std::string, size_t> node_index;
  std::set<std::string> folded;  // the folds it was laid out with (LayoutOptions::folded)

  bool pending() const { return !layout && error.empty(); }
};

// Graph layouts off the calling thread, cached per graph: a 1,000-node graph takes a few hundred
// ms in dot. The fusebox-ui App owns one and hands it to the graph panel; App::idle() asks busy()
// so scripts and screenshots wait for the layouts the panel asked for. Used from one thread (the
// UI's); the workers only fill their futures.
class LayoutCache {
 public:
  static constexpr size_t kDefaultCapacity = 8;
  static constexpr size_t kEdgeLabelMaxNodes = 400;  // above this dot is twice as slow with labels

  // How long the destructor waits for the layouts still running before leaving them to finish
  // on their own threads (which hold the graphs they read).
  static constexpr std::chrono::milliseconds kShutdownWait{400};

  explicit LayoutCache(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}
  // Stops the layouts still running at their next check and returns within kShutdownWait; a
  // layout of a graph the caller owns (requested with no owner) is waited for to the end.
  ~LayoutCache();
  LayoutCache(const LayoutCache&) = delete;
  LayoutCache& operator=(const LayoutCache&) = delete;

  // The layout of `graph` with `folded` scopes folded, which `owner` keeps alive: started the
  // first time it is asked for (with edge labels up to kEdgeLabelMaxNodes boxes), pending until
  // its job is collected. Also
  // collects every finished job and evicts the least recently asked-for layouts beyond the
  // capacity, never a running one, the one just asked for or one a caller still holds.
  std::shared_ptr<const LaidOutGraph> request(std::shared_ptr<const RunResult> owner, const ir::Graph& graph,
                                              const std::set<std::string>& folded = {});
  // Collects finished jobs (request does too).
  void poll();
  // A layout was started and is not collected yet.
  bool busy() const;
  size_t size() const { return slots_.size(); }

 private:
  struct Slot {
    std::shared_ptr<LaidOutGraph> entry;
    std::future<GraphLayout> job;  // valid while the worker runs (or is unread)
    uint64_t last_used = 0;
  };
  void evict(uint64_t now);

  size_t capacity_;
  uint64_t requests_ = 0;
  std::shared_ptr<std::atomic<bool>> stop_ = std::make_shared<std::atomic<bool>>(false);
  std::map<std::pair<const ir::Graph*, std::set<std::string>>, Slot> slots_;  // (graph, folds)
};

}  // namespace fusebox::workbench
