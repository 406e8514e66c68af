// The graph panel's view math: the default view never goes below the readable zoom, the wheel
// zooms by 1.15x a notch keeping the point under the cursor, and the minimap maps back to the
// layout.
#include "app/workbench/graph_viewport.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fusebox::workbench {
namespace {

TEST(GraphViewport, ASmallGraphFitsCentredAndIsNotBlownUp) {
  const Viewport v = fit_view({100, 50}, {600, 400});
  EXPECT_DOUBLE_EQ(v.zoom, kMaxFitZoom);
  EXPECT_DOUBLE_EQ(v.screen_x(50), 300);  // the layout's centre at the canvas's
  EXPECT_DOUBLE_EQ(v.screen_y(25), 200);
  EXPECT_FALSE(layout_exceeds_view(v, {100, 50}, {600, 400}));
}

TEST(GraphViewport, AGraphThatFitsAboveTheReadableZoomIsShownWhole) {
  // 576 x 376 of room after the margins: 400 x 300 fits at 1.25.
  const Viewport v = fit_view({400, 300}, {600, 400});
  EXPECT_NEAR(v.zoom, 376.0 / 300, 1e-9);
  EXPECT_GE(v.screen_y(0), 0);
  EXPECT_LE(v.screen_y(300), 400);
}

// The 9-node block that showed at 58% (1,008 nodes at 1%): fit stops at the readable zoom and
// opens at the top, centred across; the rest is reached by panning and the minimap.
TEST(GraphViewport, FitNeverGoesBelowTheReadableZoom) {
  const Viewport tall = fit_view({300, 1100}, {620, 400});
  EXPECT_DOUBLE_EQ(tall.zoom, kReadableZoom);
  EXPECT_DOUBLE_EQ(tall.screen_y(0), kFitMargin) << "the top (the inputs) first";
  EXPECT_DOUBLE_EQ(tall.screen_x(150), 310) << "centred across";
  EXPECT_TRUE(layout_exceeds_view(tall, {300, 1100}, {620, 400}));
  const Viewport huge = fit_view({40000, 60000}, {620, 400});
  EXPECT_DOUBLE_EQ(huge.zoom, kReadableZoom);
}

TEST(GraphViewport, TheWheelZoomsAroundTheCursor) {
  Viewport v{0.5, 30, -40};
  const double ax = 211, ay = 97;
  const double lx = v.layout_x(ax), ly = v.layout_y(ay);
  for (int notch = 0; notch < 4; ++notch) v = wheel_zoom(v, 1, ax, ay);
  EXPECT_NEAR(v.zoom, 0.5 * std::pow(1.15, 4), 1e-12) << "four notches: 1.75x, not 2x";
  EXPECT_NEAR(v.layout_x(ax), lx, 1e-9) << "the point under the cursor stays";
  EXPECT_NEAR(v.layout_y(ay), ly, 1e-9);
  v = wheel_zoom(v, -4, ax, ay);
  EXPECT_NEAR(v.zoom, 0.5, 1e-12) << "and back";
  EXPECT_NEAR(v.layout_x(ax), lx, 1e-9);
}

TEST(GraphViewport, ZoomIsClampedAndKeepsTheAnchorAtTheLimit) {
  Viewport v{1, 0, 0};
  v = zoom_at(v, 1000, 100, 100);
  EXPECT_DOUBLE_EQ(v.zoom, kMaxZoom);
  EXPECT_NEAR(v.layout_x(100), 100, 1e-9);
  v = wheel_zoom(v, -500, 100, 100);  // the wheel may go below the readable zoom, to the floor
  EXPECT_DOUBLE_EQ(v.zoom, kMinZoom);
}

TEST(GraphViewport, TheMinimapSitsInTheCornerAndMapsBackToTheLayout) {
  const ViewSize layout{300, 1200}, canvas{620, 400};
  const Minimap m = place_minimap(layout, canvas);
  EXPECT_LE(m.width, canvas.width * kMinimapMaxFraction + 1e-9);
  EXPECT_LE(m.height, kMinimapMaxSide + 1e-9);
  EXPECT_NEAR(m.x + m.width, canvas.width - kMinimapMargin, 1e-9);
  EXPECT_NEAR(m.y + m.height, canvas.height - kMinimapMargin, 1e-9);
  EXPECT_NEAR(m.width / m.height, 300.0 / 1200.0, 1e-9) << "keeps the aspect";
  // A click at the minimap's middle centres the view on the layout's middle.
  const double cx = m.x + m.width / 2, cy = m.y + m.height / 2;
  ASSERT_TRUE(m.contains(cx, cy));
  const Viewport v = center_on(Viewport{1, 0, 0}, m.layout_x(cx), m.layout_y(cy), canvas);
  EXPECT_NEAR(v.layout_x(310), 150, 1e-9);
  EXPECT_NEAR(v.layout_y(200), 600, 1e-9);
}

}  // namespace
}  // namespace fusebox::workbench
