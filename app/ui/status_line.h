#pragma once
// The line along the bottom: median latency, nodes, arena against its lower bound, the run in
// flight (stage, call i of n) and the last error (of a run or of a command).
#include <string>

#include "app/ui/panel.h"

namespace fusebox::ui {

struct StatusLine {
  void draw(const Frame& frame, const std::string& command_error);
  std::string drawn_text;  // what the last frame showed, for tests
};

}  // namespace fusebox::ui
