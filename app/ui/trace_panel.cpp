#include "app/ui/trace_panel.h"

#include <GLFW/glfw3.h>  // key codes: the ImGui GLFW backend's key indices are GLFW's

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "app/ui/plot.h"
#include "app/ui/widgets.h"
#include "app/workbench/graph_layout.h"
#include "app/workbench/opened_trace.h"
#include "core/backend/device_activity.h"
#include "core/base/strings.h"
#include "profiler/counters.h"
#include "profiler/recording.h"
#include "profiler/timeline.h"

namespace fusebox::ui {

namespace {

constexpr double kMinViewNs = 100;        // zooming further shows nothing a clock can resolve
constexpr double kMarginFraction = 0.02;  // room left and right of the displayed run(s)
constexpr double kZoomStep = 1.25;        // per wheel notch
constexpr float kTickSpacingPx = 90;
constexpr float kTrackGapPx = 5;
constexpr ImU32 kTrackBgOdd = IM_COL32(255, 255, 255, 8);
constexpr ImU32 kGridColor = IM_COL32(255, 255, 255, 20);
constexpr ImU32 kLabelText = IM_COL32(220, 220, 220, 255);
constexpr ImU32 kFoldText = IM_COL32(140, 180, 230, 255);  // "+9 levels" under a label
constexpr ImU32 kSeparator = IM_COL32(255, 255, 255, 35);
constexpr ImU32 kGroupBg = IM_COL32(70, 90, 130, 110);
constexpr ImU32 kSpanEdge = IM_COL32(0, 0, 0, 120);
constexpr ImU32 kRunColor = IM_COL32(88, 108, 140, 255);
constexpr ImU32 kStageColor = IM_COL32(128, 98, 160, 255);
constexpr ImU32 kRuntimeColor = IM_COL32(124, 124, 136, 255);
constexpr ImU32 kCounterFill = IM_COL32(70, 170, 190, 200);
constexpr ImU32 kCounterTop = IM_COL32(140, 225, 240, 255);
constexpr ImU32 kHoverEdge = IM_COL32(255, 255, 255, 255);
constexpr ImU32 kFlowColor = IM_COL32(250, 250, 250, 70);
constexpr ImU32 kFlowHovered = IM_COL32(255, 255, 255, 230);
constexpr ImU32 kGapFill = (kIdleColor & ~IM_COL32_A_MASK) | (ImU32{55} << IM_COL32_A_SHIFT);
constexpr ImU32 kGapSelected = IM_COL32(255, 170, 60, 255);
constexpr size_t kMaxFlowsDrawn = 400;  // more in view: only the hovered item's
constexpr ImU32 kFindColor = IM_COL32(170, 255, 60, 255);  // find's marks (selection is yellow)
constexpr ImU32 kHistBar = IM_COL32(110, 140, 190, 255);
constexpr size_t kHistBins = 40;  // log-spaced between the shortest and the longest match

// A rank's header: its step time, computation, communication (exposed), idle and its wait for
// the straggler over the steps every rank has (profiler/ranks.h's definitions).
std::string rank_title(const workbench::OpenedTrace* trace, const profiler::RankSlice& g) {
  if (!trace || !trace->ranks) return g.label;
  const profiler::RankAnalysis& a = *trace->ranks;
  // Per step, the mean over the common steps, as the op table's rank rows.
  const double steps = static_cast<double>(std::max<size_t>(1, a.steps.size()));
  auto mean = [&](int64_t v) { return format_ns(static_cast<double>(v) / steps); };
  for (const profiler::RankSummary& r : a.ranks) {
    if (r.rank != g.rank) continue;
    std::string t = g.label + "   step " + mean(r.step_ns) + "   compute " + mean(r.compute_ns) +
                    "   communication " + mean(r.comm_ns) + " (exposed " + mean(r.comm_exposed_ns) +
                    ")   idle " + mean(r.idle_ns);
    if (a.straggler == r.rank) return t + "   the straggler: the others wait for it";
    if (a.straggler >= 0 && a.communication)
      t += "   waits " + mean(r.wait_ns) + " for rank " + std::to_string(a.straggler);
    return t;
  }
  return g.label;
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

const char* activity_label(exec::ActivityKind kind) {
  switch (kind) {
    case exec::ActivityKind::Kernel:
      return "kernel";
    case exec::ActivityKind::Memcpy:
      return "memcpy";
    case exec::ActivityKind::Memset:
      return "memset";
    case exec::ActivityKind::Runtime:
      return "CUDA API call";
    case exec::ActivityKind::Sync:
      return "synchronisation";
  }
  return "?";
}

// The item's name: the span's, or the device activity's.
const std::string& item_name(const profiler::Recording& rec, const profiler::TimelineItem& it) {
  return profiler::is_device_item(it.kind) ? rec.device[static_cast<size_t>(it.index)].name
                                           : rec.spans[static_cast<size_t>(it.index)].name;
}

// Whether `text` contains `lower` (a lower-case query), any case.
bool name_has_any_case(const std::string& text, const std::string& lower) {
  return std::search(text.begin(), text.end(), lower.begin(), lower.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

void span_tooltip(const profiler::Recording& rec, const profiler::TimelineItem& it,
                  double range_t0) {
  const profiler::Span& s = rec.spans[static_cast<size_t>(it.index)];
  ImGui::TextUnformatted(s.name.c_str());
  ImGui::TextDisabled("%s span, thread %d", profiler::span_kind_name(s.kind), s.tid);
  ImGui::Text("duration %s, starts at %s", format_ns(it.t1 - it.t0).c_str(),
              format_ns(it.t0 - range_t0).c_str());
  if (s.run >= 0 && (s.kind == profiler::SpanKind::Op || s.kind == profiler::SpanKind::Worker))
    ImGui::Text("run %lld", static_cast<long long>(s.run));
  if (s.node < 0 || static_cast<size_t>(s.node) >= rec.nodes.size()) return;
  const profiler::NodeInfo& n = rec.nodes[static_cast<size_t>(s.node)];
  const double secs = (it.t1 - it.t0) * 1e-9;
  ImGui::Text("node %s (op %s)", n.name.c_str(), n.op.c_str());
  ImGui::Text("%sFLOP, %s moved", format_count(n.flops).c_str(), format_bytes(n.bytes).c_str());
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

void device_tooltip(const profiler::Recording& rec, const profiler::TimelineItem& it,
                    double range_t0) {
  const exec::DeviceActivity& a = rec.device[static_cast<size_t>(it.index)];
  ImGui::TextUnformatted(a.name.c_str());
  ImGui::TextDisabled("%s, GPU %d stream %d", activity_label(a.kind), a.device, a.stream);
  ImGui::Text("duration %s, starts at %s", format_ns(it.t1 - it.t0).c_str(),
              format_ns(it.t0 - range_t0).c_str());
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

// "1.5" -> 1.5; false on anything else (empty, trailing text, inf, nan).
bool parse_finite(const std::string& value, double& out) {
  char* end = nullptr;
  out = std::strtod(value.c_str(), &end);
  return !value.empty() && *end == '\0' && std::isfinite(out);
}

}  // namespace

struct TracePanel::Canvas {
  ImDrawList* dl = nullptr;
  ImRect canvas, plot;
  float plot_w = 1, line_h = 0, row_h = 0, counter_h = 0;
  bool hovered = false, active = false, released = false;
  // Set once the input moved the view.
  double view_t0 = 0, view_w = 1;
  double lo = 0, hi = 0;  // the displayed range within the view
  bool mouse_in_plot = false;
  float x_of(double t) const {
    return plot.Min.x + static_cast<float>((t - view_t0) / view_w * plot_w);
  }
  double t_of(float x) const {
    return view_t0 + static_cast<double>(x - plot.Min.x) / plot_w * view_w;
  }
};

// --- The model and the view ---------------------------------------------------------------------

void TracePanel::rebuild(const profiler::Recording& rec, const workbench::OpenedTrace* trace,
                         const void* source, uint64_t sequence) {
  built_for_ = source;
  built_sequence_ = sequence;
  // An opened file is shown whole (fusebox's own export read back holds runs: a generation's
  // steps, a profile's calls; trace.run= still picks one); back to a model, its median run.
  if (trace)
    mode_ = RunMode::All;
  else if (whole_)
    mode_ = RunMode::Median;
  whole_ = trace != nullptr;
  range_.reset();  // another recording: its times are not the range's
  range_computed_.reset();
  if (trace && !trace->slices.empty()) {
    timeline_ = profiler::build_timeline(rec, trace->slices);  // each rank GPU first
  } else {
    timeline_ = profiler::build_timeline(rec);
    if (trace) profiler::put_gpu_first(timeline_);  // a recording: its GPU in view first
  }
  group_titles_.clear();
  for (const profiler::RankSlice& g : timeline_.groups)
    group_titles_.push_back(rank_title(trace, g) + "   (host threads: trace.hosts=" + std::to_string(g.rank) + ")");
  // Several ranks: each shows its GPU streams and launches; host threads on request.
  hosts_shown_.assign(timeline_.groups.size(), timeline_.groups.size() < 2);
  fold_tracks();
  const std::vector<profiler::NodeInfo>& nodes = rec.nodes;
  node_color_.resize(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n)
    node_color_[n] = rgb(workbench::node_kind_rgb(workbench::node_kind(nodes[n].op)));
}

ImU32 TracePanel::color_of(const profiler::TimelineItem& it) const {
  const bool known_node = it.node >= 0 && static_cast<size_t>(it.node) < node_color_.size();
  switch (it.kind) {
    case profiler::TimelineItemKind::Stage:
    case profiler::TimelineItemKind::Range: return kStageColor;
    case profiler::TimelineItemKind::Run: return kRunColor;
    case profiler::TimelineItemKind::Op:
    case profiler::TimelineItemKind::Worker:
      return known_node ? node_color_[static_cast<size_t>(it.node)] : kRuntimeColor;
    case profiler::TimelineItemKind::Kernel:
      return known_node ? node_color_[static_cast<size_t>(it.node)] : kKernelColor;
    case profiler::TimelineItemKind::Memcpy: return kMemcpyColor;
    case profiler::TimelineItemKind::Memset: return kMemsetColor;
    case profiler::TimelineItemKind::Runtime: return kRuntimeColor;
    case profiler::TimelineItemKind::Sync: return kSyncColor;
  }
  return kRuntimeColor;
}

const profiler::RunRange* TracePanel::shown_run() const {
  if (mode_ == RunMode::All) return nullptr;
  const profiler::RunRange* run = timeline_.median();
  if (run && mode_ == RunMode::One)
    if (const profiler::RunRange* chosen = timeline_.find_run(run_choice_)) run = chosen;
  return run;
}

void TracePanel::update_range() {
  const profiler::RunRange* run = shown_run();
  range_t0_ = run ? run->t0 : timeline_.extent_t0;
  range_t1_ = run ? run->t1 : timeline_.extent_t1;
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

void TracePanel::pan_view(double shift) {
  view_t0_ += shift;
  view_t1_ += shift;
  clamp_view();
}

// The time `at` stays where it is on screen.
void TracePanel::zoom_view(double at, double new_width) {
  const double w = view_t1_ - view_t0_;
  view_t0_ = at - (at - view_t0_) * new_width / w;
  view_t1_ = view_t0_ + new_width;
  clamp_view();
}

// --- Switches -----------------------------------------------------------------------------------

std::string TracePanel::set_run(const std::string& value, const workbench::RunResult* result) {
  if (value == "median") {
    mode_ = RunMode::Median;
  } else if (value == "all") {
    mode_ = RunMode::All;
  } else {
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size())
      return "expected median, all or a run number, got '" + value + "'";
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
        return lo > hi ? "the recording has no runs (valid: median, all)"
                       : "no run " + value + " in the recording (valid: median, all, " +
                             std::to_string(lo) + ".." + std::to_string(hi) + ")";
    } else if (result) {
      return "no recorded runs (profile_runs=0) (valid: median, all)";
    }
    mode_ = RunMode::One;
    run_choice_ = n;
  }
  fitted_ = true;
  pending_pan_ = 0;
  pending_zoom_ = 1;
  return "";
}

std::string TracePanel::set_zoom(const std::string& value) {
  if (value == "fit") {
    fitted_ = true;
    pending_zoom_ = 1;
    return "";
  }
  double f = 0;
  if (!parse_finite(value, f) || f <= 0)
    return "expected fit or a factor > 0 (2 zooms in 2x), got '" + value + "'";
  pending_zoom_ *= f;
  return "";
}

std::string TracePanel::set_pan(const std::string& value) {
  double f = 0;
  if (!parse_finite(value, f))
    return "expected a fraction of the view (0.25 right, -0.25 left), got '" + value + "'";
  pending_pan_ += f;
  return "";
}

std::string TracePanel::set_gap(const std::string& value) {
  if (value == "none") {
    gap_choice_ = -1;
    return "";
  }
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 0)
    return "expected none or a gap number (0 = the longest), got '" + value + "'";
  if (gaps_.empty()) return "no GPU-idle gaps on screen (open a GPU trace: open=FILE)";
  if (static_cast<size_t>(n) >= gaps_.size())
    return "no gap " + value + " (valid: none, 0.." + std::to_string(gaps_.size() - 1) + ")";
  gap_choice_ = n;
  pending_gap_view_ = true;
  return "";
}

std::string TracePanel::set_range(const std::string& value) {
  if (value == "none") {
    range_.reset();
    return "";
  }
  if (timeline_.tracks.empty()) return "range: nothing on the timeline yet";
  if (value == "view") {
    range_ = {view_t0_, view_t1_};
    return "";
  }
  const std::string expected = "expected none, view, or two different times in microseconds from the timeline's "
                               "zero (range=120,480), got '" + value + "'";
  const size_t comma = value.find(',');
  if (comma == std::string::npos) return expected;
  double a = 0, b = 0;
  try {
    a = parse_double(value.substr(0, comma), "trace.range");
    b = parse_double(value.substr(comma + 1), "trace.range");
  } catch (const Error&) {
    return expected;
  }
  if (!std::isfinite(a) || !std::isfinite(b) || a == b || std::fabs(a) > 1e15 || std::fabs(b) > 1e15) return expected;
  range_ = {std::min(a, b) * 1e3, std::max(a, b) * 1e3};
  return "";
}

std::string TracePanel::set_hosts(const std::string& value) {
  if (timeline_.groups.empty()) return "hosts: only with several ranks open (open=FOLDER of rank traces)";
  std::string ranks;
  for (size_t g = 0; g < timeline_.groups.size(); ++g) {
    ranks += (g ? ", " : "") + std::to_string(timeline_.groups[g].rank);
    if (value == "all" || value == "none" || value == std::to_string(timeline_.groups[g].rank))
      hosts_shown_[g] = value != "none";
  }
  if (value == "all" || value == "none") return "";
  for (const profiler::RankSlice& g : timeline_.groups)
    if (value == std::to_string(g.rank)) return "";
  return "hosts: no rank " + value + " (valid: none, all, " + ranks + ")";
}

size_t TracePanel::rows_shown(size_t t) const {
  const size_t rows = timeline_.tracks[t].rows.size();
  return t < rows_shown_.size() ? std::min(rows, rows_shown_[t]) : rows;
}

void TracePanel::unfold(size_t t) {
  if (t < rows_shown_.size()) rows_shown_[t] = SIZE_MAX;
}

void TracePanel::fold_tracks() {
  rows_shown_.assign(timeline_.tracks.size(), SIZE_MAX);
  for (size_t t = 0; t < timeline_.tracks.size(); ++t) {
    const profiler::TrackKind kind = timeline_.tracks[t].kind;
    if (kind == profiler::TrackKind::Nvtx || kind == profiler::TrackKind::Cpu)
      rows_shown_[t] = depth_;
  }
}

std::string TracePanel::set_depth(const std::string& value) {
  if (value == "all") {
    depth_ = SIZE_MAX;
  } else {
    int n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 1)
      return "depth: '" + value + "' is not all or a number of rows from 1";
    depth_ = static_cast<size_t>(n);
  }
  fold_tracks();
  return "";
}

bool TracePanel::hidden(size_t t) const {
  const profiler::TimelineTrack& track = timeline_.tracks[t];
  return track.group >= 0 && !hosts_shown_[static_cast<size_t>(track.group)] &&
         track.kind != profiler::TrackKind::GpuStream && track.kind != profiler::TrackKind::CudaApi;
}

std::vector<PanelSwitch> TracePanel::switches() {
  return {
      {"run", {}, "median | all | <n>",
       "which recorded run(s) to show (the view fits the new range)",
       [this](const std::string& v, const workbench::RunResult* r) { return set_run(v, r); }},
      {"zoom", {}, "fit | <factor>",
       "show the whole range, or zoom in (> 1) or out around the centre",
       [this](const std::string& v, const workbench::RunResult*) { return set_zoom(v); }},
      {"pan", {}, "<fraction>", "move the view by a fraction of its width (0.25 right)",
       [this](const std::string& v, const workbench::RunResult*) { return set_pan(v); }},
      {"select", {}, "none | <host span name> | <kernel name prefix>",
       "with a GPU trace open: pick a host span or kernel; what it is tied to lights up (a "
       "collective: on every rank)",
       [this](const std::string& v, const workbench::RunResult*) { return set_select(v); }},
      {"hosts", {}, "none | all | <rank>",
       "with several ranks open: whose host threads to show under their GPU tracks",
       [this](const std::string& v, const workbench::RunResult*) { return set_hosts(v); }},
      {"depth", {}, "all | <n>",
       "the rows each host track (NVTX, CPU) shows: its outermost n nesting levels (4 at first), "
       "or all; a click on a track's label folds or unfolds it",
       [this](const std::string& v, const workbench::RunResult*) { return set_depth(v); }},
      {"gap", {}, "none | <n>",
       "with a GPU trace open: select its n-th longest GPU-idle gap (0 = longest) and show it",
       [this](const std::string& v, const workbench::RunResult*) { return set_gap(v); }},
      {"find", {}, "<text>",
       "mark every span and kernel whose name contains the text (any case) and show the next "
       "(empty: close)",
       [this](const std::string& v, const workbench::RunResult*) { return set_find(v); }},
      {"match", {}, "next | prev | <n>", "show the n-th match of find= (from 1)",
       [this](const std::string& v, const workbench::RunResult*) { return set_match(v); }},
      {"histogram", {"show", "hide"}, "",
       "the durations of find='s matches in log-spaced bins, under the find bar",
       [this](const std::string& v, const workbench::RunResult*) { return set_histogram(v); }},
      {"bin", {}, "none | <n>", "keep only the matches in the histogram's n-th bin (from 1)",
       [this](const std::string& v, const workbench::RunResult*) { return set_bin(v); }},
      {"range", {}, "none | view | <t0>,<t1> (us)",
       "select a time range (or shift+drag on the timeline): each track's items and busy share "
       "in it, and the names taking its time",
       [this](const std::string& v, const workbench::RunResult*) { return set_range(v); }},
  };
}

std::string TracePanel::command(const std::string& key, const std::string& value,
                                const workbench::RunResult* result) {
  return run_switch("trace", switches(), key, value, result);
}

// --- Drawing ------------------------------------------------------------------------------------

// The recording on screen: an opened trace file's, else the current result's recorded runs.
const profiler::Recording* TracePanel::recording_of(const Frame& frame) {
  if (frame.trace) return &frame.trace->recording;
  if (!result_or_empty_state(frame, "trace")) return nullptr;
  if (!measured_or_note(frame, "trace")) {
    drawn.measuring = true;
    return nullptr;
  }
  if (!frame.result()->recording) {
    ImGui::TextDisabled("trace: no recorded runs (profile_runs=0): set profile_runs > 0");
    return nullptr;
  }
  return &*frame.result()->recording;
}

bool TracePanel::ensure_model(const Frame& frame) {
  const profiler::Recording* recording = recording_of(frame);
  if (!recording) return false;
  const profiler::Recording& rec = *recording;
  if (rec.spans.empty() && rec.device.empty()) {
    ImGui::TextDisabled(frame.trace ? "trace: %s has no host spans or GPU activity"
                                    : "trace: the recording has no spans%s",
                        frame.trace ? frame.trace->path.c_str() : "");
    return false;
  }
  rec_ = &rec;
  showing_trace_ = frame.trace != nullptr;
  const void* source = frame.trace ? static_cast<const void*>(frame.trace) : frame.result();
  // A trace's id: a new one at a freed one's address is still rebuilt.
  const uint64_t sequence = frame.trace ? frame.trace->id : frame.result()->sequence;
  const bool rebuilt = built_for_ != source || built_sequence_ != sequence;
  if (rebuilt) {
    rebuild(rec, frame.trace, source, sequence);
    fitted_ = true;
    gaps_.clear();
    gap_choice_ = -1;
    picked_.reset();
    linked_.clear();
    if (frame.trace) {
      for (const profiler::DeviceSplit& d : frame.trace->analysis.devices)
        for (profiler::IdleGap g : d.longest_gaps) {
          g.start_ns -= timeline_.base_ns;
          gaps_.push_back(std::move(g));
        }
      std::stable_sort(gaps_.begin(), gaps_.end(), [](const auto& a, const auto& b) {
        return a.duration_ns > b.duration_ns;
      });
    }
  }
  if (rebuilt || frame.selection.node != last_selection_) {
    last_selection_ = frame.selection.node;
    selected_node_ = -1;
    for (size_t n = 0; n < rec.nodes.size() && !frame.selection.empty(); ++n)
      if (rec.nodes[n].name == frame.selection.node) selected_node_ = static_cast<int32_t>(n);
    reveal_selection_ = true;
  }
  return true;
}

void TracePanel::draw(const Frame& frame) {
  drawn = Drawn{};
  draw_focus_border(frame, PanelId::Trace);
  if (!ensure_model(frame)) return;
  update_range();
  if (fitted_) fit_view();
  if (pending_gap_view_ && gap_choice_ >= 0 && static_cast<size_t>(gap_choice_) < gaps_.size()) {
    // The gap in the middle third of the view.
    const profiler::IdleGap& g = gaps_[static_cast<size_t>(gap_choice_)];
    const double w = std::max(3.0 * static_cast<double>(g.duration_ns), kMinViewNs);
    view_t0_ = static_cast<double>(g.start_ns) + static_cast<double>(g.duration_ns) / 2 - w / 2;
    view_t1_ = view_t0_ + w;
    fitted_ = false;
  }
  pending_gap_view_ = false;
  update_matches();
  if (match_pending_) {
    if (!matches_.empty()) {
      const auto n = static_cast<int64_t>(matches_.size());
      match_index_ = ((*match_pending_ % n) + n) % n;
      show_match(frame);
    }
    match_pending_.reset();
  }
  clamp_view();
  draw_header(frame);
  draw_find_bar(frame);

  Canvas c = layout_canvas();
  handle_input(c);
  reveal_selection();
  c.view_t0 = view_t0_;
  c.view_w = view_t1_ - view_t0_;
  c.lo = std::max(view_t0_, range_t0_);
  c.hi = std::min(view_t1_, range_t1_);
  c.mouse_in_plot = c.hovered && c.plot.Contains(ImGui::GetIO().MousePos);

  c.dl = ImGui::GetWindowDrawList();
  c.dl->PushClipRect(c.canvas.Min, c.canvas.Max, true);
  draw_plot_background(c.dl, c.plot.Min, c.plot.Max);
  draw_axis(c);
  Hover hover;
  c.dl->PushClipRect(ImVec2(c.canvas.Min.x, c.plot.Min.y), c.canvas.Max, true);  // tracks
  const float counter_y = draw_tracks(c, hover);
  const CounterHover counter_hover = draw_counters(c, counter_y);
  drawn.tracks = timeline_.tracks.size() + timeline_.counters.size();
  c.dl->PushClipRect(c.plot.Min, c.plot.Max, true);
  draw_gaps(c);
  draw_flows(c, hover);
  draw_find_marks(c);
  draw_selection(c);
  draw_range(c);
  draw_hover_edge(c, hover);
  c.dl->PopClipRect();
  c.dl->PopClipRect();  // tracks
  c.dl->PopClipRect();  // canvas
  draw_tooltip(hover, counter_hover);
  handle_click(frame, c, hover);
}

// The selected range: a band over the plot and, in its top-right corner, what lies inside it.
void TracePanel::draw_range(const Canvas& c) {
  if (!range_ || !rec_) return;
  if (range_computed_ != range_) {
    range_stats_ = profiler::range_stats(timeline_, *rec_, range_->first, range_->second);
    range_computed_ = range_;
  }
  const profiler::RangeStats& r = range_stats_;
  const float x0 = c.x_of(r.t0), x1 = std::max(c.x_of(r.t1), x0 + 1);
  c.dl->AddRectFilled(ImVec2(x0, c.plot.Min.y), ImVec2(x1, c.plot.Max.y), IM_COL32(120, 170, 255, 40));
  c.dl->AddLine(ImVec2(x0, c.plot.Min.y), ImVec2(x0, c.plot.Max.y), IM_COL32(120, 170, 255, 200));
  c.dl->AddLine(ImVec2(x1, c.plot.Min.y), ImVec2(x1, c.plot.Max.y), IM_COL32(120, 170, 255, 200));
  std::vector<std::string>& lines = drawn.range_lines;
  lines.push_back("range " + format_ns(r.width()) + " (trace.range=none clears)");
  for (const profiler::RangeStats::Track& t : r.tracks) {
    if (lines.size() > 7) break;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: %.0f%% busy, %zu item%s", timeline_.tracks[t.track].label.c_str(),
                  100 * t.busy_ns / r.width(), t.items, t.items == 1 ? "" : "s");
    lines.push_back(buf);
  }
  if (!r.top.empty()) lines.push_back(r.gpu ? "GPU time in it, by name:" : "host ops in it, by name (inclusive):");
  for (const profiler::RangeStats::Top& n : r.top) {
    std::string name = n.name.size() > 60 ? n.name.substr(0, 57) + "..." : n.name;
    char buf[200];
    std::snprintf(buf, sizeof buf, "  %s  %s (%.0f%%), %zu", format_ns(n.time_ns).c_str(), name.c_str(),
                  100 * n.time_ns / r.width(), n.count);
    lines.push_back(buf);
  }
  float w = 0;
  for (const std::string& l : lines) w = std::max(w, ImGui::CalcTextSize(l.c_str()).x);
  const ImVec2 at(c.plot.Max.x - w - 12, c.plot.Min.y + 4);
  c.dl->AddRectFilled(ImVec2(at.x - 4, at.y - 2), ImVec2(c.plot.Max.x - 4, at.y + c.line_h * static_cast<float>(lines.size()) + 4),
                      IM_COL32(20, 24, 32, 225), 3.0f);
  for (size_t i = 0; i < lines.size(); ++i)
    c.dl->AddText(ImVec2(at.x, at.y + c.line_h * static_cast<float>(i)), IM_COL32(230, 235, 245, 255), lines[i].c_str());
}

// Which run, how long, fit.
void TracePanel::draw_header(const Frame& frame) {
  if (frame.trace) {  // a recorded trace has no runs to pick
    ImGui::Text("recorded trace %s: %s", frame.trace->path.c_str(), format_ns(range_t1_ - range_t0_).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("fit")) frame.command("trace.zoom=fit");
    item_tooltip("Show the whole trace (or double-click). Wheel zooms, drag pans, shift+wheel scrolls the tracks.");
    if (!find_open_) {
      ImGui::SameLine();
      if (ImGui::SmallButton("find")) find_open_ = find_focus_ = true;
      item_tooltip("Find spans and kernels by name (ctrl+f). trace.find=TEXT");
    }
    if (!gaps_.empty()) draw_gap_header(frame);
    return;
  }
  const profiler::RunRange* median = timeline_.median();
  char preview[64];
  if (mode_ == RunMode::All || !median)
    std::snprintf(preview, sizeof preview, "all");
  else if (mode_ == RunMode::Median)
    std::snprintf(preview, sizeof preview, "median (run %lld)", static_cast<long long>(median->run));
  else
    std::snprintf(preview, sizeof preview, "run %lld", static_cast<long long>(run_choice_));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  if (ImGui::BeginCombo("run", preview)) {
    if (median) {
      char label[64];
      std::snprintf(label, sizeof label, "median (run %lld)", static_cast<long long>(median->run));
      if (ImGui::Selectable(label, mode_ == RunMode::Median)) frame.command("trace.run=median");
    }
    if (ImGui::Selectable("all", mode_ == RunMode::All)) frame.command("trace.run=all");
    for (const profiler::RunRange& r : timeline_.runs) {
      char label[96];
      std::snprintf(label, sizeof label, "run %lld  %s", static_cast<long long>(r.run),
                    format_ns(r.duration()).c_str());
      if (ImGui::Selectable(label, mode_ == RunMode::One && run_choice_ == r.run))
        frame.command("trace.run=" + std::to_string(r.run));
    }
    ImGui::EndCombo();
  }
  item_tooltip("Which recorded run to show: the median one by duration, all of them, or one.");
  ImGui::SameLine();
  const profiler::RunRange* shown = shown_run();
  if (shown)
    ImGui::Text("%s, %zu ops (run %lld, %s of %zu recorded runs)",
                format_ns(shown->duration()).c_str(), shown->ops,
                static_cast<long long>(shown->run), shown == median ? "median" : "one",
                timeline_.runs.size());
  else
    ImGui::Text("%zu recorded runs: %s", timeline_.runs.size(),
                format_ns(range_t1_ - range_t0_).c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("fit")) frame.command("trace.zoom=fit");
  item_tooltip(
      "Show the whole run (or double-click the timeline). Wheel zooms, drag pans, "
      "shift+wheel scrolls the tracks.");
  const char* hint = shown ? "times from the run's start" : "times from the first span";
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(hint).x) ImGui::NewLine();
  ImGui::TextDisabled("%s", hint);
  if (!gaps_.empty()) draw_gap_header(frame);
}

// With a GPU trace open: the gap picker and what the selected gap was.
void TracePanel::draw_gap_header(const Frame& frame) {
  char preview[64];
  if (gap_choice_ < 0)
    std::snprintf(preview, sizeof preview, "none");
  else
    std::snprintf(preview, sizeof preview, "gap %lld", static_cast<long long>(gap_choice_));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  if (ImGui::BeginCombo("idle gap", preview)) {
    if (ImGui::Selectable("none", gap_choice_ < 0)) frame.command("trace.gap=none");
    for (size_t g = 0; g < gaps_.size(); ++g) {
      char label[96];
      std::snprintf(label, sizeof label, "gap %zu  %s  %s", g, format_ns(static_cast<double>(gaps_[g].duration_ns)).c_str(),
                    profiler::idle_cause_name(gaps_[g].cause));
      if (ImGui::Selectable(label, gap_choice_ == static_cast<int64_t>(g)))
        frame.command("trace.gap=" + std::to_string(g));
    }
    ImGui::EndCombo();
  }
  item_tooltip("The trace's longest GPU-idle gaps (orange bands): pick one to see it and what the host did.");
  if (gap_choice_ < 0 || static_cast<size_t>(gap_choice_) >= gaps_.size()) return;
  const profiler::IdleGap& g = gaps_[static_cast<size_t>(gap_choice_)];
  std::string host;
  for (const profiler::HostOverlap& h : g.host)
    host += (host.empty() ? "" : ", ") + h.name + " " + format_ns(static_cast<double>(h.overlap_ns));
  ImGui::SameLine();
  ImGui::TextWrapped("GPU %d idle %s (%s); the host meanwhile: %s", g.device,
                     format_ns(static_cast<double>(g.duration_ns)).c_str(), profiler::idle_cause_name(g.cause),
                     host.empty() ? "nothing recorded" : host.c_str());
}

// The canvas (one invisible button takes the mouse), the track labels' column and the plot.
TracePanel::Canvas TracePanel::layout_canvas() {
  Canvas c;
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 200.0f);
  size.y = std::max(size.y, 100.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  c.released = ImGui::InvisibleButton("##trace_canvas", size);
  c.hovered = ImGui::IsItemHovered();
  c.active = ImGui::IsItemActive();
  if (ImGui::IsItemActivated()) dragging_ = false;
  c.line_h = ImGui::GetTextLineHeight();
  c.row_h = c.line_h + 6;
  c.counter_h = c.row_h * 2;
  float label_w = 80;
  for (const profiler::TimelineTrack& t : timeline_.tracks)
    label_w = std::max(label_w, ImGui::CalcTextSize(track_label(t).c_str()).x + 14);
  label_w = std::min(label_w, std::max(80.0f, size.x * 0.25f));
  c.canvas = ImRect(origin, ImVec2(origin.x + size.x, origin.y + size.y));
  c.plot = ImRect(c.canvas.Min.x + label_w, c.canvas.Min.y + c.line_h + 8, c.canvas.Max.x - 6,
                  c.canvas.Max.y);
  c.plot_w = std::max(c.plot.GetWidth(), 1.0f);
  return c;
}

// Wheel zooms around the cursor (shift+wheel scrolls the tracks), drag pans, double-click fits;
// then the zoom and pan the switches asked for.
void TracePanel::handle_input(const Canvas& c) {
  const ImGuiIO& io = ImGui::GetIO();
  float content_h = 0;
  for (size_t t = 0; t < timeline_.tracks.size(); ++t)
    content_h += (hidden(t) ? 0 : static_cast<float>(rows_shown(t)) * c.row_h + kTrackGapPx) +
                 (starts_group(t) ? c.row_h : 0);
  content_h += static_cast<float>(timeline_.counters.size()) * (c.counter_h + kTrackGapPx);
  const float max_scroll = std::max(0.0f, content_h - c.plot.GetHeight());

  if (c.hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    fit_view();
  } else if (c.hovered && io.MouseWheel != 0 && io.KeyShift) {
    scroll_y_ -= io.MouseWheel * c.row_h * 2;
  } else if (c.hovered && io.MouseWheel != 0) {
    const double w = view_t1_ - view_t0_;
    const double at = view_t0_ + (std::clamp(io.MousePos.x, c.plot.Min.x, c.plot.Max.x) -
                                  c.plot.Min.x) / c.plot_w * w;
    zoom_view(at, w * std::pow(kZoomStep, -io.MouseWheel));
  }
  auto time_at = [&](float x) {
    return view_t0_ + (std::clamp(x, c.plot.Min.x, c.plot.Max.x) - c.plot.Min.x) / c.plot_w * (view_t1_ - view_t0_);
  };
  if (c.active && ImGui::IsMouseDragging(ImGuiMouseButton_Left) && (io.KeyShift || range_from_)) {
    dragging_ = true;  // shift+drag selects a range instead of panning
    if (!range_from_) range_from_ = time_at(io.MouseClickedPos[ImGuiMouseButton_Left].x);
    if (const double at = time_at(io.MousePos.x); at != *range_from_)
      range_ = {std::min(*range_from_, at), std::max(*range_from_, at)};
  } else if (c.active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    dragging_ = true;
    pan_view(-io.MouseDelta.x / c.plot_w * (view_t1_ - view_t0_));
  }
  if (!c.active) range_from_.reset();
  if (pending_zoom_ != 1) {
    zoom_view((view_t0_ + view_t1_) / 2, (view_t1_ - view_t0_) / pending_zoom_);
    pending_zoom_ = 1;
  }
  if (pending_pan_ != 0) {
    pan_view(pending_pan_ * (view_t1_ - view_t0_));
    pending_pan_ = 0;
  }
  scroll_y_ = std::clamp(scroll_y_, 0.0f, max_scroll);
}

// A new selection off screen: centre the view on its first span in the displayed range.
void TracePanel::reveal_selection() {
  if (reveal_selection_ && selected_node_ >= 0) {
    const profiler::TimelineItem* first = nullptr;
    bool visible = false;
    for (const profiler::TimelineItemRef& ref :
         timeline_.op_items_of_node[static_cast<size_t>(selected_node_)]) {
      const profiler::TimelineItem& it = timeline_.item(ref);
      if (it.t1 < range_t0_ || it.t0 > range_t1_) continue;
      if (!first) first = &it;
      if (it.t1 >= view_t0_ && it.t0 <= view_t1_) visible = true;
    }
    if (first && !visible) {
      const double w = view_t1_ - view_t0_, centre = (first->t0 + first->t1) / 2;
      view_t0_ = centre - w / 2;
      view_t1_ = centre + w / 2;
      clamp_view();
    }
  }
  reveal_selection_ = false;
}

// Time axis along the top, with grid lines down through the tracks and the run's edges.
void TracePanel::draw_axis(const Canvas& c) const {
  ImDrawList* dl = c.dl;
  const double step = nice_step(c.view_w * kTickSpacingPx / c.plot_w);
  const double magnitude =
      std::max(std::fabs(view_t0_ - range_t0_), std::fabs(view_t1_ - range_t0_));
  char label[48];
  for (double t = std::ceil((view_t0_ - range_t0_) / step) * step; t <= view_t1_ - range_t0_;
       t += step) {
    const float x = c.x_of(range_t0_ + t);
    dl->AddLine(ImVec2(x, c.plot.Min.y - 4), ImVec2(x, c.plot.Max.y), kGridColor);
    format_tick(label, sizeof label, std::fabs(t) < step * 1e-6 ? 0.0 : t, step, magnitude);
    const float tw = ImGui::CalcTextSize(label).x;
    if (x >= c.plot.Min.x - 1 && x + tw / 2 <= c.canvas.Max.x)
      dl->AddText(ImVec2(x - tw / 2, c.canvas.Min.y + 2), kAxisText, label);
  }
  for (double edge : {range_t0_, range_t1_})
    dl->AddLine(ImVec2(c.x_of(edge), c.plot.Min.y), ImVec2(c.x_of(edge), c.plot.Max.y),
                kSeparator);
}

// Item label: the longest of (span name, node name, op) that fits.
void TracePanel::draw_label(const Canvas& c, const profiler::TimelineItem& it, float x0, float x1,
                            float y0) const {
  const float v0 = std::max(x0, c.plot.Min.x) + 3, v1 = std::min(x1, c.plot.Max.x) - 3;
  if (v1 - v0 < ImGui::CalcTextSize("abc").x) return;
  const char* candidates[3] = {item_name(*rec_, it).c_str(), nullptr, nullptr};
  if (it.node >= 0 && static_cast<size_t>(it.node) < rec_->nodes.size()) {
    candidates[1] = rec_->nodes[static_cast<size_t>(it.node)].name.c_str();
    candidates[2] = rec_->nodes[static_cast<size_t>(it.node)].op.c_str();
  }
  for (const char* text : candidates) {
    if (text && ImGui::CalcTextSize(text).x <= v1 - v0) {
      c.dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(v0, y0 + 2),
                    text_on(color_of(it)), text);
      return;
    }
  }
}

