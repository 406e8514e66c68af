#include "app/ui/walkthrough_panel.h"

#include <imgui.h>

#include <vector>

#include "app/ui/widgets.h"
#include "app/workbench/walkthrough.h"

namespace fusebox::ui {

void WalkthroughPanel::draw(const Frame& frame) {
  draw_focus_border(frame, PanelId::Walkthrough);
  drawn = {};
  const workbench::Walkthrough* walk = frame.walkthrough;
  if (!walk) {
    ImGui::TextDisabled("walkthrough: no scenario loaded.");
    ImGui::TextWrapped("Open a scenario file (File > Open, or drop it on the window): scenarios/interview.json "
                       "walks from \"it is slow\" to the fixed runtime in ten checked steps.");
    return;
  }
  const workbench::Scenario& sc = walk->scenario();
  const size_t step = walk->step();
  const workbench::ScenarioStep& s = walk->current();
  ImGui::TextUnformatted(sc.name.c_str());
  if (!sc.description.empty()) item_tooltip(sc.description);
  ImGui::BeginDisabled(step == 0);
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) frame.command("step=" + std::to_string(step - 1));
  ImGui::EndDisabled();
  item_tooltip("Previous step");
  ImGui::SameLine();
  ImGui::Text("step %zu of %zu", step + 1, sc.steps.size());
  ImGui::SameLine();
  ImGui::BeginDisabled(step + 1 >= sc.steps.size());
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) frame.command("step=" + std::to_string(step + 1));
  ImGui::EndDisabled();
  item_tooltip("Next step: applies its settings and selects what it points at");
  ImGui::Separator();
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 220, 120, 255));
  ImGui::TextWrapped("%s", s.title.c_str());
  ImGui::PopStyleColor();
  if (!s.text.empty()) ImGui::TextWrapped("%s", s.text.c_str());
  if (s.checks.empty()) return;
  ImGui::Spacing();
  ImGui::TextDisabled("checks");

  const workbench::Walkthrough::LiveChecks& live = walk->live_checks();
  drawn.error = live.error;
  for (size_t k = 0; k < s.checks.size(); ++k) {
    const workbench::Check& c = s.checks[k];
    const int state = live.checks[k].state;
    const std::string& figures = live.checks[k].figures;
    ++drawn.checks;
    if (state == 1) ++drawn.passed;
    if (state == -1) ++drawn.pending;
    const ImVec4 color = state == 1 ? ImVec4(0.45f, 0.85f, 0.45f, 1)
                         : state == 0 ? (c.measured() ? ImVec4(0.95f, 0.7f, 0.3f, 1) : ImVec4(0.95f, 0.4f, 0.35f, 1))
                         : state == 2 ? ImVec4(0.75f, 0.75f, 0.5f, 1)  // not measurable: the machine was busy
                                      : ImVec4(0.6f, 0.6f, 0.6f, 1);
    const char* mark = state == 1 ? "ok  " : state == 0 ? "FAIL" : state == 2 ? "BUSY" : "... ";
    ImGui::TextColored(color, "%s", mark);
    ImGui::SameLine();
    ImGui::TextWrapped("%s%s%s%s", c.describe().c_str(), c.measured() ? " (measured)" : "",
                       figures.empty() ? "" : ": ", figures.c_str());
  }
  if (!walk->has_result(step)) {
    ImGui::TextDisabled(frame.snap.busy ? "running this step..." : "press space to run this step");
  }
}

}  // namespace fusebox::ui
