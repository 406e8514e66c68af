#include "app/ui/graph_panel.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string_view>

#include <GLFW/glfw3.h>  // key codes: the ImGui GLFW backend's key indices are GLFW's

#include "app/ui/widgets.h"
#include "app/workbench/graph_layout.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/exec/stages.h"
#include "core/ir/dtype.h"
#include "core/ir/node.h"
#include "core/ir/shape.h"
#include "core/passes/pass_manager.h"

namespace fusebox::ui {

namespace {

constexpr float kMinZoom = static_cast<float>(workbench::kMinZoom);
constexpr float kMaxZoom = static_cast<float>(workbench::kMaxZoom);
constexpr float kFitMargin = static_cast<float>(workbench::kFitMargin);
// Font sizes graph_layout gives dot, in points: boxes were sized for text this big.
constexpr float kNodeFontPt = 10;
constexpr float kIoFontPt = 9;
constexpr float kEdgeFontPt = static_cast<float>(workbench::kEdgeLabelFontPt);
constexpr float kMinTextPx = 6;  // smaller text is noise, and costs a lot at 1,000 boxes
constexpr float kMinEdgeLabelPx = 7;
constexpr float kTextPaddingPt = 4;  // inside a box, each side
constexpr float kSelectionThickness = 4;
constexpr float kHighlightThickness = 3.5f;
constexpr float kSideBySideMinWidth = 480;  // narrower panels put the rewrites below the graph
constexpr float kLogFraction = 0.3f;
// graph.rewrites=auto shows the rewrites column on panels at least this wide: narrower, it
// takes room the graph needs (the toolbar's button brings it back).
constexpr float kLogAutoMinWidth = 900;
constexpr float kSearchWidth = 170;

constexpr ImU32 kCanvasColor = IM_COL32(30, 32, 36, 255);
constexpr ImU32 kEdgeColor = IM_COL32(150, 156, 168, 255);
constexpr ImU32 kEdgeLabelColor = IM_COL32(175, 180, 190, 255);
constexpr ImU32 kBoxBorderColor = IM_COL32(45, 45, 45, 255);
constexpr ImU32 kFusedBorderColor = IM_COL32(165, 70, 0, 255);
constexpr ImU32 kBoxTextColor = IM_COL32(20, 20, 20, 255);
constexpr ImU32 kHoverColor = IM_COL32(255, 255, 255, 255);
constexpr ImU32 kLogHoverColor = IM_COL32(60, 200, 255, 255);  // nodes of the hovered log line
constexpr ImU32 kNearMissColor = IM_COL32(225, 185, 95, 255);
constexpr ImU32 kSearchColor = IM_COL32(255, 70, 230, 255);     // search matches
constexpr ImU32 kFoldBackColor = IM_COL32(150, 120, 160, 255);  // the card behind a fold
constexpr ImU32 kMinimapBackColor = IM_COL32(15, 16, 20, 225);
constexpr ImU32 kMinimapViewColor = IM_COL32(255, 255, 255, 220);
// A refused model's node fusebox does not import: filled pale red (graph_layout's SVG uses the
// same), a red border and badge.
constexpr ImU32 kUnsupportedFill = IM_COL32(244, 166, 166, 255);
constexpr ImU32 kUnsupportedColor = IM_COL32(220, 30, 30, 255);
constexpr float kBadgeFontPt = 8;

ImVec2 add(ImVec2 a, ImVec2 b) {
  return ImVec2(a.x + b.x, a.y + b.y);
}
ImVec2 sub(ImVec2 a, ImVec2 b) {
  return ImVec2(a.x - b.x, a.y - b.y);
}
ImVec2 scale(ImVec2 a, float s) {
  return ImVec2(a.x * s, a.y * s);
}

void issue(const Frame& frame, const std::string& command) {
  if (frame.command) frame.command(command);
}

// Layout coordinates (points) to screen pixels and back.
struct Transform {
  ImVec2 origin;  // screen position of the layout's (0, 0)
  float zoom = 1;

  ImVec2 to_screen(double x, double y) const {
    return ImVec2(origin.x + static_cast<float>(x) * zoom, origin.y + static_cast<float>(y) * zoom);
  }
  ImVec2 to_screen(const workbench::LayoutPoint& p) const { return to_screen(p.x, p.y); }
  ImVec2 to_layout(ImVec2 s) const {
    return ImVec2((s.x - origin.x) / zoom, (s.y - origin.y) / zoom);
  }
  ImRect box(const workbench::LayoutBox& b) const {
    return ImRect(to_screen(b.x - b.width / 2, b.y - b.height / 2),
                  to_screen(b.x + b.width / 2, b.y + b.height / 2));
  }
};

ImRect layout_rect(const workbench::LayoutBox& b) {
  return ImRect(static_cast<float>(b.x - b.width / 2), static_cast<float>(b.y - b.height / 2),
                static_cast<float>(b.x + b.width / 2), static_cast<float>(b.y + b.height / 2));
}

// Passes whose log entry changed the graph: the ones with a before and an after to draw.
std::vector<std::string> changed_passes(const workbench::RunResult* result) {
  std::vector<std::string> passes;
  if (!result || !result->optimized) return passes;
  for (const passes::PassLogEntry& e : result->optimized->log.entries)
    if (e.enabled && e.changed) passes.push_back(e.pass);
  return passes;
}

std::string valid_views(const std::vector<std::string>& passes) {
  std::string text = "final";
  for (const std::string& p : passes) text += ", " + p + "[:before|:after]";
  if (passes.empty()) text += "; no pass changed the graph";
  return text;
}

// "x  [1,64,256] f32", for tooltips.
std::string tensor_line(const ir::Graph& g, const std::string& tensor) {
  if (tensor.empty()) return "(none)";
  if (!g.has_tensor(tensor)) return tensor + "  [?]";
  const ir::TensorInfo& info = g.tensor(tensor);
  return tensor + "  " + ir::shape_str(info.shape) + " " + ir::dtype_name(info.dtype);
}

void tensor_section(const ir::Graph& g, const char* title, const std::vector<std::string>& names) {
  if (names.empty()) return;
  ImGui::TextDisabled("%s", title);
  for (const std::string& n : names) ImGui::Text("  %s", tensor_line(g, n).c_str());
}

void box_tooltip(const ir::Graph& g, const workbench::LayoutBox& b, const std::string& selected,
                 const workbench::RefusedModel* refused) {
  ImGui::BeginTooltip();
  if (refused && b.node >= 0)
    if (auto it = refused->unsupported.find(b.name); it != refused->unsupported.end())
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kErrorColor), "unsupported: %s", it->second.c_str());
  if (b.folded > 0) {
    ImGui::Text("scope %s: %zu nodes, folded", b.name.c_str(), b.folded);
    if (!selected.empty() && selected.starts_with(b.name))
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kSelectionColor), "holds the selected node %s",
                         selected.c_str());
    ImGui::TextDisabled("click to unfold (graph.unfold=%s)", b.name.c_str());
  } else if (b.node >= 0 && static_cast<size_t>(b.node) < g.nodes.size()) {
    const ir::Node& n = g.nodes[static_cast<size_t>(b.node)];
    ImGui::Text("%s  %s", n.op.c_str(), n.name.c_str());
    ImGui::TextDisabled("kind: %s", workbench::node_kind_name(b.kind));
    ImGui::Separator();
    std::vector<std::string> activations;
    for (const std::string& in : n.inputs)
      if (std::find(b.weights.begin(), b.weights.end(), in) == b.weights.end())
        activations.push_back(in);
    tensor_section(g, "inputs", activations);
    tensor_section(g, "weights", b.weights);
    tensor_section(g, "outputs", n.outputs);
    if (const std::string attrs = n.attrs.to_string(); !attrs.empty())
      ImGui::TextDisabled("attributes: %s", attrs.c_str());
    ImGui::TextDisabled(refused ? "click to select (drawn from the file: nothing ran)" : "click to select");
  } else {
    ImGui::Text("graph %s  %s", b.op.c_str(), b.name.c_str());
    ImGui::Text("  %s", tensor_line(g, b.name).c_str());
  }
  ImGui::EndTooltip();
}

