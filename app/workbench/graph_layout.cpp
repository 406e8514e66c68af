// Graph layout through libgvc: the graph becomes a dot digraph (nodes, input and output boxes,
// edges labelled with shapes), dot lays it out, and the positions are read back from Graphviz's
// own records (ND_coord, ED_spl, GD_bb) rather than parsed from text.
#include "app/workbench/graph_layout.h"

#include <graphviz/gvc.h>
#include <graphviz/gvplugin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "app/workbench/graph_scopes.h"
#include "app/workbench/simple_layout.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/ir/op_schema.h"
#include "core/ir/shape.h"
#include "core/passes/pass_manager.h"

// The two plugins we need, linked in (app/workbench/CMakeLists.txt links Debian's
// libgvplugin_dot_layout.so.6 and libgvplugin_core.so.6): `dot` itself, and core, which holds
// the SVG renderer. Handing them to gvContextPlugins means no plugin config file (config6a) and
// no run-time plugin search. Text is measured by Graphviz's built-in font metrics estimate (no
// pango plugin), which is plenty for boxes of short labels.
extern "C" {
extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
extern gvplugin_library_t gvplugin_core_LTX_library;
}

namespace fusebox::workbench {

namespace {

constexpr double kPointsPerInch = 72.0;
constexpr const char* kFont = "Helvetica";  // Graphviz's estimate has Helvetica/Arial metrics
constexpr uint32_t kHighlightRgb = 0xd62728;
constexpr uint32_t kUnsupportedFillRgb = 0xf4a6a6;  // a refused node: red, paler than the border

// Every Graphviz call holds this: libgvc and libcgraph keep global state. Never destroyed: a
// layout a LayoutCache left running (see ~LayoutCache) may still hold it while the process exits.
std::mutex& graphviz_mutex() {
  static auto* m = new std::mutex;
  return *m;
}

// Collects what Graphviz reports (warnings and errors) while one call holds the mutex. Never
// destroyed, like the mutex.
std::string& graphviz_messages() {
  static auto* messages = new std::string;
  return *messages;
}

int collect_message(char* message) {
  graphviz_messages() += message;
  return 0;
}

// The one context, created on first use and kept for the process (freeing it at exit could race
// with other static destructors; it holds no resources beyond memory).
GVC_t* context() {
  static const lt_symlist_t kBuiltins[] = {
      {"gvplugin_dot_layout_LTX_library", &gvplugin_dot_layout_LTX_library},
      {"gvplugin_core_LTX_library", &gvplugin_core_LTX_library},
      {nullptr, nullptr},
  };
  static GVC_t* gvc = gvContextPlugins(kBuiltins, 0);
  return gvc;
}

std::string rgb_text(uint32_t rgb) {
  char text[8];
  std::snprintf(text, sizeof text, "#%06x", static_cast<unsigned>(rgb & 0xffffff));
  return text;
}

// Graphviz reads labels as escString: a backslash starts an escape (\N, \n, ...), so keep ours.
std::string escape_label(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void set_attr(void* object, const char* name, const std::string& value) {
  agsafeset(object, const_cast<char*>(name), const_cast<char*>(value.c_str()),
            const_cast<char*>(""));
}

// Declares an attribute's default for every object of a kind (graph, nodes or edges).
void set_default(Agraph_t* g, int kind, const char* name, const std::string& value) {
  agattr(g, kind, const_cast<char*>(name), const_cast<char*>(value.c_str()));
}

// The boxes and edges as data, before any coordinates: shared by the layout and the SVG.
struct Drawing {
  GraphLayout layout;
  std::vector<std::string> box_labels;
  std::vector<std::string> box_keys;  // unique Graphviz node names
};

Drawing describe(const ir::Graph& g, const std::set<std::string>& folded) {
  Drawing d;
  GraphLayout& l = d.layout;
  l.graph_name = g.name;
  l.input_count = g.inputs.size();
  l.output_count = g.outputs.size();

  auto shape_of = [&](const std::string& tensor) {
    return g.has_tensor(tensor) ? ir::shape_str(g.tensor(tensor).shape) : std::string("[?]");
  };
  const ScopeTree scopes = folded.empty() ? ScopeTree{} : build_scopes(g);
  std::unordered_map<int, size_t> fold_box;  // scope -> its box
  l.box_of_node.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    const int fold = scopes.folded_scope_of(i, folded);
    if (fold >= 0) {
      // The scope's box sits where its first node would.
      auto [it, added] = fold_box.emplace(fold, l.boxes.size());
      l.box_of_node[i] = it->second;
      if (!added) continue;
      const Scope& s = scopes.scopes[static_cast<size_t>(fold)];
      LayoutBox b;
      b.kind = NodeKind::Scope;
      b.name = s.path;
      b.op = node_kind_name(NodeKind::Scope);
      b.folded = s.nodes;
      l.boxes.push_back(std::move(b));
      d.box_labels.push_back(s.path + "\n" + std::to_string(s.nodes) + " nodes");
      continue;
    }
    LayoutBox b;
    b.kind = node_kind(n.op);
    b.node = static_cast<int>(i);
    b.name = n.name;
    b.op = n.op;
    b.fused = b.kind == NodeKind::Fused;
    for (const std::string& in : n.inputs)
      if (!in.empty() && g.is_weight(in) &&
          std::find(b.weights.begin(), b.weights.end(), in) == b.weights.end())
        b.weights.push_back(in);
    l.box_of_node[i] = l.boxes.size();
    l.boxes.push_back(std::move(b));
    d.box_labels.push_back(n.op + "\n" + n.name);
  }
  l.node_count = l.boxes.size();
  auto add_io = [&](const std::string& tensor, NodeKind kind) {
    LayoutBox b;
    b.kind = kind;
    b.name = tensor;
    b.op = node_kind_name(kind);
    l.boxes.push_back(std::move(b));
    d.box_labels.push_back(tensor + "\n" + shape_of(tensor));
  };
  for (const std::string& in : g.inputs) add_io(in, NodeKind::Input);
  for (const std::string& out : g.outputs) add_io(out, NodeKind::Output);

  // Graphviz node names: the node's own name where it is free, else made unique. Inputs and
  // outputs are prefixed so a tensor and a node of the same name stay apart.
  std::set<std::string> used;
  for (size_t i = 0; i < l.boxes.size(); ++i) {
    const LayoutBox& b = l.boxes[i];
    std::string key = b.node >= 0 ? b.name : b.op + ":" + b.name;  // "scope:layer3" too
    if (!used.insert(key).second) {
      key += "#" + std::to_string(i);
      used.insert(key);
    }
    d.box_keys.push_back(std::move(key));
  }

  // Edges: who makes each tensor (a node or an input box), then every consumer of it.
  std::unordered_map<std::string, size_t> source;
  for (size_t i = 0; i < g.inputs.size(); ++i) source.emplace(g.inputs[i], l.input_box(i));
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& out : g.nodes[i].outputs) source.emplace(out, l.box_of_node[i]);
  std::set<std::tuple<size_t, size_t, std::string>> seen;  // Mul(x, x) draws one edge
  auto add_edge = [&](const std::string& tensor, size_t to) {
    auto it = source.find(tensor);
    // Inside one folded scope: no edge.
    if (it == source.end() || it->second == to || !seen.emplace(it->second, to, tensor).second) return;
    LayoutEdge e;
    e.from = it->second;
    e.to = to;
    e.tensor = tensor;
    e.label = shape_of(tensor);
    l.edges.push_back(std::move(e));
  };
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs) add_edge(in, l.box_of_node[i]);
  for (size_t i = 0; i < g.outputs.size(); ++i) add_edge(g.outputs[i], l.output_box(i));
  return d;
}

