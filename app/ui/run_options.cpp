#include "app/ui/run_options.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "app/ui/widgets.h"
#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::ui {
namespace {

// A text box that sends its value on Enter; returns true then, with the text in `out`.
bool edit_box(const char* id, const std::string& value, float width, std::string* out) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s", value.c_str());
  ImGui::SetNextItemWidth(width);
  if (!ImGui::InputText(id, buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue)) return false;
  *out = buf;
  return *out != value;
}

}  // namespace

const std::vector<std::string>& RunOptions::measuring_keys() {
  static const std::vector<std::string> keys = {"warmup", "iters", "profile_runs", "seed"};
  return keys;
}

void RunOptions::draw(const Frame& frame) {
  drawn = {};
  if (!open) return;
  const workbench::Settings& s = frame.settings;
  if (!read_ || s.model != model_ || s.dims != dims_) {
    options_ = workbench::model_options(s);
    model_ = s.model;
    dims_ = s.dims;
    read_ = true;
  }
  const float em = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + em * 12, vp->WorkPos.y + em * 4), ImGuiCond_Appearing);
  ImGui::SetNextWindowSizeConstraints(ImVec2(em * 34, 0), ImVec2(vp->WorkSize.x, vp->WorkSize.y));
  if (!ImGui::Begin("Run options", &open, ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::End();
    return;
  }
  ImGui::TextDisabled("Enter applies a value and runs again.");
  ImGui::Text("model: %s", s.model.c_str());
  // `help` beside the box, `tooltip` over it.
  auto row = [&](const std::string& key, const std::string& value, const std::string& help,
                 const std::string& tooltip) {
    drawn.keys.push_back(key);
    drawn.values.push_back(value);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(key.c_str());
    ImGui::TableNextColumn();
    std::string typed;
    const bool sent = edit_box(("##" + key).c_str(), value, em * 9, &typed);
    item_tooltip(tooltip);
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", help.c_str());
    return sent ? std::optional<std::string>(typed) : std::nullopt;
  };
  const ImGuiTableFlags table_flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg;
  if (!options_.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("%s", options_.error.c_str());
    ImGui::PopStyleColor();
  } else if (options_.options.empty()) {
    ImGui::TextDisabled(workbench::is_model_file(s.model) ? "no input dims"
                                                          : "this model has no options");
  } else if (ImGui::BeginTable("model options", 3, table_flags)) {
    for (const workbench::ModelOption& o : options_.options) {
      if (auto typed = row(o.key, o.value, o.help, o.key + ": " + o.help)) {
        try {
          frame.command(workbench::model_option_command(s, o.key, *typed));
          edit_error_.clear();
        } catch (const Error& e) {
          edit_error_ = e.what();
        }
      }
    }
    ImGui::EndTable();
  }
  ImGui::Separator();
  ImGui::TextUnformatted("measuring");
  if (ImGui::BeginTable("measuring", 3, table_flags)) {
    const nlohmann::json values = workbench::to_json(s);  // the field table's values
    for (const std::string& key : measuring_keys()) {
      const workbench::SettingField f = workbench::setting_field(key);
      workbench::Settings one = s;
      const std::string value = values.at(key).dump();
      if (auto typed = row(key, value, f.help, f.help + ": " + f.hint)) {
        // Checked here so a refused value stays beside the box instead of only on the status line.
        try {
          workbench::apply(one, key + "=" + trim(*typed), "");
          frame.command(key + "=" + trim(*typed));
          edit_error_.clear();
        } catch (const Error& e) {
          edit_error_ = e.what();
        }
      }
    }
    ImGui::EndTable();
  }
  if (!edit_error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("%s", edit_error_.c_str());
    ImGui::PopStyleColor();
  }
  drawn.error = options_.error.empty() ? edit_error_ : options_.error;
  ImGui::End();
}

}  // namespace fusebox::ui
