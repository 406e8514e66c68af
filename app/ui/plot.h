#pragma once
// What the plotting panels (arena, trace) share: the plot's background and axis text colours,
// and tick steps that read well.
#include <imgui.h>

#include <cmath>

#include "app/ui/window.h"

namespace fusebox::ui {

inline constexpr ImU32 kPlotBg = IM_COL32(26, 27, 31, 255);
inline constexpr ImU32 kAxisText = IM_COL32(185, 185, 185, 255);

// The plot's background: the largest area a plot draws, filled by a clear (window.h says why).
inline void draw_plot_background(ImDrawList* dl, const ImVec2& min, const ImVec2& max) {
  Window::fill_opaque(dl, min, max, kPlotBg);
}

// 1, 2 or 5 x 10^k, the smallest at or above `raw`.
inline double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace fusebox::ui
