#include "app/ui/trace_panel.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/ui/widgets.h"
#include "app/workbench/graph_layout.h"
#include "core/backend/device_activity.h"
#include "profiler/recorder.h"

namespace fusebox::ui {

namespace {

constexpr double kMinViewNs = 100;        // zooming further shows nothing a clock can resolve
constexpr double kMarginFraction = 0.02;  // room left and right of the displayed run(s)
constexpr double kZoomStep = 1.25;        // per wheel notch
constexpr float kTickSpacingPx = 90;
constexpr float kTrackGapPx = 5;
constexpr ImU32 kPlotBg = IM_COL32(26, 27, 31, 255);
constexpr ImU32 kTrackBgOdd = IM_COL32(255, 255, 255, 8);
constexpr ImU32 kGridColor = IM_COL32(255, 255, 255, 20);
constexpr ImU32 kAxisText = IM_COL32(185, 185, 185, 255);
constexpr ImU32 kLabelText = IM_COL32(220, 220, 220, 255);
constexpr ImU32 kSeparator = IM_COL32(255, 255, 255, 35);
constexpr ImU32 kSpanEdge = IM_COL32(0, 0, 0, 120);
constexpr ImU32 kRunColor = IM_COL32(88, 108, 140, 255);
constexpr ImU32 kStageColor = IM_COL32(128, 98, 160, 255);
constexpr ImU32 kKernelColor = IM_COL32(96, 178, 104, 255);
constexpr ImU32 kMemcpyColor = IM_COL32(214, 142, 60, 255);
constexpr ImU32 kMemsetColor = IM_COL32(206, 192, 72, 255);
constexpr ImU32 kRuntimeColor = IM_COL32(124, 124, 136, 255);
constexpr ImU32 kCounterFill = IM_COL32(70, 170, 190, 200);
constexpr ImU32 kCounterTop = IM_COL32(140, 225, 240, 255);
constexpr ImU32 kHoverEdge = IM_COL32(255, 255, 255, 255);

// 1, 2 or 5 x 10^k, the smallest at or above `raw`.
double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

// A tick label: the unit follows the view's magnitude, the decimals the tick step, so
// neighbouring ticks never print the same text ("1.200 ms", "1.202 ms").
void format_tick(char* buf, size_t n, double ns, double step, double magnitude) {
  double unit = 1;
  const char* name = "ns";
  if (magnitude >= 1e9)
    unit = 1e9, name = "s";
  else if (magnitude >= 1e6)
    unit = 1e6, name = "ms";
  else if (magnitude >= 1e3)
    unit = 1e3, name = "us";
  const int decimals =
      std::clamp(static_cast<int>(-std::floor(std::log10(step / unit) + 1e-9)), 0, 6);
  std::snprintf(buf, n, "%.*f %s", decimals, ns / unit, name);
}

// Dark text on light fills, light text on dark ones.
ImU32 text_on(ImU32 fill) {
  const float r = static_cast<float>((fill >> IM_COL32_R_SHIFT) & 0xff);
  const float g = static_cast<float>((fill >> IM_COL32_G_SHIFT) & 0xff);
  const float b = static_cast<float>((fill >> IM_COL32_B_SHIFT) & 0xff);
  return 0.299f * r + 0.587f * g + 0.114f * b > 140 ? IM_COL32(15, 15, 15, 255)
                                                    : IM_COL32(235, 235, 235, 255);
}

// Sub-pixel spans merged into one bar are drawn dimmer: it is not one span.
ImU32 dimmed(ImU32 c) {
  return (c & ~IM_COL32_A_MASK) | (static_cast<ImU32>(150) << IM_COL32_A_SHIFT);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

const char* activity_kind_name(exec::ActivityKind kind) {
  switch (kind) {
    case exec::ActivityKind::Kernel:
      return "kernel";
    case exec::ActivityKind::Memcpy:
      return "memcpy";
    case exec::ActivityKind::Memset:
      return "memset";
    case exec::ActivityKind::Runtime:
      return "CUDA API call";
  }
  return "?";
}

// Rows by nesting depth, depths with no spans left out.
std::vector<int32_t> compact_depths(std::vector<int32_t> depths) {
  std::sort(depths.begin(), depths.end());
  depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
  return depths;
}

size_t row_of_depth(const std::vector<int32_t>& depths, int32_t depth) {
  return static_cast<size_t>(std::lower_bound(depths.begin(), depths.end(), depth) -
                             depths.begin());
}

}  // namespace

void TracePanel::rebuild(const workbench::RunResult& result) {
  const profiler::Recording& rec = *result.recording;
  built_for_ = &result;
  built_sequence_ = result.sequence;
  tracks_.clear();
  counter_.clear();
  runs_.clear();
  op_items_of_node_.assign(rec.nodes.size(), {});

  base_ns_ = INT64_MAX;
  if (!rec.spans.empty()) base_ns_ = rec.spans.front().start_ns;
  for (const profiler::Span& s : rec.spans) base_ns_ = std::min(base_ns_, s.start_ns);
  for (const exec::DeviceActivity& a : rec.device) base_ns_ = std::min(base_ns_, a.start_ns);
  if (base_ns_ == INT64_MAX) base_ns_ = 0;
  auto rel = [&](int64_t t) { return static_cast<double>(t - base_ns_); };

  std::vector<ImU32> node_color(rec.nodes.size());
  for (size_t n = 0; n < rec.nodes.size(); ++n)
    node_color[n] = rgb(workbench::node_kind_rgb(workbench::node_kind(rec.nodes[n].op)));
  auto span_item = [&](size_t i) {
    const profiler::Span& s = rec.spans[i];
    Item it;
    it.t0 = rel(s.start_ns);
    it.t1 = std::max(it.t0, rel(s.end_ns));
    it.index = static_cast<int32_t>(i);
    it.node = s.node;
    switch (s.kind) {
      case profiler::SpanKind::Stage:
        it.kind = ItemKind::Stage, it.color = kStageColor;
        break;
      case profiler::SpanKind::Run:
        it.kind = ItemKind::Run, it.color = kRunColor;
        break;
      case profiler::SpanKind::Op:
        it.kind = ItemKind::Op;
        it.color = s.node >= 0 && static_cast<size_t>(s.node) < node_color.size()
                       ? node_color[static_cast<size_t>(s.node)]
                       : kRuntimeColor;
        break;
    }
    return it;
  };
  // A track of the spans `keep` accepts, one row per nesting depth.
  auto add_span_track = [&](std::string label, auto keep) {
    std::vector<int32_t> depths;
    for (const profiler::Span& s : rec.spans)
      if (keep(s)) depths.push_back(s.depth);
    if (depths.empty()) return;
    depths = compact_depths(std::move(depths));
    Track t{std::move(label), std::vector<Row>(depths.size())};
    for (size_t i = 0; i < rec.spans.size(); ++i)
      if (keep(rec.spans[i]))
        t.rows[row_of_depth(depths, rec.spans[i].depth)].items.push_back(span_item(i));
    tracks_.push_back(std::move(t));
  };

  add_span_track("NVTX", [](const profiler::Span& s) { return s.kind != profiler::SpanKind::Op; });
  std::vector<std::pair<int32_t, std::string>> threads = rec.thread_names;
  for (const profiler::Span& s : rec.spans) {
    const bool named = std::any_of(threads.begin(), threads.end(),
                                   [&](const auto& t) { return t.first == s.tid; });
    if (!named) threads.push_back({s.tid, "thread " + std::to_string(s.tid)});
  }
  for (const auto& [tid, name] : threads)
    add_span_track("CPU " + name, [tid](const profiler::Span& s) { return s.tid == tid; });

  // Device activity: one track per (device, stream), and the API calls per host thread.
  std::map<std::pair<int64_t, int64_t>, size_t> stream_track;
  std::map<uint32_t, size_t> api_track;
  for (size_t i = 0; i < rec.device.size(); ++i) {
    const exec::DeviceActivity& a = rec.device[i];
    size_t track = 0;
    if (a.kind == exec::ActivityKind::Runtime) {
      const auto [pos, fresh] = api_track.try_emplace(a.thread_id, tracks_.size());
      if (fresh)
        tracks_.push_back(Track{"CUDA API " + std::to_string(a.thread_id), std::vector<Row>(1)});
      track = pos->second;
    } else {
      const auto [pos, fresh] = stream_track.try_emplace({a.device, a.stream}, tracks_.size());
      if (fresh)
        tracks_.push_back(
            Track{"GPU " + std::to_string(a.device) + " stream " + std::to_string(a.stream),
                  std::vector<Row>(1)});
      track = pos->second;
    }
    Item it;
    it.t0 = rel(a.start_ns);
    it.t1 = std::max(it.t0, rel(a.end_ns));
    it.index = static_cast<int32_t>(i);
    it.node = a.node_index;
    const bool known_node =
        a.node_index >= 0 && static_cast<size_t>(a.node_index) < node_color.size();
    switch (a.kind) {
      case exec::ActivityKind::Kernel:
        it.kind = ItemKind::Kernel;
        it.color = known_node ? node_color[static_cast<size_t>(a.node_index)] : kKernelColor;
        break;
      case exec::ActivityKind::Memcpy:
        it.kind = ItemKind::Memcpy, it.color = kMemcpyColor;
        break;
      case exec::ActivityKind::Memset:
        it.kind = ItemKind::Memset, it.color = kMemsetColor;
        break;
      case exec::ActivityKind::Runtime:
        it.kind = ItemKind::Runtime, it.color = kRuntimeColor;
        break;
    }
    tracks_[track].rows[0].items.push_back(it);
  }

  extent_t0_ = INFINITY;
  extent_t1_ = -INFINITY;
  for (size_t t = 0; t < tracks_.size(); ++t) {
    for (size_t r = 0; r < tracks_[t].rows.size(); ++r) {
      Row& row = tracks_[t].rows[r];
      std::stable_sort(row.items.begin(), row.items.end(),
                       [](const Item& a, const Item& b) { return a.t0 < b.t0; });
      for (size_t i = 0; i < row.items.size(); ++i) {
        const Item& it = row.items[i];
        row.max_len = std::max(row.max_len, it.t1 - it.t0);
        extent_t0_ = std::min(extent_t0_, it.t0);
        extent_t1_ = std::max(extent_t1_, it.t1);
        // Op spans on CPU tracks are what the selection outlines (NVTX holds no ops).
        if (it.kind == ItemKind::Op && it.node >= 0 &&
            static_cast<size_t>(it.node) < op_items_of_node_.size())
          op_items_of_node_[static_cast<size_t>(it.node)].push_back(
              {static_cast<uint32_t>(t), static_cast<uint32_t>(r), static_cast<uint32_t>(i)});
      }
    }
  }
  for (auto& refs : op_items_of_node_)
    std::sort(refs.begin(), refs.end(), [&](const ItemRef& a, const ItemRef& b) {
      return tracks_[a.track].rows[a.row].items[a.item].t0 <
             tracks_[b.track].rows[b.row].items[b.item].t0;
    });

  counter_max_ = std::max(1.0, static_cast<double>(rec.arena_bytes));
  for (const profiler::CounterSample& c : rec.arena_live) {
    counter_.push_back({rel(c.t_ns), c.value});
    counter_max_ = std::max(counter_max_, c.value);
  }
  std::stable_sort(counter_.begin(), counter_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  for (const profiler::Span& s : rec.spans)
    if (s.kind == profiler::SpanKind::Run)
      runs_.push_back({s.run, rel(s.start_ns), rel(s.end_ns), 0});
  for (RunRange& r : runs_)
    for (const profiler::Span& s : rec.spans)
      r.ops += s.kind == profiler::SpanKind::Op && s.run == r.run;
  // The median run by duration (the lower middle one when the count is even).
  median_run_ = 0;
  if (!runs_.empty()) {
    std::vector<size_t> order(runs_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return runs_[a].t1 - runs_[a].t0 < runs_[b].t1 - runs_[b].t0;
    });
    median_run_ = order[(order.size() - 1) / 2];
  }
  if (!std::isfinite(extent_t0_)) extent_t0_ = extent_t1_ = 0;
}

void TracePanel::update_range() {
  const RunRange* run = nullptr;
  if (!runs_.empty() && mode_ != RunMode::All) {
    run = &runs_[median_run_];
    if (mode_ == RunMode::One)
      for (const RunRange& r : runs_)
        if (r.run == run_choice_) run = &r;
  }
  range_t0_ = run ? run->t0 : extent_t0_;
  range_t1_ = run ? run->t1 : extent_t1_;
  if (range_t1_ - range_t0_ < kMinViewNs) range_t1_ = range_t0_ + kMinViewNs;
  const double margin = (range_t1_ - range_t0_) * kMarginFraction;
  bound_t0_ = range_t0_ - margin;
  bound_t1_ = range_t1_ + margin;
}

void TracePanel::fit_view() {
  view_t0_ = bound_t0_;
  view_t1_ = bound_t1_;
  fitted_ = true;
}

void TracePanel::clamp_view() {
  const double full = bound_t1_ - bound_t0_;
  const double w = std::clamp(view_t1_ - view_t0_, std::min(kMinViewNs, full), full);
  view_t0_ = std::clamp(view_t0_, bound_t0_, bound_t1_ - w);
  view_t1_ = view_t0_ + w;
  fitted_ = w >= full;
}

std::string TracePanel::command(const std::string& key, const std::string& value,
                                const workbench::RunResult* result) {
  if (key == "run") {
    if (value == "median") {
      mode_ = RunMode::Median;
    } else if (value == "all") {
      mode_ = RunMode::All;
    } else {
      int64_t n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size())
        return "trace.run: expected median, all or a run number, got '" + value + "'";
      if (result && result->recording) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        bool found = false;
        for (const profiler::Span& s : result->recording->spans) {
          if (s.kind != profiler::SpanKind::Run) continue;
          lo = std::min(lo, s.run);
          hi = std::max(hi, s.run);
          found = found || s.run == n;
        }
        if (!found)
          return lo > hi
                     ? "trace.run: the recording has no runs (valid: median, all)"
                     : "trace.run: no run " + value + " in the recording (valid: median, all, " +
                           std::to_string(lo) + ".." + std::to_string(hi) + ")";
      } else if (result) {
        return "trace.run: no recorded runs (profile_runs=0) (valid: median, all)";
      }
      mode_ = RunMode::One;
      run_choice_ = n;
    }
    fitted_ = true;
    pending_pan_ = 0;
    pending_zoom_ = 1;
    return "";
  }
  if (key == "zoom") {
    if (value == "fit") {
      fitted_ = true;
      pending_zoom_ = 1;
      return "";
    }
    char* end = nullptr;
    const double f = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(f) || f <= 0)
      return "trace.zoom: expected fit or a factor > 0 (2 zooms in 2x), got '" + value + "'";
    pending_zoom_ *= f;
    return "";
  }
  if (key == "pan") {
    char* end = nullptr;
    const double f = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(f))
      return "trace.pan: expected a fraction of the view (0.25 right, -0.25 left), got '" + value +
             "'";
    pending_pan_ += f;
    return "";
  }
  return "trace: unknown key '" + key + "' (valid: run, zoom, pan)";
}

