#pragma once
// The trace panel: the recorded runs as a timeline, nsys style. One track per source, labelled
// on the left: NVTX-style ranges (runs and stages), each CPU thread (nested spans by depth: the
// run on top, its ops below), each GPU stream and the CUDA API calls when the backend reported
// device activity, and the arena's live bytes as a counter. Shows the median run by default.
// Wheel zooms around the cursor, drag pans, double-click fits; click an op to select its node.
//
// Commands ("trace.<key>=<value>", run by the App through command()):
//   run=median|all|<n>    which recorded run(s) to show (the view fits the new range)
//   zoom=fit|<factor>     show the whole range, or zoom in (> 1) or out around the centre
//   pan=<fraction>        move the view by a fraction of its width (0.25 right, -0.25 left)
#include <imgui.h>
#include <imgui_internal.h>  // ImRect

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "app/ui/panel.h"
#include "app/workbench/run_result.h"

namespace fusebox::ui {

struct TracePanel {
  void draw(const Frame& frame);
  // Runs "trace.<key>=<value>"; returns "" or an error sentence listing the valid values.
  std::string command(const std::string& key, const std::string& value,
                      const workbench::RunResult* result);

  // What the last frame put on screen (screen coordinates), for tests.
  struct Drawn {
    size_t spans = 0;           // spans drawn, those merged into sub-pixel groups included
    size_t selected_spans = 0;  // op spans of the selected node outlined
    std::vector<ImRect> selected_rects;
    size_t tracks = 0;
  } drawn;

 private:
  enum class ItemKind : uint8_t { Stage, Run, Op, Kernel, Memcpy, Memset, Runtime };
  // One bar. Times are ns relative to base_ns_ (doubles keep ns precision at that scale).
  struct Item {
    double t0 = 0, t1 = 0;
    int32_t index = 0;  // into recording.spans, or recording.device for device kinds
    int32_t node = -1;  // graph node, or -1
    ImU32 color = 0;
    ItemKind kind = ItemKind::Op;
  };
  struct Row {
    std::vector<Item> items;  // sorted by t0
    double max_len = 0;       // longest item: how far before the view a visible one can start
  };
  struct Track {
    std::string label;
    std::vector<Row> rows;
  };
  struct ItemRef {
    uint32_t track = 0, row = 0, item = 0;
  };
  struct RunRange {
    int64_t run = 0;
    double t0 = 0, t1 = 0;
    size_t ops = 0;
  };
  enum class RunMode : uint8_t { Median, All, One };

  void rebuild(const workbench::RunResult& result);
  void update_range();
  void clamp_view();
  void fit_view();

  // Built once per result.
  const workbench::RunResult* built_for_ = nullptr;
  uint64_t built_sequence_ = 0;
  int64_t base_ns_ = 0;
  std::vector<Track> tracks_;
  std::vector<std::pair<double, double>> counter_;  // (t, arena live bytes), sorted by t
  double counter_max_ = 1;
  std::vector<RunRange> runs_;  // by start time
  size_t median_run_ = 0;       // index into runs_
  double extent_t0_ = 0, extent_t1_ = 0;
  std::vector<std::vector<ItemRef>> op_items_of_node_;  // per node, by start time

  // The view.
  RunMode mode_ = RunMode::Median;
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
};

}  // namespace fusebox::ui
