#pragma once
// The bar across the top: model, backend, executor, threads, planner, iterations, run and pin.
// Each switch sends a settings command ("executor=eager"); a tooltip on each says what it does.
#include "app/ui/panel.h"

namespace fusebox::ui {

struct SettingsBar {
  void draw(const Frame& frame);
  bool drawn_for_trace = false;  // the last frame drew the recorded trace's bar

 private:
  void draw_for_trace(const Frame& frame);
};

}  // namespace fusebox::ui
