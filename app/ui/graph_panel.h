#pragma once
// The graph panel: the current result's graph as Graphviz laid it out (boxes coloured by kind,
// Bezier edges labelled with shapes), with pan, zoom, hover tooltips and click-to-select, a view
// picker for the graph before or after any pass that changed it (the nodes that pass touched
// outlined in red), and beside it the rewrites and near misses that explain the picture.
//
// Layouts run off the UI thread (a 1,000-node graph takes a few hundred ms in dot) and are cached
// per graph; the panel shows "laying out N nodes..." until one is ready.
//
//   graph.view=final | <pass> | <pass>:before | <pass>:after
//   graph.zoom=fit | <number>   (1 = 100%)
#include <imgui.h>
#include <imgui_internal.h>  // ImRect

#include <cstddef>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "app/ui/panel.h"
#include "app/workbench/graph_layout.h"
#include "app/workbench/run_result.h"
#include "core/ir/graph.h"

namespace fusebox::ui {

struct GraphPanel {
  GraphPanel() = default;
  ~GraphPanel();  // waits for the layouts still running
  GraphPanel(const GraphPanel&) = delete;
  GraphPanel& operator=(const GraphPanel&) = delete;

  void draw(const Frame& frame);
  // A "graph.<key>=<value>" switch (the App strips "graph."). Returns "" or an error sentence
  // naming the key and the valid values. `result` (may be null) validates pass names.
  std::string command(const std::string& key, const std::string& value,
                      const workbench::RunResult* result);

  // What the last frame drew, in screen coordinates (tests assert on it).
  struct Drawn {
    size_t boxes = 0;  // boxes and edges drawn (inside the visible rect)
    size_t edges = 0;
    bool layout_pending = false;  // "laying out N nodes..." shown instead of the graph
    std::optional<ImRect> selected_box;     // when the selected node is on screen
    std::vector<ImRect> highlighted_boxes;  // the pass view's highlight nodes on screen
    std::string caption;                    // "final graph: 42 nodes", the pass view's, or an error
  } drawn;

 private:
  // One graph's layout, running or done. Touched only on the UI thread; the worker only fills
  // the future, so the future is the one synchronisation point.
  struct LayoutEntry {
    std::shared_ptr<const workbench::RunResult> owner;  // keeps `graph` alive
    const ir::Graph* graph = nullptr;
    bool edge_labels = false;
    std::future<workbench::GraphLayout> job;  // valid while the worker runs (or is unread)
    std::optional<workbench::GraphLayout> layout;
    std::string error;                        // the layout failed
    std::vector<ImRect> edge_bounds;          // layout coordinates, for culling
    std::vector<std::string> labels;          // the two lines of each box, "\n" between
    std::unordered_map<std::string, size_t> node_index;  // node name -> box
    uint64_t last_used = 0;
    // The view of this graph, kept while another one is shown.
    bool shown = false;
    ImVec2 pan{0, 0};
    float zoom = 1;

    bool running() const { return job.valid(); }
  };
  using LayoutKey = std::pair<const ir::Graph*, bool>;  // graph, edge labels

  // The graph picked by the view, and what to say about it.
  struct ViewState {
    std::shared_ptr<const workbench::RunResult> result;
    std::string pass;
    bool before = false;
    const ir::Graph* graph = nullptr;
    std::vector<std::string> highlight;  // node names (PassView::highlight)
    std::string caption;
    std::string error;
  };

  void resolve_view(const Frame& frame);
  std::shared_ptr<LayoutEntry> layout_for(const Frame& frame, const ir::Graph& graph);
  void evict_layouts();
  void draw_toolbar(const Frame& frame);
  void draw_canvas(const Frame& frame, LayoutEntry& entry, ImVec2 size);
  void draw_log(const Frame& frame, const LayoutEntry* entry, ImVec2 size);
  void fit(const LayoutEntry& entry, ImVec2 canvas);
  void zoom_around(float new_zoom, ImVec2 anchor);  // anchor relative to the canvas origin

  // The view picked ("" = the final graph).
  std::string view_pass_;
  bool view_before_ = false;
  ViewState view_;

  // Pan (canvas pixels) and zoom (pixels per layout point) of the graph on screen.
  ImVec2 pan_{0, 0};
  float zoom_ = 1;
  bool fit_requested_ = false;
  std::optional<float> zoom_requested_;

  std::map<LayoutKey, std::shared_ptr<LayoutEntry>> layouts_;
  std::shared_ptr<LayoutEntry> shown_;  // the entry pan_ and zoom_ belong to
  uint64_t frame_counter_ = 0;
  std::string last_selection_;  // the selection the view last reacted to
  std::optional<size_t> hovered_box_;
  std::vector<std::string> log_hover_nodes_;  // nodes of the rewrite hovered last frame
};

}  // namespace fusebox::ui
