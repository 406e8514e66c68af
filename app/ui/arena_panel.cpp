#include "app/ui/arena_panel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "app/ui/plot.h"
#include "app/ui/widgets.h"
#include "app/workbench/graph_layout.h"
#include "core/ir/graph.h"
#include "core/planner/lifetimes.h"
#include "core/planner/plan.h"
#include "core/planner/plan_index.h"

namespace fusebox::ui {

namespace {

constexpr float kAxisLeftPx = 78;    // room for the byte labels
constexpr float kMinRectPx = 1;      // thinnest a buffer is drawn, so tiny ones stay visible
constexpr float kHatchPx = 6;        // spacing of the scratch hatching
constexpr double kZoomStep = 1.2;    // per wheel notch
constexpr double kMinViewSteps = 2;  // zooming in further shows nothing new
constexpr double kHeadroom = 1.1;    // above the arena line, for its label
constexpr size_t kMaxListed = 6;     // names listed per tooltip line before "+N more"
constexpr ImU32 kGridColor = IM_COL32(255, 255, 255, 22);
constexpr ImU32 kArenaLine = IM_COL32(235, 235, 235, 230);
constexpr ImU32 kBoundLine = IM_COL32(110, 215, 120, 235);
constexpr ImU32 kLiveLine = IM_COL32(120, 200, 255, 190);
constexpr ImU32 kRectEdge = IM_COL32(0, 0, 0, 150);
constexpr ImU32 kHatchColor = IM_COL32(20, 20, 20, 170);
constexpr ImU32 kScratchEdge = IM_COL32(255, 90, 200, 255);
constexpr ImU32 kEagerColor = IM_COL32(255, 170, 60, 255);

// FNV-1a: the same buffer gets the same colour in every run and every session.
ImU32 hash_color(const std::string& name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) {
    h ^= c;
    h *= 16777619u;
  }
  return ImColor::HSV(static_cast<float>(h % 360) / 360.0f, 0.5f, 0.9f);
}

// A byte step that reads well in its unit: 1-2-5 steps of B, KiB, MiB or GiB.
double nice_byte_step(double max_bytes, int ticks) {
  double unit = 1;
  while (unit < 1024.0 * 1024 * 1024 && max_bytes / unit >= 1024) unit *= 1024;
  return std::max(1.0, nice_step(max_bytes / unit / ticks)) * unit;
}

// A comma-separated list of up to kMaxListed names, then "+N more".
std::string name_list(const std::vector<int>& nodes, const ir::Graph& g) {
  std::string out;
  for (size_t i = 0; i < nodes.size() && i < kMaxListed; ++i) {
    const auto n = static_cast<size_t>(nodes[i]);
    if (!out.empty()) out += ", ";
    out += n < g.nodes.size() ? g.nodes[n].name + " (" + g.nodes[n].op + ")" : "?";
  }
  if (nodes.size() > kMaxListed) out += ", +" + std::to_string(nodes.size() - kMaxListed) + " more";
  return out;
}

std::string tensor_list(const std::vector<std::string>& tensors) {
  std::string out;
  for (size_t i = 0; i < tensors.size() && i < kMaxListed; ++i) out += (i ? ", " : "") + tensors[i];
  if (tensors.size() > kMaxListed)
    out += ", +" + std::to_string(tensors.size() - kMaxListed) + " more";
  return out;
}

// The node a click on buffer `b` selects: its writer, else (a graph input) its first reader.
int node_of_buffer(const planner::PlanIndex& ix, size_t b) {
  if (b >= ix.buffers.size()) return -1;
  const planner::BufferUse& use = ix.buffers[b];
  if (!use.producers.empty()) return use.producers.front();
  if (!use.consumers.empty()) return use.consumers.front();
  return -1;
}

void hatch(ImDrawList* dl, ImRect r, const ImRect& clip) {
  r.ClipWithFull(clip);  // only the visible part costs lines
  if (r.GetWidth() < 1 || r.GetHeight() < 1) return;
  dl->PushClipRect(r.Min, r.Max, true);
  const float h = r.GetHeight();
  for (float x = r.Min.x - h; x < r.Max.x; x += kHatchPx)
    dl->AddLine(ImVec2(x, r.Max.y), ImVec2(x + h, r.Min.y), kHatchColor, 1.0f);
  dl->PopClipRect();
}

void dashed_hline(ImDrawList* dl, float x0, float x1, float y, ImU32 col, float thickness) {
  for (float x = x0; x < x1; x += 10)
    dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 6, x1), y), col, thickness);
}

