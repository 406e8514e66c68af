#include "app/ui/widgets.h"

#include <cmath>
#include <cstdio>

#include "app/workbench/opened_trace.h"

namespace fusebox::ui {

bool result_or_empty_state(const Frame& frame, const char* panel) {
  if (frame.trace) {
    ImGui::TextWrapped(
        "%s: recorded trace, no graph. %s is a GPU trace (%s): the trace and ops panels show it. "
        "Open a model (File > Open) to see its graph, arena and passes.",
        panel, frame.trace->path.c_str(), frame.trace->report.format.c_str());
    return false;
  }
  const auto& snap = frame.snap;
  if (!snap.result) {
    if (snap.error) {
      ImGui::TextDisabled("%s: nothing to show, the run failed (the error is above)", panel);
    } else if (snap.busy) {
      const int stage = static_cast<int>(snap.stage);
      ImGui::TextDisabled("%s: no result yet, running %s (stage %d of %zu)", panel,
                          workbench::stage_name(snap.stage), stage + 1, workbench::kStageCount);
    } else {
      ImGui::TextDisabled("%s: no result yet (press space to run)", panel);
    }
    return false;
  }
  return true;  // a failed later run is the App's one banner above the panels
}

bool measured_or_note(const Frame& frame, const char* panel) {
  const workbench::RunResult* r = frame.result();
  if (r && r->measured()) return true;
  const auto& snap = frame.snap;
  if (snap.busy && snap.stage == workbench::Stage::Measure && snap.total > 0) {
    ImGui::TextDisabled("%s: measuring, call %d of %d...", panel, snap.done, snap.total);
  } else if (snap.busy) {
    ImGui::TextDisabled("%s: running %s...", panel, workbench::stage_name(snap.stage));
  } else {
    ImGui::TextDisabled("%s: this result was not measured (its run was cancelled); press space to run", panel);
  }
  return false;
}

std::string format_us(double us) {
  char buf[64];
  if (!std::isfinite(us)) return "-";
  if (std::fabs(us) >= 1e6) std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
  else if (std::fabs(us) >= 1e3) std::snprintf(buf, sizeof buf, "%.2f ms", us / 1e3);
  else if (std::fabs(us) >= 100) std::snprintf(buf, sizeof buf, "%.0f us", us);
  else std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}

std::string format_ns(double ns) {
  if (std::fabs(ns) < 1000) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
    return buf;
  }
  return format_us(ns / 1e3);
}

std::string format_bytes(double bytes) {
  char buf[64];
  const double a = std::fabs(bytes);
  if (a >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  else if (a >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024));
  else if (a >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

std::string format_count(double n) {
  char buf[64];
  const double a = std::fabs(n);
  if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.2f G", n / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.2f M", n / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.2f k", n / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

void item_tooltip(const std::string& text) {
  if (!text.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void draw_focus_border(const Frame& frame, PanelId id) {
  if (frame.focus != id) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetWindowPos();
  const ImVec2 sz = ImGui::GetWindowSize();
  dl->PushClipRectFullScreen();
  dl->AddRect(p0, ImVec2(p0.x + sz.x, p0.y + sz.y), IM_COL32(90, 160, 255, 255), 0, 0, 2.0f);
  dl->PopClipRect();
}

}  // namespace fusebox::ui
