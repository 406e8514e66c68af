#pragma once
// Run > Options (the settings bar's "options" button, the `options` command): the model's own
// options (a builtin spec's seq, d, heads, ...; a .onnx file's dynamic dims) and how a run is
// measured (warmup, iters, profile runs, seed). Each edit is one settings command (Enter sends
// it), so it re-runs the pipeline like any flip: workbench::model_option_command for the model,
// the field table's key and range for the rest.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/ui/panel.h"
#include "app/workbench/model_options.h"

namespace fusebox::ui {

struct RunOptions {
  bool open = false;

  // The measuring settings the window offers, from the field table.
  static const std::vector<std::string>& measuring_keys();

  // What the last frame drew, for tests (empty while closed).
  struct Drawn {
    std::vector<std::string> keys;    // "seq", "d", ..., then "warmup", "iters", ...
    std::vector<std::string> values;  // as shown
    std::string error;                // the options could not be read, or the last edit refused
  } drawn;

  void draw(const Frame& frame);

 private:
  // model_options() reads a .onnx header: kept until the model or its dims change.
  std::string model_;
  std::map<std::string, int64_t> dims_;
  workbench::ModelOptions options_;
  bool read_ = false;
  std::string edit_error_;  // the last edit the spec refused
};

}  // namespace fusebox::ui