void draw_tooltip(const planner::Placement& p, size_t b, const planner::PlanIndex& ix,
                  const ir::Graph& g) {
  const planner::Buffer& buf = p.buffer;
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(buf.name.c_str());
  if (buf.scratch)
    ImGui::TextDisabled("kernel scratch (buffer #%zu), live only during its step", b);
  else
    ImGui::TextDisabled("buffer #%zu", b);
  ImGui::Text("size %s (%zu bytes) at offset %s",
              format_bytes(static_cast<double>(buf.bytes)).c_str(), buf.bytes,
              format_bytes(static_cast<double>(p.offset)).c_str());
  ImGui::Text("lifetime: steps %d..%d (%d steps)", buf.first, buf.last, buf.last - buf.first + 1);
  if (b < ix.buffers.size()) {
    const planner::BufferUse& use = ix.buffers[b];
    if (!use.tensors.empty()) ImGui::Text("tensors: %s", tensor_list(use.tensors).c_str());
    if (!use.producers.empty())
      ImGui::Text("%s: %s", buf.scratch ? "owned by" : "written by",
                  name_list(use.producers, g).c_str());
    else if (!buf.scratch)
      ImGui::TextUnformatted("written by: none (graph input, copied in before step 0)");
    if (!use.consumers.empty()) ImGui::Text("read by: %s", name_list(use.consumers, g).c_str());
  }
  ImGui::TextDisabled("click: select the node that writes it");
  ImGui::EndTooltip();
}

// Continues the line when `width` more pixels fit on it, else starts the next one (narrow panels).
void same_line_if_fits(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

int selected_node(const Frame& frame, const ir::Graph& graph) {
  if (frame.selection.empty()) return -1;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (graph.nodes[n].name == frame.selection.node) return static_cast<int>(n);
  return -1;
}

}  // namespace

// This frame's canvas, plot and view, shared by the drawing helpers.
struct ArenaPanel::Plot {
  ImDrawList* dl = nullptr;
  ImRect canvas, plot;
  float plot_w = 1, plot_h = 1, line_h = 0;
  bool hovered = false, active = false, released = false;
  double full = 1;                            // steps in this result
  double view_x0 = 0, view_w = 1, y_max = 1;  // set once the input moved the view
  float x_of(double step) const {
    return plot.Min.x + static_cast<float>((step - view_x0) / view_w * plot_w);
  }
  float y_of(double bytes) const { return plot.Max.y - static_cast<float>(bytes / y_max * plot_h); }
  ImRect rect_of(const planner::Placement& p) const {
    ImRect r(x_of(p.buffer.first), y_of(static_cast<double>(p.offset + p.buffer.bytes)),
             x_of(p.buffer.last + 1), y_of(static_cast<double>(p.offset)));
    if (r.GetHeight() < kMinRectPx) r.Min.y = r.Max.y - kMinRectPx;
    return r;
  }
};

std::vector<PanelSwitch> ArenaPanel::switches() {
  return {
      {"zoom", {"fit"}, "", "show every step",
       [this](const std::string&, const workbench::RunResult*) {
         fitted_ = true;
         return std::string();
       }},
      {"color", {"kind", "buffer"}, "",
       "fill by the producing node's op kind, or by a hash of the buffer name",
       [this](const std::string& v, const workbench::RunResult*) {
         color_by_ = v == "kind" ? ColorBy::Kind : ColorBy::Buffer;
         return std::string();
       }},
      {"live", {"on", "off"}, "", "the live-bytes curve",
       [this](const std::string& v, const workbench::RunResult*) {
         show_live_ = v == "on";
         return std::string();
       }},
  };
}

