#pragma once
// Small things every panel uses: the empty / error state, number formatting, colours, the
// focused-panel frame and tooltips. ImGui types only; no panel state here.
#include <imgui.h>

#include <cstdint>
#include <string>

#include "app/ui/panel.h"

namespace fusebox::ui {

// Colours (ImGui's ABGR packing, as IM_COL32 makes them).
inline constexpr ImU32 kSelectionColor = IM_COL32(255, 200, 0, 255);   // selected node, everywhere
inline constexpr ImU32 kHighlightColor = IM_COL32(230, 40, 40, 255);   // what a pass touched
inline constexpr ImU32 kTextDim = IM_COL32(150, 150, 150, 255);
inline constexpr ImU32 kErrorColor = IM_COL32(240, 90, 80, 255);
// GPU activity, one palette for the trace panel and the op table's GPU bar: copies blue, so they
// stand apart from the orange of idle time (the trace's gap bands are kIdleColor, translucent).
inline constexpr ImU32 kKernelColor = IM_COL32(96, 178, 104, 255);
inline constexpr ImU32 kMemcpyColor = IM_COL32(90, 160, 240, 255);
inline constexpr ImU32 kMemsetColor = IM_COL32(206, 192, 72, 255);
inline constexpr ImU32 kSyncColor = IM_COL32(200, 72, 72, 255);  // the host held: red
inline constexpr ImU32 kIdleColor = IM_COL32(240, 140, 40, 255);
// 0xRRGGBB (graph_layout's palette) to ImU32, with alpha.
inline ImU32 rgb(uint32_t rrggbb, uint8_t alpha = 255) {
  return IM_COL32((rrggbb >> 16) & 0xff, (rrggbb >> 8) & 0xff, rrggbb & 0xff, alpha);
}

// Draws the panel's empty or error state and returns false when there is no result to draw:
// "No result yet: compile (stage 4 of 6)" while the first run is going, the error when it
// failed. With a result and an error (a later run failed), draws the error on one line above and
// returns true: the last good result stays on screen.
bool result_or_empty_state(const Frame& frame, const char* panel);

// For panels that draw measured figures (trace, op table, compare): false, with "measuring: call
// 40 of 100" drawn, while the result on screen is the unmeasured one the Runner publishes first.
bool measured_or_note(const Frame& frame, const char* panel);

// "1.23 ms", "456 us", "12.3 us"; "3.4 MiB", "12.0 KiB", "64 B"; "1.2 GFLOP".
std::string format_us(double us);
std::string format_ns(double ns);
std::string format_bytes(double bytes);
std::string format_count(double n);  // 1234567 -> "1.23 M"

// A tooltip on the last item when hovered (every switch gets one).
void item_tooltip(const std::string& text);

// The focused panel's border: call inside the panel's child window.
void draw_focus_border(const Frame& frame, PanelId id);

}  // namespace fusebox::ui
