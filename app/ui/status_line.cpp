#include "app/ui/status_line.h"

#include <imgui.h>

#include <cstdio>

#include "app/ui/model_title.h"
#include "app/ui/widgets.h"
#include "app/workbench/opened_trace.h"

namespace fusebox::ui {
namespace {

// "| noisy" in amber after the latency when its spread says the machine was busy, the whole
// warning in its tooltip; returns what it drew ("" when quiet).
std::string noise_note(const workbench::Latency& latency) {
  const std::string warning = latency.noise_warning();
  if (warning.empty()) return "";
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(0.95f, 0.7f, 0.3f, 1), "| noisy");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s: compare and scenario checks call differences within this spread noise",
                      warning.c_str());
  return " | " + warning;
}

}  // namespace

void StatusLine::draw(const Frame& frame, const std::string& command_error) {
  const auto& snap = frame.snap;
  std::string text;
  if (frame.trace) {
    text = frame.trace->path + ": " + frame.trace->summary() + " (run, or any setting, returns to the model)";
  } else if (const workbench::RunResult* r = frame.result()) {
    char buf[384];
    const auto& plan = r->plan;
    std::snprintf(buf, sizeof buf,
                  "%s | median %s | %zu nodes (%zu loaded) | arena %s (%.2fx bound) | %s%s%s",
                  model_title(r->settings.model).c_str(), r->measured() ? r->latency.text().c_str() : "(measuring)",
                  r->graph().nodes.size(), r->model->graph.nodes.size(),
                  plan ? format_bytes(static_cast<double>(plan->arena_bytes)).c_str() : "-",
                  plan ? plan->ratio() : 0.0, r->isa.empty() ? "" : r->isa.c_str(),
                  r->isa.empty() ? "" : " | ", r->settings.label().c_str());
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
  if (const workbench::RunResult* r = frame.trace ? nullptr : frame.result(); r && r->measured())
    text += noise_note(r->latency);
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
