#pragma once
// The graph panel: the current result's graph as Graphviz laid it out (boxes coloured by kind,
// Bezier edges labelled with shapes), with pan, zoom, hover tooltips and click-to-select, a view
// picker for the graph before or after any pass that changed it (the nodes that pass touched
// outlined in red), and beside it the rewrites and near misses that explain the picture (a
// column that folds away; hidden by default on a panel narrower than kLogAutoMinWidth).
//
// A graph you can read: the default view never zooms below workbench::kReadableZoom (labels at
// 10 px); a graph bigger than the canvas opens at its top with a minimap in the corner (click or
// drag it to move). The wheel zooms by 1.15x a notch around the cursor. Name scopes
// ("layer3", "/0/self_attn") fold into one box with their node count: a graph of more than
// workbench::kFoldAboveNodes nodes starts folded (workbench::default_folds); clicking a folded
// box unfolds it, right-clicking a node offers its scopes to fold. Ctrl+F searches node names
// and ops: matches outlined, Enter selects the next (unfolding its scope).
//
// A .onnx file the importer refused for its ops is drawn anyway, from the file (its outline,
// refused_model.h), while that refusal is the last run's error: the unsupported nodes filled red
// with an "unsupported" badge, the caption "refused: ... - drawn from the file, not run", and the
// rewrites column listing what would not import. Nothing of it ran; the other panels keep the
// last good result (or their empty state) under the one error banner.
//
// Layouts run off the UI thread in the App's workbench::LayoutCache (a 1,000-node graph takes a
// few hundred ms in dot), which App::idle() consults; the panel shows "laying out N nodes..."
// until one is ready.
//
//   graph.view=final | <pass> | <pass>:before | <pass>:after
//   graph.zoom=fit | <number>   (1 = 100%)
//   graph.fold=<scope> | auto    graph.unfold=<scope> | all
//   graph.find=<text>            (again: the next match; empty: closes the search)
//   graph.rewrites=show | hide | auto
#include <imgui.h>
#include <imgui_internal.h>  // ImRect

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"
#include "app/workbench/graph_layout.h"
#include "app/workbench/graph_scopes.h"
#include "app/workbench/graph_viewport.h"
#include "app/workbench/refused_model.h"
#include "app/workbench/run_result.h"
#include "core/ir/graph.h"

namespace fusebox::ui {

struct GraphPanel {
  // Draws the current result's graph, laid out by frame.layouts (the App's cache).
  void draw(const Frame& frame);
  // A "graph.<key>=<value>" switch (the App strips "graph."). Returns "" or an error sentence
  // naming the key and the valid values. `result` (may be null) validates pass names.
  std::string command(const std::string& key, const std::string& value,
                      const workbench::RunResult* result);
  // The same switches as a table: the App's dispatch, help and "waits for the run" come from it.
  std::vector<PanelSwitch> switches();
  // A command changed what the panel draws and the next frame has not drawn it yet (a fold's
  // new layout not asked for, a search jump not made, a graph.view not resolved into a graph
  // whose layout is asked for): App::idle() waits for it.
  bool settling() const {
    const bool view_changed =
        view_.result && (view_.pass != view_pass_ || view_.before != view_before_);
    return folds_changed_ || jump_pending_ || view_changed;
  }

  // What the last frame drew, in screen coordinates (tests assert on it).
  struct Drawn {
    size_t boxes = 0;  // boxes and edges drawn (inside the visible rect)
    size_t edges = 0;
    bool layout_pending = false;  // "laying out N nodes..." shown instead of the graph
    std::optional<ImRect> selected_box;     // when the selected node is on screen
    std::vector<ImRect> highlighted_boxes;  // the pass view's highlight nodes on screen
    std::string caption;  // "final graph: 42 nodes", the pass view's, or an error; and the
                          // layout's note: " - 12000 nodes: simple layout (...)"
    size_t layout_boxes = 0;  // boxes in the layout shown (on screen or not)
    size_t folds = 0;         // of them, folded scopes
    float zoom = 0;           // pixels per layout point
    std::optional<ImRect> minimap;  // drawn when the graph is bigger than the canvas
    std::optional<ImRect> minimap_view;  // the canvas's outline inside it
    bool log_shown = false;   // the rewrites column
    size_t search_matches = 0;  // nodes matching the search (0 when closed)
    std::vector<ImRect> search_boxes;  // their outlines on screen (a fold's once)
    // A refused model's outline is shown (refused_model.h): its unsupported nodes on screen,
    // filled red with an "unsupported" badge.
    bool refused = false;
    std::vector<ImRect> unsupported_boxes;
  } drawn;
  // The scopes folded now (paths), for tests and the help.
  const std::set<std::string>& folded() const { return folded_; }