// One row: binary search to the first bar that can reach the view, then bars until the view
// ends. Bars under a pixel wide that touch are merged into one. A span that starts under a bar
// already drawn and reaches less than a pixel past it is covered: not drawn, counted. Rows of
// the spans a trace recorded should not overlap, but a hostile or merged file can stack 100,000
// on one pixel; drawn one over another they cost llvmpipe a minute a frame. So a row draws at
// most about two bars per pixel column, whatever it holds (Tracy's rule: draw what a pixel shows).
void TracePanel::draw_row(const Canvas& c, const profiler::TimelineRow& row, float y0,
                          Hover& hover) {
  const float y1 = y0 + c.row_h - 2;
  if (y1 < c.plot.Min.y || y0 > c.plot.Max.y || row.items.empty() || c.lo > c.hi) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool mouse_row = c.mouse_in_plot && mouse.y >= y0 && mouse.y < y1;
  auto it = std::lower_bound(row.items.begin(), row.items.end(), c.lo - row.max_len,
                             [](const profiler::TimelineItem& a, double t) { return a.t0 < t; });
  float gx0 = 0, gx1 = 0;
  size_t gcount = 0;
  const profiler::TimelineItem* gfirst = nullptr;
  float covered = -std::numeric_limits<float>::infinity();  // right edge of what is drawn
  auto flush = [&] {
    if (gcount == 0) return;
    const float x1 = std::max(gx1, gx0 + 1);
    const ImU32 color = color_of(*gfirst);
    c.dl->AddRectFilled(ImVec2(gx0, y0), ImVec2(x1, y1), gcount > 1 ? dimmed(color) : color);
    drawn.spans += gcount;
    covered = std::max(covered, x1);
    if (mouse_row && mouse.x >= gx0 - 1 && mouse.x <= x1 + 1) hover = {gfirst, gcount};
    gcount = 0;
  };
  for (; it != row.items.end() && it->t0 <= c.hi; ++it) {
    ++drawn.visited;
    if (it->t1 < c.lo) continue;
    // Far-off coordinates kept out of the vertex buffer (and out of the comparison with
    // `covered`, which is clipped too).
    float x0 = std::max(c.x_of(it->t0), c.plot.Min.x - 2);
    float x1 = std::min(c.x_of(it->t1), c.plot.Max.x + 2);
    if (x0 < covered && x1 < covered + 1) {  // under a bar drawn already (spans overlap)
      ++drawn.covered;
      continue;
    }
    if (x1 - x0 < 1) {
      if (gcount > 0 && x0 <= gx1 + 1) {
        gx1 = std::max(gx1, x1);
        ++gcount;
      } else {
        flush();
        gx0 = x0, gx1 = x1, gcount = 1, gfirst = &*it;
      }
      // Level of detail (Tracy's): in a disjoint row every item starting within a pixel of this
      // one, but the last, ends before the next starts, so is narrower than a pixel and joins
      // this bar; jump over them by binary search. The last is looked at as usual. A frame
      // then costs a few steps a pixel, not one an item.
      if (row.disjoint) {
        const double stop = std::min(c.t_of(x0 + 1), c.hi);
        // Galloping: steps of 1, 2, 4... while they stay before `stop`, then a binary search
        // within the last step; a few comparisons when the run is short.
        auto from = it + 1;
        std::ptrdiff_t step = 1;
        while (row.items.end() - from > step && (from + step)->t0 < stop) from += step, step *= 2;
        const auto to = row.items.end() - from > step ? from + step + 1 : row.items.end();
        const auto last =
            std::lower_bound(from, to, stop,
                             [](const profiler::TimelineItem& a, double t) { return a.t0 < t; }) -
            1;
        if (last - it > 1) {
          gcount += static_cast<size_t>(last - it - 1);
          gx1 = std::max(gx1, std::min(c.x_of((last - 1)->t1), c.plot.Max.x + 2));
          it = last - 1;
        }
      }
      continue;
    }
    flush();
    c.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), color_of(*it));
    if (x1 - x0 > 4) c.dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), kSpanEdge);
    ++drawn.spans;
    covered = std::max(covered, x1);
    draw_label(c, *it, x0, x1, y0);
    if (mouse_row && mouse.x >= x0 && mouse.x < x1) hover = {&*it, 1};
  }
  flush();
}