void legend_tooltip() {
  using workbench::NodeKind;
  ImGui::BeginTooltip();
  for (NodeKind kind : {NodeKind::MatMul, NodeKind::Conv, NodeKind::Fused, NodeKind::Elementwise,
                        NodeKind::Normalization, NodeKind::Layout, NodeKind::Other, NodeKind::Input,
                        NodeKind::Output, NodeKind::Scope}) {
    const ImVec4 color = ImGui::ColorConvertU32ToFloat4(rgb(workbench::node_kind_rgb(kind)));
    const float side = ImGui::GetTextLineHeight();
    ImGui::ColorButton(workbench::node_kind_name(kind), color,
                       ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoPicker,
                       ImVec2(side, side));
    ImGui::SameLine();
    ImGui::TextUnformatted(workbench::node_kind_name(kind));
  }
  ImGui::Separator();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kFusedBorderColor),
                     "dark border + corner mark: fused by a pass");
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kHighlightColor),
                     "red outline: what the pass shown touched");
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kUnsupportedColor),
                     "red fill + badge: an op fusebox does not import (a refused model)");
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kSelectionColor), "yellow outline: selected");
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kLogHoverColor),
                     "blue outline: nodes of the hovered rewrite");
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kSearchColor), "pink outline: search matches");
  ImGui::TextDisabled("drag: pan   wheel: zoom (1.15x a notch)   double-click: fit");
  ImGui::TextDisabled("minimap (graphs bigger than the view): click or drag to move");
  ImGui::TextDisabled("ctrl+f: search, enter: next match");
  ImGui::TextDisabled("click a scope box: unfold   right-click a node: fold its scope");
  ImGui::EndTooltip();
}

void dim_wrapped(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, kTextDim);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

// A wrapped, clickable line of the rewrite log. The caller pushes an ID.
bool log_line(const std::string& text, ImU32 color, bool selected, bool* hovered) {
  const float wrap = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  const ImVec2 size = ImGui::CalcTextSize(text.c_str(), nullptr, false, wrap);
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const bool clicked = ImGui::Selectable("##line", selected, 0, ImVec2(0, size.y));
  *hovered = ImGui::IsItemHovered();
  ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize(), pos, color,
                                      text.c_str(), nullptr, wrap);
  return clicked;
}

// The two lines of a box, centred, shrunk to fit its width; nothing when they would be too small.
void box_text(ImDrawList* dl, const ImRect& r, const std::string& label, float font_size,
              float padding) {
  if (font_size < kMinTextPx) return;
  ImFont* font = ImGui::GetFont();
  const size_t newline = label.find('\n');
  const std::string_view all(label);
  const std::string_view lines[2] = {all.substr(0, newline), newline == std::string::npos
                                                                 ? std::string_view()
                                                                 : all.substr(newline + 1)};
  float widest = 0;
  for (std::string_view line : lines)
    widest = std::max(
        widest,
        font->CalcTextSizeA(font_size, FLT_MAX, 0, line.data(), line.data() + line.size()).x);
  const float room = r.GetWidth() - 2 * padding;
  if (widest > room && widest > 0) font_size *= room / widest;
  font_size = std::min(font_size, r.GetHeight() / 2);
  if (font_size < kMinTextPx) return;
  const ImVec4 clip(r.Min.x, r.Min.y, r.Max.x, r.Max.y);
  const ImVec2 centre = r.GetCenter();
  float y = centre.y - font_size;  // two lines of font_size each
  for (std::string_view line : lines) {
    const float w =
        font->CalcTextSizeA(font_size, FLT_MAX, 0, line.data(), line.data() + line.size()).x;
    dl->AddText(font, font_size, ImVec2(centre.x - w / 2, y), kBoxTextColor, line.data(),
                line.data() + line.size(), 0, &clip);
    y += font_size;
  }
}

// An outline on the box's edge, at least `min_side` pixels across so it shows on tiny boxes.
void outline(ImDrawList* dl, const ImRect& r, ImU32 color, float thickness, float min_side = 6) {
  ImRect o = r;
  const ImVec2 c = r.GetCenter();
  if (o.GetWidth() < min_side) o.Min.x = c.x - min_side / 2, o.Max.x = c.x + min_side / 2;
  if (o.GetHeight() < min_side) o.Min.y = c.y - min_side / 2, o.Max.y = c.y + min_side / 2;
  dl->AddRect(o.Min, o.Max, color, 0, 0, thickness);
}

// The rewrite log's lines for one frame: a click selects the line's node, hovering outlines its
// nodes in the graph (collected in hover_nodes, drawn next frame).
struct LogLines {
  const Frame& frame;
  const workbench::LaidOutGraph* entry;
  bool before;  // the view is a pass's "before": a rewrite's removed nodes are the ones shown
  std::vector<std::string> hover_nodes;

  bool in_graph(const std::string& node) const {
    return entry && !node.empty() && entry->node_index.count(node) != 0;
  }
  void rewrite(const passes::Rewrite& r);
  void near_miss(const passes::NearMiss& m);
  void pass_lines(const passes::PassLogEntry& e);
};

void LogLines::rewrite(const passes::Rewrite& r) {
  // The nodes it touched that the drawn graph has: what it made (after), what it took (before).
  std::vector<std::string> nodes;
  if (before) {
    nodes = r.removed;
  } else {
    nodes = r.added;
    nodes.insert(nodes.end(), r.changed.begin(), r.changed.end());
  }
  std::erase_if(nodes, [&](const std::string& n) { return !in_graph(n); });
  const std::string target = nodes.empty() ? std::string() : nodes.front();
  bool hovered = false;
  const bool clicked =
      log_line(r.text, nodes.empty() ? kTextDim : ImGui::GetColorU32(ImGuiCol_Text),
               !target.empty() && target == frame.selection.node, &hovered);
  if (hovered) {
    hover_nodes = nodes;
    std::string tip = "pattern: " + r.pattern;
    if (!r.removed.empty()) tip += "\nremoved: " + join(r.removed, ", ");
    if (!r.added.empty()) tip += "\nadded: " + join(r.added, ", ");
    if (!r.changed.empty()) tip += "\nedited: " + join(r.changed, ", ");
    tip += nodes.empty() ? "\n(none of its nodes is in the graph shown)"
                         : "\nclick to select " + target;
    ImGui::SetTooltip("%s", tip.c_str());
  }
  if (clicked && !target.empty()) issue(frame, "select=" + target);
}

