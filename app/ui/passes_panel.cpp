#include "app/ui/passes_panel.h"

#include <imgui.h>

#include <cstdio>
#include <map>
#include <string>

#include "app/ui/widgets.h"
#include "core/passes/fusion_patterns.h"
#include "core/passes/pass_manager.h"

namespace fusebox::ui {
namespace {

const passes::PassLogEntry* find_entry(const workbench::RunResult* result,
                                       const std::string& pass) {
  if (!result || !result->optimized) return nullptr;
  for (const auto& e : result->optimized->log.entries) {
    if (e.pass == pass) return &e;
  }
  return nullptr;
}

// "24 -> 14 nodes, 0.4 ms", "no change", "off".
std::string log_line(const passes::PassLogEntry* e) {
  if (!e) return "";
  if (!e->enabled) return "off";
  char buf[128];
  if (e->changed) {
    std::snprintf(buf, sizeof buf, "%zu -> %zu nodes, %.2f ms", e->nodes_before, e->nodes_after,
                  e->millis);
  } else {
    std::snprintf(buf, sizeof buf, "no change, %.2f ms", e->millis);
  }
  return buf;
}

// Each fusion pattern a checkbox under fuse_patterns, with how often it fired on this run.
// Returns the checkboxes drawn.
size_t draw_patterns(const Frame& frame, bool fuse_on, const std::map<std::string, int>& fired) {
  size_t drawn = 0;
  ImGui::Indent();
  ImGui::BeginDisabled(!fuse_on);
  for (const passes::FusionPattern& pattern : passes::FusionRegistry::instance().entries()) {
    bool pattern_on = frame.settings.pattern_on(pattern.name);
    ImGui::PushID(pattern.name.c_str());
    const auto it = fired.find(pattern.name);
    const std::string label =
        pattern.name + (it != fired.end() ? "  x" + std::to_string(it->second) : "");
    if (ImGui::Checkbox(label.c_str(), &pattern_on)) {
      frame.command("patterns." + pattern.name + "=" + (pattern_on ? "on" : "off"));
    }
    ++drawn;
    item_tooltip(pattern.description +
                 (it != fired.end() ? "\nFired " + std::to_string(it->second) + " times on this run."
                                    : "\nDid not fire on this run."));
    ImGui::PopID();
  }
  ImGui::EndDisabled();
  ImGui::Unindent();
  return drawn;
}

}  // namespace

// None: the checkboxes are settings (passes.<name>, patterns.<name>), which the App runs.
std::vector<PanelSwitch> PassesPanel::switches() { return {}; }

std::string PassesPanel::command(const std::string& key, const std::string& value,
                                 const workbench::RunResult* result) {
  return run_switch("passes", switches(), key, value, result);
}

void PassesPanel::draw(const Frame& frame) {
  draw_focus_border(frame, PanelId::Passes);
  drawn = {};
  if (frame.trace) {  // no graph, so no passes: the note, not the model's pass log
    result_or_empty_state(frame, "passes");
    return;
  }
  ImGui::TextUnformatted("Passes");
  ImGui::SameLine();
  ImGui::TextDisabled("(in pipeline order)");
  const workbench::RunResult* result = frame.result();
  // The log shown is the result's; while a flip is running it still describes the last run.
  const bool stale = result && !(result->settings.passes_off == frame.settings.passes_off &&
                                 result->settings.patterns_off == frame.settings.patterns_off);

  // Pattern -> rewrites made by fuse_patterns on this run.
  std::map<std::string, int> fired;
  if (const auto* fuse = find_entry(result, "fuse_patterns")) {
    for (const auto& r : fuse->rewrites) ++fired[r.pattern];
  }

  for (const passes::PassInfo& pass : passes::PassRegistry::instance().entries()) {
    bool on = frame.settings.pass_on(pass.name);
    ImGui::PushID(pass.name.c_str());
    if (ImGui::Checkbox(pass.name.c_str(), &on)) {
      frame.command("passes." + pass.name + "=" + (on ? "on" : "off"));
    }
    ++drawn.passes;
    const passes::PassLogEntry* entry = find_entry(result, pass.name);
    std::string tip = pass.description;
    if (entry && entry->enabled) {
      tip += "\n\n" + std::to_string(entry->rewrites.size()) + " rewrites, " +
             std::to_string(entry->near_misses.size()) + " near misses on this run.";
      for (size_t i = 0; i < entry->rewrites.size() && i < 8; ++i)
        tip += "\n  " + entry->rewrites[i].text;
      if (entry->rewrites.size() > 8) tip += "\n  ...";
    }
    item_tooltip(tip);
    if (entry) {
      ImGui::Indent();
      if (entry->changed && entry->enabled) {
        ImGui::TextColored(ImVec4(0.55f, 0.85f, 0.55f, stale ? 0.5f : 1.0f), "%s",
                           log_line(entry).c_str());
      } else {
        ImGui::TextDisabled("%s", log_line(entry).c_str());
      }
      ImGui::Unindent();
    }
    if (pass.name == "fuse_patterns") drawn.patterns += draw_patterns(frame, on, fired);
    ImGui::PopID();
  }
  if (stale && frame.snap.busy) ImGui::TextDisabled("(running the new setting...)");
  if (!result && !frame.snap.busy && frame.snap.error) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("%s", frame.snap.error->message.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace fusebox::ui