// Tracks: labels on the left, rows on the right. Returns the y below the last track.
float TracePanel::draw_tracks(const Canvas& c, Hover& hover) {
  ImDrawList* dl = c.dl;
  track_top_.clear();
  float y = c.plot.Min.y - scroll_y_;
  for (size_t t = 0; t < timeline_.tracks.size(); ++t) {
    const profiler::TimelineTrack& track = timeline_.tracks[t];
    if (starts_group(t)) {  // a rank's header: its label and figures, across the whole width
      dl->AddRectFilled(ImVec2(c.canvas.Min.x, y), ImVec2(c.canvas.Max.x, y + c.row_h), kGroupBg);
      const std::string& title = group_titles_[static_cast<size_t>(track.group)];
      const ImVec4 clip(c.canvas.Min.x, y, c.canvas.Max.x, y + c.row_h);
      dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(c.canvas.Min.x + 6, y + 2),
                  kLabelText, title.c_str(), nullptr, 0, &clip);
      ++drawn.groups;
      y += c.row_h;
    }
    if (hidden(t)) {  // a rank's host threads, folded (trace.hosts=<rank> shows them)
      track_top_.push_back(-1e7f);
      ++drawn.folded;
      continue;
    }
    const size_t shown = rows_shown(t);
    const float h = static_cast<float>(shown) * c.row_h;
    track_top_.push_back(y);
    if (t % 2 == 1)
      dl->AddRectFilled(ImVec2(c.canvas.Min.x, y), ImVec2(c.canvas.Max.x, y + h), kTrackBgOdd);
    dl->PushClipRect(c.plot.Min, c.plot.Max, true);
    for (size_t r = 0; r < shown; ++r)
      draw_row(c, track.rows[r], y + static_cast<float>(r) * c.row_h + 1, hover);
    dl->PopClipRect();
    const ImVec4 label_clip(c.canvas.Min.x, y, c.plot.Min.x - 4, y + h);
    std::string label = track_label(track);
    if (track.kind == profiler::TrackKind::Worker) drawn.worker_tracks.push_back(label);
    // Folded levels: said under the label (beside it on a one-row track); a click toggles.
    std::string fold;
    if (shown < track.rows.size()) {
      const size_t more = track.rows.size() - shown;
      fold = "+" + std::to_string(more) + (more == 1 ? " level" : " levels");
      drawn.folded_rows += more;
    } else if (depth_ < track.rows.size() && t < rows_shown_.size() && rows_shown_[t] > depth_) {
      fold = "- fold";
    }
    if (!fold.empty())
      drawn.fold_labels.push_back(ImRect(c.canvas.Min.x, y, c.plot.Min.x - 4, y + h));
    if (!fold.empty() && shown < 2) label += "  " + std::exchange(fold, "");
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(c.canvas.Min.x + 6, y + 3),
                kLabelText, label.c_str(), nullptr, 0, &label_clip);
    if (!fold.empty())
      dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(),
                  ImVec2(c.canvas.Min.x + 6, y + 3 + c.row_h), kFoldText, fold.c_str(), nullptr, 0,
                  &label_clip);
    y += h + kTrackGapPx;
    dl->AddLine(ImVec2(c.canvas.Min.x, y - kTrackGapPx / 2),
                ImVec2(c.canvas.Max.x, y - kTrackGapPx / 2), kSeparator);
  }
  return y;
}

