#pragma once
// The arena panel: the execution plan as a timeline. Execution step runs across, arena offset
// up (0 at the bottom); each buffer is a rectangle over its offset range and its lifetime, so
// gaps are wasted arena and the tallest stack of live buffers is the lower bound. Hover a box for
// its tensors and users, click it to select the node that writes it.
//
// Commands ("arena.<key>=<value>", run by the App through command()):
//   zoom=fit              show every step
//   color=kind|buffer     fill by the producing node's op kind, or by a hash of the buffer name
//   live=on|off           the live-bytes curve
#include <imgui.h>
#include <imgui_internal.h>  // ImRect

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"
#include "core/ir/graph.h"
#include "core/planner/plan.h"
#include "core/planner/plan_index.h"
#include "app/workbench/run_result.h"

namespace fusebox::ui {

struct ArenaPanel {
  void draw(const Frame& frame);
  // The "arena.<key>=<value>" commands (zoom, color, live) as a table (app/ui/panel_switch.h).
  std::vector<PanelSwitch> switches();
  // Runs "arena.<key>=<value>"; returns "" or an error sentence listing the valid values.
  std::string command(const std::string& key, const std::string& value,
                      const workbench::RunResult* result);

  // What the last frame put on screen (screen coordinates), for tests.
  struct Drawn {
    size_t rects = 0;                    // buffer rectangles drawn
    std::vector<ImRect> selected_rects;  // the selected node's buffers, clipped to the plot
    bool eager_note = false;             // the "eager executor: no arena" note was shown
  } drawn;

 private:
  enum class ColorBy : uint8_t { Kind, Buffer };
  struct Plot;  // this frame's canvas, plot and view

  void draw_header(const Frame& frame, const workbench::RunResult& result) const;
  Plot layout_plot(const planner::ExecutionPlan& plan, const ir::Graph& graph);
  void clamp_view(double full);
  void handle_input(const Plot& p);
  void draw_axes(const Plot& p) const;
  ImU32 fill_of(size_t b, const planner::Placement& pl, const planner::PlanIndex& ix,
                const ir::Graph& graph, uint8_t alpha) const;
  int draw_buffers(const Plot& p, const planner::ExecutionPlan& plan, const planner::PlanIndex& ix,
                   const ir::Graph& graph, uint8_t alpha);
  void draw_live(const Plot& p, const planner::ExecutionPlan& plan) const;
  void draw_arena_lines(const Plot& p, const planner::ExecutionPlan& plan) const;
  void draw_selection(const Plot& p, const planner::ExecutionPlan& plan,
                      const planner::PlanIndex& ix, int sel_node);
  void mark_step(const Plot& p, int sel_node) const;

  ColorBy color_by_ = ColorBy::Kind;
  bool show_live_ = true;
  bool fitted_ = true;                // the view follows the step count of whatever result comes
  double view_x0_ = 0, view_x1_ = 1;  // visible steps when not fitted
  bool dragging_ = false;             // the current press became a pan, so its release is no click
};

}  // namespace fusebox::ui
