#pragma once
// ONNX import: a .onnx file (protobuf ModelProto) -> ir::Graph of our primitive ops.
//
// Each ONNX op type has a handler (core/models/onnx/*_handlers.cpp, one file per op family) in a
// registry; a handler checks the attributes and opset versions it supports and maps the node to
// our ops. Shape arguments (Reshape's shape, Slice's starts/ends, Unsqueeze's axes, ...) are
// attributes in our IR, so the i64 shape arithmetic exporters emit (Shape -> Gather -> Unsqueeze
// -> Concat -> Reshape) is evaluated at load time: every node whose inputs are all known is run
// once through `evaluator` (exec::evaluate_node) and becomes a constant.
//
//   OnnxImportOptions opt;
//   opt.evaluator = cpu_backend.get();       // core cannot include ops/: the caller passes it
//   opt.dims["seq"] = 128;                   // values for dynamic dims (dim_param names)
//   ir::Graph g = models::import_onnx_file("model.onnx", opt);
//
// Initializers become weights: a view of the parsed file's bytes when aligned, else one copy;
// external data is read from files next to the model (offsets and sizes checked). Everything
// wrong with the file or the model throws fusebox::Error naming the file, the node, the op and
// the opset; unsupported ops are all listed at once.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend/backend.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"

namespace onnx {
class ModelProto;
}

namespace fusebox::models {

struct OnnxImportOptions {
  // Values for dynamic dims, by dim_param name ("batch") or "<input>:<index>" ("x:0") for dims
  // that have neither a value nor a name.
  std::map<std::string, int64_t> dims;
  // Runs constant nodes at load time (the CPU backend). Without one, only Shape, Constant,
  // Identity and the like fold, and a model whose shape arguments need arithmetic is refused.
  const exec::Backend* evaluator = nullptr;
  // Graph inputs whose values are known at load time (e.g. the `shape` input of ONNX's Reshape
  // node tests): they are folded into the graph as constants and no longer inputs.
  std::map<std::string, ir::Tensor> constant_inputs;
};

// Throws fusebox::Error (unreadable, truncated or non-ONNX file, unsupported ops, dynamic dims
// without values, types fusebox cannot compute, malformed graphs).
ir::Graph import_onnx_file(const std::string& path, const OnnxImportOptions& options);
// `name` names the model in errors and becomes the graph name; `model_dir` resolves external
// data ("" refuses external data).
ir::Graph import_onnx_bytes(std::string_view bytes, const std::string& name,
                            const OnnxImportOptions& options, const std::string& model_dir = "");

// What `fusebox inspect` prints: read without converting anything.
struct OnnxValueInfo {
  std::string name;
  std::string type;               // "FLOAT", "INT64", "BOOL", ... (onnx_type_name)
  std::vector<std::string> dims;  // "1", "seq", "?"
};
struct OnnxUnsupported {
  std::string op;                  // "Loop", "com.microsoft.Attention"
  std::string reason;              // "no handler", "handler supports opsets 13..21"
  std::vector<std::string> nodes;  // node names (or "#<index>")
};
struct OnnxInspection {
  std::string path;
  int64_t ir_version = 0;
  int64_t opset = 0;                                    // default domain
  std::vector<std::pair<std::string, int64_t>> opsets;  // every domain imported
  std::string producer;
  std::vector<OnnxValueInfo> inputs;  // graph inputs that are not initializers
  std::vector<OnnxValueInfo> outputs;
  int64_t initializers = 0;
  int64_t initializer_bytes = 0;
  int64_t external_initializers = 0;
  std::map<std::string, int> op_histogram;
  std::vector<OnnxUnsupported> unsupported;
  std::string to_text() const;
};
OnnxInspection inspect_onnx_file(const std::string& path);
OnnxInspection inspect_onnx_bytes(std::string_view bytes, const std::string& name);

// A .onnx file read and parsed once, then imported as often as asked, e.g. with other dims
// (generation imports each step's shape: app/workbench/generation.h). Weights stay views of the
// parsed file where aligned. Throws fusebox::Error as import_onnx_file does.
//
// The initializers are decoded on the first import and shared by the later ones: a weight that
// protobuf left unaligned is copied once, not once per import (each step of a generation read the
// GPT export's 51 MB of weights again). The graphs share those bytes; weights are never written.
class OnnxModel {
 public:
  explicit OnnxModel(const std::string& path);
  ir::Graph import(const OnnxImportOptions& options) const;
  OnnxInspection inspect() const;
  const std::string& path() const { return path_; }

  struct Initializers;  // name -> decoded tensor, behind a mutex (onnx_import.cpp)

 private:
  std::string path_;
  std::shared_ptr<onnx::ModelProto> model_;
  std::shared_ptr<Initializers> initializers_;
};

// A file as Netron would draw it, read even when the import refuses: every node with its op,
// domain, inputs and outputs, and whether fusebox has a handler for it (the importer's own
// registry decides, so the two never disagree). The graph panel and `fusebox graph` draw a refused
// model from it. Malformed files are refused with the importer's errors; at most
// kMaxOutlineNodes nodes (beyond that the outline is refused naming the count).
struct OnnxOutlineNode {
  std::string name;    // the node's name, or "<op>_<index>" as the importer names it
  std::string op;      // "If", "com.microsoft.Attention": the domain prefixed outside ai.onnx
  std::string domain;  // "" for the default domain
  std::vector<std::string> inputs, outputs;  // value names ("" for an omitted optional input)
  // "name=value" per attribute, in file order; subgraphs and tensors as "<graph>" / "<tensor>".
  std::vector<std::string> attributes;
  // "" when fusebox imports it; else why not ("no handler for this op", "attribute 'x' is not
  // supported").
  std::string unsupported;
};
struct OnnxOutline {
  std::string path;
  int64_t opset = 0;  // default domain
  std::vector<OnnxValueInfo> inputs;        // graph inputs that are not initializers
  std::vector<OnnxValueInfo> outputs;
  std::vector<OnnxValueInfo> initializers;  // weights: not drawn as nodes
  std::vector<OnnxValueInfo> values;        // the file's value_info (intermediate shapes), if any
  std::vector<OnnxOutlineNode> nodes;       // in file order
  std::vector<OnnxUnsupported> unsupported; // grouped as the importer's error lists them
  size_t unsupported_nodes() const;
  // "3 ops fusebox does not import (If, Equal, Loop)": distinct op types, in file order.
  std::string refusal_summary() const;
};
inline constexpr size_t kMaxOutlineNodes = 250000;
OnnxOutline outline_onnx_file(const std::string& path);
OnnxOutline outline_onnx_bytes(std::string_view bytes, const std::string& name);

// Reads a serialized TensorProto (ONNX test data: test_data_set_0/input_0.pb). Integer and bool
// tensors become i64, float becomes f32; others are refused naming the type.
ir::Tensor read_onnx_tensor_file(const std::string& path, std::string* name = nullptr);

// The ONNX op types that have a handler, sorted.
std::vector<std::string> onnx_supported_ops();

}  // namespace fusebox::models