// A dot graph of the drawing, closed (with its layout freed) when it goes. Holds the mutex.
class DotGraph {
 public:
  DotGraph() : lock_(graphviz_mutex()) {
    graphviz_messages().clear();
    previous_handler_ = agseterrf(collect_message);
  }

  ~DotGraph() {
    if (laid_out_) gvFreeLayout(gvc_, graph_);
    if (graph_) agclose(graph_);
    agseterrf(previous_handler_);
  }

  DotGraph(const DotGraph&) = delete;
  DotGraph& operator=(const DotGraph&) = delete;

  // Builds the dot graph of `d` and lays it out; `svg` adds what only the SVG shows.
  void lay_out(const Drawing& d, const LayoutOptions& options, const SvgOptions* svg) {
    gvc_ = context();
    if (!gvc_) fail("could not create a Graphviz context");
    std::string name = d.layout.graph_name.empty() ? "graph" : d.layout.graph_name;
    graph_ = agopen(name.data(), Agdirected, nullptr);
    if (!graph_) fail("agopen failed");

    set_default(graph_, AGRAPH, "rankdir", "TB");
    set_default(graph_, AGRAPH, "nodesep", "0.25");
    set_default(graph_, AGRAPH, "ranksep", "0.3");
    set_default(graph_, AGRAPH, "fontname", kFont);
    set_default(graph_, AGNODE, "shape", "box");
    set_default(graph_, AGNODE, "style", "filled");
    set_default(graph_, AGNODE, "fontname", kFont);
    set_default(graph_, AGNODE, "fontsize", "10");
    set_default(graph_, AGNODE, "height", "0.35");
    // Wide margins: viewers without Helvetica substitute wider fonts than Graphviz's estimate.
    set_default(graph_, AGNODE, "margin", "0.14,0.04");
    set_default(graph_, AGEDGE, "fontname", kFont);
    set_default(graph_, AGEDGE, "fontsize", "8");
    set_default(graph_, AGEDGE, "arrowsize", "0.6");
    if (svg && !svg->title.empty()) {
      set_attr(graph_, "label", escape_label(svg->title));
      set_attr(graph_, "labelloc", "t");
      set_attr(graph_, "fontsize", "12");
    }

    const GraphLayout& l = d.layout;
    nodes_.reserve(l.boxes.size());
    for (size_t i = 0; i < l.boxes.size(); ++i) {
      const LayoutBox& b = l.boxes[i];
      Agnode_t* n = agnode(graph_, const_cast<char*>(d.box_keys[i].c_str()), 1);
      if (!n) fail("agnode failed for '" + b.name + "'");
      set_attr(n, "label", escape_label(d.box_labels[i]));
      set_attr(n, "fillcolor", rgb_text(node_kind_rgb(b.kind)));
      if (b.node < 0) {
        set_attr(n, "style", "rounded,filled");
        set_attr(n, "fontsize", "9");
      }
      if (svg) {
        std::string tip = b.op + " " + b.name;
        if (!b.weights.empty()) tip += "\nweights: " + join(b.weights, ", ");
        set_attr(n, "tooltip", escape_label(tip));
        if (auto it = svg->unsupported.find(b.name); it != svg->unsupported.end() && b.node >= 0) {
          set_attr(n, "label", escape_label(d.box_labels[i] + "\nunsupported"));
          set_attr(n, "fillcolor", rgb_text(kUnsupportedFillRgb));
          set_attr(n, "penwidth", "3");
          set_attr(n, "color", rgb_text(kHighlightRgb));
          set_attr(n, "class", "unsupported");
          set_attr(n, "tooltip", escape_label(tip + "\n" + it->second));
        } else if (svg->highlight.count(b.name) && b.node >= 0) {
          set_attr(n, "penwidth", "4");
          set_attr(n, "color", rgb_text(kHighlightRgb));
          set_attr(n, "class", "highlight");
        }
      }
      nodes_.push_back(n);
    }
    // Inputs share the top rank, outputs the bottom one.
    auto same_rank = [&](const char* name, const char* rank, size_t first, size_t count) {
      if (count == 0) return;
      Agraph_t* sub = agsubg(graph_, const_cast<char*>(name), 1);
      set_attr(sub, "rank", rank);
      for (size_t i = first; i < first + count; ++i) agsubnode(sub, nodes_[i], 1);
    };
    same_rank("inputs", "source", l.input_box(0), l.input_count);
    same_rank("outputs", "sink", l.output_box(0), l.output_count);

    edges_.reserve(l.edges.size());
    for (const LayoutEdge& e : l.edges) {
      Agedge_t* edge = agedge(graph_, nodes_[e.from], nodes_[e.to], nullptr, 1);
      if (!edge) fail("agedge failed for tensor '" + e.tensor + "'");
      if (options.edge_labels) set_attr(edge, "label", escape_label(e.label));
      if (svg) set_attr(edge, "tooltip", escape_label(e.tensor + " " + e.label));
      edges_.push_back(edge);
    }

    if (gvLayout(gvc_, graph_, "dot") != 0) fail("dot layout failed");
    laid_out_ = true;
  }

