// Small ONNX models built in a test, and importing them on the CPU backend: the pieces the ONNX
// import tests share (tests/onnx/*_import_test.cpp). A test with a different way of building
// nodes (Resize's, If's subgraphs) keeps its own builder and still imports through these.
#pragma once

#define ONNX_ML 1
#define ONNX_NAMESPACE onnx
#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/models/onnx_import.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox::test {

// Import options whose constant folding runs on one CPU backend shared by the test binary.
inline models::OnnxImportOptions cpu_import_options() {
  static auto cpu = cpu::make_backend();
  models::OnnxImportOptions opt;
  opt.evaluator = cpu.get();
  return opt;
}

// The error importing `bytes` (as file `name`) raises, or "" when it imports.
inline std::string import_error(const std::string& bytes, const std::string& name = "m.onnx") {
  try {
    models::import_onnx_bytes(bytes, name, cpu_import_options());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// One graph at one opset: float inputs and initializers, nodes whose outputs become graph outputs.
struct OnnxModel {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  explicit OnnxModel(int64_t opset = 17, const std::string& name = "m") {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name(name);
  }
  void input(const std::string& name, const std::vector<int64_t>& dims) {
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void init(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(g->node_size()));
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    for (const auto& s : out) g->add_output()->set_name(s);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void i(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  std::string bytes() const { return m.SerializeAsString(); }
};

}  // namespace fusebox::test
