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
#include "app/workbench/run_result.h"

namespace fusebox::ui {

struct ArenaPanel {
  void draw(const Frame& frame);
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
  ColorBy color_by_ = ColorBy::Kind;
  bool show_live_ = true;
  bool fitted_ = true;                // the view follows the step count of whatever result comes
  double view_x0_ = 0, view_x1_ = 1;  // visible steps when not fitted
  bool dragging_ = false;             // the current press became a pan, so its release is no click
};

}  // namespace fusebox::ui