  // Reads the positions back into `l`, in points with y pointing down from the top left.
  void read_back(GraphLayout& l) const {
    boxf bb = GD_bb(graph_);
    l.width = bb.UR.x - bb.LL.x;
    l.height = bb.UR.y - bb.LL.y;
    auto flip = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };
    for (size_t i = 0; i < nodes_.size(); ++i) {
      LayoutPoint c = flip(ND_coord(nodes_[i]));
      LayoutBox& b = l.boxes[i];
      b.x = c.x;
      b.y = c.y;
      b.width = ND_width(nodes_[i]) * kPointsPerInch;
      b.height = ND_height(nodes_[i]) * kPointsPerInch;
    }
    for (size_t i = 0; i < edges_.size(); ++i) {
      LayoutEdge& e = l.edges[i];
      // dot routes each edge as one Bezier (more pieces only for edges clipped to clusters).
      const splines* spl = ED_spl(edges_[i]);
      if (spl && spl->size > 0) {
        const bezier& bz = spl->list[0];
        for (int p = 0; p < bz.size; ++p) e.points.push_back(flip(bz.list[p]));
        if (bz.eflag) e.arrow_tip = flip(bz.ep);
      }
      const textlabel_t* label = ED_label(edges_[i]);
      if (label && label->set) e.label_pos = flip(label->pos);
    }
  }

  std::string render(const char* format) const {
    char* data = nullptr;
    unsigned int length = 0;
    if (gvRenderData(gvc_, graph_, format, &data, &length) != 0 || !data)
      fail(std::string("rendering ") + format + " failed");
    std::string out(data, length);
    gvFreeRenderData(data);
    return out;
  }

 private:
  std::lock_guard<std::mutex> lock_;
  agusererrf previous_handler_ = nullptr;
  GVC_t* gvc_ = nullptr;
  Agraph_t* graph_ = nullptr;
  bool laid_out_ = false;
  std::vector<Agnode_t*> nodes_;
  std::vector<Agedge_t*> edges_;

  [[noreturn]] void fail(const std::string& what) const {
    std::string detail = trim(graphviz_messages());
    throw Error("Graphviz: " + what + (detail.empty() ? "" : " (" + detail + ")"));
  }
};

