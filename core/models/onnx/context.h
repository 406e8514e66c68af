#pragma once
// Internal to the ONNX importer: what a handler sees (the node, its attributes, the values of its
// inputs so far) and the registry of handlers. Includes the protobuf classes; only the
// importer's .cpp files include this header.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/base/registry.h"
#include "core/ir/graph.h"
#include "core/ir/op_schema.h"
#include "core/ir/tensor.h"

namespace fusebox::models::onnx_import {

// ONNX TensorProto.DataType -> our dtype, for types we hold as such (integers and bool become
// i64). Returns false for types we cannot hold (float16, double, string, ...).
bool dtype_from_onnx(int32_t onnx_type, ir::DType* out);
std::string onnx_type_name(int32_t onnx_type);

// Decodes a TensorProto (raw_data, typed fields or external data) into a tensor. `owner` keeps
// the proto's bytes alive for views; `model_dir` resolves external data ("" refuses it).
ir::Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::shared_ptr<const void>& owner,
                             const std::string& model_dir, const std::string& what);

// A node with typed attribute access. Getters throw fusebox::Error naming the node when an
// attribute has the wrong type.
class OnnxNode {
 public:
  OnnxNode(const onnx::NodeProto& proto, std::string name) : proto_(proto), name_(std::move(name)) {}
  const onnx::NodeProto& proto() const { return proto_; }
  const std::string& name() const { return name_; }
  const std::string& op() const { return proto_.op_type(); }
  // Input i, or "" when absent (optional inputs may be missing or empty).
  std::string input(int i) const;
  int num_inputs() const { return proto_.input_size(); }
  std::string output(int i) const;
  int num_outputs() const { return proto_.output_size(); }

  bool has(const std::string& attr) const { return find(attr) != nullptr; }
  int64_t get_int(const std::string& attr, int64_t fallback) const;
  double get_float(const std::string& attr, double fallback) const;
  std::string get_string(const std::string& attr, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& attr, const std::vector<int64_t>& fallback = {}) const;
  std::vector<double> get_floats(const std::string& attr) const;
  const onnx::AttributeProto* find(const std::string& attr) const;

  // "node '/attn/Reshape' (Reshape)": the start of every error about this node.
  std::string where() const { return "node '" + name_ + "' (" + op() + ")"; }

 private:
  const onnx::AttributeProto& require(const std::string& attr, int type, const char* type_name) const;
  const onnx::NodeProto& proto_;
  std::string name_;
};

// The import state: what each ONNX value name stands for. A value is either known at load time
// (a constant tensor, not yet in the graph) or a graph tensor computed at run time.
class ImportContext {
 public:
  ImportContext(ir::Graph& graph, int64_t opset, const exec::Backend* evaluator,
                std::shared_ptr<const void> owner, std::string model_dir)
      : graph_(graph), opset_(opset), evaluator_(evaluator), owner_(std::move(owner)),
        model_dir_(std::move(model_dir)) {}

  ir::Graph& graph() { return graph_; }
  int64_t opset() const { return opset_; }
  const std::shared_ptr<const void>& owner() const { return owner_; }
  // What views of proto bytes keep alive from now on (an inlined If branch's node copies).
  void set_owner(std::shared_ptr<const void> owner) { owner_ = std::move(owner); }
  const std::string& model_dir() const { return model_dir_; }

  bool defined(const std::string& value) const { return values_.count(value) != 0; }
  bool is_constant(const std::string& value) const;
  // The constant's tensor; throws "<where>: input '<value>' (<what>) must be known at load time".
  const ir::Tensor& constant(const std::string& value, const OnnxNode& node, const std::string& what) const;
  // Constant i64 (or integer) values as a list.
  std::vector<int64_t> constant_ints(const std::string& value, const OnnxNode& node, const std::string& what) const;
  ir::TensorType type_of(const std::string& value) const;

  void define_constant(const std::string& value, ir::Tensor tensor);
  void define_tensor(const std::string& value, const std::string& graph_tensor);
  // The graph tensor holding `value`, adding a constant to the graph as a weight the first time.
  std::string tensor_of(const std::string& value);

  // A value name not used yet, for a handler's intermediate results: "<base>", "<base>_1", ...
  std::string fresh(const std::string& base);

  // Emits one of our ops reading ONNX values `inputs` and defining values `outputs`. When every
  // input is a constant and there is an evaluator, the node runs now and its outputs become
  // constants; otherwise it is appended to the graph (shape inference checks it).
  void emit(const OnnxNode& from, const std::string& op, const std::vector<std::string>& inputs,
            ir::Attributes attrs, const std::vector<std::string>& outputs, const std::string& suffix = "");

