#pragma once
// The desktop window: GLFW 3.3 + OpenGL 3.3 core + Dear ImGui's GLFW and OpenGL 3 backends, a
// DejaVu font scaled to the monitor's content scale, and the framebuffer read back as PNG.
// Everything here runs on the UI thread.
//
//   if (auto why = Window::why_no_display()) { ...headless... }
//   Window w("fusebox", 1600, 1000);
//   while (!w.should_close()) { w.begin_frame(); ...ImGui calls...; w.end_frame(); }
#include <imgui.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

struct GLFWwindow;

namespace fusebox::ui {

class Window {
 public:
  // One sentence saying why no window can be opened ("no display: DISPLAY and WAYLAND_DISPLAY
  // are unset"), or nothing when one can. Initialises GLFW to find out.
  static std::optional<std::string> why_no_display();

  // Opens the window and the ImGui context. Throws fusebox::Error with GLFW's reason.
  Window(const std::string& title, int width, int height);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  bool should_close() const;
  void set_title(const std::string& title);  // a no-op when it is the title already
  void request_close();
  // Polls events (or waits up to `wait_seconds` for one when > 0) and starts an ImGui frame.
  void begin_frame(double wait_seconds = 0);
  // Renders the ImGui frame and swaps buffers. With `capture`, the rendered frame is read back
  // first (captured() returns it).
  void end_frame(bool capture = false);

  // Files dropped on the window since the last call.
  std::vector<std::string> take_dropped_files();

  // The framebuffer of the last rendered frame as RGB rows, top row first.
  struct Pixels {
    int width = 0, height = 0;
    std::vector<uint8_t> rgb;
    // The pixel at (x, y) in framebuffer pixels, 0xRRGGBB.
    uint32_t at(int x, int y) const;
  };
  // The last frame rendered with end_frame(true); empty before one.
  const Pixels& captured() const { return captured_; }
  // Writes captured() as PNG, whole or not at all (a temporary file renamed). Throws
  // fusebox::Error naming the path.
  void save_png(const std::string& path) const;

  // An opaque rectangle filled by a clear of the framebuffer, scissored to it, when the renderer
  // reaches it in draw order (a draw-list callback), instead of by two blended triangles. The
  // pixels are the same (those whose centres lie inside, within the draw list's clip rectangle);
  // the cost is not: Mesa's software rasterizer (Xvfb) shades a screenful of blended fragments in
  // about 5 ms a frame, and clears it in a fraction of one. The plots' backgrounds use it. A colour
  // that is not opaque is drawn as the rectangle.
  static void fill_opaque(ImDrawList* dl, const ImVec2& min, const ImVec2& max, ImU32 color);

  float content_scale() const { return scale_; }
  // Framebuffer pixels per ImGui coordinate unit (1 except on HiDPI setups that scale the buffer).
  float framebuffer_scale() const;
  GLFWwindow* handle() const { return window_; }

 private:
  GLFWwindow* window_ = nullptr;
  std::string title_;
  float scale_ = 1;
  std::vector<std::string> dropped_;
  Pixels captured_;
  struct Fill {
    ImVec2 min, max;
    ImU32 color;
  };
  std::vector<Fill> fills_;  // this frame's fill_opaque rectangles; a callback's data is the index
  static void clear_fill(const ImDrawList* dl, const ImDrawCmd* cmd);
  Pixels read_back_buffer() const;
};

}  // namespace fusebox::ui
