#pragma once
// The walkthrough: a scenario's steps one at a time. Previous / next (or step=N) enter a step of
// the App's player (workbench::Walkthrough, the one `fusebox check` plays too): the App applies
// its settings and, once its result is in, selects what it points at; the panel shows the step's title, its text and its checks with live results over the results of the
// steps visited so far (a check against a step not yet run says so).
#include <cstddef>
#include <string>

#include <vector>

#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"

namespace fusebox::ui {

struct WalkthroughPanel {
  // Draws frame.walkthrough (the App's player; null when no scenario is loaded).
  void draw(const Frame& frame);
  // "walkthrough.<key>=<value>": none yet. Entering a step changes the settings, so stepping is
  // the App's step=N (the arrows issue it), not a switch of the panel's own.
  std::vector<PanelSwitch> switches() { return {}; }

  struct Drawn {
    size_t checks = 0, passed = 0, pending = 0;  // the current step's checks and their state
    std::string error;                            // why the checks could not be evaluated
  } drawn;
};

}  // namespace fusebox::ui
