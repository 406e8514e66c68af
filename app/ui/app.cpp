#include "app/ui/app.h"

#include <imgui.h>
#include <GLFW/glfw3.h>

#include <algorithm>
#include <filesystem>

#include "app/ui/widgets.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::ui {
namespace {

std::vector<std::string> split_commands(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text) {
    if (c == ';' || c == '\n') {
      if (auto t = trim(current); !t.empty()) out.push_back(t);
      current.clear();
    } else {
      current += c;
    }
  }
  if (auto t = trim(current); !t.empty()) out.push_back(t);
  return out;
}

// Commands a script runs only once the runs requested before them have finished.
bool reads_result(const std::string& verb) {
  return verb == "select" || verb == "step" || verb == "scenario" || verb == "save" || verb == "pin" || verb == "wait" || verb == "screenshot" ||
         verb == "panel" || verb.starts_with("graph.") || verb.starts_with("arena.") ||
         verb.starts_with("trace.") || verb.starts_with("ops.") || verb.starts_with("compare.");
}

std::optional<PanelId> panel_from_name(const std::string& name) {
  for (int i = 0; i < kPanelCount; ++i) {
    if (name == panel_name(static_cast<PanelId>(i))) return static_cast<PanelId>(i);
  }
  return std::nullopt;
}

std::vector<std::string> panel_names() {
  std::vector<std::string> names;
  for (int i = 0; i < kPanelCount; ++i) names.emplace_back(panel_name(static_cast<PanelId>(i)));
  return names;
}

// A draggable split between two regions, `length` long: `fraction` of `total` goes to the first.
void splitter(const char* id, bool vertical, float* fraction, float total, float thickness, float length) {
  ImGui::InvisibleButton(id, vertical ? ImVec2(thickness, length) : ImVec2(length, thickness));
  if (ImGui::IsItemHovered() || ImGui::IsItemActive()) {
    ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
    ImGui::GetWindowDrawList()->AddRectFilled(ImGui::GetItemRectMin(), ImGui::GetItemRectMax(),
                                              IM_COL32(90, 160, 255, 160));
  }
  if (ImGui::IsItemActive() && total > 0) {
    const float delta = vertical ? ImGui::GetIO().MouseDelta.x : ImGui::GetIO().MouseDelta.y;
    *fraction = std::clamp(*fraction + delta / total, 0.08f, 0.92f);
  }
}

}  // namespace

App::App(const workbench::Settings& settings, workbench::Pipeline::RooflineSource roofline,
         const std::string& scenario)
    : runner_(std::move(roofline)), settings_(settings) {
  if (scenario.empty() || !command("scenario=" + scenario).empty()) request_run();
}

std::string App::enter_step(size_t step) {
  if (!walkthrough_) return "step: no scenario loaded (File > Open a scenario .json)";
  const workbench::Settings& next = walkthrough_->enter(step);
  const bool changed = !(next == settings_);
  settings_ = next;
  if (changed || !walkthrough_->has_result(step)) request_run();
  focus_ = PanelId::Walkthrough;
  if (const std::string& panel = walkthrough_->current().look_at.panel; !panel.empty()) {
    for (int i = 0; i < kPanelCount; ++i)
      if (panel == panel_name(static_cast<PanelId>(i))) focus_ = static_cast<PanelId>(i);
  }
  bring_tab_ = PanelId::Walkthrough;
  look_at_pending_ = true;
  return "";
}

void App::apply_look_at() {
  if (!look_at_pending_ || !walkthrough_) return;
  const auto result = runner_.result();
  if (!result || !(result->settings == settings_)) return;
  look_at_pending_ = false;
  const workbench::LookAt& l = walkthrough_->current().look_at;
  try {
    workbench::validate_look_at(walkthrough_->scenario(), walkthrough_->step(), *result);
  } catch (const Error& e) {
    command_error_ = e.what();
    return;
  }
  if (!l.node.empty()) {
    selection_.node = l.node;
  } else if (!l.op.empty()) {
    for (const auto& n : result->graph().nodes) {
      if (n.op == l.op) {
        selection_.node = n.name;
        break;
      }
    }
  }
}

void App::request_run() { runner_.request(settings_); }