double millis_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void stop_if_asked(const std::atomic<bool>* stop) {
  if (stop && stop->load(std::memory_order_relaxed)) throw LayoutCancelled{};
}

// Why the drawing goes to the simple layout ("12000 nodes: simple layout (...)"); empty when
// dot takes it.
std::string too_big_for_dot(const GraphLayout& l, const std::vector<size_t>& ranks) {
  const size_t widest = widest_rank(ranks);
  if (l.boxes.size() <= kLayeredLayoutMaxBoxes && widest <= kLayeredLayoutMaxRankWidth) return "";
  const std::string what = l.boxes.size() > kLayeredLayoutMaxBoxes
                               ? std::to_string(l.boxes.size()) + " boxes, over the " +
                                     std::to_string(kLayeredLayoutMaxBoxes) + " dot lays out"
                               : std::to_string(widest) + " boxes in one rank, over the " +
                                     std::to_string(kLayeredLayoutMaxRankWidth) + " dot lays out";
  return std::to_string(l.node_count) + " nodes: simple layout (" + what + ")";
}

// Runs `f`, adding the graph's name to any error (a throwing constructor cannot know it).
template <typename F>
auto naming_graph(const ir::Graph& g, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error("drawing graph '" + g.name + "': " + e.what());
  }
}

}  // namespace