std::string ArenaPanel::command(const std::string& key, const std::string& value,
                                const workbench::RunResult* result) {
  return run_switch("arena", switches(), key, value, result);
}

void ArenaPanel::draw(const Frame& frame) {
  drawn = Drawn{};
  draw_focus_border(frame, PanelId::Arena);
  if (!result_or_empty_state(frame, "arena")) return;
  const workbench::RunResult& result = *frame.result();
  if (!result.plan || !result.plan_index || !result.optimized) {
    ImGui::TextDisabled("arena: this result has no plan (the run stopped before the plan stage)");
    return;
  }
  const planner::ExecutionPlan& plan = *result.plan;
  const planner::PlanIndex& ix = *result.plan_index;
  const ir::Graph& graph = result.graph();
  const bool eager = result.settings.executor == "eager";
  draw_header(frame, result);
  if (eager) {
    ImGui::PushStyleColor(ImGuiCol_Text, kEagerColor);
    ImGui::TextWrapped(
        "eager executor: allocates each output per op, no arena; this is the plan the other "
        "executors use");
    ImGui::PopStyleColor();
    drawn.eager_note = true;
  }

  Plot p = layout_plot(plan, graph);
  handle_input(p);
  p.view_x0 = view_x0_;
  p.view_w = view_x1_ - view_x0_;
  p.y_max = std::max<double>({static_cast<double>(plan.arena_bytes),
                              static_cast<double>(plan.lower_bound_bytes), 64.0}) *
            kHeadroom;
  p.dl = ImGui::GetWindowDrawList();
  p.dl->PushClipRect(p.canvas.Min, p.canvas.Max, true);
  draw_plot_background(p.dl, p.plot.Min, p.plot.Max);
  draw_axes(p);
  p.dl->PushClipRect(p.plot.Min, p.plot.Max, true);
  const int sel_node = selected_node(frame, graph);
  // The selected node's step: a band behind the buffers.
  if (sel_node >= 0)
    p.dl->AddRectFilled(ImVec2(p.x_of(sel_node), p.plot.Min.y),
                        ImVec2(p.x_of(sel_node + 1), p.plot.Max.y),
                        (kSelectionColor & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 45));
  const int hovered_buffer = draw_buffers(p, plan, ix, graph, eager ? 150 : 235);
  if (show_live_) draw_live(p, plan);
  draw_arena_lines(p, plan);
  draw_selection(p, plan, ix, sel_node);
  if (hovered_buffer >= 0) {
    ImRect r = p.rect_of(plan.placements[static_cast<size_t>(hovered_buffer)]);
    p.dl->AddRect(r.Min, r.Max, IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
  }
  p.dl->PopClipRect();
  if (sel_node >= 0) mark_step(p, sel_node);
  p.dl->PopClipRect();

  if (hovered_buffer >= 0 && !dragging_)
    draw_tooltip(plan.placements[static_cast<size_t>(hovered_buffer)],
                 static_cast<size_t>(hovered_buffer), ix, graph);
  if (p.released && !dragging_) {
    const int node =
        hovered_buffer >= 0 ? node_of_buffer(ix, static_cast<size_t>(hovered_buffer)) : -1;
    if (node >= 0 && static_cast<size_t>(node) < graph.nodes.size())
      frame.command("select=" + graph.nodes[static_cast<size_t>(node)].name);
    else
      frame.command("select=");
  }
}

// The numbers that matter, then the switches.
void ArenaPanel::draw_header(const Frame& frame, const workbench::RunResult& result) const {
  const planner::ExecutionPlan& plan = *result.plan;
  std::string planner = plan.strategy;
  if (result.settings.planner == planner::kBestPlanner) planner = "best: " + planner;
  ImGui::Text("arena %s = %.2fx lower bound (planner %s)",
              format_bytes(static_cast<double>(plan.arena_bytes)).c_str(), plan.ratio(),
              planner.c_str());
  if (ImGui::RadioButton("op kind", color_by_ == ColorBy::Kind)) frame.command("arena.color=kind");
  item_tooltip("Fill each buffer with the colour of the op kind that writes it.");
  ImGui::SameLine();
  if (ImGui::RadioButton("buffer", color_by_ == ColorBy::Buffer))
    frame.command("arena.color=buffer");
  item_tooltip("Fill each buffer with a colour of its own (a hash of its name).");
  ImGui::SameLine();
  bool live = show_live_;
  if (ImGui::Checkbox("live bytes", &live))
    frame.command(live ? "arena.live=on" : "arena.live=off");
  item_tooltip(
      "The bytes live at each step (what any plan must hold): the lower bound is its peak.");
  ImGui::SameLine();
  if (ImGui::SmallButton("fit")) frame.command("arena.zoom=fit");
  item_tooltip("Show every step (or double-click the plot). Wheel zooms, drag pans.");
  char detail[128];
  std::snprintf(detail, sizeof detail, "%zu buffers, %zu steps, hatched: kernel scratch",
                plan.placements.size(), result.graph().nodes.size());
  same_line_if_fits(ImGui::CalcTextSize(detail).x);
  ImGui::TextDisabled("%s", detail);
}

// One invisible button takes the mouse; everything else is draw-list work.
ArenaPanel::Plot ArenaPanel::layout_plot(const planner::ExecutionPlan& plan,
                                         const ir::Graph& graph) {
  Plot p;
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 160.0f);
  size.y = std::max(size.y, 120.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  p.released = ImGui::InvisibleButton("##arena_canvas", size);
  p.hovered = ImGui::IsItemHovered();
  p.active = ImGui::IsItemActive();
  if (ImGui::IsItemActivated()) dragging_ = false;
  p.line_h = ImGui::GetTextLineHeight();
  p.canvas = ImRect(origin, ImVec2(origin.x + size.x, origin.y + size.y));
  p.plot = ImRect(p.canvas.Min.x + kAxisLeftPx, p.canvas.Min.y + p.line_h + 6,
                  p.canvas.Max.x - 10, p.canvas.Max.y - (p.line_h + 10));
  p.plot_w = std::max(p.plot.GetWidth(), 1.0f);
  p.plot_h = std::max(p.plot.GetHeight(), 1.0f);
  int num_steps = static_cast<int>(std::max(graph.nodes.size(), plan.live_bytes.size()));
  for (const planner::Placement& pl : plan.placements)
    num_steps = std::max(num_steps, pl.buffer.last + 1);
  p.full = std::max(num_steps, 1);
  return p;
}

// The view: fitted, or clamped into the steps this result has.
void ArenaPanel::clamp_view(double full) {
  const double w = std::clamp(view_x1_ - view_x0_, std::min(kMinViewSteps, full), full);
  view_x0_ = std::clamp(view_x0_, 0.0, full - w);
  view_x1_ = view_x0_ + w;
  if (w >= full) fitted_ = true;
}

// Double-click fits, the wheel zooms around the step under the cursor, a drag pans.
void ArenaPanel::handle_input(const Plot& p) {
  const ImGuiIO& io = ImGui::GetIO();
  const double full = p.full;
  if (fitted_) {
    view_x0_ = 0;
    view_x1_ = full;
  }
  clamp_view(full);
  if (p.hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    fitted_ = true;
    view_x0_ = 0;
    view_x1_ = full;
  } else if (p.hovered && io.MouseWheel != 0) {
    const double w = view_x1_ - view_x0_;
    const double at = view_x0_ + (std::clamp(io.MousePos.x, p.plot.Min.x, p.plot.Max.x) -
                                  p.plot.Min.x) / p.plot_w * w;
    const double nw =
        std::clamp(w * std::pow(kZoomStep, -io.MouseWheel), std::min(kMinViewSteps, full), full);
    view_x0_ = at - (at - view_x0_) * nw / w;
    view_x1_ = view_x0_ + nw;
    fitted_ = false;
    clamp_view(full);
  }
  if (p.active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    dragging_ = true;
    const double shift = -io.MouseDelta.x / p.plot_w * (view_x1_ - view_x0_);
    if (shift != 0 && !fitted_) {
      view_x0_ += shift;
      view_x1_ += shift;
      clamp_view(full);
    }
  }
}

// Bytes up the left with grid lines; steps along the bottom, labelled under their middles.
void ArenaPanel::draw_axes(const Plot& p) const {
  ImDrawList* dl = p.dl;
  const ImRect& plot = p.plot;
  const double byte_step =
      nice_byte_step(p.y_max, std::max(2, static_cast<int>(p.plot_h / (p.line_h * 3))));
  for (double v = 0; v <= p.y_max; v += byte_step) {
    const float y = p.y_of(v);
    dl->AddLine(ImVec2(plot.Min.x, y), ImVec2(plot.Max.x, y), kGridColor);
    const std::string label = format_bytes(v);
    const float tw = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(plot.Min.x - tw - 6, y - p.line_h / 2), kAxisText, label.c_str());
  }
  dl->AddText(ImVec2(p.canvas.Min.x + 4, p.canvas.Min.y + 2), kAxisText, "bytes");
  const double step = std::max(1.0, nice_step(p.view_w / std::max(1.0f, p.plot_w / 50)));
  const double view_x1 = p.view_x0 + p.view_w;
  for (double s = std::floor(p.view_x0 / step) * step; s < view_x1; s += step) {
    if (s < p.view_x0 - 0.5) continue;
    const float x = p.x_of(s);
    dl->AddLine(ImVec2(x, plot.Min.y), ImVec2(x, plot.Max.y), kGridColor);
    char label[32];
    std::snprintf(label, sizeof label, "%.0f", s);
    const float cx = p.x_of(s + 0.5);
    const float tw = ImGui::CalcTextSize(label).x;
    if (cx - tw / 2 >= plot.Min.x - 2 && cx + tw / 2 <= plot.Max.x + 2)
      dl->AddText(ImVec2(cx - tw / 2, plot.Max.y + 3), kAxisText, label);
  }
  dl->AddText(ImVec2(p.canvas.Min.x + 4, plot.Max.y + 3), kAxisText, "step");
}

