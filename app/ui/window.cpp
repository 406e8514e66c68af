#include "app/ui/window.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "core/base/atomic_file.h"
#include "core/base/error.h"

namespace fusebox::ui {
namespace {

constexpr const char* kFontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
constexpr float kFontPixels = 15.0f;

std::string glfw_error_text() {
  const char* what = nullptr;
  int code = glfwGetError(&what);
  if (code == GLFW_NO_ERROR) return "unknown GLFW error";
  return what ? what : "GLFW error " + std::to_string(code);
}

Window* from(GLFWwindow* w) { return static_cast<Window*>(glfwGetWindowUserPointer(w)); }

}  // namespace

std::optional<std::string> Window::why_no_display() {
  const char* x = std::getenv("DISPLAY");
  const char* wl = std::getenv("WAYLAND_DISPLAY");
  if ((!x || !*x) && (!wl || !*wl)) return "no display: DISPLAY and WAYLAND_DISPLAY are unset";
  if (!glfwInit()) return "cannot open the display (" + glfw_error_text() + ")";
  return std::nullopt;  // GLFW stays initialised for the Window
}

Window::Window(const std::string& title, int width, int height) {
  if (!glfwInit()) throw Error("cannot start GLFW: " + glfw_error_text());
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  window_ = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  title_ = title;
  if (!window_) throw Error("cannot open an OpenGL 3.3 window: " + glfw_error_text());
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(1);
  glfwSetWindowUserPointer(window_, this);
  glfwSetDropCallback(window_, [](GLFWwindow* w, int count, const char** paths) {
    for (int i = 0; i < count; ++i) from(w)->dropped_.emplace_back(paths[i]);
  });

  float sx = 1, sy = 1;
  glfwGetWindowContentScale(window_, &sx, &sy);
  scale_ = sx > 0 ? sx : 1;

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is ours, not a file in the working directory
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  ImGui::StyleColorsDark();
  ImGui::GetStyle().ScaleAllSizes(scale_);
  if (std::filesystem::exists(kFontPath)) {
    io.Fonts->AddFontFromFileTTF(kFontPath, kFontPixels * scale_);
  } else {
    // fonts-dejavu-core is in tools/setup.sh; without it ImGui's built-in bitmap font still works.
    ImFontConfig config;
    config.SizePixels = 13.0f * scale_;
    io.Fonts->AddFontDefault(&config);
  }
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
}

Window::~Window() {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  if (window_) glfwDestroyWindow(window_);
  glfwTerminate();
}

bool Window::should_close() const { return glfwWindowShouldClose(window_); }
void Window::request_close() { glfwSetWindowShouldClose(window_, GLFW_TRUE); }
void Window::set_title(const std::string& title) {
  if (title == title_) return;
  title_ = title;
  glfwSetWindowTitle(window_, title.c_str());
}

void Window::fill_opaque(ImDrawList* dl, const ImVec2& min, const ImVec2& max, ImU32 color) {
  GLFWwindow* current = glfwGetCurrentContext();
  Window* w = current ? from(current) : nullptr;
  if (!w || (color & IM_COL32_A_MASK) != IM_COL32_A_MASK) {
    dl->AddRectFilled(min, max, color);
    return;
  }
  w->fills_.push_back(Fill{min, max, color});
  dl->AddCallback(&Window::clear_fill, reinterpret_cast<void*>(static_cast<uintptr_t>(w->fills_.size() - 1)));
}

void Window::clear_fill(const ImDrawList*, const ImDrawCmd* cmd) {
  GLFWwindow* current = glfwGetCurrentContext();
  Window* w = current ? from(current) : nullptr;
  const auto i = reinterpret_cast<uintptr_t>(cmd->UserCallbackData);
  if (!w || i >= w->fills_.size()) return;
  const Fill& f = w->fills_[i];
  const ImDrawData* dd = ImGui::GetDrawData();
  const ImVec2 off = dd->DisplayPos, scale = dd->FramebufferScale;
  const int fb_height = static_cast<int>(dd->DisplaySize.y * scale.y);
  // The pixels two triangles from `min` to `max` cover: those whose centres lie inside (GL's
  // rasterization rule), rows counted from the top.
  auto first = [](float v) { return static_cast<int>(std::ceil(v - 0.5f)); };
  int x0 = first((f.min.x - off.x) * scale.x), x1 = first((f.max.x - off.x) * scale.x);
  int y0 = first((f.min.y - off.y) * scale.y), y1 = first((f.max.y - off.y) * scale.y);
  // Within the command's clip rectangle, computed as imgui_impl_opengl3 computes its scissor.
  const ImVec2 clip_min((cmd->ClipRect.x - off.x) * scale.x, (cmd->ClipRect.y - off.y) * scale.y);
  const ImVec2 clip_max((cmd->ClipRect.z - off.x) * scale.x, (cmd->ClipRect.w - off.y) * scale.y);
  if (clip_max.x <= clip_min.x || clip_max.y <= clip_min.y) return;
  const int sx = static_cast<int>(clip_min.x), sw = static_cast<int>(clip_max.x - clip_min.x);
  const int sy = static_cast<int>(static_cast<float>(fb_height) - clip_max.y);  // GL rows, from the bottom
  const int sh = static_cast<int>(clip_max.y - clip_min.y);
  x0 = std::max(x0, sx);
  x1 = std::min(x1, sx + sw);
  int gy0 = std::max(fb_height - y1, sy), gy1 = std::min(fb_height - y0, sy + sh);
  if (x1 <= x0 || gy1 <= gy0) return;
  glScissor(x0, gy0, x1 - x0, gy1 - gy0);  // the backend enabled the scissor test, and resets it per command
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(f.color);
  glClearColor(c.x, c.y, c.z, c.w);
  glClear(GL_COLOR_BUFFER_BIT);
}

void Window::begin_frame(double wait_seconds) {
  fills_.clear();  // the last frame's draw lists, and their callbacks, are gone
  if (wait_seconds > 0) glfwWaitEventsTimeout(wait_seconds);
  else glfwPollEvents();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void Window::end_frame(bool capture) {
  ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  glViewport(0, 0, w, h);
  // The window background: the App's full-window ImGui window draws none of its own.
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (capture) captured_ = read_back_buffer();
  glfwSwapBuffers(window_);
}

std::vector<std::string> Window::take_dropped_files() { return std::exchange(dropped_, {}); }

float Window::framebuffer_scale() const {
  return ImGui::GetIO().DisplayFramebufferScale.x > 0 ? ImGui::GetIO().DisplayFramebufferScale.x : 1;
}

uint32_t Window::Pixels::at(int x, int y) const {
  if (x < 0 || y < 0 || x >= width || y >= height) return 0;
  const size_t i = (static_cast<size_t>(y) * width + x) * 3;
  return (uint32_t{rgb[i]} << 16) | (uint32_t{rgb[i + 1]} << 8) | rgb[i + 2];
}

Window::Pixels Window::read_back_buffer() const {
  // The frame just rendered, before the swap: after it the back buffer's content is undefined.
  Pixels p;
  glfwGetFramebufferSize(window_, &p.width, &p.height);
  std::vector<uint8_t> bottom_up(static_cast<size_t>(p.width) * p.height * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, p.width, p.height, GL_RGB, GL_UNSIGNED_BYTE, bottom_up.data());
  p.rgb.resize(bottom_up.size());
  const size_t row = static_cast<size_t>(p.width) * 3;
  for (int y = 0; y < p.height; ++y) {
    std::copy_n(bottom_up.data() + (p.height - 1 - y) * row, row, p.rgb.data() + y * row);
  }
  return p;
}

void Window::save_png(const std::string& path) const {
  const Pixels& p = captured_;
  if (p.rgb.empty()) throw Error("no frame captured for " + path);
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), size);
  };
  if (!stbi_write_png_to_func(append, &png, p.width, p.height, 3, p.rgb.data(), p.width * 3)) {
    throw Error("cannot encode the screenshot for " + path);
  }
  write_file_atomically(path, png);
}

}  // namespace fusebox::ui
