#pragma once
// The graph panel's view of a layout as plain numbers (no ImGui, so the math is tested on its
// own): a zoom (screen pixels per layout point) and a pan (where the layout's origin lands, in
// pixels from the canvas's top left).
//
//   screen = pan + layout * zoom
//
// The default view keeps the labels legible: fitting never goes below kReadableZoom (node text
// 10 pt -> 10 px), so a graph taller or wider than the canvas at that zoom opens at its top,
// centred across, with the minimap to move around it. The wheel zooms by kWheelFactor a notch
// around the point under the cursor, down to kMinZoom (a 1,000-node graph on a small panel).
#include <algorithm>
#include <cmath>

namespace fusebox::workbench {

inline constexpr double kReadableZoom = 1.0;  // node text at 10 px: the smallest fit
inline constexpr double kMinZoom = 0.005;     // the wheel goes this far out
inline constexpr double kMaxZoom = 8;
inline constexpr double kMaxFitZoom = 1.5;   // fitting a tiny graph should not blow it up
inline constexpr double kWheelFactor = 1.15;  // zoom factor per wheel notch
inline constexpr double kFitMargin = 12;      // pixels left around a fitted graph

struct ViewSize {
  double width = 0, height = 0;
};

struct Viewport {
  double zoom = 1;
  double pan_x = 0, pan_y = 0;

  double screen_x(double x) const { return pan_x + x * zoom; }
  double screen_y(double y) const { return pan_y + y * zoom; }
  double layout_x(double sx) const { return (sx - pan_x) / zoom; }
  double layout_y(double sy) const { return (sy - pan_y) / zoom; }
};

// The whole layout in the canvas when it fits at kReadableZoom or more (centred, at most
// kMaxFitZoom); otherwise kReadableZoom with the layout's top at the canvas's top, centred
// across.
Viewport fit_view(ViewSize layout, ViewSize canvas);

// `v` zoomed to `zoom` (clamped to kMinZoom..kMaxZoom), the layout point under the canvas point
// (ax, ay) staying there.
Viewport zoom_at(const Viewport& v, double zoom, double ax, double ay);

// `notches` of the wheel (fractions from a touchpad) at the canvas point (ax, ay).
Viewport wheel_zoom(const Viewport& v, double notches, double ax, double ay);

// `v` panned so the layout point (x, y) is at the centre of the canvas.
Viewport center_on(const Viewport& v, double x, double y, ViewSize canvas);

// Whether part of the layout lies outside the canvas at this view: then the minimap shows.
bool layout_exceeds_view(const Viewport& v, ViewSize layout, ViewSize canvas);

// Where the minimap sits in the canvas (its bottom right corner, at most `max` across) and how
// layout points map into it.
struct Minimap {
  double x = 0, y = 0;  // top left, canvas pixels
  double scale = 1;     // minimap pixels per layout point
  double width = 0, height = 0;

  bool contains(double cx, double cy) const {
    return cx >= x && cx <= x + width && cy >= y && cy <= y + height;
  }
  // The layout point at the canvas point (cx, cy) inside the minimap.
  double layout_x(double cx) const { return (cx - x) / scale; }
  double layout_y(double cy) const { return (cy - y) / scale; }
};
inline constexpr double kMinimapMaxFraction = 0.3;  // of the canvas's width and height
inline constexpr double kMinimapMaxSide = 200;      // pixels
inline constexpr double kMinimapMargin = 8;         // from the canvas's edges
Minimap place_minimap(ViewSize layout, ViewSize canvas);

}  // namespace fusebox::workbench