void LogLines::near_miss(const passes::NearMiss& m) {
  const bool here = in_graph(m.node);
  bool hovered = false;
  const bool clicked = log_line("near miss: " + m.text, here ? kNearMissColor : kTextDim,
                                here && m.node == frame.selection.node, &hovered);
  if (hovered) {
    if (here) hover_nodes = {m.node};
    std::string tip = "pattern: " + m.pattern;
    if (!m.node.empty()) tip += "\nnode: " + m.node;
    tip += here ? "\nclick to select it" : "\n(its node is not in the graph shown)";
    ImGui::SetTooltip("%s", tip.c_str());
  }
  if (clicked && here) issue(frame, "select=" + m.node);
}

void LogLines::pass_lines(const passes::PassLogEntry& e) {
  for (size_t i = 0; i < e.rewrites.size(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    rewrite(e.rewrites[i]);
    ImGui::PopID();
  }
  for (size_t i = 0; i < e.near_misses.size(); ++i) {
    ImGui::PushID(static_cast<int>(e.rewrites.size() + i));
    near_miss(e.near_misses[i]);
    ImGui::PopID();
  }
}

}  // namespace

std::string GraphPanel::command(const std::string& key, const std::string& value,
                                const workbench::RunResult* result) {
  return run_switch("graph", switches(), key, value, result);
}

std::vector<PanelSwitch> GraphPanel::switches() {
  return {
      {"view",
       {},
       "final | <pass> | <pass>:before | <pass>:after",
       "the final graph, or the graph before or after a pass that changed it",
       [this](const std::string& value, const workbench::RunResult* result) -> std::string {
         const std::vector<std::string> passes = changed_passes(result);
         if (value == "final") {
           view_pass_.clear();
           view_before_ = false;
           return "";
         }
         std::string pass = value;
         bool before = false;
         if (const size_t colon = value.rfind(':'); colon != std::string::npos) {
           const std::string side = value.substr(colon + 1);
           pass = value.substr(0, colon);
           if (side == "before") {
             before = true;
           } else if (side != "after") {
             return "'" + value +
                    "' should end in :before or :after (valid: " + valid_views(passes) + ")";
           }
         }
         if (pass.empty())
           return "no pass named in '" + value + "' (valid: " + valid_views(passes) + ")";
         // Without a log (no result yet) the pass is taken on trust; the draw shows pass_view's
         // error.
         if (result && result->optimized &&
             std::find(passes.begin(), passes.end(), pass) == passes.end()) {
           std::string why = "is not a pass";
           for (const passes::PassLogEntry& e : result->optimized->log.entries)
             if (e.pass == pass) why = e.enabled ? "did not change the graph" : "is switched off";
           return "'" + pass + "' " + why + " (valid: " + valid_views(passes) + ")";
         }
         view_pass_ = pass;
         view_before_ = before;
         return "";
       }},
      {"zoom",
       {},
       "fit | <number> | <percent>%",
       "fit the graph in the panel, or zoom to a factor (1 = 100%)",
       [this](const std::string& value, const workbench::RunResult*) -> std::string {
         if (value == "fit") {
           fit_requested_ = true;
           zoom_requested_.reset();
           return "";
         }
         const bool percent = !value.empty() && value.back() == '%';
         double zoom = 0;
         try {
           zoom = parse_double(percent ? value.substr(0, value.size() - 1) : value, "graph.zoom");
         } catch (const Error&) {
           return "'" + value + "' is not a number (valid: fit, or a zoom such as 1 = 100%)";
         }
         if (percent) zoom /= 100;
         if (!(zoom >= kMinZoom && zoom <= kMaxZoom)) {
           char range[96];
           std::snprintf(range, sizeof range, "from %g to %g", kMinZoom, kMaxZoom);
           return value + " is out of range (valid: fit, or a zoom " + range + ", 1 = 100%)";
         }
         zoom_requested_ = static_cast<float>(zoom);
         return "";
       }},
      {"fold",
       {},
       "<scope> | auto",
       "fold a name scope (layer3, /0/self_attn) into one box; auto: the default folds",
       [this](const std::string& value, const workbench::RunResult* result) {
         return fold(value, result, false);
       }},
      {"unfold",
       {},
       "<scope> | all",
       "unfold a folded scope (and the folded ones around it), or every scope",
       [this](const std::string& value, const workbench::RunResult* result) {
         return fold(value, result, true);
       }},
      {"find",
       {},
       "<text>",
       "search node names and ops: outline the matches and select the next one (empty: close)",
       [this](const std::string& value, const workbench::RunResult*) -> std::string {
         if (value.empty()) {
           search_open_ = false;
           search_query_.clear();
           search_buf_[0] = 0;
           search_index_ = -1;
           return "";
         }
         if (value != search_query_) search_index_ = -1;
         search_query_ = value;
         std::snprintf(search_buf_, sizeof search_buf_, "%s", value.c_str());
         search_open_ = true;
         search_graph_ = nullptr;  // match again
         jump_pending_ = true;
         return "";
       }},
      {"rewrites",
       {"show", "hide", "auto"},
       "",
       "the rewrites column beside the graph; auto: shown on panels at least 900 px wide",
       [this](const std::string& value, const workbench::RunResult*) -> std::string {
         if (value == "auto") show_log_.reset();
         else show_log_ = value == "show";
         return "";
       },
       false},
  };
}

// Scopes listed in an error: the top ones, a few.
static std::string some_scopes(const workbench::ScopeTree& t) {
  std::vector<std::string> names;
  for (size_t s : t.top) {
    if (names.size() == 8) {
      names.push_back("...");
      break;
    }
    names.push_back(t.scopes[s].path);
  }
  return names.empty() ? "the node names carry no scopes" : "scopes: " + join(names, ", ");
}

std::string GraphPanel::fold(const std::string& value, const workbench::RunResult* result,
                             bool unfold) {
  // The scopes of the graph on screen; before the first frame, of the result's graph.
  if (!scopes_graph_ && result) {
    scopes_graph_ = &result->graph();
    scopes_ = workbench::build_scopes(*scopes_graph_);
    folds_model_ = result->settings.model;
  }
  if (!unfold && value == "auto") {
    folded_ = workbench::default_folds(scopes_);
    user_folds_ = false;
    folds_changed_ = true;
    return "";
  }
  if (unfold && value == "all") {
    folded_.clear();
    user_folds_ = true;
    folds_changed_ = true;
    return "";
  }
  const std::optional<size_t> found = scopes_.find(value);
  if (!found) {
    std::string msg = "no scope '" + value + "' in the graph shown (" + some_scopes(scopes_) + ")";
    return msg;
  }
  const workbench::Scope& scope = scopes_.scopes[*found];
  if (!unfold) {
    if (scope.nodes < 2) return "'" + value + "' holds one node: nothing to fold";
    folded_.insert(value);
  } else {
    // The scope and every folded one around it, so its nodes show.
    bool any = false;
    for (int s = static_cast<int>(*found); s >= 0; s = scopes_.scopes[static_cast<size_t>(s)].parent)
      any |= folded_.erase(scopes_.scopes[static_cast<size_t>(s)].path) > 0;
    if (!any)
      return "'" + value + "' is not folded" +
             (folded_.empty() ? std::string(" (nothing is)")
                              : " (folded: " + join(std::vector<std::string>(folded_.begin(), folded_.end()), ", ") + ")");
  }
  user_folds_ = true;
  folds_changed_ = true;
  // Keep the place: centre on the scope's first node, folded or not.
  for (size_t i = 0; i < scopes_.node_scope.size() && scopes_graph_; ++i) {
    const std::vector<size_t> chain = scopes_.chain_of(i);
    if (std::find(chain.begin(), chain.end(), *found) != chain.end()) {
      recenter_node_ = scopes_graph_->nodes[i].name;
      break;
    }
  }
  return "";
}

