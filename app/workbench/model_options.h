#pragma once
// The model's own options as the window edits them: a builtin spec's options (transformer:
// seq, d, heads, ffn, batch; mlp: dims, batch; stack: layers, ...) and a .onnx file's input
// dims (the `dims` setting: the dynamic ones, and the fixed ones it may override). Each edit becomes one ordinary settings command, so the window, a
// --do script and a scenario step change a model the same way:
//
//   model_option_command(s, "seq", "32")   // "model=transformer:seq=32"
//   model_option_command(s, "batch", "4")   // a .onnx with dim_param batch: "dims.batch=4"
//
// No ImGui here; app/ui/run_options draws it.
#include <string>
#include <vector>

#include "app/workbench/settings.h"

namespace fusebox::workbench {

struct ModelOption {
  enum class Kind {
    Integer,  // a builtin spec's integer option
    List,     // a builtin spec's list option, "784-512-10"
    Dim,      // a .onnx input dim (the `dims` setting): dynamic, or fixed and overridable
  };
  std::string key;    // "seq", "dims"; a dim's name in `dims` ("batch", "x:0")
  Kind kind = Kind::Integer;
  std::string value;  // as the model runs with it now; a dynamic Dim not set: ""
  std::string help;   // "default 64"; "input x, axis 0: dynamic 'batch' in the file"
};

struct ModelOptions {
  std::vector<ModelOption> options;
  std::string error;  // why none could be read ("" when fine): a bad spec, an unreadable file
};

// The options of `settings.model` (with the values `settings` gives them). Reads a .onnx file's
// header (no import). Never throws: a spec or file that cannot be read says why in `error`.
ModelOptions model_options(const Settings& settings);

// The command that sets option `key` to `value` (text as typed): "model=<spec>" for a builtin
// spec, keeping only the options that differ from the defaults, or "dims.<key>=<value>" for a
// .onnx dim. Throws fusebox::Error naming the option when the spec refuses the value (a bad
// number, heads not dividing d) or the model has no such option.
std::string model_option_command(const Settings& settings, const std::string& key,
                                 const std::string& value);

}  // namespace fusebox::workbench