ImU32 ArenaPanel::fill_of(size_t b, const planner::Placement& pl, const planner::PlanIndex& ix,
                          const ir::Graph& graph, uint8_t alpha) const {
  if (color_by_ == ColorBy::Buffer)
    return (hash_color(pl.buffer.name) & ~IM_COL32_A_MASK) |
           (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT);
  const int node =
      b < ix.buffers.size() && !ix.buffers[b].producers.empty() ? ix.buffers[b].producers.front()
                                                                : -1;
  const workbench::NodeKind kind = node >= 0 && static_cast<size_t>(node) < graph.nodes.size()
                                       ? workbench::node_kind(graph.nodes[static_cast<size_t>(node)].op)
                                       : workbench::NodeKind::Input;
  return rgb(workbench::node_kind_rgb(kind), alpha);
}

// The buffers. Fitted, every one is drawn (tests count them); zoomed, those off screen are not.
// Returns the hovered one, or -1.
int ArenaPanel::draw_buffers(const Plot& p, const planner::ExecutionPlan& plan,
                             const planner::PlanIndex& ix, const ir::Graph& graph, uint8_t alpha) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const double view_x1 = p.view_x0 + p.view_w;
  int hovered_buffer = -1;
  for (size_t b = 0; b < plan.placements.size(); ++b) {
    const planner::Placement& pl = plan.placements[b];
    if (!fitted_ && (pl.buffer.last + 1 < p.view_x0 || pl.buffer.first > view_x1)) continue;
    const ImRect r = p.rect_of(pl);
    p.dl->AddRectFilled(r.Min, r.Max, fill_of(b, pl, ix, graph, alpha));
    if (pl.buffer.scratch) {
      hatch(p.dl, r, p.plot);
      p.dl->AddRect(r.Min, r.Max, kScratchEdge, 0, 0, 1.5f);
    } else if (r.GetWidth() > 3 && r.GetHeight() > 3) {
      p.dl->AddRect(r.Min, r.Max, kRectEdge);
    }
    ++drawn.rects;
    if (p.hovered && r.Contains(mouse) && p.plot.Contains(mouse)) hovered_buffer = static_cast<int>(b);
  }
  return hovered_buffer;
}