// The scope tree of the graph shown, and its folds: defaults for a new model (or until the user
// folds), the user's folds that still exist otherwise.
void GraphPanel::update_scopes(const Frame& frame) {
  if (view_.graph == scopes_graph_ || !view_.graph) return;
  scopes_graph_ = view_.graph;
  scopes_ = workbench::build_scopes(*view_.graph);
  const std::string& model = shown(frame)->settings.model;
  if (model != folds_model_) user_folds_ = false;
  folds_model_ = model;
  if (user_folds_) {
    std::erase_if(folded_, [&](const std::string& path) { return !scopes_.find(path); });
  } else {
    folded_ = workbench::default_folds(scopes_);
  }
}

std::shared_ptr<const workbench::RunResult> GraphPanel::shown(const Frame& frame) const {
  return refused_ ? refused_->drawing : frame.snap.result;
}

void GraphPanel::resolve_view(const Frame& frame) {
  const auto result = shown(frame);
  if (view_.result == result && view_.pass == view_pass_ && view_.before == view_before_) return;
  ViewState v;
  v.result = result;
  v.pass = view_pass_;
  v.before = view_before_;
  if (refused_) {
    // No pass ran on it, so there is only the file's graph to draw, whatever view was picked.
    v.graph = &result->model->graph;
    v.caption = refused_->caption;
  } else if (view_pass_.empty()) {
    if (result->optimized) {
      v.graph = &result->optimized->graph;
      v.caption = "final graph: " + std::to_string(v.graph->nodes.size()) + " nodes";
    } else if (result->model) {
      v.graph = &result->model->graph;
      v.caption = "graph as loaded (the run stopped before optimize): " +
                  std::to_string(v.graph->nodes.size()) + " nodes";
    } else {
      v.error = "this result has no graph";
    }
  } else {
    try {
      workbench::PassView pv = workbench::pass_view(*result, view_pass_, view_before_);
      v.graph = pv.graph;
      v.highlight.assign(pv.highlight.begin(), pv.highlight.end());
      v.caption = std::move(pv.caption);
    } catch (const std::exception& e) {
      v.error = e.what();
    }
  }
  view_ = std::move(v);
}

void GraphPanel::set_viewport(const workbench::Viewport& v) {
  zoom_ = static_cast<float>(v.zoom);
  pan_ = ImVec2(static_cast<float>(v.pan_x), static_cast<float>(v.pan_y));
}

void GraphPanel::fit(const Entry& entry, ImVec2 canvas) {
  set_viewport(workbench::fit_view({entry.layout->width, entry.layout->height}, {canvas.x, canvas.y}));
}

void GraphPanel::zoom_around(float new_zoom, ImVec2 anchor) {
  set_viewport(workbench::zoom_at(viewport(), new_zoom, anchor.x, anchor.y));
}

void GraphPanel::draw(const Frame& frame) {
  drawn = Drawn{};
  hovered_box_.reset();
  draw_focus_border(frame, PanelId::Graph);
  refused_ = !frame.trace && frame.snap.error ? frame.snap.error->refused.get() : nullptr;
  drawn.refused = refused_ != nullptr;
  if (!refused_ && !result_or_empty_state(frame, "graph")) {
    log_hover_nodes_.clear();
    return;
  }
  resolve_view(frame);
  update_scopes(frame);
  drawn.caption = view_.error.empty() ? view_.caption : view_.error;

  // Sizes first: a fit needs the canvas, and the toolbar shows the zoom it picks.
  ImVec2 avail = ImGui::GetContentRegionAvail();
  avail.y -= ImGui::GetFrameHeightWithSpacing();  // the toolbar row
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const bool side_by_side = avail.x >= kSideBySideMinWidth;
  drawn.log_shown = show_log_.value_or(avail.x >= kLogAutoMinWidth);
  ImVec2 canvas_size, log_size;
  if (!drawn.log_shown) {
    canvas_size = avail;
  } else if (side_by_side) {
    const float log_w = std::clamp(std::floor(avail.x * kLogFraction), 180.0f, 520.0f);
    canvas_size = ImVec2(avail.x - log_w - spacing, avail.y);
    log_size = ImVec2(log_w, avail.y);
  } else {
    const float log_h = std::floor(avail.y * kLogFraction);
    canvas_size = ImVec2(avail.x, avail.y - log_h - ImGui::GetStyle().ItemSpacing.y);
    log_size = ImVec2(avail.x, log_h);
  }
  canvas_size = ImVec2(std::max(canvas_size.x, 1.0f), std::max(canvas_size.y, 1.0f));
  log_size = ImVec2(std::max(log_size.x, 1.0f), std::max(log_size.y, 1.0f));

  std::shared_ptr<const Entry> entry;
  if (view_.graph && frame.layouts)
    entry = frame.layouts->request(shown(frame), *view_.graph, folded_);
  folds_changed_ = false;
  if (view_.graph && search_graph_ != view_.graph) {
    search_graph_ = view_.graph;
    search_matches_ = workbench::find_nodes(*view_.graph, search_query_);
  }
  if (jump_pending_ && view_.graph) search_jump(frame);
  // A graph beyond dot's caps says it got the simple layout ("12000 nodes: simple layout (...)").
  if (entry && entry->layout && !entry->layout->simplified.empty() && view_.error.empty())
    drawn.caption += " - " + entry->layout->simplified;
  show(entry, canvas_size);

  draw_toolbar(frame);

  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::BeginChild(
      "##graph_canvas", canvas_size, false,
      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove);
  ImGui::PopStyleVar();
  if (entry && entry->layout) draw_canvas(frame, *entry, canvas_size);
  else draw_placeholder(entry.get(), canvas_size);
  ImGui::EndChild();

  if (!drawn.log_shown) {
    log_hover_nodes_.clear();
    return;
  }
  if (side_by_side) ImGui::SameLine();
  draw_log(frame, entry.get(), log_size);
}

// The next search match selected; a match inside a folded scope unfolds it first.
void GraphPanel::search_jump(const Frame& frame) {
  jump_pending_ = false;
  if (search_matches_.empty()) return;
  search_index_ = (search_index_ + 1) % static_cast<int>(search_matches_.size());
  const size_t node = search_matches_[static_cast<size_t>(search_index_)];
  const std::string& name = view_.graph->nodes[node].name;
  if (view_.graph == scopes_graph_ && scopes_.folded_scope_of(node, folded_) >= 0) {
    for (size_t s : scopes_.chain_of(node)) folded_.erase(scopes_.scopes[s].path);
    user_folds_ = true;
    folds_changed_ = true;
    recenter_node_ = name;
  }
  // Centre on it even when the selection does not change (the same node found again).
  if (name == frame.selection.node) recenter_node_ = name;
  issue(frame, "select=" + name);
}

