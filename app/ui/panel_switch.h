#pragma once
// A panel's switches as data: the one table its "<panel>.<key>=<value>" commands, the App's
// dispatch, the "waits for the run" rule, the help text and the errors all come from.
//
//   std::vector<PanelSwitch> ArenaPanel::switches() {
//     return {
//         {"color", {"kind", "buffer"}, "", "fill by the producing node's op kind, or by buffer",
//          [this](const std::string& v, const workbench::RunResult*) { color_by_ = ...; return ""; }},
//         {"zoom", {}, "fit | <factor>", "show every step, or zoom around the centre", ...},
//     };
//   }
//
// A switch with `values` listed only ever sees one of them (run_switch refuses the rest with the
// shared wording); one without takes any text, which its setter checks, and `values_help` says
// what it takes.
#include <functional>
#include <string>
#include <vector>

#include "app/workbench/run_result.h"

namespace fusebox::ui {

struct PanelSwitch {
  std::string key;                  // "color" in "arena.color=kind"
  std::vector<std::string> values;  // the choices; empty = free text checked by `set`
  std::string values_help;          // what free text it takes ("fit | <factor>"); "" with values
  std::string help;                 // one line for the help text
  // Applies the value; "" or an error sentence (without the "<panel>.<key>: " prefix).
  std::function<std::string(const std::string& value, const workbench::RunResult* result)> set;
  // Scripts apply it only once the runs requested before it finished (it reads the result).
  bool reads_result = true;
};

// Runs "<panel>.<key>=<value>" against `table`: "" or an error naming the panel, the key and the
// valid keys or values.
std::string run_switch(const std::string& panel, const std::vector<PanelSwitch>& table,
                       const std::string& key, const std::string& value,
                       const workbench::RunResult* result);
// The switch named `key` in `table`, or null.
const PanelSwitch* find_switch(const std::vector<PanelSwitch>& table, const std::string& key);
// "  arena.color=kind|buffer   fill by ..." one line per switch, for --help and the menus.
std::string switches_help(const std::string& panel, const std::vector<PanelSwitch>& table);

}  // namespace fusebox::ui