// Live bytes per step, as a step curve.
void ArenaPanel::draw_live(const Plot& p, const planner::ExecutionPlan& plan) const {
  if (plan.live_bytes.empty()) return;
  const int s0 = std::max(0, static_cast<int>(std::floor(p.view_x0)));
  const int s1 = std::min(static_cast<int>(plan.live_bytes.size()),
                          static_cast<int>(std::ceil(p.view_x0 + p.view_w)) + 1);
  for (int s = s0; s < s1; ++s) {
    const float y = p.y_of(static_cast<double>(plan.live_bytes[static_cast<size_t>(s)]));
    p.dl->PathLineTo(ImVec2(p.x_of(s), y));
    p.dl->PathLineTo(ImVec2(p.x_of(s + 1), y));
  }
  p.dl->PathStroke(kLiveLine, 0, 1.5f);
}

// The arena size and the lower bound, labelled above their lines.
void ArenaPanel::draw_arena_lines(const Plot& p, const planner::ExecutionPlan& plan) const {
  ImDrawList* dl = p.dl;
  const float ya = p.y_of(static_cast<double>(plan.arena_bytes));
  const float yb = p.y_of(static_cast<double>(plan.lower_bound_bytes));
  dl->AddLine(ImVec2(p.plot.Min.x, ya), ImVec2(p.plot.Max.x, ya), kArenaLine, 1.5f);
  dashed_hline(dl, p.plot.Min.x, p.plot.Max.x, yb, kBoundLine, 1.5f);
  const std::string arena_label = "arena " + format_bytes(static_cast<double>(plan.arena_bytes));
  const std::string bound_label =
      "lower bound " + format_bytes(static_cast<double>(plan.lower_bound_bytes));
  const float aw = ImGui::CalcTextSize(arena_label.c_str()).x;
  dl->AddText(ImVec2(p.plot.Max.x - aw - 6, ya - p.line_h - 1), kArenaLine, arena_label.c_str());
  // When the two lines nearly coincide the labels share a row: bound left, arena right.
  dl->AddText(ImVec2(p.plot.Min.x + 6, yb - p.line_h - 1), kBoundLine, bound_label.c_str());
}

