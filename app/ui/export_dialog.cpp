#include "app/ui/export_dialog.h"

#include <imgui.h>

#include <cstdio>
#include <iterator>

#include "app/ui/widgets.h"

namespace fusebox::ui {
namespace {

struct KindText {
  const char* label;
  const char* default_path;
  const char* help;
};

KindText text_of(const std::string& kind) {
  if (kind == "svg")
    return {"graph as SVG", "graph.svg",
            "The graph the run ran, after its passes, drawn by Graphviz as `fusebox graph --out` "
            "draws it."};
  if (kind == "profile")
    return {"profile folder", "profile",
            "A folder as `fusebox profile --out` writes it: profile.json (the recording; `fusebox "
            "compare A.json B.json`), analysis.json, trace.json, trace.nvtxt and trace.sqlite. An "
            "existing folder is replaced only if it holds nothing but these files."};
  return {"trace.json (Chrome trace)", "trace.json",
          "The recorded runs as a Chrome trace: open it in ui.perfetto.dev or chrome://tracing."};
}

}  // namespace

void ExportDialog::show(const std::string& kind) {
  show_ = true;
  if (kind != kind_ || path_.empty()) path_ = text_of(kind).default_path;
  kind_ = kind;
}

void ExportDialog::draw(const std::function<void(const std::string&)>& command,
                        const std::string& outcome) {
  drawn = {};
  if (show_) {
    ImGui::OpenPopup("Export");
    show_ = false;
  }
  const float em = ImGui::GetFontSize();
  ImGui::SetNextWindowSize(ImVec2(em * 36, 0), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Export", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  drawn.kind = kind_;
  drawn.outcome = outcome;
  for (const char* kind : kKinds) {
    if (kind != kKinds[0]) ImGui::SameLine();
    if (ImGui::RadioButton(text_of(kind).label, kind_ == kind)) {
      if (path_ == text_of(kind_).default_path) path_ = text_of(kind).default_path;
      kind_ = kind;
    }
  }
  ImGui::PushTextWrapPos(em * 35);
  ImGui::TextDisabled("%s", text_of(kind_).help);
  ImGui::PopTextWrapPos();
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%s", path_.c_str());
  ImGui::SetNextItemWidth(em * 28);
  const bool enter = ImGui::InputText(kind_ == "profile" ? "folder" : "file", buf, sizeof buf,
                                      ImGuiInputTextFlags_EnterReturnsTrue);
  path_ = buf;
  if (!outcome.empty()) {
    const bool wrote = outcome.rfind("wrote ", 0) == 0;
    if (!wrote) ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::PushTextWrapPos(em * 35);
    ImGui::TextUnformatted(outcome.c_str());
    ImGui::PopTextWrapPos();
    if (!wrote) ImGui::PopStyleColor();
  }
  ImGui::BeginDisabled(path_.empty());
  if (ImGui::Button("Export") || (enter && !path_.empty())) command("export." + kind_ + "=" + path_);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Close")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

}  // namespace fusebox::ui
