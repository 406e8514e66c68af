#include "app/ui/status_line.h"

#include <imgui.h>

#include <cstdio>

#include "app/ui/widgets.h"
#include "app/workbench/opened_trace.h"

namespace fusebox::ui {

void StatusLine::draw(const Frame& frame, const std::string& command_error) {
  const auto& snap = frame.snap;
  std::string text;
  if (frame.trace) {
    text = frame.trace->path + ": " + frame.trace->summary() + " (run, or any setting, returns to the model)";
  } else if (const workbench::RunResult* r = frame.result()) {
    char buf[256];
    const auto& plan = r->plan;
    std::snprintf(buf, sizeof buf, "median %s | %zu nodes (%zu loaded) | arena %s (%.2fx bound) | %s%s%s",
                  r->measured() ? format_us(r->latency.median_us).c_str() : "(measuring)", r->graph().nodes.size(),
                  r->model->graph.nodes.size(), plan ? format_bytes(static_cast<double>(plan->arena_bytes)).c_str() : "-",
                  plan ? plan->ratio() : 0.0, r->isa.empty() ? "" : r->isa.c_str(), r->isa.empty() ? "" : " | ",
                  r->settings.label().c_str());
    text = buf;
  } else {
    text = "no result yet";
  }
  if (snap.busy) {
    char buf[128];
    if (snap.stage == workbench::Stage::Measure && snap.total > 0) {
      std::snprintf(buf, sizeof buf, " | running: measure %d/%d", snap.done, snap.total);
    } else {
      std::snprintf(buf, sizeof buf, " | running: %s", workbench::stage_name(snap.stage));
    }
    text += buf;
  }
  ImGui::TextUnformatted(text.c_str());
  std::string error;
  if (!command_error.empty()) error = command_error;
  else if (snap.error) error = snap.error->message;
  if (!error.empty()) {
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextUnformatted(("| " + error).c_str());
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", error.c_str());
    text += " | " + error;
  }
  drawn_text = text;
}

}  // namespace fusebox::ui
