// fusebox inspect MODEL.onnx: what the file holds and what fusebox would make of it, without
// importing: opset, inputs/outputs with shapes, op histogram, every op that would not import.
#include <iostream>

#include "app/cli/commands.h"
#include "core/base/error.h"
#include "core/models/onnx_import.h"

namespace fusebox::cli {

void add_inspect_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto strict = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Print an ONNX model's opset, inputs and outputs with shapes, op histogram and the ops "
      "fusebox would not import (all of them at once).\nExample: fusebox inspect assets/models/transformer_opset17.onnx");
  cmd->add_option("model", *path, "a .onnx file")->required();
  cmd->add_flag("--strict", *strict, "exit 2 when some op would not import");
  cmd->callback([path, strict] {
    models::OnnxInspection r = models::inspect_onnx_file(*path);
    std::cout << r.to_text();
    if (*strict && !r.unsupported.empty())
      throw Error(*path + ": " + std::to_string(r.unsupported.size()) + " op type(s) would not import");
  });
}

}  // namespace fusebox::cli