// Makes a finished layout the one on screen: each graph keeps its own pan and zoom while its
// layout is cached, and one seen for the first time is fitted. Then the fit or zoom asked for.
void GraphPanel::show(const std::shared_ptr<const Entry>& entry, ImVec2 canvas_size) {
  std::erase_if(saved_views_, [](const auto& kv) { return kv.first.expired(); });
  if (!entry || !entry->layout) return;
  if (entry != shown_) {
    const bool same_graph = shown_ && shown_->graph == entry->graph;
    if (shown_) saved_views_[shown_] = {pan_, zoom_};
    shown_ = entry;
    if (auto it = saved_views_.find(std::weak_ptr<const Entry>(entry)); it != saved_views_.end()) {
      pan_ = it->second.pan;
      zoom_ = it->second.zoom;
    } else if (!same_graph) {
      fit_requested_ = true;
    }
  }
  // A fold or unfold (or a search that unfolded) keeps the zoom and centres on its node.
  if (!recenter_node_.empty()) {
    if (auto it = entry->node_index.find(recenter_node_); it != entry->node_index.end()) {
      const workbench::LayoutBox& b = entry->layout->boxes[it->second];
      set_viewport(workbench::center_on(viewport(), b.x, b.y, {canvas_size.x, canvas_size.y}));
      fit_requested_ = false;
    }
    recenter_node_.clear();
  }
  if (fit_requested_) {
    fit(*entry, canvas_size);
    fit_requested_ = false;
  }
  if (zoom_requested_) {
    zoom_around(*zoom_requested_, scale(canvas_size, 0.5f));
    zoom_requested_.reset();
  }
}

// The canvas without a graph: the view's or the layout's error, or "laying out N nodes...".
void GraphPanel::draw_placeholder(const Entry* entry, ImVec2 canvas_size) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddRectFilled(origin, add(origin, canvas_size), kCanvasColor);
  std::string message;
  ImU32 color = kTextDim;
  if (!view_.error.empty()) {
    message = view_.error;
    color = kErrorColor;
  } else if (entry && !entry->error.empty()) {
    message = entry->error;
    color = kErrorColor;
  } else if (entry) {
    message = "laying out " + std::to_string(entry->graph->nodes.size()) + " nodes...";
    drawn.layout_pending = true;
  }
  const float wrap = std::max(1.0f, canvas_size.x - 2 * kFitMargin);
  const ImVec2 size = ImGui::CalcTextSize(message.c_str(), nullptr, false, wrap);
  ImGui::SetCursorScreenPos(
      ImVec2(origin.x + std::max(kFitMargin, (canvas_size.x - size.x) / 2),
             origin.y + std::max(kFitMargin, (canvas_size.y - size.y) / 2)));
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  ImGui::PushTextWrapPos(origin.x + canvas_size.x - kFitMargin - ImGui::GetWindowPos().x);
  ImGui::TextUnformatted(message.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

void GraphPanel::draw_toolbar(const Frame& frame) {
  const std::vector<std::string> passes = changed_passes(shown(frame).get());
  const std::string preview =
      "view: " + (view_pass_.empty() ? std::string("final graph")
                                     : view_pass_ + (view_before_ ? " before" : " after"));
  ImGui::SetNextItemWidth(std::min(260.0f, ImGui::GetContentRegionAvail().x * 0.45f));
  if (ImGui::BeginCombo("##graph_view", preview.c_str())) {
    if (ImGui::Selectable("final graph", view_pass_.empty())) issue(frame, "graph.view=final");
    for (const std::string& p : passes) {
      for (bool before : {false, true}) {
        const std::string label = p + (before ? " before" : " after");
        const bool selected = view_pass_ == p && view_before_ == before;
        if (ImGui::Selectable(label.c_str(), selected))
          issue(frame, "graph.view=" + p + (before ? ":before" : ":after"));
      }
    }
    if (passes.empty()) ImGui::TextDisabled("(no pass changed the graph)");
    ImGui::EndCombo();
  }
  item_tooltip(
      "Which graph to draw: the final one, or the graph before or after a pass that changed it "
      "(what that pass touched outlined in red). graph.view=final | <pass>:before | <pass>:after");
  ImGui::SameLine();
  if (ImGui::SmallButton("fit")) issue(frame, "graph.zoom=fit");
  item_tooltip("Fit the whole graph in the panel (or double-click empty space). graph.zoom=fit");
  ImGui::SameLine();
  ImGui::TextDisabled("%.0f%%", static_cast<double>(zoom_ * 100));
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) legend_tooltip();
  ImGui::SameLine();
  {
    // The rewrites column's toggle, with how many lines it holds.
    size_t lines = 0;
    if (const workbench::RunResult* r = shown(frame).get(); r && r->optimized)
      for (const passes::PassLogEntry& e : r->optimized->log.entries)
        if (e.enabled && (view_pass_.empty() || e.pass == view_pass_))
          lines += e.rewrites.size() + e.near_misses.size();
    const std::string label = drawn.log_shown ? "rewrites <<" : "rewrites (" + std::to_string(lines) + ") >>";
    if (ImGui::SmallButton(label.c_str()))
      issue(frame, std::string("graph.rewrites=") + (drawn.log_shown ? "hide" : "show"));
    item_tooltip(std::string(drawn.log_shown ? "Hide" : "Show") +
                 " the rewrites and near misses that explain the graph (shown by default on panels at "
                 "least 900 px wide). graph.rewrites=show | hide | auto");
  }
  ImGui::SameLine();
  if (!folded_.empty() || user_folds_) {
    const std::string label = folded_.empty() ? "fold" : "unfold all";
    if (ImGui::SmallButton(label.c_str()))
      issue(frame, folded_.empty() ? "graph.fold=auto" : "graph.unfold=all");
    item_tooltip(folded_.empty()
                     ? "Fold the name scopes again as a graph this big starts (graph.fold=auto)"
                     : std::to_string(folded_.size()) +
                           " scopes folded into one box each: click one to unfold it, "
                           "right-click a node to fold its scope. graph.unfold=all");
    ImGui::SameLine();
  }
  draw_search(frame);
  if (!view_.error.empty() || refused_) {
    // An error, or a refusal's caption: red, with the whole sentence on hover.
    const std::string& text = refused_ ? drawn.caption : view_.error;
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopStyleColor();
    item_tooltip(text);
  } else {
    ImGui::TextDisabled("%s", drawn.caption.c_str());  // the view's caption, and the layout's note
  }
}

