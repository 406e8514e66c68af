#pragma once
// File > Export: asks for the path, then hands "export.trace=PATH", "export.svg=PATH" or
// "export.profile=DIR" to the App's command function, which writes with the CLI's writers
// (app/workbench/exports.h). The dialog stays open to say what was written, or why not.
#include <functional>
#include <string>

namespace fusebox::ui {

struct ExportDialog {
  // The kinds, as the commands name them: export.<kind>=PATH.
  static constexpr const char* kKinds[] = {"trace", "svg", "profile"};

  void show(const std::string& kind);  // one of kKinds

  struct Drawn {
    std::string kind;     // the kind on screen ("" while closed)
    std::string outcome;  // "wrote ...", or the error
  } drawn;

  // `outcome` is the last export's "wrote ..." or its error, shown under the path.
  void draw(const std::function<void(const std::string&)>& command, const std::string& outcome);

 private:
  bool show_ = false;
  std::string kind_ = "trace";
  std::string path_;
};

}  // namespace fusebox::ui