const char* node_kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::MatMul:
      return "matmul";
    case NodeKind::Conv:
      return "conv";
    case NodeKind::Fused:
      return "fused";
    case NodeKind::Elementwise:
      return "elementwise";
    case NodeKind::Normalization:
      return "normalization";
    case NodeKind::Layout:
      return "layout";
    case NodeKind::Other:
      return "other";
    case NodeKind::Input:
      return "input";
    case NodeKind::Output:
      return "output";
    case NodeKind::Scope:
      return "scope";
  }
  return "other";
}

NodeKind node_kind(const std::string& op) {
  switch (ir::op_kind(op)) {  // the op's own record says what it is (core/ir/op_schema.h)
    case ir::OpKind::MatMul:
      return NodeKind::MatMul;
    case ir::OpKind::Conv:
      return NodeKind::Conv;
    case ir::OpKind::Fused:
      return NodeKind::Fused;
    case ir::OpKind::Elementwise:
      return NodeKind::Elementwise;
    case ir::OpKind::Normalization:
      return NodeKind::Normalization;
    case ir::OpKind::Layout:
      return NodeKind::Layout;
    case ir::OpKind::Unset:
      break;
  }
  return NodeKind::Other;
}

uint32_t node_kind_rgb(NodeKind kind) {
  switch (kind) {
    case NodeKind::MatMul:
      return 0x9ecae1;  // blue
    case NodeKind::Conv:
      return 0x80cdc1;  // teal: the other dense products
    case NodeKind::Fused:
      return 0xfdae6b;  // orange: what the passes made
    case NodeKind::Elementwise:
      return 0xc7e9c0;  // green
    case NodeKind::Normalization:
      return 0xdadaeb;  // lavender
    case NodeKind::Layout:
      return 0xe0e0e0;  // grey: moves bytes, or not even that
    case NodeKind::Other:
      return 0xffffff;
    case NodeKind::Input:
      return 0xfff7bc;
    case NodeKind::Output:
      return 0xfee391;
    case NodeKind::Scope:
      return 0xd4b9da;  // mauve: many nodes behind one box
  }
  return 0xffffff;
}

std::optional<size_t> GraphLayout::find_node(const std::string& name) const {
  for (size_t i = 0; i < node_count && i < boxes.size(); ++i)
    if (boxes[i].node >= 0 && boxes[i].name == name) return i;
  return std::nullopt;
}

std::optional<size_t> GraphLayout::box_at(double x, double y) const {
  for (size_t i = boxes.size(); i-- > 0;)
    if (boxes[i].contains(x, y)) return i;
  return std::nullopt;
}

GraphLayout layout_graph(const ir::Graph& g, const LayoutOptions& options) {
  return naming_graph(g, [&] {
    Drawing d = describe(g, {options.folded.begin(), options.folded.end()});
    stop_if_asked(options.stop);
    auto start = std::chrono::steady_clock::now();
    const std::vector<size_t> ranks = layout_ranks(d.layout);
    d.layout.simplified = too_big_for_dot(d.layout, ranks);
    if (!d.layout.simplified.empty()) {
      simple_layout(d.layout, d.box_labels, ranks, options.stop);
    } else {
      DotGraph dot;  // waits for any other layout: look at the flag again once it is our turn
      stop_if_asked(options.stop);
      dot.lay_out(d, options, nullptr);
      dot.read_back(d.layout);
    }
    d.layout.millis = millis_since(start);
    return std::move(d.layout);
  });
}

