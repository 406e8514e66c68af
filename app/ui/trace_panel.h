#pragma once
// The trace panel: the recorded runs as a timeline, nsys style. It draws profiler::Timeline
// (profiler/timeline.h: tracks, rows, run ranges, the median run), built once per result. One track
// per source, labelled on the left: NVTX-style ranges (runs and stages), each CPU thread (nested
// spans by depth: the run on top, its ops below), each intra-op worker thread under them ("worker
// 0" is the thread that runs the ops, "worker 1".. the pool's; each labelled with its utilisation,
// busy / wall time of the shown run, or of all recorded runs with run=all; spans in their op's
// colour, a click selects that op), each GPU stream and the CUDA API calls when the backend
// reported device activity, and the arena's live bytes as a counter. Shows the median run by
// default. Wheel zooms around the cursor, drag pans, double-click fits; click an op to select its
// node.
//
// Commands ("trace.<key>=<value>", run by the App through command()):
//   run=median|all|<n>    which recorded run(s) to show (the view fits the new range)
//   zoom=fit|<factor>     show the whole range, or zoom in (> 1) or out around the centre
//   pan=<fraction>        move the view by a fraction of its width (0.25 right, -0.25 left)
//   gap=<n>|none          with a GPU trace open: select its n-th longest GPU-idle gap (0 = the
//                         longest) and show it with its surroundings
//   select=<name>|none    with a GPU trace open: pick the first host span of that name, else the
//                         first kernel whose name starts with it (a click picks any item): it,
//                         its API calls and their kernels are outlined (a kernel picks its launch
//                         and the host span around it; with several ranks open, a collective
//                         picks the same collective on every rank)
// Several ranks open (a folder of rank traces): each rank's tracks form a group under a header
// with its step, computation, communication, idle and wait, GPU streams first; with two ranks
// or more, their host threads are folded away until asked for:
//   hosts=none|all|<rank>  whose host threads (NVTX, CPU) to show
// A recorded trace's host threads nest deep (Python stacks, module annotations): each NVTX or
// CPU track shows its outermost kFoldDepth rows and says "+N levels" under its label; a click on
// the label, or a match or pick in a folded row, shows them all (a click again folds them):
//   depth=<n>|all         the rows each host track shows (all: every level)
// Find (ctrl+f over the panel, or the "find" button with a trace open), Tracy and Perfetto style:
//   find=<text>           every item of the shown range whose name contains the text, any case:
//                         outlined on the timeline (one mark per pixel a row), ticked along the
//                         axis, counted and listed in the find bar; the view moves to the next
//                         one (the same text again: the one after; empty: closes the search)
//   match=<n>|next|prev   show the n-th match (from 1), as the list in the find bar does
//   histogram=show|hide   the matches' durations in log-spaced bins under the find bar (Tracy's
//                         find zone); hovering a bin says what it holds
//   bin=<n>|none          keep only the matches in the n-th bin (from 1; a click on it does the
//                         same): marked, listed and stepped through as above, the first shown
// GPU tracks show each launch's flow to its kernel (all of them when few are in view, else the
// hovered one's) and, for an opened trace, its longest idle gaps as orange bands.
#include <imgui.h>
#include <imgui_internal.h>  // ImRect

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"
#include "app/workbench/opened_trace.h"
#include "app/workbench/run_result.h"
#include "profiler/gpu_analysis.h"
#include "profiler/timeline.h"

namespace fusebox::ui {

struct TracePanel {
  void draw(const Frame& frame);
  // The "trace.<key>=<value>" commands (run, zoom, pan) as a table (app/ui/panel_switch.h).
  std::vector<PanelSwitch> switches();
  // Runs "trace.<key>=<value>"; returns "" or an error sentence listing the valid values.
  std::string command(const std::string& key, const std::string& value,
                      const workbench::RunResult* result);