bool App::idle_drawing() const {
  const workbench::Runner::Snapshot snap = runner_.snapshot();
  return !snap.busy && snap.result == drawn_result_ && !layouts_.busy();
}

bool App::idle() const { return queue_.empty() && idle_drawing(); }

std::string App::command(const std::string& text) {
  std::string error;
  for (const std::string& one : split_commands(text)) {
    error = run_command(one);
    if (!error.empty()) break;
  }
  command_error_ = error;
  return error;
}

std::string App::run_command(const std::string& text) {
  const size_t eq = text.find('=');
  const std::string verb = trim(text.substr(0, eq));
  const std::string value = eq == std::string::npos ? "" : trim(text.substr(eq + 1));
  const auto snap_result = runner_.result();
  try {
    if (verb == "run") {
      request_run();
    } else if (verb == "pin") {
      if (!snap_result) return "pin: no result to pin yet";
      runner_.pin_baseline();
      bring_tab_ = PanelId::Compare;
    } else if (verb == "unpin") {
      runner_.clear_baseline();
    } else if (verb == "quit") {
      quit_ = true;
    } else if (verb == "wait") {
      // Nothing to do now: in a script it has already waited for the runs before it.
    } else if (verb == "screenshot") {
      if (value.empty()) return "screenshot: give a path (screenshot=view.png)";
      screenshot_ = value;
    } else if (verb == "scenario" || (verb == "open" && value.ends_with(".json"))) {
      if (value.empty()) return "scenario: give a scenario file (scenario=scenarios/interview.json)";
      walkthrough_.emplace(std::make_shared<const workbench::Scenario>(workbench::load_scenario(value)));
      // Room for the step's text and checks: the bottom-right grows, the trace gives a little.
      bottom_split_ = std::min(bottom_split_, 0.45f);
      trace_height_ = std::min(trace_height_, 0.2f);
      selection_ = {};
      return enter_step(0);
    } else if (verb == "step") {
      size_t n = 0;
      try {
        n = static_cast<size_t>(parse_int(value, "step"));
      } catch (const Error&) {
        return "step: expected a step number, got '" + value + "'";
      }
      return enter_step(n);
    } else if (verb == "save") {
      if (value.empty()) {
        save_dialog_ = true;
        return "";
      }
      const std::string name = std::filesystem::path(value).stem().string();
      write_file_atomically(value, workbench::scenario_json(name, settings_).dump(2) + "\n");
    } else if (verb == "open") {
      if (value.empty()) {  // the dialog
        open_dialog_ = true;
        return "";
      }
      settings_.model = value;
      settings_.dims.clear();
      settings_.inputs.clear();
      selection_ = {};
      request_run();
    } else if (verb == "select") {
      if (!value.empty() && snap_result) {
        // Any graph of the run: the one that ran, the model as loaded and every pass's snapshot
        // (the graph panel's before/after views show nodes a later pass removed).
        std::vector<std::string> names;
        auto add = [&](const ir::Graph& g) {
          for (const auto& n : g.nodes) names.push_back(n.name);
        };
        add(snap_result->graph());
        if (snap_result->model) add(snap_result->model->graph);
        for (const auto& e : snap_result->optimized->log.entries) {
          if (e.snapshot) add(*e.snapshot);
        }
        if (std::find(names.begin(), names.end(), value) == names.end()) {
          std::string msg = "select: no node '" + value + "' in the graph";
          if (auto near = closest(value, names); !near.empty()) msg += " (did you mean '" + near + "'?)";
          return msg;
        }
      }
      selection_.node = value;
    } else if (verb == "panel") {
      auto id = panel_from_name(value);
      if (!id) return "panel: unknown panel '" + value + "' (valid: " + join(panel_names(), ", ") + ")";
      focus_ = *id;
      if (focus_ == PanelId::Compare || focus_ == PanelId::Walkthrough) bring_tab_ = focus_;
    } else if (verb.starts_with("graph.")) {
      return graph.command(verb.substr(6), value, snap_result.get());
    } else if (verb.starts_with("arena.")) {
      return arena.command(verb.substr(6), value, snap_result.get());
    } else if (verb.starts_with("trace.")) {
      return trace.command(verb.substr(6), value, snap_result.get());
    } else if (verb.starts_with("ops.")) {
      return ops.command(verb.substr(4), value);
    } else if (eq == std::string::npos) {
      return "unknown command '" + text +
             "' (commands: KEY=VALUE settings, open=, scenario=, step=, save=, select=, panel=, run, "
             "pin, unpin, graph.*=, arena.*=, trace.*=, ops.*=, wait, screenshot=, quit)";
    } else {
      workbench::Settings next = settings_;
      workbench::apply(next, text, "command");
      if (next.model != settings_.model) selection_ = {};
      const bool changed = !(next == settings_);
      settings_ = std::move(next);
      if (changed) request_run();
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void App::script(const std::string& text) {
  for (auto& c : split_commands(text)) queue_.push_back(std::move(c));
}

void App::drop_files(const std::vector<std::string>& paths) {
  if (!paths.empty()) command("open=" + paths.back());
}

void App::handle_keys() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) command("run");
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) command("select=");
  if (io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_O, false)) open_dialog_ = true;
  for (int i = 0; i < kPanelCount; ++i) {
    if (!io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_1 + i, false)) {
      command(std::string("panel=") + panel_name(static_cast<PanelId>(i)));
    }
  }
}

