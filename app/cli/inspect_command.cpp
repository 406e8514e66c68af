// fusebox inspect MODEL.onnx: what the file holds and what fusebox would make of it, without
// importing: opset, inputs/outputs with shapes, op histogram, every op that would not import.
#include <iostream>

#include "app/cli/commands.h"
#include "core/base/error.h"
#include "core/models/onnx_import.h"

namespace fusebox::cli {

namespace {

struct InspectArgs {
  std::string path;
  bool strict = false;
};

void run_inspect(const InspectArgs& a) {
  models::OnnxInspection r = models::inspect_onnx_file(a.path);
  std::cout << r.to_text();
  if (a.strict && !r.unsupported.empty())
    throw Error(a.path + ": " + std::to_string(r.unsupported.size()) +
                " op type(s) would not import");
}

void inspect_options(CLI::App& cmd, InspectArgs& a) {
  cmd.add_option("model", a.path, "a .onnx file")->required();
  cmd.add_flag("--strict", a.strict, "exit 2 when some op would not import");
}

}  // namespace

Command inspect_command() {
  return make_command<InspectArgs>(
      "inspect",
      "Print an ONNX model's opset, inputs and outputs with shapes, op histogram and the ops "
      "fusebox would not import (all of them at once).\nExample: fusebox inspect "
      "assets/models/transformer_opset17.onnx",
      inspect_options, run_inspect);
}

}  // namespace fusebox::cli
