#pragma once
// The passes column: each pass a checkbox with what it did on this run (changed? nodes before and
// after, how long), each fusion pattern a checkbox under fuse_patterns with how often it fired,
// and a tooltip on every switch saying what it does.
#include "app/ui/panel.h"

namespace fusebox::ui {

struct PassesPanel {
  void draw(const Frame& frame);
  struct Drawn {
    size_t passes = 0, patterns = 0;  // checkboxes drawn
  } drawn;
};

}  // namespace fusebox::ui