// The counter tracks, one under another below the tracks.
TracePanel::CounterHover TracePanel::draw_counters(const Canvas& c, float y) {
  CounterHover hover;
  drawn.counters.clear();
  for (const profiler::TimelineCounter& counter : timeline_.counters) {
    const CounterHover h = draw_counter(c, counter, y);
    if (h.counter) hover = h;
    y += c.counter_h + kTrackGapPx;
  }
  return hover;
}

// A counter: its values as a step area on the scale of its peak, one bar per pixel column at
// most (the column's highest value).
TracePanel::CounterHover TracePanel::draw_counter(const Canvas& c,
                                                  const profiler::TimelineCounter& track, float y) {
  const auto& counter = track.samples;
  ImDrawList* dl = c.dl;
  const float y0 = y, y1 = y + c.counter_h - 2;
  if (y1 < c.plot.Min.y || y0 > c.plot.Max.y) return {};  // scrolled out of view: not drawn
  const ImVec4 label_clip(c.canvas.Min.x, y0, c.plot.Min.x - 4, y1);
  ImFont* font = ImGui::GetFont();
  const char* label = track.name == profiler::kArenaCounter ? "arena live" : track.name.c_str();
  dl->AddText(font, ImGui::GetFontSize(), ImVec2(c.canvas.Min.x + 6, y0 + 3), kLabelText, label,
              nullptr, 0, &label_clip);
  const std::string peak = profiler::counter_value_text(track.bytes, track.max);
  drawn.counters.push_back(std::string(label) + " " + peak);
  dl->AddText(font, ImGui::GetFontSize(), ImVec2(c.canvas.Min.x + 6, y0 + 3 + c.line_h),
              kAxisText, peak.c_str(), nullptr, 0, &label_clip);
  if (counter.empty() || c.lo > c.hi) return {};
  dl->PushClipRect(c.plot.Min, c.plot.Max, true);
  auto y_of = [&](double v) { return y1 - static_cast<float>(v / track.max) * (y1 - y0 - 2); };
  auto bar = [&](float x0, float x1, double v) {
    if (v <= 0) return;
    dl->AddRectFilled(ImVec2(x0, y_of(v)), ImVec2(x1, y1), kCounterFill);
    dl->AddLine(ImVec2(x0, y_of(v)), ImVec2(x1, y_of(v)), kCounterTop);
  };
  auto first = std::upper_bound(counter.begin(), counter.end(), c.lo,
                                [](double t, const auto& s) { return t < s.first; });
  if (first != counter.begin()) --first;
  float bx0 = 0, bx1 = 0;
  double bmax = 0;
  bool open = false;
  for (auto it = first; it != counter.end() && it->first <= c.hi; ++it) {
    const double t0 = std::max(it->first, c.lo);
    const double t1 = std::min(std::next(it) != counter.end() ? std::next(it)->first : c.hi, c.hi);
    if (t1 <= t0) continue;
    if (!open)
      bx0 = c.x_of(t0), bmax = it->second, open = true;
    else
      bmax = std::max(bmax, it->second);
    bx1 = c.x_of(t1);
    if (bx1 - bx0 >= 1) {
      bar(bx0, bx1, bmax);
      open = false;
    }
  }
  if (open) bar(bx0, std::max(bx1, bx0 + 1), bmax);
  dl->PopClipRect();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (!c.mouse_in_plot || mouse.y < y0 || mouse.y >= y1) return {};
  const double t = c.view_t0 + (mouse.x - c.plot.Min.x) / c.plot_w * c.view_w;
  auto at = std::upper_bound(counter.begin(), counter.end(), t,
                             [](double v, const auto& s) { return v < s.first; });
  if (at == counter.begin() || t < c.lo || t > c.hi) return {};
  return {&track, std::prev(at)->second};
}

