#pragma once
// File > Open (Ctrl+O, `open`, `browse=DIR`): browses folders (workbench::FolderBrowser lists
// them; nothing here reads the disk itself) and opens a model, a scenario or a GPU trace by
// handing "open=PATH" to the App's command function.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/workbench/folder_browser.h"

namespace fusebox::ui {

struct OpenDialog {
  // Opens the dialog at `folder` ("" keeps the folder it was last at; the first time, the
  // working directory).
  void show(const std::string& folder = "");

  // What the last frame drew, for tests: the folder, its entries ("models/" for a folder) and
  // the error in red ("" when none). Empty while closed.
  struct Drawn {
    std::string folder;
    std::vector<std::string> entries;
    std::string error;
  } drawn;

  // The modal, while shown; `command` runs "open=PATH" when the user picks a file.
  void draw(const std::function<void(const std::string&)>& command);

 private:
  bool show_ = false;
  std::optional<workbench::FolderBrowser> browser_;
  std::string path_;   // the path box: a file picked, or typed
  std::string error_;  // the last typed path that led nowhere
};

}  // namespace fusebox::ui
