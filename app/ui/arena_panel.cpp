#include "app/ui/arena_panel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

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
constexpr ImU32 kPlotBg = IM_COL32(26, 27, 31, 255);
constexpr ImU32 kGridColor = IM_COL32(255, 255, 255, 22);
constexpr ImU32 kAxisText = IM_COL32(185, 185, 185, 255);
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

// 1, 2 or 5 x 10^k, the smallest at or above `raw`.
double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
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

}  // namespace

std::string ArenaPanel::command(const std::string& key, const std::string& value,
                                const workbench::RunResult* /*result*/) {
  if (key == "zoom") {
    if (value != "fit") return "arena.zoom: unknown value '" + value + "' (valid: fit)";
    fitted_ = true;
    return "";
  }
  if (key == "color") {
    if (value == "kind")
      color_by_ = ColorBy::Kind;
    else if (value == "buffer")
      color_by_ = ColorBy::Buffer;
    else
      return "arena.color: unknown value '" + value + "' (valid: kind, buffer)";
    return "";
  }
  if (key == "live") {
    if (value == "on")
      show_live_ = true;
    else if (value == "off")
      show_live_ = false;
    else
      return "arena.live: unknown value '" + value + "' (valid: on, off)";
    return "";
  }
  return "arena: unknown key '" + key + "' (valid: zoom, color, live)";
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

  // Header: the numbers that matter, then the switches.
  {
    std::string planner = plan.strategy;
    if (result.settings.planner == planner::kBestPlanner) planner = "best: " + planner;
    ImGui::Text("arena %s = %.2fx lower bound (planner %s)",
                format_bytes(static_cast<double>(plan.arena_bytes)).c_str(), plan.ratio(),
                planner.c_str());
    if (ImGui::RadioButton("op kind", color_by_ == ColorBy::Kind))
      frame.command("arena.color=kind");
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
                  plan.placements.size(), graph.nodes.size());
    same_line_if_fits(ImGui::CalcTextSize(detail).x);
    ImGui::TextDisabled("%s", detail);
  }
  if (eager) {
    ImGui::PushStyleColor(ImGuiCol_Text, kEagerColor);
    ImGui::TextWrapped(
        "eager executor: allocates each output per op, no arena; this is the plan the other "
        "executors use");
    ImGui::PopStyleColor();
    drawn.eager_note = true;
  }

  // Canvas: one invisible button takes the mouse; everything else is draw-list work.
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 160.0f);
  size.y = std::max(size.y, 120.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const bool released = ImGui::InvisibleButton("##arena_canvas", size);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  if (ImGui::IsItemActivated()) dragging_ = false;
  const ImGuiIO& io = ImGui::GetIO();
  const float line_h = ImGui::GetTextLineHeight();
  const ImRect canvas(origin, ImVec2(origin.x + size.x, origin.y + size.y));
  const ImRect plot(canvas.Min.x + kAxisLeftPx, canvas.Min.y + line_h + 6, canvas.Max.x - 10,
                    canvas.Max.y - (line_h + 10));
  const float plot_w = std::max(plot.GetWidth(), 1.0f);
  const float plot_h = std::max(plot.GetHeight(), 1.0f);

  int num_steps = static_cast<int>(std::max(graph.nodes.size(), plan.live_bytes.size()));
  for (const planner::Placement& p : plan.placements)
    num_steps = std::max(num_steps, p.buffer.last + 1);
  num_steps = std::max(num_steps, 1);
  const double full = num_steps;

  // The view: fitted, or clamped into the steps this result has.
  auto clamp_view = [&] {
    double w = std::clamp(view_x1_ - view_x0_, std::min(kMinViewSteps, full), full);
    view_x0_ = std::clamp(view_x0_, 0.0, full - w);
    view_x1_ = view_x0_ + w;
    if (w >= full) fitted_ = true;
  };
  if (fitted_) {
    view_x0_ = 0;
    view_x1_ = full;
  }
  clamp_view();
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    fitted_ = true;
    view_x0_ = 0;
    view_x1_ = full;
  } else if (hovered && io.MouseWheel != 0) {
    // Zoom around the step under the cursor, so it stays put.
    const double w = view_x1_ - view_x0_;
    const double at =
        view_x0_ + (std::clamp(io.MousePos.x, plot.Min.x, plot.Max.x) - plot.Min.x) / plot_w * w;
    const double nw =
        std::clamp(w * std::pow(kZoomStep, -io.MouseWheel), std::min(kMinViewSteps, full), full);
    view_x0_ = at - (at - view_x0_) * nw / w;
    view_x1_ = view_x0_ + nw;
    fitted_ = false;
    clamp_view();
  }
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    dragging_ = true;
    const double shift = -io.MouseDelta.x / plot_w * (view_x1_ - view_x0_);
    if (shift != 0 && !fitted_) {
      view_x0_ += shift;
      view_x1_ += shift;
      clamp_view();
    }
  }
  const bool clicked = released && !dragging_;

  const double view_w = view_x1_ - view_x0_;
  const double y_max = std::max<double>({static_cast<double>(plan.arena_bytes),
                                         static_cast<double>(plan.lower_bound_bytes), 64.0}) *
                       kHeadroom;
  auto x_of = [&](double step) {
    return plot.Min.x + static_cast<float>((step - view_x0_) / view_w * plot_w);
  };
  auto y_of = [&](double bytes) { return plot.Max.y - static_cast<float>(bytes / y_max * plot_h); };

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(canvas.Min, canvas.Max, true);
  dl->AddRectFilled(plot.Min, plot.Max, kPlotBg);

  // Byte axis: grid lines and labels on the left.
  {
    const double step = nice_byte_step(y_max, std::max(2, static_cast<int>(plot_h / (line_h * 3))));
    for (double v = 0; v <= y_max; v += step) {
      const float y = y_of(v);
      dl->AddLine(ImVec2(plot.Min.x, y), ImVec2(plot.Max.x, y), kGridColor);
      const std::string label = format_bytes(v);
      const float tw = ImGui::CalcTextSize(label.c_str()).x;
      dl->AddText(ImVec2(plot.Min.x - tw - 6, y - line_h / 2), kAxisText, label.c_str());
    }
    dl->AddText(ImVec2(canvas.Min.x + 4, canvas.Min.y + 2), kAxisText, "bytes");
  }
  // Step axis: labels under the middle of each labelled step.
  {
    const double step = std::max(1.0, nice_step(view_w / std::max(1.0f, plot_w / 50)));
    for (double s = std::floor(view_x0_ / step) * step; s < view_x1_; s += step) {
      if (s < view_x0_ - 0.5) continue;
      const float x = x_of(s);
      dl->AddLine(ImVec2(x, plot.Min.y), ImVec2(x, plot.Max.y), kGridColor);
      char label[32];
      std::snprintf(label, sizeof label, "%.0f", s);
      const float cx = x_of(s + 0.5);
      const float tw = ImGui::CalcTextSize(label).x;
      if (cx - tw / 2 >= plot.Min.x - 2 && cx + tw / 2 <= plot.Max.x + 2)
        dl->AddText(ImVec2(cx - tw / 2, plot.Max.y + 3), kAxisText, label);
    }
    dl->AddText(ImVec2(canvas.Min.x + 4, plot.Max.y + 3), kAxisText, "step");
  }

  dl->PushClipRect(plot.Min, plot.Max, true);
  const int sel_node = [&] {
    if (frame.selection.empty()) return -1;
    for (size_t n = 0; n < graph.nodes.size(); ++n)
      if (graph.nodes[n].name == frame.selection.node) return static_cast<int>(n);
    return -1;
  }();
  // The selected node's step: a band behind the buffers.
  if (sel_node >= 0)
    dl->AddRectFilled(ImVec2(x_of(sel_node), plot.Min.y), ImVec2(x_of(sel_node + 1), plot.Max.y),
                      (kSelectionColor & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 45));

  // The buffers. Fitted, every one is drawn (tests count them); zoomed, those off screen are not.
  auto rect_of = [&](const planner::Placement& p) {
    ImRect r(x_of(p.buffer.first), y_of(static_cast<double>(p.offset + p.buffer.bytes)),
             x_of(p.buffer.last + 1), y_of(static_cast<double>(p.offset)));
    if (r.GetHeight() < kMinRectPx) r.Min.y = r.Max.y - kMinRectPx;
    return r;
  };
  const uint8_t alpha = eager ? 150 : 235;  // the eager executor does not use this arena
  int hovered_buffer = -1;
  for (size_t b = 0; b < plan.placements.size(); ++b) {
    const planner::Placement& p = plan.placements[b];
    if (!fitted_ && (p.buffer.last + 1 < view_x0_ || p.buffer.first > view_x1_)) continue;
    const ImRect r = rect_of(p);
    ImU32 fill = 0;
    if (color_by_ == ColorBy::Buffer) {
      fill = (hash_color(p.buffer.name) & ~IM_COL32_A_MASK) |
             (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT);
    } else {
      const int node = b < ix.buffers.size() && !ix.buffers[b].producers.empty()
                           ? ix.buffers[b].producers.front()
                           : -1;
      const workbench::NodeKind kind =
          node >= 0 && static_cast<size_t>(node) < graph.nodes.size()
              ? workbench::node_kind(graph.nodes[static_cast<size_t>(node)].op)
              : workbench::NodeKind::Input;
      fill = rgb(workbench::node_kind_rgb(kind), alpha);
    }
    dl->AddRectFilled(r.Min, r.Max, fill);
    if (p.buffer.scratch) {
      hatch(dl, r, plot);
      dl->AddRect(r.Min, r.Max, kScratchEdge, 0, 0, 1.5f);
    } else if (r.GetWidth() > 3 && r.GetHeight() > 3) {
      dl->AddRect(r.Min, r.Max, kRectEdge);
    }
    ++drawn.rects;
    if (hovered && r.Contains(io.MousePos) && plot.Contains(io.MousePos))
      hovered_buffer = static_cast<int>(b);
  }

  // Live bytes per step, as a step curve.
  if (show_live_ && !plan.live_bytes.empty()) {
    const int s0 = std::max(0, static_cast<int>(std::floor(view_x0_)));
    const int s1 = std::min(static_cast<int>(plan.live_bytes.size()),
                            static_cast<int>(std::ceil(view_x1_)) + 1);
    for (int s = s0; s < s1; ++s) {
      const float y = y_of(static_cast<double>(plan.live_bytes[static_cast<size_t>(s)]));
      dl->PathLineTo(ImVec2(x_of(s), y));
      dl->PathLineTo(ImVec2(x_of(s + 1), y));
    }
    dl->PathStroke(kLiveLine, 0, 1.5f);
  }

  // The arena size and the lower bound, labelled above their lines.
  {
    const float ya = y_of(static_cast<double>(plan.arena_bytes));
    const float yb = y_of(static_cast<double>(plan.lower_bound_bytes));
    dl->AddLine(ImVec2(plot.Min.x, ya), ImVec2(plot.Max.x, ya), kArenaLine, 1.5f);
    dashed_hline(dl, plot.Min.x, plot.Max.x, yb, kBoundLine, 1.5f);
    const std::string arena_label = "arena " + format_bytes(static_cast<double>(plan.arena_bytes));
    const std::string bound_label =
        "lower bound " + format_bytes(static_cast<double>(plan.lower_bound_bytes));
    const float aw = ImGui::CalcTextSize(arena_label.c_str()).x;
    dl->AddText(ImVec2(plot.Max.x - aw - 6, ya - line_h - 1), kArenaLine, arena_label.c_str());
    // When the two lines nearly coincide the labels share a row: bound left, arena right.
    dl->AddText(ImVec2(plot.Min.x + 6, yb - line_h - 1), kBoundLine, bound_label.c_str());
  }

  // The selected node's buffers, outlined on top of everything.
  if (sel_node >= 0 && static_cast<size_t>(sel_node) < ix.buffers_of_node.size()) {
    for (int b : ix.buffers_of_node[static_cast<size_t>(sel_node)]) {
      if (b < 0 || static_cast<size_t>(b) >= plan.placements.size()) continue;
      ImRect r = rect_of(plan.placements[static_cast<size_t>(b)]);
      // Inside the box: its edge pixels are then the selection colour, not a blend.
      dl->AddRect(r.Min, r.Max, kSelectionColor, 0, 0, 4.0f);
      r.ClipWithFull(plot);
      if (r.GetWidth() > 0 && r.GetHeight() > 0) drawn.selected_rects.push_back(r);
    }
  }
  if (hovered_buffer >= 0) {
    ImRect r = rect_of(plan.placements[static_cast<size_t>(hovered_buffer)]);
    dl->AddRect(r.Min, r.Max, IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
  }
  dl->PopClipRect();
  // The selected node's step number, marked on the step axis over the regular labels.
  if (sel_node >= 0) {
    const std::string label = std::to_string(sel_node);
    const float tw = ImGui::CalcTextSize(label.c_str()).x;
    const float cx = x_of(sel_node + 0.5);
    if (cx >= plot.Min.x && cx <= plot.Max.x) {
      dl->AddRectFilled(ImVec2(cx - tw / 2 - 3, plot.Max.y + 1),
                        ImVec2(cx + tw / 2 + 3, plot.Max.y + 3 + line_h), kSelectionColor);
      dl->AddText(ImVec2(cx - tw / 2, plot.Max.y + 3), IM_COL32(0, 0, 0, 255), label.c_str());
    }
  }
  dl->PopClipRect();

  if (hovered_buffer >= 0 && !dragging_)
    draw_tooltip(plan.placements[static_cast<size_t>(hovered_buffer)],
                 static_cast<size_t>(hovered_buffer), ix, graph);
  if (clicked) {
    const int node =
        hovered_buffer >= 0 ? node_of_buffer(ix, static_cast<size_t>(hovered_buffer)) : -1;
    if (node >= 0 && static_cast<size_t>(node) < graph.nodes.size())
      frame.command("select=" + graph.nodes[static_cast<size_t>(node)].name);
    else
      frame.command("select=");
  }
}

}  // namespace fusebox::ui