// The selected node's op spans in the displayed range, outlined on top.
void TracePanel::draw_selection(const Canvas& c) {
  if (picked_) {
    outline(c, *picked_);
    for (const profiler::TimelineItemRef& ref : linked_) drawn.linked += outline(c, ref);
  }
  if (selected_node_ < 0 || static_cast<size_t>(selected_node_) >= timeline_.op_items_of_node.size())
    return;
  for (const profiler::TimelineItemRef& ref : timeline_.op_items_of_node[static_cast<size_t>(selected_node_)])
    outline(c, ref);
  // Its worker spans too, counted apart from the op spans.
  const size_t op_spans = drawn.selected_spans;
  for (const profiler::TimelineItemRef& ref :
       timeline_.worker_items_of_node[static_cast<size_t>(selected_node_)])
    outline(c, ref);
  drawn.selected_worker_spans = drawn.selected_spans - op_spans;
  drawn.selected_spans = op_spans;
}

std::string TracePanel::track_label(const profiler::TimelineTrack& track) const {
  if (track.kind != profiler::TrackKind::Worker) return track.label;
  const profiler::RunRange* run = shown_run();
  const double u = run ? track.utilisation_of_run(run->run) : track.utilisation;
  if (u < 0) return track.label;
  char pct[32];
  std::snprintf(pct, sizeof pct, "  %.0f%%", 100.0 * u);
  return track.label + pct;
}