 private:
  using Entry = workbench::LaidOutGraph;
  // The pan and zoom of a graph not shown now, kept while its layout is cached.
  struct SavedView {
    ImVec2 pan{0, 0};
    float zoom = 1;
  };
  // Where the canvas is this frame, and how layout points map onto it.
  struct Canvas {
    ImRect rect;
    ImVec2 size;
    bool hovered = false, active = false, dragged = false;
  };

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

  // The result whose graph is drawn: the refused model's outline while the last run's error is
  // a refusal (refused_model.h), else the last good result.
  std::shared_ptr<const workbench::RunResult> shown(const Frame& frame) const;
  void resolve_view(const Frame& frame);
  void show(const std::shared_ptr<const Entry>& entry, ImVec2 canvas_size);
  void draw_toolbar(const Frame& frame);
  void draw_placeholder(const Entry* entry, ImVec2 canvas_size);
  void draw_canvas(const Frame& frame, const Entry& entry, ImVec2 size);
  Canvas canvas_input(const Frame& frame, const Entry& entry, ImVec2 size);
  std::optional<size_t> follow_selection(const Frame& frame, const Entry& entry, const Canvas& canvas);
  void draw_edges(ImDrawList* dl, const Entry& entry, const Canvas& canvas, const ImRect& visible,
                  std::optional<size_t> selected);
  void draw_boxes(ImDrawList* dl, const Entry& entry, const Canvas& canvas, const ImRect& visible);
  void draw_unsupported(ImDrawList* dl, const ImRect& r);
  void draw_outlines(const Frame& frame, ImDrawList* dl, const Entry& entry, const Canvas& canvas,
                     const ImRect& visible, std::optional<size_t> selected);
  void draw_log(const Frame& frame, const Entry* entry, ImVec2 size);
  void fit(const Entry& entry, ImVec2 canvas);
  void zoom_around(float new_zoom, ImVec2 anchor);  // anchor relative to the canvas origin
  workbench::Viewport viewport() const { return {zoom_, pan_.x, pan_.y}; }
  void set_viewport(const workbench::Viewport& v);
  void update_scopes(const Frame& frame);
  std::string fold(const std::string& value, const workbench::RunResult* result, bool unfold);
  void draw_search(const Frame& frame);
  void search_jump(const Frame& frame);
  void draw_minimap(ImDrawList* dl, const Entry& entry, const Canvas& canvas);
  void fold_menu(const Frame& frame);

  // The view picked ("" = the final graph).
  std::string view_pass_;
  bool view_before_ = false;
  ViewState view_;

  // Pan (canvas pixels) and zoom (pixels per layout point) of the graph on screen.
  ImVec2 pan_{0, 0};
  float zoom_ = 1;
  bool fit_requested_ = false;
  std::optional<float> zoom_requested_;

  std::shared_ptr<const Entry> shown_;  // the layout pan_ and zoom_ belong to
  std::map<std::weak_ptr<const Entry>, SavedView, std::owner_less<>> saved_views_;
  std::string last_selection_;  // the selection the view last reacted to
  std::optional<size_t> hovered_box_;
  std::vector<std::string> log_hover_nodes_;  // nodes of the rewrite hovered last frame
  const workbench::RefusedModel* refused_ = nullptr;  // this frame's refusal drawn, or null

  // Folding: the scopes of the graph shown, and which are folded. Until the user folds or
  // unfolds (user_folds_), each new graph gets default_folds; after, the folds that still exist
  // carry over to the next run of the same model.
  const ir::Graph* scopes_graph_ = nullptr;
  workbench::ScopeTree scopes_;
  std::set<std::string> folded_;
  bool user_folds_ = false;
  std::string folds_model_;  // the model the folds belong to
  bool folds_changed_ = false;
  std::string recenter_node_;  // after a relayout, centre on this node's box
  std::string context_node_;   // the node right-clicked (the fold menu)

  // Search (Ctrl+F).
  bool search_open_ = false;
  bool search_focus_ = false;  // give the box the keyboard next frame
  char search_buf_[256] = {};
  std::string search_query_;     // what the matches are of
  const ir::Graph* search_graph_ = nullptr;
  std::vector<size_t> search_matches_;  // node indices of the graph shown
  int search_index_ = -1;               // the match jumped to last
  bool jump_pending_ = false;

  std::optional<bool> show_log_;  // graph.rewrites: show / hide; unset: by the panel's width
  std::optional<workbench::Minimap> minimap_;  // this frame's, canvas-relative
  bool minimap_drag_ = false;
};

}  // namespace fusebox::ui
