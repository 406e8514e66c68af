#pragma once
// A refused model drawn the way Netron would draw it. When a .onnx file uses ops fusebox does not
// import, the run fails with the importer's sentence and nothing runs; the graph panel and
// `fusebox graph` still draw the file's outline (core/models/onnx_import.h), with the unsupported
// nodes marked. Nothing here is run: the drawing's graph holds only names and, where the file
// declares them, shapes.
//
//   auto refused = refused_model(settings);     // null unless the model is a refused .onnx
//   refused->drawing->model->graph              // what graph_layout lays out
//   refused->unsupported.at("If_3")             // "no importer for op If (opset 17)"
#include <map>
#include <memory>
#include <string>

#include "app/workbench/run_result.h"
#include "app/workbench/settings.h"
#include "core/ir/graph.h"
#include "core/models/onnx_import.h"

namespace fusebox::workbench {

struct RefusedModel {
  models::OnnxOutline outline;
  // The outline as a result holding only `settings` and `model` (the graph to draw, no inputs):
  // the layout cache and the graph panel take results. It has no optimized graph, plan or timing.
  std::shared_ptr<const RunResult> drawing;
  // Node name -> why it is not imported: "no importer for op If (opset 17)".
  std::map<std::string, std::string> unsupported;
  // "refused: 3 ops fusebox does not import (If, Equal, Loop) - drawn from the file, not run"
  std::string caption;
};

// The outline as a graph to lay out: one node per ONNX node (op as in the file, domain-prefixed
// outside ai.onnx; attributes as text under "onnx"), the graph inputs as inputs, the initializers
// as weights (no value: nothing runs), and shapes for the values the file declares with numbers
// only (others have no tensor entry and draw as "[?]"). Node names are made unique, as the
// selection needs.
ir::Graph outline_graph(const models::OnnxOutline& outline);

// The refused model behind `settings`: its outline when settings.model is a .onnx file with
// unsupported nodes; null for anything else (a builtin, a file that imports, a file the outline
// cannot read either, whose error the run already shows). Never throws.
std::shared_ptr<const RefusedModel> refused_model(const Settings& settings);

}  // namespace fusebox::workbench