// One selected item's outline; false when it is out of sight.
bool TracePanel::outline(const Canvas& c, const profiler::TimelineItemRef& ref) {
  if (ref.row >= rows_shown(ref.track)) return false;  // in a folded level
  {
    const profiler::TimelineItem& it = timeline_.item(ref);
    if (it.t1 < c.lo || it.t0 > c.hi) return false;
    float x0 = c.x_of(it.t0), x1 = c.x_of(it.t1);
    if (x1 - x0 < 4) {  // a thin span still gets a visible outline
      const float centre = (x0 + x1) / 2;
      x0 = centre - 2, x1 = centre + 2;
    }
    x0 = std::max(x0, c.plot.Min.x - 3);
    x1 = std::min(x1, c.plot.Max.x + 3);
    const float y0 = track_top_[ref.track] + static_cast<float>(ref.row) * c.row_h + 1;
    ImRect r(x0, y0, x1, y0 + c.row_h - 2);
    // Inside the box: its edge pixels are then the selection colour, not a blend.
    c.dl->AddRect(r.Min, r.Max, kSelectionColor, 0, 0, 3.0f);
    r.ClipWithFull(c.plot);
    if (r.GetWidth() <= 0 || r.GetHeight() <= 0) return false;  // scrolled out of sight
    drawn.selected_rects.push_back(r);
    ++drawn.selected_spans;
  }
  return true;
}

void TracePanel::draw_hover_edge(const Canvas& c, const Hover& hover) const {
  if (!hover.item || hover.merged != 1) return;
  const float x0 = std::max(c.x_of(hover.item->t0), c.plot.Min.x - 2);
  const float x1 = std::min(std::max(c.x_of(hover.item->t1), x0 + 1), c.plot.Max.x + 2);
  const float hy = ImGui::GetIO().MousePos.y;
  for (size_t t = 0; t < timeline_.tracks.size(); ++t) {
    const float top = track_top_[t];
    const float h = static_cast<float>(rows_shown(t)) * c.row_h;
    if (hy < top || hy >= top + h) continue;
    const float ry = top + std::floor((hy - top) / c.row_h) * c.row_h + 1;
    c.dl->AddRect(ImVec2(x0, ry), ImVec2(x1, ry + c.row_h - 2), kHoverEdge, 0, 0, 1.5f);
  }
}

float TracePanel::item_y(const Canvas& c, const profiler::TimelineItemRef& ref) const {
  // An item in a folded level: its track's last row shown, which holds its outer items.
  const size_t row = std::min<size_t>(ref.row, std::max<size_t>(rows_shown(ref.track), 1) - 1);
  return track_top_[ref.track] + (static_cast<float>(row) + 0.5f) * c.row_h;
}

// Launch -> kernel lines, from the API call's start to the GPU work's start.
void TracePanel::draw_flows(const Canvas& c, const Hover& hover) const {
  const auto& flows = timeline_.flows;
  if (flows.empty() || track_top_.size() != timeline_.tracks.size()) return;
  const double v0 = c.view_t0, v1 = c.view_t0 + c.view_w;
  auto first = std::lower_bound(flows.begin(), flows.end(), v0 - c.view_w,
                                [&](const profiler::TimelineFlow& f, double t) {
                                  return timeline_.item(f.launch).t0 < t;
                                });
  auto last = std::upper_bound(first, flows.end(), v1, [&](double t, const profiler::TimelineFlow& f) {
    return t < timeline_.item(f.launch).t0;
  });
  auto line = [&](const profiler::TimelineFlow& f, ImU32 color, float width) {
    const ImVec2 a(c.x_of(timeline_.item(f.launch).t0), item_y(c, f.launch));
    const ImVec2 b(c.x_of(timeline_.item(f.target).t0), item_y(c, f.target));
    c.dl->AddLine(a, b, color, width);
    c.dl->AddCircleFilled(b, 2.5f, color);
  };
  if (static_cast<size_t>(last - first) <= kMaxFlowsDrawn)
    for (auto it = first; it != last; ++it) line(*it, kFlowColor, 1.0f);
  if (!hover.item || hover.merged != 1 || !profiler::is_device_item(hover.item->kind)) return;
  for (const profiler::TimelineFlow& f : flows)
    if (&timeline_.item(f.launch) == hover.item || &timeline_.item(f.target) == hover.item) {
      line(f, kFlowHovered, 2.0f);
      break;
    }
}

// An opened trace's longest idle gaps, as bands over its GPU's stream tracks.
void TracePanel::draw_gaps(const Canvas& c) const {
  if (gaps_.empty() || track_top_.size() != timeline_.tracks.size()) return;
  for (size_t g = 0; g < gaps_.size(); ++g) {
    const profiler::IdleGap& gap = gaps_[g];
    const float x0 = c.x_of(static_cast<double>(gap.start_ns));
    const float x1 = std::max(c.x_of(static_cast<double>(gap.start_ns + gap.duration_ns)), x0 + 1);
    for (size_t t = 0; t < timeline_.tracks.size(); ++t) {
      const profiler::TimelineTrack& track = timeline_.tracks[t];
      if (track.kind != profiler::TrackKind::GpuStream || track.device != gap.device) continue;
      const ImVec2 a(x0, track_top_[t]), b(x1, track_top_[t] + c.row_h);
      c.dl->AddRectFilled(a, b, kGapFill);
      if (static_cast<int64_t>(g) == gap_choice_) c.dl->AddRect(a, b, kGapSelected, 0, 0, 2.0f);
    }
  }
}

void TracePanel::draw_tooltip(const Hover& hover, const CounterHover& counter) const {
  if (dragging_) return;
  if (!hover.item) {
    if (counter.counter)
      ImGui::SetTooltip(
          "%s: %s", counter.counter->name.c_str(),
          profiler::counter_value_text(counter.counter->bytes, counter.value).c_str());
    return;
  }
  const profiler::TimelineItem& it = *hover.item;
  ImGui::BeginTooltip();
  if (hover.merged > 1) {
    ImGui::Text("%zu spans under a pixel each, merged: zoom in to tell them apart", hover.merged);
    ImGui::TextDisabled("first: %s", item_name(*rec_, it).c_str());
  } else if (profiler::is_device_item(it.kind)) {
    device_tooltip(*rec_, it, range_t0_);
  } else {
    span_tooltip(*rec_, it, range_t0_);
  }
  ImGui::EndTooltip();
}

// A bar with a node selects it, empty space clears the selection.
void TracePanel::pick(const profiler::TimelineItemRef& ref) {
  if (ref.row >= rows_shown(ref.track)) unfold(ref.track);
  picked_ = ref;
  linked_ = profiler::linked_items(timeline_, *rec_, ref);
}

std::string TracePanel::set_select(const std::string& value) {
  if (!showing_trace_)
    return "nothing to pick: open a GPU trace (open=FILE); a model's nodes are selected with select=";
  if (value == "none") {
    picked_.reset();
    linked_.clear();
    return "";
  }
  for (size_t k = 0; k < timeline_.tracks.size(); ++k) {
    const profiler::TimelineTrack& track = timeline_.tracks[k];
    if (track.kind != profiler::TrackKind::Cpu) continue;
    for (size_t r = 0; r < track.rows.size(); ++r)
      for (size_t i = 0; i < track.rows[r].items.size(); ++i)
        if (rec_->spans[static_cast<size_t>(track.rows[r].items[i].index)].name == value) {
          pick({static_cast<uint32_t>(k), static_cast<uint32_t>(r), static_cast<uint32_t>(i)});
          return "";
        }
  }
  // Else the first kernel (by start) whose name starts with it: kernel names run long.
  std::optional<profiler::TimelineItemRef> first;
  for (size_t k = 0; k < timeline_.tracks.size(); ++k) {
    const profiler::TimelineTrack& track = timeline_.tracks[k];
    if (track.kind != profiler::TrackKind::GpuStream) continue;
    const auto& items = track.rows[0].items;
    for (size_t i = 0; i < items.size(); ++i) {
      if (first && timeline_.item(*first).t0 <= items[i].t0) break;
      if (rec_->device[static_cast<size_t>(items[i].index)].name.starts_with(value))
        first = profiler::TimelineItemRef{static_cast<uint32_t>(k), 0, static_cast<uint32_t>(i)};
    }
  }
  if (first) {
    pick(*first);
    return "";
  }
  return "no host span named '" + value + "' and no kernel named '" + value + "...' in the trace";
}

