#pragma once
// The passes column: each pass a checkbox with what it did on this run (changed? nodes before and
// after, how long), each fusion pattern a checkbox under fuse_patterns with how often it fired,
// and a tooltip on every switch saying what it does.
#include <string>
#include <vector>

#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"

namespace fusebox::ui {

struct PassesPanel {
  void draw(const Frame& frame);
  // Its own switches: none (its checkboxes are the settings passes.<name> and patterns.<name>).
  std::vector<PanelSwitch> switches();
  std::string command(const std::string& key, const std::string& value,
                      const workbench::RunResult* result);
  struct Drawn {
    size_t passes = 0, patterns = 0;  // checkboxes drawn
  } drawn;
};

}  // namespace fusebox::ui