// Ctrl+F on the graph panel opens the search box: typing outlines the matching nodes, Enter
// selects the next (graph.find=TEXT), Escape closes it.
void GraphPanel::draw_search(const Frame& frame) {
  ImGuiIO& io = ImGui::GetIO();
  const bool here = frame.focus == PanelId::Graph ||
                    ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows);
  if (here && io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_F, false)) {
    search_open_ = true;
    search_focus_ = true;
  }
  if (!search_open_) {
    if (ImGui::SmallButton("find")) {
      search_open_ = true;
      search_focus_ = true;
    }
    item_tooltip("Search node names and ops (ctrl+f). graph.find=TEXT");
    ImGui::SameLine();
    return;
  }
  if (std::exchange(search_focus_, false)) ImGui::SetKeyboardFocusHere();
  ImGui::SetNextItemWidth(kSearchWidth);
  const bool enter = ImGui::InputTextWithHint("##graph_find", "find node or op", search_buf_,
                                              sizeof search_buf_,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  const bool editing = ImGui::IsItemActive() || ImGui::IsItemDeactivated();
  if (search_query_ != search_buf_) {
    search_query_ = search_buf_;
    search_index_ = -1;
    search_graph_ = nullptr;  // match again next frame
  }
  if (enter) {
    if (search_query_.empty()) issue(frame, "graph.find=");
    else issue(frame, "graph.find=" + search_query_);
    search_focus_ = true;  // keep typing, or Enter again for the next match
  }
  if (editing && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) issue(frame, "graph.find=");
  item_tooltip("Enter: select the next match (its scope unfolds). Escape closes. graph.find=TEXT");
  ImGui::SameLine();
  drawn.search_matches = search_query_.empty() ? 0 : search_matches_.size();
  if (!search_query_.empty()) {
    if (search_matches_.empty()) {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kErrorColor), "no match");
    } else if (search_index_ >= 0) {
      ImGui::TextDisabled("%d/%zu", search_index_ + 1, search_matches_.size());
    } else {
      ImGui::TextDisabled("%zu found", search_matches_.size());
    }
    ImGui::SameLine();
  }
}

void GraphPanel::draw_canvas(const Frame& frame, const Entry& entry, ImVec2 size) {
  const Canvas canvas = canvas_input(frame, entry, size);
  const std::optional<size_t> selected = follow_selection(frame, entry, canvas);
  const Transform t{add(canvas.rect.Min, pan_), zoom_};
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(canvas.rect.Min, canvas.rect.Max, true);
  dl->AddRectFilled(canvas.rect.Min, canvas.rect.Max, kCanvasColor);
  const ImRect visible(t.to_layout(canvas.rect.Min), t.to_layout(canvas.rect.Max));
  // Edges first, boxes over them, outlines over every box so a neighbour never hides one.
  draw_edges(dl, entry, canvas, visible, selected);
  draw_boxes(dl, entry, canvas, visible);
  draw_outlines(frame, dl, entry, canvas, visible, selected);
  draw_minimap(dl, entry, canvas);
  dl->PopClipRect();
  drawn.layout_boxes = entry.layout->boxes.size();
  for (const workbench::LayoutBox& b : entry.layout->boxes) drawn.folds += b.folded > 0;
  drawn.zoom = zoom_;
  if (hovered_box_ && !canvas.active)
    box_tooltip(*entry.graph, entry.layout->boxes[*hovered_box_], frame.selection.node, refused_);
  fold_menu(frame);
}

// The whole layout small in the canvas's corner, the canvas's outline on it, when the graph is
// bigger than the canvas at this zoom (minimap_ set by canvas_input).
void GraphPanel::draw_minimap(ImDrawList* dl, const Entry& entry, const Canvas& canvas) {
  if (!minimap_) return;
  const workbench::Minimap& m = *minimap_;
  const ImVec2 o = add(canvas.rect.Min, ImVec2(static_cast<float>(m.x), static_cast<float>(m.y)));
  const auto at = [&](double x, double y) {
    return ImVec2(o.x + static_cast<float>(x * m.scale), o.y + static_cast<float>(y * m.scale));
  };
  const ImRect frame_rect(ImVec2(o.x - 3, o.y - 3),
                          ImVec2(o.x + static_cast<float>(m.width) + 3, o.y + static_cast<float>(m.height) + 3));
  dl->AddRectFilled(frame_rect.Min, frame_rect.Max, kMinimapBackColor, 3);
  dl->AddRect(frame_rect.Min, frame_rect.Max, kEdgeColor, 3);
  const workbench::GraphLayout& layout = *entry.layout;
  for (size_t i = 0; i < layout.boxes.size(); ++i) {
    const workbench::LayoutBox& b = layout.boxes[i];
    ImVec2 a = at(b.x - b.width / 2, b.y - b.height / 2), z = at(b.x + b.width / 2, b.y + b.height / 2);
    z = ImVec2(std::max(z.x, a.x + 1), std::max(z.y, a.y + 1));  // every box at least a pixel
    const bool unsupported = refused_ && b.node >= 0 && refused_->unsupported.count(b.name);
    dl->AddRectFilled(a, z, unsupported ? kUnsupportedColor : rgb(workbench::node_kind_rgb(b.kind)));
  }
  if (auto it = entry.node_index.find(last_selection_); it != entry.node_index.end()) {
    const workbench::LayoutBox& b = layout.boxes[it->second];
    const ImVec2 c = at(b.x, b.y);
    dl->AddRect(ImVec2(c.x - 3, c.y - 3), ImVec2(c.x + 3, c.y + 3), kSelectionColor, 0, 0, 2);
  }
  // The canvas's outline, clipped to the minimap.
  const workbench::Viewport v = viewport();
  ImRect view(at(v.layout_x(0), v.layout_y(0)), at(v.layout_x(canvas.size.x), v.layout_y(canvas.size.y)));
  view.ClipWithFull(frame_rect);
  dl->AddRect(view.Min, view.Max, kMinimapViewColor, 0, 0, 1.5f);
  drawn.minimap = frame_rect;
  drawn.minimap_view = view;
}

// Right-clicking a node lists the scopes around it to fold.
void GraphPanel::fold_menu(const Frame& frame) {
  if (!ImGui::BeginPopup("##graph_fold_menu")) return;
  bool any = false;
  if (scopes_graph_) {
    for (size_t i = 0; i < scopes_graph_->nodes.size(); ++i) {
      if (scopes_graph_->nodes[i].name != context_node_) continue;
      for (size_t sc : scopes_.chain_of(i)) {
        const workbench::Scope& scope = scopes_.scopes[sc];
        if (scope.nodes < 2) continue;
        any = true;
        const std::string label = "fold " + scope.path + "  (" + std::to_string(scope.nodes) + " nodes)";
        if (ImGui::Selectable(label.c_str())) issue(frame, "graph.fold=" + scope.path);
      }
      break;
    }
  }
  if (!any) ImGui::TextDisabled("%s is in no scope of two nodes or more", context_node_.c_str());
  ImGui::EndPopup();
}