void TracePanel::handle_click(const Frame& frame, const Canvas& c, const Hover& hover) {
  if (!c.released || dragging_) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mouse.x < c.plot.Min.x && mouse.y >= c.plot.Min.y) {  // a track's label: fold or unfold it
    for (size_t t = 0; t < track_top_.size() && t < rows_shown_.size(); ++t) {
      const size_t rows = timeline_.tracks[t].rows.size();
      const float top = track_top_[t], h = static_cast<float>(rows_shown(t)) * c.row_h;
      if (top < -1e6f || mouse.y < top || mouse.y >= top + h || depth_ >= rows) continue;
      rows_shown_[t] = rows_shown(t) < rows ? SIZE_MAX : depth_;
      return;
    }
  }
  if (frame.trace) {  // no nodes: the item itself is picked, with what it is tied to
    if (hover.item && hover.merged == 1) {
      if (auto ref = profiler::find_item(timeline_, hover.item)) pick(*ref);
    } else if (!hover.item) {
      picked_.reset();
      linked_.clear();
    }
    return;
  }
  if (hover.item && hover.merged == 1) {
    if (hover.item->node >= 0 && static_cast<size_t>(hover.item->node) < rec_->nodes.size())
      frame.command("select=" + rec_->nodes[static_cast<size_t>(hover.item->node)].name);
  } else if (!hover.item) {
    frame.command("select=");
  }
}

// --- Find ---------------------------------------------------------------------------------------

std::string TracePanel::set_find(const std::string& value) {
  if (value.empty()) {
    find_open_ = false;
    find_query_.clear();
    find_buf_[0] = 0;
    matches_.clear();
    name_matches_.clear();
    hist_bin_ = -1;
    match_index_ = -1;
    match_pending_.reset();
    matched_query_.clear();
    return "";
  }
  if (value != find_query_) {
    match_index_ = -1;
    hist_bin_ = -1;  // another query's bins
  }
  find_query_ = value;
  std::snprintf(find_buf_, sizeof find_buf_, "%s", value.c_str());
  find_open_ = true;
  match_pending_ = match_index_ + 1;  // the next match (the first of a new query), at the draw
  return "";
}

std::string TracePanel::set_match(const std::string& value) {
  if (find_query_.empty()) return "no search to step through: trace.find=TEXT first";
  const int64_t at = match_pending_.value_or(match_index_);
  if (value == "next") {
    match_pending_ = at + 1;
  } else if (value == "prev") {
    match_pending_ = at - 1;
  } else {
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 1)
      return "expected next, prev or a match number from 1, got '" + value + "'";
    if (matched_query_ == find_query_ && static_cast<size_t>(n) > matches_.size())
      return "match " + value + ": '" + find_query_ + "' has " + std::to_string(matches_.size()) +
             " in the shown range";
    match_pending_ = n - 1;
  }
  return "";
}

// The items of the shown range whose name contains the query, by start time: collected again
// for a new timeline, query or range (run=). Hidden tracks (a rank's folded host threads) are
// left out: a match must be somewhere the view can show it. Then their durations' histogram, and
// the matches kept: all of them, or those in the bin picked.
void TracePanel::update_matches() {
  if (find_query_.empty()) return;
  const bool same_timeline = matched_for_ == built_for_ && matched_sequence_ == built_sequence_ &&
                             matched_t0_ == range_t0_ && matched_t1_ == range_t1_;
  if (same_timeline && matched_query_ == find_query_ && matched_bin_ == hist_bin_) return;
  if (!same_timeline) match_index_ = -1;
  if (!same_timeline || matched_query_ != find_query_) {
    matched_for_ = built_for_;
    matched_sequence_ = built_sequence_;
    matched_query_ = find_query_;
    matched_t0_ = range_t0_;
    matched_t1_ = range_t1_;
    const std::string lower = to_lower(find_query_);
    name_matches_.clear();
    for (size_t k = 0; k < timeline_.tracks.size(); ++k) {
      if (hidden(k)) continue;
      const profiler::TimelineTrack& track = timeline_.tracks[k];
      for (size_t r = 0; r < track.rows.size(); ++r) {
        const std::vector<profiler::TimelineItem>& items = track.rows[r].items;
        for (size_t i = 0; i < items.size(); ++i) {
          const profiler::TimelineItem& it = items[i];
          if (it.t1 < range_t0_ || it.t0 > range_t1_) continue;
          if (name_has_any_case(item_name(*rec_, it), lower))
            name_matches_.push_back({static_cast<uint32_t>(k), static_cast<uint32_t>(r), static_cast<uint32_t>(i)});
        }
      }
    }
    std::stable_sort(name_matches_.begin(), name_matches_.end(), [this](const auto& a, const auto& b) {
      return timeline_.item(a).t0 < timeline_.item(b).t0;
    });
    // Log-spaced bins from the shortest to the longest (1 ns at least): kernel times span
    // decades, and a linear axis would put all but the longest in its first bin.
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& ref : name_matches_) {
      const double d = std::max(timeline_.item(ref).t1 - timeline_.item(ref).t0, 1.0);
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    hist_edges_.clear();
    if (!name_matches_.empty()) {
      const size_t bins = hi > lo ? kHistBins : 1;
      for (size_t b = 0; b <= bins; ++b)
        hist_edges_.push_back(b == bins ? hi : lo * std::pow(hi / lo, static_cast<double>(b) / static_cast<double>(bins)));
    }
    hist_counts_.assign(hist_edges_.empty() ? 0 : hist_edges_.size() - 1, 0);
    for (const auto& ref : name_matches_) ++hist_counts_[bin_of(timeline_.item(ref).t1 - timeline_.item(ref).t0)];
    if (hist_bin_ >= static_cast<int>(hist_counts_.size())) hist_bin_ = -1;
  }
  if (matched_bin_ != hist_bin_) match_index_ = -1;
  matched_bin_ = hist_bin_;
  matches_.clear();
  match_max_len_ = 0;
  for (const auto& ref : name_matches_) {
    const profiler::TimelineItem& it = timeline_.item(ref);
    if (hist_bin_ >= 0 && bin_of(it.t1 - it.t0) != static_cast<size_t>(hist_bin_)) continue;
    matches_.push_back(ref);
    match_max_len_ = std::max(match_max_len_, it.t1 - it.t0);
  }
  if (match_index_ >= static_cast<int64_t>(matches_.size())) match_index_ = -1;
}

// Bin b holds [edge b, edge b+1); the last also its upper edge, the longest match.
size_t TracePanel::bin_of(double duration) const {
  if (hist_edges_.size() < 3) return 0;
  const double d = std::max(duration, 1.0);
  return static_cast<size_t>(std::upper_bound(hist_edges_.begin() + 1, hist_edges_.end() - 1, d) -
                             (hist_edges_.begin() + 1));
}

std::string TracePanel::set_histogram(const std::string& value) {
  hist_open_ = value == "show";
  return "";
}

std::string TracePanel::set_bin(const std::string& value) {
  if (value == "none") {
    hist_bin_ = -1;
    return "";
  }
  if (find_query_.empty()) return "no search to bin: trace.find=TEXT first";
  int n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 1)
    return "expected none or a bin number from 1, got '" + value + "'";
  if (matched_query_ == find_query_ && static_cast<size_t>(n) > hist_counts_.size())
    return "bin " + value + ": the histogram of '" + find_query_ + "' has " +
           std::to_string(hist_counts_.size()) + " bins";
  hist_bin_ = n - 1;
  match_pending_ = 0;  // the view moves to the bin's first call
  return "";
}

// The view moves to the match: centred, zoomed so that it is between 1/50 and 2/3 of the view
// (its neighbours stay in sight), and scrolled to its track. A trace's match is picked (what it is
// tied to lights up); a run's op selects its node in every panel.
void TracePanel::show_match(const Frame& frame) {
  const profiler::TimelineItemRef ref = matches_[static_cast<size_t>(match_index_)];
  const profiler::TimelineItem& it = timeline_.item(ref);
  const double len = std::max(it.t1 - it.t0, 1.0);
  const double w = std::max(std::clamp(view_t1_ - view_t0_, len * 1.5, len * 50), kMinViewNs);
  const double centre = (it.t0 + it.t1) / 2;
  view_t0_ = centre - w / 2;
  view_t1_ = centre + w / 2;
  fitted_ = false;
  reveal_match_ = true;
  if (showing_trace_) {
    pick(ref);
  } else if (it.node >= 0 && static_cast<size_t>(it.node) < rec_->nodes.size()) {
    frame.command("select=" + rec_->nodes[static_cast<size_t>(it.node)].name);
  }
}

