#include "app/ui/help.h"

#include <imgui.h>

#include <algorithm>
#include <cctype>

namespace fusebox::ui {
namespace {

bool contains_folded(const std::string& text, const std::string& needle) {
  auto lower = [](unsigned char c) { return static_cast<char>(std::tolower(c)); };
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

}  // namespace

void HelpWindow::draw(const std::vector<HelpEntry>& entries) {
  drawn.names.clear();
  if (!open) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float em = ImGui::GetFontSize();
  ImGui::SetNextWindowSize(ImVec2(std::min(vp->WorkSize.x * 0.9f, em * 60), vp->WorkSize.y * 0.8f),
                           ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (!ImGui::Begin("Help: keys and commands", &open, ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::End();
    return;
  }
  ImGui::TextWrapped(
      "Every key and command the window takes. Commands are what the menus, the controls and "
      "--do \"a; b; c\" run; a setting re-runs the pipeline from the first stage that reads it.");
  ImGui::SetNextItemWidth(em * 16);
  ImGui::InputTextWithHint("##filter", "filter", filter_, sizeof filter_);
  const std::string filter = filter_;
  ImGui::BeginChild("entries");
  std::string section;
  bool section_open = false, table_open = false;
  auto close_table = [&] {
    if (table_open) ImGui::EndTable();
    table_open = false;
  };
  for (const HelpEntry& e : entries) {
    if (!filter.empty() && !contains_folded(e.name, filter) && !contains_folded(e.help, filter))
      continue;
    if (e.section != section) {
      close_table();
      section = e.section;
      section_open = ImGui::CollapsingHeader(section.c_str(), ImGuiTreeNodeFlags_DefaultOpen);
      if (section_open) {
        table_open = ImGui::BeginTable(section.c_str(), 2,
                                       ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                           ImGuiTableFlags_SizingStretchProp);
        if (table_open) {
          ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 0.38f);
          ImGui::TableSetupColumn("help", ImGuiTableColumnFlags_WidthStretch, 0.62f);
        }
      }
    }
    if (!table_open) continue;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", e.name.c_str());
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", e.help.c_str());
    drawn.names.push_back(e.name);
  }
  close_table();
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace fusebox::ui