// The mouse on the canvas: drag pans, the wheel zooms, hovering finds a box, a click selects it
// (or clears the selection on empty space), a double-click on empty space fits.
GraphPanel::Canvas GraphPanel::canvas_input(const Frame& frame, const Entry& entry, ImVec2 size) {
  const workbench::GraphLayout& layout = *entry.layout;
  ImGuiIO& io = ImGui::GetIO();
  Canvas c;
  c.size = size;
  c.rect = ImRect(ImGui::GetCursorScreenPos(), add(ImGui::GetCursorScreenPos(), size));
  const bool released = ImGui::InvisibleButton(
      "##graph_input", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonMiddle);
  ImGui::SetItemUsingMouseWheel();  // the wheel zooms here instead of scrolling a parent
  c.hovered = ImGui::IsItemHovered();
  c.active = ImGui::IsItemActive();
  const float threshold_sq = io.MouseDragThreshold * io.MouseDragThreshold;
  c.dragged = io.MouseDragMaxDistanceSqr[ImGuiMouseButton_Left] > threshold_sq;

  const ImVec2 mouse = sub(io.MousePos, c.rect.Min);  // canvas-relative
  const workbench::ViewSize layout_size{layout.width, layout.height};
  const workbench::ViewSize canvas_size{size.x, size.y};
  minimap_.reset();
  if (workbench::layout_exceeds_view(viewport(), layout_size, canvas_size))
    minimap_ = workbench::place_minimap(layout_size, canvas_size);
  // A press on the minimap moves the view there, and keeps moving it while dragged.
  if (ImGui::IsItemActivated() && minimap_ && minimap_->contains(mouse.x, mouse.y)) minimap_drag_ = true;
  if (minimap_drag_) {  // also on the frame of the release, which then is no click
    const workbench::Minimap m = minimap_ ? *minimap_ : workbench::place_minimap(layout_size, canvas_size);
    set_viewport(workbench::center_on(viewport(), m.layout_x(mouse.x), m.layout_y(mouse.y), canvas_size));
    if (!c.active) minimap_drag_ = false;
    hovered_box_.reset();
    return c;
  }
  if (c.active && ((ImGui::IsMouseDown(ImGuiMouseButton_Left) && c.dragged) ||
                   ImGui::IsMouseDown(ImGuiMouseButton_Middle)))
    pan_ = add(pan_, io.MouseDelta);
  if (c.hovered && io.MouseWheel != 0)
    set_viewport(workbench::wheel_zoom(viewport(), io.MouseWheel, mouse.x, mouse.y));

  if (c.hovered && !(c.active && c.dragged) &&
      !(minimap_ && minimap_->contains(mouse.x, mouse.y))) {
    const ImVec2 p = Transform{add(c.rect.Min, pan_), zoom_}.to_layout(io.MousePos);
    hovered_box_ = layout.box_at(p.x, p.y);
  }
  if (released && ImGui::IsMouseReleased(ImGuiMouseButton_Left) && !c.dragged) {
    if (!hovered_box_)
      issue(frame, "select=");
    else if (layout.boxes[*hovered_box_].folded > 0)  // a folded scope opens
      issue(frame, "graph.unfold=" + layout.boxes[*hovered_box_].name);
    else if (layout.boxes[*hovered_box_].node >= 0)  // inputs and outputs are not selectable
      issue(frame, "select=" + layout.boxes[*hovered_box_].name);
  }
  if (c.hovered && hovered_box_ && layout.boxes[*hovered_box_].node >= 0 &&
      ImGui::IsMouseReleased(ImGuiMouseButton_Right)) {
    context_node_ = layout.boxes[*hovered_box_].name;
    ImGui::OpenPopup("##graph_fold_menu");
  }
  if (c.hovered && !hovered_box_ && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) fit(entry, size);
  return c;
}

// The selected node's box, if this graph has it; a selection made elsewhere (the op table, a
// rewrite) that is off screen is brought to the centre.
std::optional<size_t> GraphPanel::follow_selection(const Frame& frame, const Entry& entry,
                                                   const Canvas& canvas) {
  std::optional<size_t> selected;
  if (auto it = entry.node_index.find(frame.selection.node); it != entry.node_index.end())
    selected = it->second;
  if (frame.selection.node == last_selection_) return selected;
  last_selection_ = frame.selection.node;
  if (!selected) return selected;
  const workbench::LayoutBox& b = entry.layout->boxes[*selected];
  if (!canvas.rect.Contains(Transform{add(canvas.rect.Min, pan_), zoom_}.box(b))) {
    pan_ = ImVec2(canvas.size.x / 2 - static_cast<float>(b.x) * zoom_,
                  canvas.size.y / 2 - static_cast<float>(b.y) * zoom_);
  }
  return selected;
}

void GraphPanel::draw_edges(ImDrawList* dl, const Entry& entry, const Canvas& canvas,
                            const ImRect& visible, std::optional<size_t> selected) {
  const workbench::GraphLayout& layout = *entry.layout;
  const Transform t{add(canvas.rect.Min, pan_), zoom_};
  ImFont* font = ImGui::GetFont();
  const float edge_font = kEdgeFontPt * zoom_;
  const bool edge_labels = entry.edge_labels && edge_font >= kMinEdgeLabelPx;
  for (size_t i = 0; i < layout.edges.size(); ++i) {
    const workbench::LayoutRect& bounds = entry.edge_bounds[i];
    if (!visible.Overlaps(ImRect(bounds.x0, bounds.y0, bounds.x1, bounds.y1))) continue;
    const workbench::LayoutEdge& e = layout.edges[i];
    ++drawn.edges;
    const bool on_selected = selected && (e.from == *selected || e.to == *selected);
    const ImU32 color = on_selected ? kSelectionColor : kEdgeColor;
    const float thickness = on_selected ? 2.0f : 1.0f;
    const std::vector<workbench::LayoutPoint>& p = e.points;
    for (size_t k = 1; k + 2 < p.size(); k += 3)
      dl->AddBezierCubic(t.to_screen(p[k - 1]), t.to_screen(p[k]), t.to_screen(p[k + 1]),
                         t.to_screen(p[k + 2]), color, thickness);
    if (e.arrow_tip && !p.empty()) {
      const ImVec2 base = t.to_screen(p.back());
      const ImVec2 tip = t.to_screen(*e.arrow_tip);
      const ImVec2 d = sub(tip, base);
      // Half as wide as long on each side, about dot's "normal" arrowhead.
      const ImVec2 side(-d.y * 0.4f, d.x * 0.4f);
      dl->AddTriangleFilled(tip, add(base, side), sub(base, side), color);
    }
    if (edge_labels && e.label_pos) {
      const char* text = e.label.c_str();
      const ImVec2 text_size = font->CalcTextSizeA(edge_font, FLT_MAX, 0, text);
      const ImVec2 c = t.to_screen(*e.label_pos);
      dl->AddText(font, edge_font, ImVec2(c.x - text_size.x / 2, c.y - text_size.y / 2),
                  kEdgeLabelColor, text);
    }
  }
}

