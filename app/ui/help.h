#pragma once
// Help > Keys and commands (F1, or the `help` command): every key and every command the window
// takes, in sections. The App builds the entries from the tables it dispatches on (its key
// bindings, its verbs, the settings' field table, each panel's switch table), so the Help cannot
// list a command that does not exist or miss one that does.
#include <string>
#include <vector>

namespace fusebox::ui {

struct HelpEntry {
  std::string section;  // "Keys", "Commands", "Settings", "Panel switches"
  std::string name;     // "Space", "open=PATH", "threads=", "trace.run=median | all | <n>"
  std::string help;     // one line
};

struct HelpWindow {
  bool open = false;
  // What the last frame listed (names, in order), for tests; empty while closed.
  struct Drawn {
    std::vector<std::string> names;
  } drawn;

  // The window, while `open` (its close button clears it). A filter box narrows the rows.
  void draw(const std::vector<HelpEntry>& entries);

 private:
  char filter_[128] = {};
};

}  // namespace fusebox::ui