namespace {

std::string xml_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The SVG of a graph past dot's caps, written from the simple layout: boxes filled by kind with
// their label lines, edges as the layout's splines with an arrowhead. Linear in the graph (dot
// ran for minutes on 100,000 nodes). The caption says the layout is the simple one.
std::string simple_svg(const Drawing& d, const SvgOptions& options) {
  const GraphLayout& l = d.layout;
  const double top = options.title.empty() ? 0 : 40;
  std::string out;
  out.reserve(l.boxes.size() * 220 + l.edges.size() * 120);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                "width=\"%.0fpt\" height=\"%.0fpt\" viewBox=\"0 0 %.1f %.1f\">\n",
                l.width + 16, l.height + top + 16, l.width + 16, l.height + top + 16);
  out += buf;
  if (!options.title.empty())
    out += "<text x=\"8\" y=\"20\" font-family=\"sans-serif\" font-size=\"14\">" +
           xml_text(options.title.substr(0, options.title.find('\n'))) + " - " + xml_text(l.simplified) + "</text>\n";
  out += "<g transform=\"translate(8," + std::to_string(static_cast<int>(top) + 8) + ")\">\n";
  for (const LayoutEdge& e : l.edges) {
    if (e.points.empty()) continue;
    std::snprintf(buf, sizeof buf, "<path fill=\"none\" stroke=\"black\" d=\"M%.1f,%.1f", e.points[0].x, e.points[0].y);
    out += buf;
    for (size_t i = 1; i + 2 < e.points.size(); i += 3) {
      std::snprintf(buf, sizeof buf, " C%.1f,%.1f %.1f,%.1f %.1f,%.1f", e.points[i].x, e.points[i].y,
                    e.points[i + 1].x, e.points[i + 1].y, e.points[i + 2].x, e.points[i + 2].y);
      out += buf;
    }
    if (e.arrow_tip) {
      std::snprintf(buf, sizeof buf, " L%.1f,%.1f", e.arrow_tip->x, e.arrow_tip->y);
      out += buf;
    }
    out += "\"><title>" + xml_text(e.tensor) + "</title></path>\n";
  }
  for (size_t i = 0; i < l.boxes.size(); ++i) {
    const LayoutBox& b = l.boxes[i];
    const bool unsupported = b.node >= 0 && options.unsupported.count(b.name);
    const bool highlight = b.node >= 0 && options.highlight.count(b.name);
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#%06x\" stroke=\"%s\" "
                  "stroke-width=\"%d\"",
                  b.x - b.width / 2, b.y - b.height / 2, b.width, b.height,
                  unsupported ? 0xf4a3a3u : node_kind_rgb(b.kind), highlight || unsupported ? "red" : "black",
                  highlight ? 3 : 1);
    out += buf;
    out += std::string(unsupported ? " class=\"unsupported\"" : highlight ? " class=\"highlight\"" : "") + "><title>" +
           xml_text(unsupported ? options.unsupported.at(b.name) : b.name) + "</title></rect>\n";
    const std::string& label = i < d.box_labels.size() ? d.box_labels[i] : b.name;
    double y = b.y - 3;
    for (size_t at = 0; at <= label.size();) {
      const size_t nl = std::min(label.find('\n', at), label.size());
      std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-family=\"sans-serif\" "
                    "font-size=\"10\">", b.x, y);
      out += buf + xml_text(label.substr(at, nl - at)) + "</text>\n";
      y += 12;
      at = nl + 1;
    }
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace

std::string render_svg(const ir::Graph& g, const SvgOptions& options) {
  return naming_graph(g, [&] {
    Drawing d = describe(g, {});  // the CLI draws every node
    const std::vector<size_t> ranks = layout_ranks(d.layout);
    d.layout.simplified = too_big_for_dot(d.layout, ranks);
    if (!d.layout.simplified.empty()) {
      simple_layout(d.layout, d.box_labels, ranks, options.layout.stop);
      return simple_svg(d, options);
    }
    DotGraph dot;
    dot.lay_out(d, options.layout, &options);
    return dot.render("svg");
  });
}