  // What the last frame put on screen (screen coordinates), for tests.
  struct Drawn {
    size_t spans = 0;           // spans drawn, those merged into sub-pixel groups included
    size_t covered = 0;         // spans not drawn: under a bar of their row drawn before them
    size_t visited = 0;         // items the rows' loops looked at (the others jumped over, merged)
    size_t selected_spans = 0;  // op spans of the selected node outlined
    size_t selected_worker_spans = 0;  // and its worker spans outlined
    std::vector<std::string> worker_tracks;  // the worker tracks' labels ("worker 1  48%")
    std::vector<ImRect> selected_rects;
    size_t tracks = 0;
    std::vector<std::string> counters;  // the counter tracks drawn (in view): "<label> <peak>"
    size_t groups = 0;  // rank headers drawn (several ranks open)
    size_t folded = 0;  // a rank's host tracks folded away (trace.hosts= shows them)
    size_t folded_rows = 0;  // host tracks' nesting levels folded under their outer rows
    std::vector<ImRect> fold_labels;  // labels of tracks a click folds or unfolds
    size_t linked = 0;  // with a trace open: items outlined with the picked one (its kernels...)
    size_t find_matches = 0;  // items matching trace.find= in the shown range (0: no search)
    size_t find_marked = 0;   // of them, outlined on screen (one mark per pixel of a row)
    std::string find_shown;   // the match the view moved to: "3/12 aten::mm"
    std::vector<double> hist_edges;   // the histogram drawn: its bins' edges in ns (bins + 1)
    std::vector<size_t> hist_counts;  // and the matches in each (a bin holds [edge, next edge),
                                      // the last its upper edge too)
    int hist_bin = -1;                // the bin kept (bin=), or -1
    std::vector<std::string> range_lines;  // the selected range's statistics as drawn (trace.range=)
    bool measuring = false;  // the result on screen was not measured yet: a note instead
  } drawn;
  // The opened trace's selected idle gap (trace.gap=N, 0 = the longest), or -1.
  int64_t selected_gap() const { return gap_choice_; }

 private:
  enum class RunMode : uint8_t { Median, All, One };
  // This frame's layout and mouse, shared by the drawing helpers.
  struct Canvas;
  struct Hover {
    const profiler::TimelineItem* item = nullptr;
    size_t merged = 0;  // > 1: sub-pixel items drawn as one bar
  };

  bool ensure_model(const Frame& frame);  // false (a note drawn) when there is nothing to draw
  const profiler::Recording* recording_of(const Frame& frame);  // null (a note drawn): none
  void rebuild(const profiler::Recording& rec, const workbench::OpenedTrace* trace, const void* source,
               uint64_t sequence);
  // Whether track `t` is the first of a rank's group: a header line goes above it.
  bool starts_group(size_t t) const {
    const int32_t g = timeline_.tracks[t].group;
    return g >= 0 && (t == 0 || timeline_.tracks[t - 1].group != g);
  }
  const profiler::RunRange* shown_run() const;  // null with run=all or no runs
  void update_range();
  void clamp_view();
  void fit_view();
  void pan_view(double shift);
  void zoom_view(double at, double new_width);
  std::string set_run(const std::string& value, const workbench::RunResult* result);
  std::string set_zoom(const std::string& value);
  std::string set_pan(const std::string& value);

  void draw_header(const Frame& frame);
  void draw_gap_header(const Frame& frame);
  Canvas layout_canvas();
  void handle_input(const Canvas& c);
  void reveal_selection();
  void draw_axis(const Canvas& c) const;
  void draw_label(const Canvas& c, const profiler::TimelineItem& it, float x0, float x1,
                  float y0) const;
  void draw_row(const Canvas& c, const profiler::TimelineRow& row, float y0, Hover& hover);
  float draw_tracks(const Canvas& c, Hover& hover);
  // A counter track under the mouse, and its value there.
  struct CounterHover {
    const profiler::TimelineCounter* counter = nullptr;
    double value = 0;
  };
  CounterHover draw_counters(const Canvas& c, float y);  // every track, from y down
  CounterHover draw_counter(const Canvas& c, const profiler::TimelineCounter& counter, float y);
  void draw_selection(const Canvas& c);
  bool outline(const Canvas& c, const profiler::TimelineItemRef& ref);
  void draw_hover_edge(const Canvas& c, const Hover& hover) const;
  void draw_flows(const Canvas& c, const Hover& hover) const;
  void draw_gaps(const Canvas& c) const;
  std::string set_gap(const std::string& value);
  float item_y(const Canvas& c, const profiler::TimelineItemRef& ref) const;  // row's middle
  void draw_tooltip(const Hover& hover, const CounterHover& counter) const;
  void handle_click(const Frame& frame, const Canvas& c, const Hover& hover);
  std::string set_select(const std::string& value);
  std::string set_hosts(const std::string& value);
  std::string set_find(const std::string& value);
  std::string set_match(const std::string& value);
  void update_matches();     // the matches of find_query_ over the shown range, when stale
  void show_match(const Frame& frame);  // moves the view to matches_[match_index_]
  void draw_find_bar(const Frame& frame);
  void draw_match_list(const Frame& frame);
  void draw_histogram(const Frame& frame);
  std::string set_histogram(const std::string& value);
  std::string set_range(const std::string& value);
  void draw_range(const Canvas& c);  // the selected range's band and its statistics
  std::string set_bin(const std::string& value);
  size_t bin_of(double duration) const;  // the histogram bin of a match's duration
  void draw_find_marks(const Canvas& c);
  bool hidden(size_t t) const;  // a rank's host track folded away
  // The rows track t shows: all, or its outermost ones while its deeper levels are folded.
  size_t rows_shown(size_t t) const;
  void unfold(size_t t);  // every level of track t shown
  void fold_tracks();     // each host track folded to depth_ rows (depth=)
  std::string set_depth(const std::string& value);
  void pick(const profiler::TimelineItemRef& ref);
  ImU32 color_of(const profiler::TimelineItem& it) const;
  // A track's label; worker tracks add their utilisation in the shown run (all runs with run=all).
  std::string track_label(const profiler::TimelineTrack& track) const;