void App::draw_menu() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open model or scenario...", "Ctrl+O")) open_dialog_ = true;
    if (ImGui::MenuItem("Save settings as scenario...")) save_dialog_ = true;
    if (ImGui::MenuItem("Pin baseline")) clicked_.push_back("pin");
    if (ImGui::MenuItem("Clear baseline")) clicked_.push_back("unpin");
    ImGui::Separator();
    if (ImGui::MenuItem("Quit")) clicked_.push_back("quit");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (int i = 0; i < kPanelCount; ++i) {
      const auto id = static_cast<PanelId>(i);
      const std::string shortcut = std::to_string(i + 1);
      if (ImGui::MenuItem(panel_name(id), shortcut.c_str(), focus_ == id)) {
        clicked_.push_back(std::string("panel=") + panel_name(id));
      }
    }
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
}

void App::draw_open_dialog() {
  if (open_dialog_) {
    ImGui::OpenPopup("Open model");
    open_dialog_ = false;
  }
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 40, 0), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Open model", nullptr)) return;
  ImGui::TextUnformatted("An .onnx model or a scenario .json. Or drop a file on the window.");
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%s", open_path_.c_str());
  const bool enter = ImGui::InputText("path", buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
  open_path_ = buf;
  // The models next to the working directory, to pick from.
  for (const char* dir : {"scenarios", "assets/models", "."}) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const auto ext = entry.path().extension();
      if (ext != ".onnx" && (ext != ".json" || entry.path().filename() == "scenario.schema.json")) continue;
      const std::string p = entry.path().lexically_normal().string();
      if (ImGui::Selectable(p.c_str(), p == open_path_)) open_path_ = p;
    }
  }
  if (ImGui::Button("Open") || enter) {
    if (!open_path_.empty()) clicked_.push_back("open=" + open_path_);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

void App::draw_save_dialog() {
  if (save_dialog_) {
    ImGui::OpenPopup("Save scenario");
    save_dialog_ = false;
  }
  if (!ImGui::BeginPopupModal("Save scenario", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::TextUnformatted("Writes the current settings as a scenario file (one step; add steps by hand).");
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%s", save_path_.c_str());
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  const bool enter = ImGui::InputText("path", buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
  save_path_ = buf;
  if (ImGui::Button("Save") || enter) {
    clicked_.push_back("save=" + save_path_);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

void App::draw() {
  const workbench::Runner::Snapshot snap = runner_.snapshot();
  if (walkthrough_) walkthrough_->observe(snap.result);
  apply_look_at();
  const auto baseline = runner_.baseline();
  Frame frame{snap, settings_, baseline, selection_, focus_,
              [this](const std::string& c) { clicked_.push_back(c); }, playing(), &layouts_};
  drawn_result_ = snap.result;

  handle_keys();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("fusebox", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_MenuBar |
                   ImGuiWindowFlags_NoBackground |  // glClear paints it: one full-window blend less
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings);
  ImGui::PopStyleVar();
  draw_menu();
  settings_bar.draw(frame);

  const float gap = 6;
  const float status_h = ImGui::GetFrameHeightWithSpacing();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float body_h = std::max(100.0f, avail.y - status_h);
  const float top_h = std::floor(body_h * top_height_);
  const float trace_h = std::floor(body_h * trace_height_);
  const float bottom_h = std::max(40.0f, body_h - top_h - trace_h - 2 * gap);
  const ImGuiWindowFlags child_flags = ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;

  // Top row: passes | graph | arena.
  const float left_w = std::floor(avail.x * left_width_);
  const float right_w = std::floor(avail.x * right_width_);
  const float mid_w = std::max(40.0f, avail.x - left_w - right_w - 2 * gap);
  ImGui::BeginChild("passes", ImVec2(left_w, top_h), true);
  passes.draw(frame);
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  splitter("##split_left", true, &left_width_, avail.x, gap, top_h);
  ImGui::SameLine(0, 0);
  ImGui::BeginChild("graph", ImVec2(mid_w, top_h), true, child_flags);
  graph.draw(frame);
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  {
    // Dragging this split moves the arena's left edge: the arena grows as the graph shrinks.
    float mid_fraction = 1 - right_width_;
    splitter("##split_right", true, &mid_fraction, avail.x, gap, top_h);
    right_width_ = 1 - mid_fraction;
  }
  ImGui::SameLine(0, 0);
  ImGui::BeginChild("arena", ImVec2(0, top_h), true, child_flags);
  arena.draw(frame);
  ImGui::EndChild();

  splitter("##split_top", false, &top_height_, body_h, gap, avail.x);
  ImGui::BeginChild("trace", ImVec2(0, trace_h), true, child_flags);
  trace.draw(frame);
  ImGui::EndChild();
  {
    float upper = top_height_ + trace_height_;
    splitter("##split_trace", false, &upper, body_h, gap, avail.x);
    trace_height_ = std::max(0.08f, upper - top_height_);
  }

  const float ops_w = std::floor(avail.x * bottom_split_);
  ImGui::BeginChild("ops", ImVec2(ops_w, bottom_h), true);
  ops.draw(frame);
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  splitter("##split_bottom", true, &bottom_split_, avail.x, gap, bottom_h);
  ImGui::SameLine(0, 0);
  ImGui::BeginChild("compare", ImVec2(0, bottom_h), true);
  if (ImGui::BeginTabBar("bottom_right")) {
    // The tab a command asked for comes forward; otherwise the walkthrough leads when a scenario
    // is loaded and compare when none is.
    const std::optional<PanelId> bring = std::exchange(bring_tab_, std::nullopt);
    auto tab = [&](const char* label, PanelId id) {
      const ImGuiTabItemFlags flags = bring == id ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(label, nullptr, flags)) {
        if (id == PanelId::Walkthrough) walkthrough.draw(frame);
        else compare.draw(frame);
        ImGui::EndTabItem();
      }
    };
    if (walkthrough_) {
      tab("walkthrough", PanelId::Walkthrough);
      tab("compare", PanelId::Compare);
    } else {
      tab("compare", PanelId::Compare);
      tab("walkthrough", PanelId::Walkthrough);
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();

  status.draw(frame, command_error_);
  draw_open_dialog();
  draw_save_dialog();
  ImGui::End();

  // What this frame's clicks asked for, then the next step of the script.
  for (const std::string& c : std::exchange(clicked_, {})) command(c);
  if (!queue_.empty() && !screenshot_) {
    const std::string& next = queue_.front();
    const std::string verb = trim(next.substr(0, next.find('=')));
    const auto now = runner_.snapshot();
    // Busy from the moment of a request; wait and screenshot also wait for the graph's layout.
    const bool waiting = reads_result(verb) && (now.busy || ((verb == "wait" || verb == "screenshot") && !idle_drawing()));
    if (!waiting) {
      const std::string error = command(next);
      queue_.pop_front();
      if (!error.empty()) {
        script_error_ = error;
        queue_.clear();
      }
    }
  }
}

}  // namespace fusebox::ui