void TracePanel::draw(const Frame& frame) {
  drawn = Drawn{};
  draw_focus_border(frame, PanelId::Trace);
  if (!result_or_empty_state(frame, "trace")) return;
  const workbench::RunResult& result = *frame.result();
  if (!result.recording) {
    ImGui::TextDisabled("trace: no recorded runs (profile_runs=0): set profile_runs > 0");
    return;
  }
  const profiler::Recording& rec = *result.recording;
  if (rec.spans.empty() && rec.device.empty()) {
    ImGui::TextDisabled("trace: the recording has no spans");
    return;
  }
  const bool rebuilt = built_for_ != &result || built_sequence_ != result.sequence;
  if (rebuilt) {
    rebuild(result);
    fitted_ = true;
  }
  if (rebuilt || frame.selection.node != last_selection_) {
    last_selection_ = frame.selection.node;
    selected_node_ = -1;
    for (size_t n = 0; n < rec.nodes.size() && !frame.selection.empty(); ++n)
      if (rec.nodes[n].name == frame.selection.node) selected_node_ = static_cast<int32_t>(n);
    reveal_selection_ = true;
  }
  update_range();
  if (fitted_) fit_view();
  clamp_view();

  // Header: which run, how long, fit.
  {
    const RunRange* median = runs_.empty() ? nullptr : &runs_[median_run_];
    char preview[64];
    if (mode_ == RunMode::All || !median)
      std::snprintf(preview, sizeof preview, "all");
    else if (mode_ == RunMode::Median)
      std::snprintf(preview, sizeof preview, "median (run %lld)",
                    static_cast<long long>(median->run));
    else
      std::snprintf(preview, sizeof preview, "run %lld", static_cast<long long>(run_choice_));
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
    if (ImGui::BeginCombo("run", preview)) {
      if (median) {
        char label[64];
        std::snprintf(label, sizeof label, "median (run %lld)",
                      static_cast<long long>(median->run));
        if (ImGui::Selectable(label, mode_ == RunMode::Median)) frame.command("trace.run=median");
      }
      if (ImGui::Selectable("all", mode_ == RunMode::All)) frame.command("trace.run=all");
      for (const RunRange& r : runs_) {
        char label[96];
        std::snprintf(label, sizeof label, "run %lld  %s", static_cast<long long>(r.run),
                      format_ns(r.t1 - r.t0).c_str());
        if (ImGui::Selectable(label, mode_ == RunMode::One && run_choice_ == r.run))
          frame.command("trace.run=" + std::to_string(r.run));
      }
      ImGui::EndCombo();
    }
    item_tooltip("Which recorded run to show: the median one by duration, all of them, or one.");
    ImGui::SameLine();
    const RunRange* shown = nullptr;
    if (mode_ != RunMode::All && median) {
      shown = median;
      if (mode_ == RunMode::One)
        for (const RunRange& r : runs_)
          if (r.run == run_choice_) shown = &r;
    }
    if (shown)
      ImGui::Text("%s, %zu ops (run %lld, %s of %zu recorded runs)",
                  format_ns(shown->t1 - shown->t0).c_str(), shown->ops,
                  static_cast<long long>(shown->run), shown == median ? "median" : "one",
                  runs_.size());
    else
      ImGui::Text("%zu recorded runs: %s", runs_.size(), format_ns(range_t1_ - range_t0_).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("fit")) frame.command("trace.zoom=fit");
    item_tooltip(
        "Show the whole run (or double-click the timeline). Wheel zooms, drag pans, "
        "shift+wheel scrolls the tracks.");
    const char* hint = shown ? "times from the run's start" : "times from the first span";
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(hint).x) ImGui::NewLine();
    ImGui::TextDisabled("%s", hint);
  }

  // Canvas and input.
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 200.0f);
  size.y = std::max(size.y, 100.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const bool released = ImGui::InvisibleButton("##trace_canvas", size);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  if (ImGui::IsItemActivated()) dragging_ = false;
  const ImGuiIO& io = ImGui::GetIO();
  const float line_h = ImGui::GetTextLineHeight();
  const float row_h = line_h + 6;
  const float counter_h = row_h * 2;
  float label_w = 80;
  for (const Track& t : tracks_)
    label_w = std::max(label_w, ImGui::CalcTextSize(t.label.c_str()).x + 14);
  label_w = std::min(label_w, std::max(80.0f, size.x * 0.25f));
  const ImRect canvas(origin, ImVec2(origin.x + size.x, origin.y + size.y));
  const ImRect plot(canvas.Min.x + label_w, canvas.Min.y + line_h + 8, canvas.Max.x - 6,
                    canvas.Max.y);
  const float plot_w = std::max(plot.GetWidth(), 1.0f);

  float content_h = 0;
  for (const Track& t : tracks_)
    content_h += static_cast<float>(t.rows.size()) * row_h + kTrackGapPx;
  if (!counter_.empty()) content_h += counter_h + kTrackGapPx;
  const float max_scroll = std::max(0.0f, content_h - plot.GetHeight());

  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    fit_view();
  } else if (hovered && io.MouseWheel != 0 && io.KeyShift) {
    scroll_y_ -= io.MouseWheel * row_h * 2;
  } else if (hovered && io.MouseWheel != 0) {
    // Zoom around the time under the cursor, so it stays put.
    const double w = view_t1_ - view_t0_;
    const double at =
        view_t0_ + (std::clamp(io.MousePos.x, plot.Min.x, plot.Max.x) - plot.Min.x) / plot_w * w;
    const double nw = w * std::pow(kZoomStep, -io.MouseWheel);
    view_t0_ = at - (at - view_t0_) * nw / w;
    view_t1_ = view_t0_ + nw;
    clamp_view();
  }
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    dragging_ = true;
    const double shift = -io.MouseDelta.x / plot_w * (view_t1_ - view_t0_);
    view_t0_ += shift;
    view_t1_ += shift;
    clamp_view();
  }
  if (pending_zoom_ != 1) {
    const double c = (view_t0_ + view_t1_) / 2, w = (view_t1_ - view_t0_) / pending_zoom_;
    view_t0_ = c - w / 2;
    view_t1_ = c + w / 2;
    pending_zoom_ = 1;
    clamp_view();
  }
  if (pending_pan_ != 0) {
    const double shift = pending_pan_ * (view_t1_ - view_t0_);
    view_t0_ += shift;
    view_t1_ += shift;
    pending_pan_ = 0;
    clamp_view();
  }
  scroll_y_ = std::clamp(scroll_y_, 0.0f, max_scroll);
  const bool clicked = released && !dragging_;

  // A new selection off screen: centre the view on its first span in the displayed range.
  if (reveal_selection_ && selected_node_ >= 0) {
    const Item* first = nullptr;
    bool visible = false;
    for (const ItemRef& ref : op_items_of_node_[static_cast<size_t>(selected_node_)]) {
      const Item& it = tracks_[ref.track].rows[ref.row].items[ref.item];
      if (it.t1 < range_t0_ || it.t0 > range_t1_) continue;
      if (!first) first = &it;
      if (it.t1 >= view_t0_ && it.t0 <= view_t1_) visible = true;
    }
    if (first && !visible) {
      const double w = view_t1_ - view_t0_, c = (first->t0 + first->t1) / 2;
      view_t0_ = c - w / 2;
      view_t1_ = c + w / 2;
      clamp_view();
    }
  }
  reveal_selection_ = false;

  const double view_w = view_t1_ - view_t0_;
  auto x_of = [&](double t) {
    return plot.Min.x + static_cast<float>((t - view_t0_) / view_w * plot_w);
  };
  const double lo = std::max(view_t0_, range_t0_), hi = std::min(view_t1_, range_t1_);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(canvas.Min, canvas.Max, true);
  dl->AddRectFilled(plot.Min, plot.Max, kPlotBg);

  // Time axis along the top, with grid lines down through the tracks.
  {
    const double step = nice_step(view_w * kTickSpacingPx / plot_w);
    const double magnitude =
        std::max(std::fabs(view_t0_ - range_t0_), std::fabs(view_t1_ - range_t0_));
    char label[48];
    for (double t = std::ceil((view_t0_ - range_t0_) / step) * step; t <= view_t1_ - range_t0_;
         t += step) {
      const float x = x_of(range_t0_ + t);
      dl->AddLine(ImVec2(x, plot.Min.y - 4), ImVec2(x, plot.Max.y), kGridColor);
      format_tick(label, sizeof label, std::fabs(t) < step * 1e-6 ? 0.0 : t, step, magnitude);
      const float tw = ImGui::CalcTextSize(label).x;
      if (x >= plot.Min.x - 1 && x + tw / 2 <= canvas.Max.x)
        dl->AddText(ImVec2(x - tw / 2, canvas.Min.y + 2), kAxisText, label);
    }
    // The displayed run's edges.
    dl->AddLine(ImVec2(x_of(range_t0_), plot.Min.y), ImVec2(x_of(range_t0_), plot.Max.y),
                kSeparator);
    dl->AddLine(ImVec2(x_of(range_t1_), plot.Min.y), ImVec2(x_of(range_t1_), plot.Max.y),
                kSeparator);
  }

  struct Hover {
    const Item* item = nullptr;
    size_t merged = 0;
  } hover;
  const bool mouse_in_plot = hovered && plot.Contains(io.MousePos);
  const float min_label_px = ImGui::CalcTextSize("abc").x;
  ImFont* font = ImGui::GetFont();
  const float font_size = ImGui::GetFontSize();

  // Item label: the longest of (span name, node name, op) that fits.
  auto draw_label = [&](const Item& it, float x0, float x1, float y0) {
    const float v0 = std::max(x0, plot.Min.x) + 3, v1 = std::min(x1, plot.Max.x) - 3;
    if (v1 - v0 < min_label_px) return;
    const char* candidates[3] = {nullptr, nullptr, nullptr};
    if (it.kind == ItemKind::Kernel || it.kind == ItemKind::Memcpy || it.kind == ItemKind::Memset ||
        it.kind == ItemKind::Runtime) {
      candidates[0] = rec.device[static_cast<size_t>(it.index)].name.c_str();
    } else {
      candidates[0] = rec.spans[static_cast<size_t>(it.index)].name.c_str();
    }
    if (it.node >= 0 && static_cast<size_t>(it.node) < rec.nodes.size()) {
      candidates[1] = rec.nodes[static_cast<size_t>(it.node)].name.c_str();
      candidates[2] = rec.nodes[static_cast<size_t>(it.node)].op.c_str();
    }
    for (const char* text : candidates) {
      if (!text) continue;
      if (ImGui::CalcTextSize(text).x <= v1 - v0) {
        dl->AddText(font, font_size, ImVec2(v0, y0 + 2), text_on(it.color), text);
        return;
      }
    }
  };

  // One row: binary search to the first bar that can reach the view, then bars until the view
  // ends. Bars under a pixel wide that touch are merged into one.
  auto draw_row = [&](const Row& row, float y0) {
    const float y1 = y0 + row_h - 2;
    if (y1 < plot.Min.y || y0 > plot.Max.y || row.items.empty() || lo > hi) return;
    const bool mouse_row = mouse_in_plot && io.MousePos.y >= y0 && io.MousePos.y < y1;
    auto it = std::lower_bound(row.items.begin(), row.items.end(), lo - row.max_len,
                               [](const Item& a, double t) { return a.t0 < t; });
    float gx0 = 0, gx1 = 0;
    size_t gcount = 0;
    const Item* gfirst = nullptr;
    auto flush = [&] {
      if (gcount == 0) return;
      const float x1 = std::max(gx1, gx0 + 1);
      dl->AddRectFilled(ImVec2(gx0, y0), ImVec2(x1, y1),
                        gcount > 1 ? dimmed(gfirst->color) : gfirst->color);
      drawn.spans += gcount;
      if (mouse_row && io.MousePos.x >= gx0 - 1 && io.MousePos.x <= x1 + 1)
        hover = {gfirst, gcount};
      gcount = 0;
    };
    for (; it != row.items.end() && it->t0 <= hi; ++it) {
      if (it->t1 < lo) continue;
      float x0 = x_of(it->t0), x1 = x_of(it->t1);
      if (x1 - x0 < 1) {
        if (gcount > 0 && x0 <= gx1 + 1) {
          gx1 = std::max(gx1, x1);
          ++gcount;
        } else {
          flush();
          gx0 = x0, gx1 = x1, gcount = 1, gfirst = &*it;
        }
        continue;
      }
      flush();
      x0 = std::max(x0, plot.Min.x - 2);  // keep far-off coordinates out of the vertex buffer
      x1 = std::min(x1, plot.Max.x + 2);
      dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), it->color);
      if (x1 - x0 > 4) dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), kSpanEdge);
      ++drawn.spans;
      draw_label(*it, x0, x1, y0);
      if (mouse_row && io.MousePos.x >= x0 && io.MousePos.x < x1) hover = {&*it, 1};
    }
    flush();
  };

  // Tracks: labels on the left, rows on the right.
  track_top_.clear();
  const ImRect tracks_clip(ImVec2(canvas.Min.x, plot.Min.y), canvas.Max);
  dl->PushClipRect(tracks_clip.Min, tracks_clip.Max, true);
  float y = plot.Min.y - scroll_y_;
  for (size_t t = 0; t < tracks_.size(); ++t) {
    const Track& track = tracks_[t];
    const float h = static_cast<float>(track.rows.size()) * row_h;
    track_top_.push_back(y);
    if (t % 2 == 1)
      dl->AddRectFilled(ImVec2(canvas.Min.x, y), ImVec2(canvas.Max.x, y + h), kTrackBgOdd);
    dl->PushClipRect(plot.Min, plot.Max, true);
    for (size_t r = 0; r < track.rows.size(); ++r)
      draw_row(track.rows[r], y + static_cast<float>(r) * row_h + 1);
    dl->PopClipRect();
    const ImVec4 label_clip(canvas.Min.x, y, plot.Min.x - 4, y + h);
    dl->AddText(font, font_size, ImVec2(canvas.Min.x + 6, y + 3), kLabelText, track.label.c_str(),
                nullptr, 0, &label_clip);
    y += h + kTrackGapPx;
    dl->AddLine(ImVec2(canvas.Min.x, y - kTrackGapPx / 2),
                ImVec2(canvas.Max.x, y - kTrackGapPx / 2), kSeparator);
  }

  // The arena counter: live bytes as a step area, one bar per pixel column at most.
  double counter_hover_value = -1;
  if (!counter_.empty()) {
    const float y0 = y, y1 = y + counter_h - 2;
    const ImVec4 label_clip(canvas.Min.x, y0, plot.Min.x - 4, y1);
    dl->AddText(font, font_size, ImVec2(canvas.Min.x + 6, y0 + 3), kLabelText, "arena live",
                nullptr, 0, &label_clip);
    const std::string peak = format_bytes(counter_max_);
    dl->AddText(font, font_size, ImVec2(canvas.Min.x + 6, y0 + 3 + line_h), kAxisText, peak.c_str(),
                nullptr, 0, &label_clip);
    dl->PushClipRect(plot.Min, plot.Max, true);
    auto y_of = [&](double v) { return y1 - static_cast<float>(v / counter_max_) * (y1 - y0 - 2); };
    auto bar = [&](float x0, float x1, double v) {
      if (v <= 0) return;
      dl->AddRectFilled(ImVec2(x0, y_of(v)), ImVec2(x1, y1), kCounterFill);
      dl->AddLine(ImVec2(x0, y_of(v)), ImVec2(x1, y_of(v)), kCounterTop);
    };
    if (lo <= hi && y1 >= plot.Min.y && y0 <= plot.Max.y) {
      auto first = std::upper_bound(counter_.begin(), counter_.end(), lo,
                                    [](double t, const auto& s) { return t < s.first; });
      if (first != counter_.begin()) --first;
      float bx0 = 0, bx1 = 0;
      double bmax = 0;
      bool open = false;
      for (auto it = first; it != counter_.end() && it->first <= hi; ++it) {
        const double t0 = std::max(it->first, lo);
        const double t1 = std::min(std::next(it) != counter_.end() ? std::next(it)->first : hi, hi);
        if (t1 <= t0) continue;
        const float x0 = x_of(t0), x1 = x_of(t1);
        if (!open)
          bx0 = x0, bmax = it->second, open = true;
        else
          bmax = std::max(bmax, it->second);
        bx1 = x1;
        if (bx1 - bx0 >= 1) {
          bar(bx0, bx1, bmax);
          open = false;
        }
      }
      if (open) bar(bx0, std::max(bx1, bx0 + 1), bmax);
      if (mouse_in_plot && io.MousePos.y >= y0 && io.MousePos.y < y1) {
        const double t = view_t0_ + (io.MousePos.x - plot.Min.x) / plot_w * view_w;
        auto at = std::upper_bound(counter_.begin(), counter_.end(), t,
                                   [](double v, const auto& s) { return v < s.first; });
        if (at != counter_.begin() && t >= lo && t <= hi)
          counter_hover_value = std::prev(at)->second;
      }
    }
    dl->PopClipRect();
    y += counter_h + kTrackGapPx;
  }
  drawn.tracks = tracks_.size() + (counter_.empty() ? 0 : 1);

  // The selected node's op spans in the displayed range, outlined on top.
  dl->PushClipRect(plot.Min, plot.Max, true);
  if (selected_node_ >= 0 && static_cast<size_t>(selected_node_) < op_items_of_node_.size()) {
    for (const ItemRef& ref : op_items_of_node_[static_cast<size_t>(selected_node_)]) {
      const Item& it = tracks_[ref.track].rows[ref.row].items[ref.item];
      if (it.t1 < lo || it.t0 > hi) continue;
      float x0 = x_of(it.t0), x1 = x_of(it.t1);
      if (x1 - x0 < 4) {  // a thin span still gets a visible outline
        const float c = (x0 + x1) / 2;
        x0 = c - 2, x1 = c + 2;
      }
      x0 = std::max(x0, plot.Min.x - 3);
      x1 = std::min(x1, plot.Max.x + 3);
      const float y0 = track_top_[ref.track] + static_cast<float>(ref.row) * row_h + 1;
      ImRect r(x0, y0, x1, y0 + row_h - 2);
      // Inside the box: its edge pixels are then the selection colour, not a blend.
      dl->AddRect(r.Min, r.Max, kSelectionColor, 0, 0, 3.0f);
      r.ClipWithFull(plot);
      if (r.GetWidth() <= 0 || r.GetHeight() <= 0) continue;  // scrolled out of sight
      drawn.selected_rects.push_back(r);
      ++drawn.selected_spans;
    }
  }
  if (hover.item && hover.merged == 1) {
    const float x0 = std::max(x_of(hover.item->t0), plot.Min.x - 2);
    const float x1 = std::min(std::max(x_of(hover.item->t1), x0 + 1), plot.Max.x + 2);
    const float hy = io.MousePos.y;
    for (size_t t = 0; t < tracks_.size(); ++t) {
      const float top = track_top_[t];
      const float h = static_cast<float>(tracks_[t].rows.size()) * row_h;
      if (hy < top || hy >= top + h) continue;
      const float ry = top + std::floor((hy - top) / row_h) * row_h + 1;
      dl->AddRect(ImVec2(x0, ry), ImVec2(x1, ry + row_h - 2), kHoverEdge, 0, 0, 1.5f);
    }
  }
  dl->PopClipRect();
  dl->PopClipRect();  // tracks
  dl->PopClipRect();  // canvas

  // Tooltips.
  if (hover.item && !dragging_) {
    const Item& it = *hover.item;
    ImGui::BeginTooltip();
    if (hover.merged > 1) {
      ImGui::Text("%zu spans under a pixel each, merged: zoom in to tell them apart", hover.merged);
      ImGui::TextDisabled("first: %s", it.kind == ItemKind::Kernel || it.kind == ItemKind::Memcpy ||
                                               it.kind == ItemKind::Memset ||
                                               it.kind == ItemKind::Runtime
                                           ? rec.device[static_cast<size_t>(it.index)].name.c_str()
                                           : rec.spans[static_cast<size_t>(it.index)].name.c_str());
    } else if (it.kind == ItemKind::Stage || it.kind == ItemKind::Run || it.kind == ItemKind::Op) {
      const profiler::Span& s = rec.spans[static_cast<size_t>(it.index)];
      ImGui::TextUnformatted(s.name.c_str());
      ImGui::TextDisabled("%s span, thread %d", profiler::span_kind_name(s.kind), s.tid);
      ImGui::Text("duration %s, starts at %s", format_ns(it.t1 - it.t0).c_str(),
                  format_ns(it.t0 - range_t0_).c_str());
      if (s.run >= 0 && s.kind == profiler::SpanKind::Op)
        ImGui::Text("run %lld", static_cast<long long>(s.run));
      if (s.node >= 0 && static_cast<size_t>(s.node) < rec.nodes.size()) {
        const profiler::NodeInfo& n = rec.nodes[static_cast<size_t>(s.node)];
        const double secs = (it.t1 - it.t0) * 1e-9;
        ImGui::Text("node %s (op %s)", n.name.c_str(), n.op.c_str());
        ImGui::Text("%sFLOP, %s moved", format_count(n.flops).c_str(),
                    format_bytes(n.bytes).c_str());
        if (secs > 0)
          ImGui::Text("%.2f GFLOP/s, %.2f GB/s in this call", n.flops / secs * 1e-9,
                      n.bytes / secs * 1e-9);
        for (size_t i = 0; i < n.inputs.size(); ++i)
          ImGui::Text("in  %s %s", n.inputs[i].c_str(),
                      i < n.input_shapes.size() ? shape_text(n.input_shapes[i]).c_str() : "");
        for (size_t i = 0; i < n.outputs.size(); ++i)
          ImGui::Text("out %s %s", n.outputs[i].c_str(),
                      i < n.output_shapes.size() ? shape_text(n.output_shapes[i]).c_str() : "");
        ImGui::TextDisabled("click: select %s", n.name.c_str());
      }
    } else {
      const exec::DeviceActivity& a = rec.device[static_cast<size_t>(it.index)];
      ImGui::TextUnformatted(a.name.c_str());
      ImGui::TextDisabled("%s, GPU %d stream %d", activity_kind_name(a.kind), a.device, a.stream);
      ImGui::Text("duration %s, starts at %s", format_ns(it.t1 - it.t0).c_str(),
                  format_ns(it.t0 - range_t0_).c_str());
      if (a.kind == exec::ActivityKind::Kernel)
        ImGui::Text("grid (%d,%d,%d) block (%d,%d,%d), %d registers, %d B shared", a.grid[0],
                    a.grid[1], a.grid[2], a.block[0], a.block[1], a.block[2], a.registers,
                    a.shared_memory);
      if (a.kind == exec::ActivityKind::Memcpy || a.kind == exec::ActivityKind::Memset)
        ImGui::Text("%s", format_bytes(static_cast<double>(a.bytes)).c_str());
      if (a.node_index >= 0 && static_cast<size_t>(a.node_index) < rec.nodes.size())
        ImGui::Text("node %s (op %s)", rec.nodes[static_cast<size_t>(a.node_index)].name.c_str(),
                    rec.nodes[static_cast<size_t>(a.node_index)].op.c_str());
    }
    ImGui::EndTooltip();
  } else if (counter_hover_value >= 0 && !dragging_) {
    ImGui::SetTooltip("arena live bytes: %s", format_bytes(counter_hover_value).c_str());
  }

  // Clicks: a bar with a node selects it, empty space clears the selection.
  if (clicked) {
    if (hover.item && hover.merged == 1) {
      if (hover.item->node >= 0 && static_cast<size_t>(hover.item->node) < rec.nodes.size())
        frame.command("select=" + rec.nodes[static_cast<size_t>(hover.item->node)].name);
    } else if (!hover.item) {
      frame.command("select=");
    }
  }
}

}  // namespace fusebox::ui