PassView pass_view(const RunResult& result, const std::string& pass, bool before) {
  if (!result.optimized || !result.model)
    throw Error("pass view of '" + pass + "': the run has no optimized graph");
  const auto& entries = result.optimized->log.entries;
  auto it =
      std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.pass == pass; });
  if (it == entries.end()) {
    std::vector<std::string> names;
    for (const auto& e : entries) names.push_back(e.pass);
    throw Error("unknown pass '" + pass + "' (valid: " + join(names, ", ") + ")");
  }
  if (!it->enabled)
    throw Error("pass '" + pass + "' is switched off in these settings (passes=" +
                result.settings.passes_text() + ")");
  if (!it->snapshot)
    throw Error("pass '" + pass + "' did not change the graph of " + result.settings.model +
                ": nothing to draw");

  PassView view;
  std::set<std::string> touched;
  for (const passes::Rewrite& r : it->rewrites) {
    if (before) {
      touched.insert(r.removed.begin(), r.removed.end());
    } else {
      touched.insert(r.added.begin(), r.added.end());
      touched.insert(r.changed.begin(), r.changed.end());
    }
  }
  if (before) {
    view.graph = &result.model->graph;
    for (auto prev = entries.begin(); prev != it; ++prev)
      if (prev->snapshot) view.graph = &*prev->snapshot;
  } else {
    view.graph = &*it->snapshot;
  }
  // Only what the drawn graph has: a pass that reruns to a fixed point may add and then remove.
  for (const ir::Node& n : view.graph->nodes)
    if (touched.count(n.name)) view.highlight.insert(n.name);
  view.caption = std::string(before ? "before " : "after ") + pass + ": " +
                 std::to_string(view.graph->nodes.size()) + " nodes, " +
                 std::to_string(view.highlight.size()) +
                 (before ? " removed by it (red)" : " added or edited by it (red)");
  return view;
}

