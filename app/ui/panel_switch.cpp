#include "app/ui/panel_switch.h"

#include <algorithm>

#include "core/base/strings.h"

namespace fusebox::ui {

const PanelSwitch* find_switch(const std::vector<PanelSwitch>& table, const std::string& key) {
  for (const auto& s : table)
    if (s.key == key) return &s;
  return nullptr;
}

std::string run_switch(const std::string& panel, const std::vector<PanelSwitch>& table,
                       const std::string& key, const std::string& value,
                       const workbench::RunResult* result) {
  const PanelSwitch* s = find_switch(table, key);
  if (!s && table.empty()) return panel + ": unknown key '" + key + "' (it has no switches)";
  if (!s) {
    std::vector<std::string> keys;
    for (const auto& t : table) keys.push_back(t.key);
    return panel + ": unknown key '" + key + "' (" + suggest(key, keys) + ")";
  }
  const std::string name = panel + "." + key;
  if (!s->values.empty() && std::find(s->values.begin(), s->values.end(), value) == s->values.end())
    return name + ": unknown value '" + value + "' (" + suggest(value, s->values) + ")";
  std::string error = s->set(value, result);
  return error.empty() ? "" : name + ": " + error;
}

std::string switches_help(const std::string& panel, const std::vector<PanelSwitch>& table) {
  std::string out;
  for (const auto& s : table) {
    const std::string values = s.values.empty() ? s.values_help : join(s.values, "|");
    std::string head = "  " + panel + "." + s.key + "=" + values;
    if (head.size() < 34) head.resize(34, ' ');
    out += head + " " + s.help + "\n";
  }
  return out;
}

}  // namespace fusebox::ui
