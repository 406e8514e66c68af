#include "app/ui/walkthrough_panel.h"

#include <imgui.h>

#include <vector>

#include "app/ui/widgets.h"
#include "core/base/error.h"

namespace fusebox::ui {

void WalkthroughPanel::observe(const std::shared_ptr<const workbench::RunResult>& result) {
  if (!scenario || !result || !result->measured()) return;
  if (result->settings == scenario->steps.at(step).settings) results[step] = result;
}

void WalkthroughPanel::evaluate() {
  const workbench::ScenarioStep& s = scenario->steps.at(step);
  std::vector<std::shared_ptr<const workbench::RunResult>> inputs(step + 1);
  for (const auto& [i, r] : results)
    if (i <= step) inputs[i] = r;
  if (evaluated_.scenario == scenario.get() && evaluated_.step == step && evaluated_.inputs == inputs &&
      evaluated_.state.size() == s.checks.size())
    return;
  evaluated_ = Evaluated{scenario.get(), step, inputs, std::vector<std::string>(s.checks.size()),
                         std::vector<int>(s.checks.size(), -1), ""};
  if (!inputs[step]) return;  // this step has not run yet: every check pending
  // One check at a time, so a check whose earlier step has not run yet does not hide the others.
  for (size_t k = 0; k < s.checks.size(); ++k) {
    try {
      const workbench::CheckResult out = workbench::evaluate_check(*scenario, step, k, inputs);
      evaluated_.state[k] = out.passed ? 1 : 0;
      evaluated_.figures[k] = out.figures;
    } catch (const Error& e) {
      evaluated_.figures[k] = e.what();
      evaluated_.error = e.what();
    }
  }
}

void WalkthroughPanel::draw(const Frame& frame) {
  draw_focus_border(frame, PanelId::Walkthrough);
  drawn = {};
  if (!scenario) {
    ImGui::TextDisabled("walkthrough: no scenario loaded.");
    ImGui::TextWrapped("Open a scenario file (File > Open, or drop it on the window): scenarios/interview.json "
                       "walks from \"it is slow\" to the fixed runtime in ten checked steps.");
    return;
  }
  const workbench::Scenario& sc = *scenario;
  const workbench::ScenarioStep& s = sc.steps.at(step);
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

  evaluate();
  const auto current = results.find(step);
  const std::vector<std::string>& figures = evaluated_.figures;
  const std::vector<int>& state = evaluated_.state;
  drawn.error = evaluated_.error;
  for (size_t k = 0; k < s.checks.size(); ++k) {
    const workbench::Check& c = s.checks[k];
    ++drawn.checks;
    if (state[k] == 1) ++drawn.passed;
    if (state[k] == -1) ++drawn.pending;
    const ImVec4 color = state[k] == 1 ? ImVec4(0.45f, 0.85f, 0.45f, 1)
                         : state[k] == 0 ? (c.measured() ? ImVec4(0.95f, 0.7f, 0.3f, 1) : ImVec4(0.95f, 0.4f, 0.35f, 1))
                                         : ImVec4(0.6f, 0.6f, 0.6f, 1);
    const char* mark = state[k] == 1 ? "ok  " : state[k] == 0 ? "FAIL" : "... ";
    ImGui::TextColored(color, "%s", mark);
    ImGui::SameLine();
    ImGui::TextWrapped("%s%s%s%s", c.describe().c_str(), c.measured() ? " (measured)" : "",
                       figures[k].empty() ? "" : ": ", figures[k].c_str());
  }
  if (current == results.end()) {
    ImGui::TextDisabled(frame.snap.busy ? "running this step..." : "press space to run this step");
  }
}

}  // namespace fusebox::ui