namespace {

// What drawing a finished layout needs every frame: edge bounds for culling, box labels.
void finish(LaidOutGraph& e) {
  const GraphLayout& l = *e.layout;
  e.edge_bounds.clear();
  e.edge_bounds.reserve(l.edges.size());
  for (const LayoutEdge& edge : l.edges) {
    double x0 = HUGE_VAL, y0 = HUGE_VAL, x1 = -HUGE_VAL, y1 = -HUGE_VAL;
    auto add = [&](double x, double y) {
      x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
    };
    for (const LayoutPoint& p : edge.points) add(p.x, p.y);
    if (edge.arrow_tip) add(edge.arrow_tip->x, edge.arrow_tip->y);
    if (edge.label_pos) {
      // Room for the label around its centre: about half a point per character, each side.
      const double half_w = 0.35 * kEdgeLabelFontPt * static_cast<double>(edge.label.size());
      add(edge.label_pos->x - half_w, edge.label_pos->y - kEdgeLabelFontPt);
      add(edge.label_pos->x + half_w, edge.label_pos->y + kEdgeLabelFontPt);
    }
    e.edge_bounds.push_back({static_cast<float>(x0 - 2), static_cast<float>(y0 - 2), static_cast<float>(x1 + 2),
                             static_cast<float>(y1 + 2)});
  }
  e.labels.clear();
  e.labels.reserve(l.boxes.size());
  for (const LayoutBox& b : l.boxes) {
    if (b.node >= 0) {
      e.labels.push_back(b.op + "\n" + b.name);
    } else if (b.folded > 0) {
      e.labels.push_back(b.name + "\n" + std::to_string(b.folded) + " nodes");
    } else {
      const std::string shape = e.graph->has_tensor(b.name) ? ir::shape_str(e.graph->tensor(b.name).shape) : "[?]";
      e.labels.push_back(b.name + "\n" + shape);
    }
  }
  e.node_index.clear();
  for (size_t i = 0; i < e.graph->nodes.size() && i < l.box_of_node.size(); ++i)
    e.node_index.emplace(e.graph->nodes[i].name, l.box_of_node[i]);
}

// Lays `graph` out on a detached thread that holds what it reads (the result owning the graph,
// the stop flag), so a cache going away need not wait for it.
std::future<GraphLayout> start_layout(std::shared_ptr<const RunResult> owner,
                                      const ir::Graph& graph, LayoutOptions options,
                                      std::shared_ptr<std::atomic<bool>> stop) {
  std::promise<GraphLayout> promise;
  std::future<GraphLayout> job = promise.get_future();
  std::thread([promise = std::move(promise), owner = std::move(owner), g = &graph, options,
               stop = std::move(stop)]() mutable {
    try {
      promise.set_value(layout_graph(*g, options));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }).detach();
  return job;
}

}  // namespace

LayoutCache::~LayoutCache() {
  // Every job stops at its next check (dot itself cannot be stopped, but gets graphs it lays out
  // in seconds). A job whose result keeps its graph alive holds that itself, so after
  // kShutdownWait it is left to finish on its own thread; one whose graph the caller owns
  // (no owner) is waited for, since the graph goes when we return.
  stop_->store(true);
  const auto deadline = std::chrono::steady_clock::now() + kShutdownWait;
  for (auto& [key, slot] : slots_) {
    if (!slot.job.valid()) continue;
    if (slot.entry->owner)
      slot.job.wait_until(deadline);
    else
      slot.job.wait();
  }
}

std::shared_ptr<const LaidOutGraph> LayoutCache::request(std::shared_ptr<const RunResult> owner,
                                                         const ir::Graph& graph,
                                                         const std::set<std::string>& folded) {
  Slot& slot = slots_[{&graph, folded}];
  if (!slot.entry) {
    const bool labels = (folded.empty() ? graph.nodes.size()
                                        : build_scopes(graph).visible_boxes(folded)) <= kEdgeLabelMaxNodes;
    auto entry = std::make_shared<LaidOutGraph>();
    entry->owner = std::move(owner);
    entry->graph = &graph;
    entry->edge_labels = labels;
    entry->folded = folded;
    LayoutOptions options;
    options.edge_labels = labels;
    options.stop = stop_.get();
    options.folded.assign(folded.begin(), folded.end());
    try {
      // The worker holds its own reference to the result: the graph outlives the job even if
      // the entry is dropped. The graph is immutable, so reading it on both threads is safe.
      slot.job = start_layout(entry->owner, graph, options, stop_);
    } catch (const std::exception& e) {
      entry->error = std::string("could not start the layout: ") + e.what();
    }
    slot.entry = std::move(entry);
  }
  slot.last_used = ++requests_;
  std::shared_ptr<const LaidOutGraph> out = slot.entry;  // `slot` may go with the eviction below
  poll();
  evict(requests_);
  return out;
}

void LayoutCache::poll() {
  // Every finished job, also of graphs no longer asked for, so they can be evicted.
  for (auto& [key, slot] : slots_) {
    if (!slot.job.valid() || slot.job.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
    try {
      slot.entry->layout = slot.job.get();
    } catch (const std::exception& ex) {
      slot.entry->error = ex.what();
      continue;
    }
    finish(*slot.entry);
  }
}

bool LayoutCache::busy() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& kv) { return kv.second.job.valid(); });
}

void LayoutCache::evict(uint64_t now) {
  while (slots_.size() > capacity_) {
    auto victim = slots_.end();
    for (auto it = slots_.begin(); it != slots_.end(); ++it) {
      const Slot& s = it->second;
      // A running job still has its layout to deliver to the entry: let it finish first.
      if (s.job.valid() || s.last_used == now || s.entry.use_count() > 1) continue;
      if (victim == slots_.end() || s.last_used < victim->second.last_used) victim = it;
    }
    if (victim == slots_.end()) return;
    slots_.erase(victim);
  }
}

}  // namespace fusebox::workbench