// The selected node's buffers, outlined on top of everything.
void ArenaPanel::draw_selection(const Plot& p, const planner::ExecutionPlan& plan,
                                const planner::PlanIndex& ix, int sel_node) {
  if (sel_node < 0 || static_cast<size_t>(sel_node) >= ix.buffers_of_node.size()) return;
  for (int b : ix.buffers_of_node[static_cast<size_t>(sel_node)]) {
    if (b < 0 || static_cast<size_t>(b) >= plan.placements.size()) continue;
    ImRect r = p.rect_of(plan.placements[static_cast<size_t>(b)]);
    // Inside the box: its edge pixels are then the selection colour, not a blend.
    p.dl->AddRect(r.Min, r.Max, kSelectionColor, 0, 0, 4.0f);
    r.ClipWithFull(p.plot);
    if (r.GetWidth() > 0 && r.GetHeight() > 0) drawn.selected_rects.push_back(r);
  }
}

// The selected node's step number, marked on the step axis over the regular labels.
void ArenaPanel::mark_step(const Plot& p, int sel_node) const {
  const std::string label = std::to_string(sel_node);
  const float tw = ImGui::CalcTextSize(label.c_str()).x;
  const float cx = p.x_of(sel_node + 0.5);
  if (cx < p.plot.Min.x || cx > p.plot.Max.x) return;
  p.dl->AddRectFilled(ImVec2(cx - tw / 2 - 3, p.plot.Max.y + 1),
                      ImVec2(cx + tw / 2 + 3, p.plot.Max.y + 3 + p.line_h), kSelectionColor);
  p.dl->AddText(ImVec2(cx - tw / 2, p.plot.Max.y + 3), IM_COL32(0, 0, 0, 255), label.c_str());
}

}  // namespace fusebox::ui
