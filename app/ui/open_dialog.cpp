#include "app/ui/open_dialog.h"

#include <imgui.h>

#include <cstdio>

#include "app/ui/widgets.h"

namespace fusebox::ui {

void OpenDialog::show(const std::string& folder) {
  show_ = true;
  error_.clear();
  if (!browser_)
    browser_.emplace(folder.empty() ? "." : folder);
  else if (!folder.empty())
    browser_->cd(folder);
  else
    browser_->refresh();  // files may have come or gone since
}

void OpenDialog::draw(const std::function<void(const std::string&)>& command) {
  drawn = {};
  if (show_) {
    ImGui::OpenPopup("Open");
    show_ = false;
  }
  const float em = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowSize(ImVec2(em * 44, std::min(vp->WorkSize.y * 0.8f, em * 36)), ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal("Open", nullptr)) return;
  if (!browser_) browser_.emplace(".");
  workbench::FolderBrowser& b = *browser_;
  bool close = false;
  auto open = [&](const std::string& path) {
    command("open=" + path);
    close = true;
  };

  ImGui::TextWrapped(
      "An .onnx model, a scenario .json, or a GPU trace (PyTorch profiler .json/.json.gz, nsys "
      ".sqlite). Or drop a file on the window.");
  if (ImGui::ArrowButton("##up", ImGuiDir_Up)) {
    b.up();
    error_.clear();
  }
  item_tooltip("The parent folder");
  ImGui::SameLine();
  ImGui::TextUnformatted(b.folder().c_str());
  drawn.folder = b.folder();

  // The path box: a file name or path (relative to the folder shown) opens it, a folder enters it.
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%s", path_.c_str());
  ImGui::SetNextItemWidth(-em * 3);
  const bool enter = ImGui::InputTextWithHint("path", "a file or folder, relative to the folder shown",
                                              buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
  path_ = buf;

  const float footer = ImGui::GetFrameHeightWithSpacing() * 2 + ImGui::GetTextLineHeightWithSpacing();
  ImGui::BeginChild("entries", ImVec2(0, -footer), true);
  const workbench::FolderListing& listing = b.listing();
  std::optional<std::string> enter_folder;
  for (const workbench::FolderEntry& e : listing.entries) {
    const std::string label = e.folder ? e.name + "/" : e.name;
    drawn.entries.push_back(label);
    const bool picked = !e.folder && path_ == e.path;
    if (ImGui::Selectable(label.c_str(), picked, ImGuiSelectableFlags_AllowDoubleClick)) {
      if (e.folder) {
        enter_folder = e.name;
      } else {
        path_ = e.path;
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) open(e.path);
      }
    }
    if (!e.folder) {
      ImGui::SameLine(em * 26);
      ImGui::TextDisabled("%s", e.kind.c_str());
    }
  }
  if (listing.entries.empty() && listing.error.empty())
    ImGui::TextDisabled("no folders and no files to open here");
  ImGui::EndChild();
  if (enter_folder) {
    b.enter(*enter_folder);
    error_.clear();
  }

  drawn.error = !error_.empty() ? error_ : listing.error;
  if (!drawn.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("%s", drawn.error.c_str());
    ImGui::PopStyleColor();
  } else {
    ImGui::NewLine();
  }

  if ((ImGui::Button("Open") || enter) && !path_.empty()) {
    const workbench::FolderBrowser::Go go = b.go(path_);
    error_ = go.error;
    if (!go.open.empty()) {
      open(go.open);
    } else if (go.error.empty()) {
      path_.clear();  // a folder: entered
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) close = true;
  if (close) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

}  // namespace fusebox::ui
