// The ONNX Resize and Upsample handlers on small models built here: scales, sizes and roi must be
// known at load time (one fed at run time is refused naming the node and the input); opset 18's
// axes and keep_aspect_ratio_policy resolve to full-rank sizes, checked against values worked out
// by hand; Upsample-7's scales attribute and Resize-10 sample asymmetrically with floor; what
// fusebox does not run (antialias, both scales and sizes) is refused naming the node. (ONNX's own
// node tests for these ops run in tests/conformance.)
#define ONNX_ML 1
#define ONNX_NAMESPACE onnx
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/models/onnx_import.h"
#include "tests/onnx/onnx_test_model.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/support/graph_eval.h"

namespace fusebox {
namespace {

struct Model {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  onnx::NodeProto* n = nullptr;
  explicit Model(int64_t opset) {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name("resize");
  }
  void input(const std::string& name, const std::vector<int64_t>& dims) {
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void floats(const std::string& name, const std::vector<float>& v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (float x : v) t->add_float_data(x);
  }
  void ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
  }
  void node(const std::string& op, const std::vector<std::string>& in) {
    n = g->add_node();
    n->set_op_type(op);
    n->set_name("up");
    for (const auto& s : in) n->add_input(s);
    n->add_output("y");
    g->add_output()->set_name("y");
  }
  void attr(const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  void attr(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  void attr_floats(const std::string& name, const std::vector<float>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  }
  void attr(const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  std::string bytes() const { return m.SerializeAsString(); }
};

models::OnnxImportOptions options() { return test::cpu_import_options(); }

std::string error_of(const Model& model) { return test::import_error(model.bytes(), "resize.onnx"); }

ir::Graph import(const Model& model) { return models::import_onnx_bytes(model.bytes(), "resize.onnx", options()); }

TEST(OnnxResize, ScalesComputedAtRunTimeAreRefusedNamingTheNode) {
  Model m(13);
  m.input("x", {1, 1, 2, 2});
  m.input("s", {4});
  m.node("Resize", {"x", "", "s"});
  const std::string e = error_of(m);
  EXPECT_NE(e.find("node 'up' (Resize): input 's' (scales) must be known at load time"), std::string::npos) << e;
}

// axes [3, 2] with sizes [9, 4] on a 2 x 3 image (H=2, W=3): stretch gives H=4, W=9; not_larger
// takes the smaller scale min(4/2, 9/3) = 2 for both (H=4, W=6); not_smaller the larger, 3
// (H=6, W=9).
TEST(OnnxResize, Opset18AxesAndKeepAspectRatioPolicy) {
  const std::vector<std::pair<std::string, ir::Shape>> cases = {
      {"stretch", {1, 1, 4, 9}}, {"not_larger", {1, 1, 4, 6}}, {"not_smaller", {1, 1, 6, 9}}};
  for (const auto& [policy, want] : cases) {
    Model m(18);
    m.input("x", {1, 1, 2, 3});
    m.ints("sizes", {9, 4});
    m.node("Resize", {"x", "", "", "sizes"});
    m.attr("axes", std::vector<int64_t>{3, 2});
    m.attr("keep_aspect_ratio_policy", policy);
    m.attr("mode", std::string("nearest"));
    ir::Graph g = import(m);
    EXPECT_EQ(g.tensor(g.outputs[0]).shape, want) << policy;
  }
  Model m(18);
  m.input("x", {1, 1, 2, 3});
  m.floats("scales", {2.0f});
  m.node("Resize", {"x", "", "scales"});
  m.attr("axes", std::vector<int64_t>{-1});
  ir::Graph g = import(m);
  EXPECT_EQ(g.tensor(g.outputs[0]).shape, (ir::Shape{1, 1, 2, 6}));
}

// Upsample-7 (scales attribute) and Resize-10 (scales input): y[i][j] = x[floor(i / 2)][floor(j / 1.5)].
TEST(OnnxResize, UpsampleAndResize10SampleAsymmetricallyWithFloor) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // [1, 1, 2, 3]
  for (int which = 0; which < 3; ++which) {
    Model m(which == 0 ? 7 : which == 1 ? 9 : 10);
    m.input("x", {1, 1, 2, 3});
    if (which == 0) {
      m.node("Upsample", {"x"});
      m.attr_floats("scales", {1, 1, 2, 1.5f});
    } else {
      m.floats("scales", {1, 1, 2, 1.5f});
      m.node(which == 1 ? "Upsample" : "Resize", {"x", "scales"});
    }
    ir::Graph g = import(m);
    ir::Tensor in(ir::DType::f32, {1, 1, 2, 3});
    for (int i = 0; i < 6; ++i) in.data<float>()[i] = x[static_cast<size_t>(i)];
    ir::Tensor y = testing::evaluate_graph(g, {in})[0];
    ASSERT_EQ(y.shape(), (ir::Shape{1, 1, 4, 4})) << which;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(y.data<float>()[i * 4 + j], x[static_cast<size_t>((i / 2) * 3 + static_cast<int>(j / 1.5))])
            << which << " " << i << "," << j;
  }
}

TEST(OnnxResize, WhatFuseboxDoesNotRunIsRefusedNamingTheNode) {
  {
    Model m(18);
    m.input("x", {1, 1, 2, 2});
    m.floats("scales", {1, 1, 0.5f, 0.5f});
    m.node("Resize", {"x", "", "scales"});
    m.attr("antialias", int64_t{1});
    m.attr("mode", std::string("linear"));
    EXPECT_NE(error_of(m).find("node 'up' (Resize): antialias=1 is not supported"), std::string::npos) << error_of(m);
  }
  {
    Model m(13);
    m.input("x", {1, 1, 2, 2});
    m.floats("scales", {1, 1, 2, 2});
    m.ints("sizes", {1, 1, 4, 4});
    m.node("Resize", {"x", "", "scales", "sizes"});
    EXPECT_NE(error_of(m).find("node 'up' (Resize): has both scales and sizes"), std::string::npos) << error_of(m);
  }
  {
    Model m(13);
    m.input("x", {1, 1, 2, 2});
    m.floats("scales", {1, 2, 2});
    m.node("Resize", {"x", "", "scales"});
    EXPECT_NE(error_of(m).find("node 'up' (Resize): scales has 3 values, expected 4"), std::string::npos) << error_of(m);
  }
  {
    Model m(13);
    m.input("x", {1, 1, 2, 2});
    m.floats("scales", {1, 1, 2, 2});
    m.node("Resize", {"x", "", "scales"});
    m.attr("mode", std::string("area"));
    EXPECT_NE(error_of(m).find("node 'up' (Resize)"), std::string::npos) << error_of(m);
    EXPECT_NE(error_of(m).find("mode 'area' is not one of nearest, linear, cubic"), std::string::npos) << error_of(m);
  }
}

}  // namespace
}  // namespace fusebox
