#include "app/workbench/graph_viewport.h"

namespace fusebox::workbench {

Viewport fit_view(ViewSize layout, ViewSize canvas) {
  const double w = std::max(1.0, layout.width), h = std::max(1.0, layout.height);
  const double room_w = std::max(1.0, canvas.width - 2 * kFitMargin);
  const double room_h = std::max(1.0, canvas.height - 2 * kFitMargin);
  Viewport v;
  const double fits = std::min(room_w / w, room_h / h);
  v.zoom = std::clamp(fits, kReadableZoom, kMaxFitZoom);
  v.pan_x = (canvas.width - w * v.zoom) / 2;
  v.pan_y = fits >= kReadableZoom ? (canvas.height - h * v.zoom) / 2 : kFitMargin;
  return v;
}

Viewport zoom_at(const Viewport& v, double zoom, double ax, double ay) {
  Viewport out = v;
  const double x = v.layout_x(ax), y = v.layout_y(ay);  // the layout point under the anchor
  out.zoom = std::clamp(zoom, kMinZoom, kMaxZoom);
  out.pan_x = ax - x * out.zoom;
  out.pan_y = ay - y * out.zoom;
  return out;
}

Viewport wheel_zoom(const Viewport& v, double notches, double ax, double ay) {
  return zoom_at(v, v.zoom * std::pow(kWheelFactor, notches), ax, ay);
}

Viewport center_on(const Viewport& v, double x, double y, ViewSize canvas) {
  Viewport out = v;
  out.pan_x = canvas.width / 2 - x * v.zoom;
  out.pan_y = canvas.height / 2 - y * v.zoom;
  return out;
}

bool layout_exceeds_view(const Viewport& v, ViewSize layout, ViewSize canvas) {
  constexpr double kSlack = 0.5;  // pixels: rounding is not "outside"
  return v.screen_x(0) < -kSlack || v.screen_y(0) < -kSlack ||
         v.screen_x(layout.width) > canvas.width + kSlack ||
         v.screen_y(layout.height) > canvas.height + kSlack;
}

Minimap place_minimap(ViewSize layout, ViewSize canvas) {
  const double max_w = std::min(kMinimapMaxSide, canvas.width * kMinimapMaxFraction);
  const double max_h = std::min(kMinimapMaxSide, canvas.height * kMinimapMaxFraction * 1.5);
  Minimap m;
  m.scale = std::min(max_w / std::max(1.0, layout.width), max_h / std::max(1.0, layout.height));
  m.width = layout.width * m.scale;
  m.height = layout.height * m.scale;
  m.x = canvas.width - kMinimapMargin - m.width;
  m.y = canvas.height - kMinimapMargin - m.height;
  return m;
}

}  // namespace fusebox::workbench