void GraphPanel::draw_boxes(ImDrawList* dl, const Entry& entry, const Canvas& canvas,
                            const ImRect& visible) {
  const workbench::GraphLayout& layout = *entry.layout;
  const Transform t{add(canvas.rect.Min, pan_), zoom_};
  for (size_t i = 0; i < layout.boxes.size(); ++i) {
    const workbench::LayoutBox& b = layout.boxes[i];
    if (!visible.Overlaps(layout_rect(b))) continue;
    ++drawn.boxes;
    const ImRect r = t.box(b);
    const bool io_box = b.node < 0;
    const float rounding = io_box ? std::min(6 * zoom_, r.GetHeight() / 2) : 0;
    if (b.folded > 0) {
      // A stack of cards: one behind, offset down and right.
      const float off = std::clamp(4 * zoom_, 1.0f, 5.0f);
      dl->AddRectFilled(add(r.Min, ImVec2(off, off)), add(r.Max, ImVec2(off, off)), kFoldBackColor, 3);
    }
    const bool unsupported = refused_ && !io_box && refused_->unsupported.count(b.name);
    dl->AddRectFilled(r.Min, r.Max, unsupported ? kUnsupportedFill : rgb(workbench::node_kind_rgb(b.kind)),
                      rounding);
    if (b.fused) {
      dl->AddRect(r.Min, r.Max, kFusedBorderColor, rounding, 0,
                  std::clamp(2.5f * zoom_, 1.0f, 2.5f));
      const float mark = std::min(r.GetHeight() * 0.45f, 9 * zoom_);
      if (mark >= 4)
        dl->AddTriangleFilled(r.Min, ImVec2(r.Min.x + mark, r.Min.y),
                              ImVec2(r.Min.x, r.Min.y + mark), kFusedBorderColor);
    } else if (r.GetWidth() >= 3) {
      dl->AddRect(r.Min, r.Max, kBoxBorderColor, rounding);
    }
    box_text(dl, r, entry.labels[i], (io_box ? kIoFontPt : kNodeFontPt) * zoom_,
             kTextPaddingPt * zoom_);
    if (unsupported) draw_unsupported(dl, r);
  }
}

// A node fusebox cannot import (filled pale red already): a thick red border, and an
// "unsupported" badge on its top edge when it is big enough to read.
void GraphPanel::draw_unsupported(ImDrawList* dl, const ImRect& r) {
  dl->AddRect(r.Min, r.Max, kUnsupportedColor, 0, 0, std::clamp(3 * zoom_, 1.5f, 3.0f));
  drawn.unsupported_boxes.push_back(r);
  const float font = kBadgeFontPt * zoom_;
  if (font < kMinTextPx) return;
  const char* badge = "unsupported";
  const ImVec2 size = ImGui::GetFont()->CalcTextSizeA(font, FLT_MAX, 0, badge);
  const ImVec2 at(r.Max.x - size.x - 4, r.Min.y - size.y / 2 - 1);
  dl->AddRectFilled(ImVec2(at.x - 3, at.y - 1), ImVec2(at.x + size.x + 3, at.y + size.y + 1), kUnsupportedColor, 3);
  dl->AddText(ImGui::GetFont(), font, at, IM_COL32(255, 255, 255, 255), badge);
}

// The pass view's highlights, the hovered rewrite's nodes, the hovered box and the selection.
void GraphPanel::draw_outlines(const Frame& frame, ImDrawList* dl, const Entry& entry,
                               const Canvas& canvas, const ImRect& visible,
                               std::optional<size_t> selected) {
  const workbench::GraphLayout& layout = *entry.layout;
  const Transform t{add(canvas.rect.Min, pan_), zoom_};
  auto visible_box = [&](const std::string& name) -> std::optional<ImRect> {
    auto it = entry.node_index.find(name);
    if (it == entry.node_index.end()) return std::nullopt;
    const workbench::LayoutBox& b = layout.boxes[it->second];
    if (!visible.Overlaps(layout_rect(b))) return std::nullopt;
    return t.box(b);
  };
  for (const std::string& name : view_.highlight) {
    if (auto r = visible_box(name)) {
      outline(dl, *r, kHighlightColor, kHighlightThickness);
      drawn.highlighted_boxes.push_back(*r);
    }
  }
  for (const std::string& name : log_hover_nodes_)
    if (auto r = visible_box(name)) outline(dl, *r, kLogHoverColor, kHighlightThickness);
  if (search_open_ && !search_query_.empty() && search_graph_ == entry.graph) {
    std::set<size_t> boxes;  // a fold with several matches is outlined once
    for (size_t node : search_matches_)
      if (node < layout.box_of_node.size()) boxes.insert(layout.box_of_node[node]);
    for (size_t box : boxes) {
      const workbench::LayoutBox& b = layout.boxes[box];
      if (!visible.Overlaps(layout_rect(b))) continue;
      const ImRect r = t.box(b);
      const ImRect around(sub(r.Min, ImVec2(3, 3)), add(r.Max, ImVec2(3, 3)));  // outside the box
      outline(dl, around, kSearchColor, 2.5f);
      drawn.search_boxes.push_back(around);
    }
  }
  if (hovered_box_) outline(dl, t.box(layout.boxes[*hovered_box_]), kHoverColor, 2);
  if (selected) {
    if (auto r = visible_box(frame.selection.node)) {
      outline(dl, *r, kSelectionColor, kSelectionThickness);
      drawn.selected_box = *r;
    }
  }
}

void GraphPanel::draw_log(const Frame& frame, const Entry* entry, ImVec2 size) {
  ImGui::BeginChild("##graph_log", size, true);
  const workbench::RunResult* result = frame.result();
  LogLines lines{frame, entry, !view_pass_.empty() && view_before_, {}};
  if (refused_) {
    // What would not import, grouped as the importer's error lists it.
    const models::OnnxOutline& o = refused_->outline;
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("refused by the importer (opset %lld): %zu of %zu nodes", static_cast<long long>(o.opset),
                       o.unsupported_nodes(), o.nodes.size());
    ImGui::PopStyleColor();
    ImGui::Separator();
    for (const models::OnnxUnsupported& u : o.unsupported) {
      ImGui::TextWrapped("%s (%s): %zu node%s", u.op.c_str(), u.reason.c_str(), u.nodes.size(),
                         u.nodes.size() == 1 ? "" : "s");
      for (size_t i = 0; i < u.nodes.size() && i < 8; ++i) dim_wrapped("  " + u.nodes[i]);
      if (u.nodes.size() > 8) dim_wrapped("  ... and " + std::to_string(u.nodes.size() - 8) + " more");
    }
    dim_wrapped("No pass ran: the graph is the file's, drawn by its names. fusebox inspect FILE lists the same.");
  } else if (!result || !result->optimized) {
    dim_wrapped("no pass log: the run stopped before optimize");
  } else if (!view_pass_.empty()) {
    const auto& entries = result->optimized->log.entries;
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const passes::PassLogEntry& e) { return e.pass == view_pass_; });
    if (it == entries.end()) {
      dim_wrapped("no pass '" + view_pass_ + "' in this run");
    } else {
      ImGui::TextWrapped("%s: %zu rewrites, %zu near misses", it->pass.c_str(), it->rewrites.size(),
                         it->near_misses.size());
      ImGui::Separator();
      lines.pass_lines(*it);
    }
  } else {
    bool any = false;
    const auto& entries = result->optimized->log.entries;
    for (size_t i = 0; i < entries.size(); ++i) {
      const passes::PassLogEntry& e = entries[i];
      if (!e.enabled || (e.rewrites.empty() && e.near_misses.empty())) continue;
      any = true;
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::TreeNodeEx("##pass", ImGuiTreeNodeFlags_DefaultOpen,
                            "%s  (%zu rewrites, %zu near misses)", e.pass.c_str(),
                            e.rewrites.size(), e.near_misses.size())) {
        lines.pass_lines(e);
        ImGui::TreePop();
      }
      ImGui::PopID();
    }
    if (!any) dim_wrapped("no pass rewrote anything or came close");
  }
  ImGui::EndChild();
  log_hover_nodes_ = std::move(lines.hover_nodes);
}

}  // namespace fusebox::ui