// Under the header while a search is open: the box, the count, the matches and the histogram.
void TracePanel::draw_find_bar(const Frame& frame) {
  const ImGuiIO& io = ImGui::GetIO();
  const bool here = frame.focus == PanelId::Trace || ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows);
  if (here && io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_F, false)) find_open_ = find_focus_ = true;
  if (!find_query_.empty()) {
    drawn.find_matches = matches_.size();
    drawn.hist_bin = hist_bin_;
    if (match_index_ >= 0 && static_cast<size_t>(match_index_) < matches_.size())
      drawn.find_shown = std::to_string(match_index_ + 1) + "/" + std::to_string(matches_.size()) +
                         " " + item_name(*rec_, timeline_.item(matches_[static_cast<size_t>(match_index_)]));
  }
  if (!find_open_) return;
  if (std::exchange(find_focus_, false)) ImGui::SetKeyboardFocusHere();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
  const bool enter = ImGui::InputTextWithHint("##trace_find", "find span or kernel", find_buf_,
                                              sizeof find_buf_, ImGuiInputTextFlags_EnterReturnsTrue);
  const bool editing = ImGui::IsItemActive() || ImGui::IsItemDeactivated();
  if (enter) {
    frame.command(std::string("trace.find=") + find_buf_);
    find_focus_ = true;  // keep typing, or Enter again for the next match
  }
  if (editing && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) frame.command("trace.find=");
  item_tooltip("Enter: the next match (the view moves to it). Escape closes. trace.find=TEXT");
  if (find_query_.empty()) return;
  ImGui::SameLine();
  if (name_matches_.empty()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kErrorColor), "no match in the shown range");
    return;
  }
  if (matches_.empty()) {  // a bin kept that holds none: the histogram stays, to pick another
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kErrorColor), "no call in bin %d", hist_bin_ + 1);
  } else {
    draw_match_list(frame);
  }
  ImGui::SameLine();
  if (ImGui::SmallButton(hist_open_ ? "hide histogram" : "histogram"))
    frame.command(hist_open_ ? "trace.histogram=hide" : "trace.histogram=show");
  item_tooltip("The matches' durations, log-spaced: click a bin to keep only its calls. trace.bin=N");
  if (hist_open_) draw_histogram(frame);
}

// Previous, next and the list of matches (a combo; clicking one shows it).
void TracePanel::draw_match_list(const Frame& frame) {
  if (ImGui::SmallButton("<")) frame.command("trace.match=prev");
  ImGui::SameLine();
  if (ImGui::SmallButton(">")) frame.command("trace.match=next");
  ImGui::SameLine();
  char preview[48];
  if (match_index_ >= 0)
    std::snprintf(preview, sizeof preview, "%lld/%zu", static_cast<long long>(match_index_ + 1), matches_.size());
  else
    std::snprintf(preview, sizeof preview, "%zu found", matches_.size());
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (ImGui::BeginCombo("##trace_matches", preview, ImGuiComboFlags_HeightLarge)) {
    ImGuiListClipper clipper;  // a million matches list as fast as ten
    clipper.Begin(static_cast<int>(std::min<size_t>(matches_.size(), INT32_MAX)));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const profiler::TimelineItemRef& ref = matches_[static_cast<size_t>(i)];
        const profiler::TimelineItem& it = timeline_.item(ref);
        const std::string label = std::to_string(i + 1) + "  " + item_name(*rec_, it) + "  " +
                                  track_label(timeline_.tracks[ref.track]) + "  at " +
                                  format_ns(it.t0 - range_t0_) + ", " + format_ns(it.t1 - it.t0) +
                                  "##match" + std::to_string(i);
        if (ImGui::Selectable(label.c_str(), i == match_index_))
          frame.command("trace.match=" + std::to_string(i + 1));
      }
    }
    ImGui::EndCombo();
  }
  item_tooltip("The matches by start time: pick one to show it. trace.match=N|next|prev");
}

// The durations of every match (of the name, whatever bin is kept) in log-spaced bins: a bar a
// bin, the kept one in find's colour; hovering says what a bin holds, a click keeps only it (a
// second click keeps all again).
void TracePanel::draw_histogram(const Frame& frame) {
  if (hist_counts_.empty()) return;
  drawn.hist_edges = hist_edges_;
  drawn.hist_counts = hist_counts_;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 size(std::max(ImGui::GetContentRegionAvail().x, 100.0f), line * 4);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##trace_histogram", size);
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float label_w = ImGui::CalcTextSize("00000 calls").x, axis_h = line;
  const ImRect plot(ImVec2(p0.x + label_w, p0.y + 2), ImVec2(p0.x + size.x, p0.y + size.y - axis_h));
  draw_plot_background(dl, plot.Min, plot.Max);
  const size_t most = *std::max_element(hist_counts_.begin(), hist_counts_.end());
  const float bw = plot.GetWidth() / static_cast<float>(hist_counts_.size());
  int under = -1;
  for (size_t b = 0; b < hist_counts_.size(); ++b) {
    const float x0 = plot.Min.x + bw * static_cast<float>(b), x1 = x0 + bw;
    if (hovered && ImGui::GetIO().MousePos.x >= x0 && ImGui::GetIO().MousePos.x < x1) under = static_cast<int>(b);
    if (hist_counts_[b] == 0) continue;
    const float h = plot.GetHeight() * static_cast<float>(hist_counts_[b]) / static_cast<float>(most);
    dl->AddRectFilled(ImVec2(x0 + 1, plot.Max.y - std::max(h, 2.0f)), ImVec2(x1 - 1, plot.Max.y),
                      static_cast<int>(b) == hist_bin_ ? kFindColor : kHistBar);
  }
  char text[64];
  std::snprintf(text, sizeof text, "%zu calls", most);
  dl->AddText(ImVec2(p0.x, plot.Min.y), kAxisText, text);
  const std::string lo = format_ns(hist_edges_.front()), hi = format_ns(hist_edges_.back());
  dl->AddText(ImVec2(plot.Min.x, plot.Max.y + 1), kAxisText, lo.c_str());
  dl->AddText(ImVec2(plot.Max.x - ImGui::CalcTextSize(hi.c_str()).x, plot.Max.y + 1), kAxisText, hi.c_str());
  const char* axis = "duration, log scale";
  dl->AddText(ImVec2((plot.Min.x + plot.Max.x - ImGui::CalcTextSize(axis).x) / 2, plot.Max.y + 1), kAxisText, axis);
  if (under < 0) return;
  const auto b = static_cast<size_t>(under);
  const float x0 = plot.Min.x + bw * static_cast<float>(b);
  dl->AddRect(ImVec2(x0, plot.Min.y), ImVec2(x0 + bw, plot.Max.y), kHoverEdge);
  ImGui::BeginTooltip();
  ImGui::Text("%zu of %zu calls from %s to %s%s", hist_counts_[b], name_matches_.size(),
              format_ns(hist_edges_[b]).c_str(), format_ns(hist_edges_[b + 1]).c_str(),
              b + 1 == hist_counts_.size() ? " (inclusive)" : "");
  if (static_cast<int>(b) == hist_bin_)
    ImGui::TextDisabled("click: keep every match again (trace.bin=none)");
  else
    ImGui::TextDisabled("click: keep only these (trace.bin=%zu)", b + 1);
  ImGui::EndTooltip();
  if (clicked)
    frame.command(static_cast<int>(b) == hist_bin_ ? "trace.bin=none" : "trace.bin=" + std::to_string(b + 1));
}

// The matches in view outlined, one mark per pixel of a row (the rest lie under it), and a tick
// along the top edge at each pixel column holding one (rows scrolled away included). Then, once
// after a jump, the tracks scroll to the shown match's row.
void TracePanel::draw_find_marks(const Canvas& c) {
  if (matches_.empty() || c.lo > c.hi) return;
  auto it = std::lower_bound(matches_.begin(), matches_.end(), c.lo - match_max_len_,
                             [this](const profiler::TimelineItemRef& a, double t) {
                               return timeline_.item(a).t0 < t;
                             });
  std::vector<char> ticked(static_cast<size_t>(std::max(1.0f, c.plot_w)) + 1, 0);
  std::unordered_map<uint64_t, float> marked;  // (track, row) -> right edge of its last mark
  for (; it != matches_.end() && timeline_.item(*it).t0 <= c.hi; ++it) {
    const profiler::TimelineItem& item = timeline_.item(*it);
    if (item.t1 < c.lo) continue;
    const float x0 = std::max(c.x_of(item.t0), c.plot.Min.x - 2);
    const float x1 = std::max(std::min(c.x_of(item.t1), c.plot.Max.x + 2), x0 + 1);
    const auto col = static_cast<size_t>(std::clamp(x0 - c.plot.Min.x, 0.0f, c.plot_w));
    ticked[std::min(col, ticked.size() - 1)] = 1;
    const float top = track_top_[it->track];
    if (top < -1e6f || it->row >= rows_shown(it->track)) continue;  // a folded track or level
    const float y0 = top + static_cast<float>(it->row) * c.row_h + 1, y1 = y0 + c.row_h - 2;
    if (y1 < c.plot.Min.y || y0 > c.plot.Max.y) continue;
    const uint64_t key = (uint64_t{it->track} << 32) | it->row;
    const auto [last, first] = marked.try_emplace(key, x1);
    if (!first && x1 < last->second + 1) continue;  // under a mark drawn already
    c.dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x1 + 1, y1 + 1), kFindColor, 0, 0, 2.0f);
    ++drawn.find_marked;
    last->second = std::max(last->second, x1);
  }
  c.dl->PushClipRect(c.canvas.Min, c.canvas.Max, false);
  for (size_t x = 0; x < ticked.size(); ++x)
    if (ticked[x]) {
      const float px = c.plot.Min.x + static_cast<float>(x);
      c.dl->AddRectFilled(ImVec2(px - 1, c.plot.Min.y - 5), ImVec2(px + 1, c.plot.Min.y), kFindColor);
    }
  c.dl->PopClipRect();
  if (std::exchange(reveal_match_, false) && match_index_ >= 0 &&
      static_cast<size_t>(match_index_) < matches_.size()) {
    const profiler::TimelineItemRef& ref = matches_[static_cast<size_t>(match_index_)];
    if (ref.row >= rows_shown(ref.track)) {  // in a folded level: unfold, place it next frame
      unfold(ref.track);
      reveal_match_ = true;
      return;
    }
    const float top = track_top_[ref.track];
    const float y = top + static_cast<float>(ref.row) * c.row_h;
    if (top > -1e6f && (y < c.plot.Min.y || y + c.row_h > c.plot.Max.y))
      scroll_y_ = std::max(0.0f, scroll_y_ + y - (c.plot.Min.y + c.plot.GetHeight() / 3));
  }
}

}  // namespace fusebox::ui