  // Constant-only ops computed here when there is no evaluator are not needed: handlers use emit.
  bool can_fold() const { return evaluator_ != nullptr; }

  // Load-time folding has a budget, so a model of a few hundred bytes cannot make the importer
  // hold gigabytes: results up to kSmallFoldBytes (shape arithmetic) always fold; a larger one
  // folds only when it is at most kMaxFoldBytes and the folds so far plus it stay within the
  // budget (the initializers' bytes + kFoldBudgetBytes, set once they are read).
  static constexpr size_t kSmallFoldBytes = size_t{1} << 20;
  static constexpr size_t kMaxFoldBytes = size_t{64} << 20;
  static constexpr size_t kFoldBudgetBytes = size_t{256} << 20;
  void set_fold_budget(size_t initializer_bytes) {
    fold_budget_ = initializer_bytes + kFoldBudgetBytes;
  }
  // Why a folded result of `bytes` does not fit; empty when it does (and then it is counted).
  std::string take_fold_bytes(size_t bytes);

 private:
  struct Value {
    std::optional<ir::Tensor> constant;
    std::string tensor;  // graph tensor, once there is one
  };
  const Value& value(const std::string& name) const;
  // Evaluates `node` (all of whose inputs are constants) now, when its result fits the folding
  // budget; returns false, leaving `node` as it was, when it does not.
  bool fold(ir::Node& node, const std::vector<std::string>& inputs,
            const std::vector<std::string>& outputs);
  ir::Graph& graph_;
  int64_t opset_;
  const exec::Backend* evaluator_;
  std::shared_ptr<const void> owner_;
  std::string model_dir_;
  std::map<std::string, Value> values_;
  std::set<std::string> used_node_names_;
  int64_t fresh_counter_ = 0;
  size_t fold_budget_ = kFoldBudgetBytes;
  size_t folded_bytes_ = 0;
};

// One handler per ONNX op type (default domain). It converts `node` through `ctx`.
struct OnnxHandler {
  std::string name;        // the ONNX op type: "MatMul"
  int64_t min_opset = 1;   // first opset whose semantics the handler implements
  int64_t max_opset = 21;  // last opset it knows
  std::vector<std::string> attributes;  // every attribute it understands; others are refused
  std::function<void(ImportContext& ctx, const OnnxNode& node)> convert;
};

// The ONNX handlers by op type (core/base/registry.h), registered on first use by family.
class HandlerRegistry : public Registry<OnnxHandler> {
 public:
  HandlerRegistry() : Registry("ONNX handler") {}
  static HandlerRegistry& instance();
  // "" when `op` at `opset` has a handler, else the reason ("no handler", "needs opset >= 17").
  std::string unsupported_reason(const std::string& domain, const std::string& op, int64_t opset) const;
};

// Handler families, one file each (registered on first use of the registry).
void add_elementwise_handlers(HandlerRegistry& r);    // Add..Pow, Relu..Neg, activations, Clip,
                                                      // Max/Min, comparisons, logic, Gelu, Where,
                                                      // Cast, Identity
void add_linalg_handlers(HandlerRegistry& r);         // MatMul, Gemm
void add_normalization_handlers(HandlerRegistry& r);  // Softmax, LayerNormalization, Reduce*, ArgMax
void add_layout_handlers(HandlerRegistry& r);         // Transpose, Reshape, ..., Expand, Tile, Pad, Range
void add_constant_handlers(HandlerRegistry& r);       // Constant, Shape, ConstantOfShape
void add_conv_handlers(HandlerRegistry& r);           // Conv, ConvTranspose, BatchNormalization, MaxPool, AveragePool, ...
void add_resize_handlers(HandlerRegistry& r);         // Resize, Upsample
void add_control_handlers(HandlerRegistry& r);        // If (a condition known at load time)

// How a user makes an If's condition known when it depends on run-time input `input`: give the
// input a value with the consts setting (app/workbench/model_source.h). In parentheses, for the end
// of an error message (control_handlers.cpp).
std::string if_const_hint(const std::string& input);
void add_recurrent_handlers(HandlerRegistry& r);      // LSTM, GRU, RNN

// Small helpers for handlers.
ir::Attributes attrs_of(std::initializer_list<std::pair<std::string, ir::AttrValue>> values);
ir::Tensor scalar_f32(float v);
ir::Tensor vector_i64(const std::vector<int64_t>& v);

}  // namespace fusebox::models::onnx_import