  // Built once per result.
  const void* built_for_ = nullptr;  // the RunResult or OpenedTrace the timeline was built from
  uint64_t built_sequence_ = 0;
  const profiler::Recording* rec_ = nullptr;  // the drawn result's recording
  // A selected time range (trace.range=, shift+drag), ns from the timeline's base, and what lies
  // in it, worked out when it changes; `range_from_` is where a shift+drag started.
  std::optional<std::pair<double, double>> range_;
  std::optional<std::pair<double, double>> range_computed_;
  profiler::RangeStats range_stats_;
  std::optional<double> range_from_;
  profiler::Timeline timeline_;
  std::vector<ImU32> node_color_;  // per node, by its op kind
  std::vector<std::string> group_titles_;  // per timeline group (rank): its header line
  std::vector<char> hosts_shown_;          // per group: its host threads drawn (trace.hosts=)
  static constexpr size_t kFoldDepth = 4;
  size_t depth_ = kFoldDepth;       // host tracks' rows shown (depth=; SIZE_MAX: all)
  std::vector<size_t> rows_shown_;  // per track
  // An opened trace's longest GPU-idle gaps (all devices, longest first; times relative to the
  // timeline's base); empty for a live run. gap_choice_ indexes the selected one, or -1.
  std::vector<profiler::IdleGap> gaps_;
  int64_t gap_choice_ = -1;
  // With a trace open (no graph nodes to select): the clicked item and what it is tied to.
  bool showing_trace_ = false;  // the last frame drew an opened trace
  std::optional<profiler::TimelineItemRef> picked_;
  std::vector<profiler::TimelineItemRef> linked_;
  bool pending_gap_view_ = false;  // from gap=<n>: the next draw shows that gap

  // The view.
  RunMode mode_ = RunMode::Median;
  bool whole_ = false;  // the timeline is an opened trace file's (rebuild says what follows)
  int64_t run_choice_ = 0;              // with RunMode::One
  double range_t0_ = 0, range_t1_ = 1;  // the displayed run(s)
  double bound_t0_ = 0, bound_t1_ = 1;  // the range plus a margin: how far the view may go
  double view_t0_ = 0, view_t1_ = 1;
  bool fitted_ = true;
  double pending_pan_ = 0;   // from pan=, applied at the next draw
  double pending_zoom_ = 1;  // from zoom=<factor>, likewise
  bool dragging_ = false;
  float scroll_y_ = 0;
  std::vector<float> track_top_;  // per track, this frame's screen y (kept to reuse its memory)
  std::string last_selection_;
  int32_t selected_node_ = -1;
  bool reveal_selection_ = false;  // the selection changed: pan to it if it is off screen

  // Find: the query, its matches in the shown range (by start time) and the one shown.
  bool find_open_ = false;
  bool find_focus_ = false;  // give the box the keyboard next frame
  char find_buf_[256] = {};
  std::string find_query_;
  std::vector<profiler::TimelineItemRef> name_matches_;  // every item whose name holds the query
  std::vector<profiler::TimelineItemRef> matches_;       // those of them in the bin kept, if one
  double match_max_len_ = 0;  // the longest match: how far before the view one can start
  // name_matches_' durations in log-spaced bins; matches_ was filtered for matched_bin_.
  bool hist_open_ = false;
  std::vector<double> hist_edges_;
  std::vector<size_t> hist_counts_;
  int hist_bin_ = -1;
  int matched_bin_ = -1;
  int64_t match_index_ = -1;
  std::optional<int64_t> match_pending_;  // from find=/match=: shown at the next draw
  // What matches_ was collected for: a new timeline, query or range collects again.
  const void* matched_for_ = nullptr;
  uint64_t matched_sequence_ = 0;
  std::string matched_query_;
  double matched_t0_ = 0, matched_t1_ = 0;
  bool reveal_match_ = false;  // scroll the tracks to the shown match once they are laid out
};

}  // namespace fusebox::ui
