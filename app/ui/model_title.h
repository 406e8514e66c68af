#pragma once
// The model's name as the window shows it (title bar, status line, compare): a builtin spec as
// given ("transformer:seq=128"), a model file by its file name ("resnet18.onnx"), so the name
// survives a narrow box that would cut a path.
#include <string>

namespace fusebox::ui {

inline std::string model_title(const std::string& model) {
  const size_t slash = model.find_last_of('/');
  return slash == std::string::npos ? model : model.substr(slash + 1);
}

}  // namespace fusebox::ui
