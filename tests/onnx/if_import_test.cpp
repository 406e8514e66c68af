// ONNX If with a condition known at load time, on small models built here: the branch taken is
// inlined (then and else, a branch reading outer values, a branch with its own initializer and
// Constant, an If nested in a branch reading the enclosing branch's values) and computes what a
// double-precision loop written here computes. An If whose condition depends on a run-time input
// is refused naming the node and the input, by the import and by inspect.
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

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                          const std::vector<std::string>& out, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

void add_f32(google::protobuf::RepeatedPtrField<onnx::TensorProto>* list, const std::string& name,
             const std::vector<int64_t>& dims, const std::vector<float>& values) {
  auto* t = list->Add();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

void add_bool(google::protobuf::RepeatedPtrField<onnx::TensorProto>* list, const std::string& name, bool v) {
  auto* t = list->Add();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(v ? 1 : 0);
}

// A Constant node holding a float vector.
void add_constant(onnx::GraphProto* g, const std::string& out, const std::vector<float>& values) {
  auto* n = add_node(g, "Constant", {}, {out}, "const_" + out);
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

void set_branch(onnx::NodeProto* n, const std::string& which, const onnx::GraphProto& g) {
  auto* a = n->add_attribute();
  a->set_name(which);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

onnx::GraphProto branch(const std::string& name, const std::string& output) {
  onnx::GraphProto g;
  g.set_name(name);
  g.add_output()->set_name(output);
  return g;
}

struct Model {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  Model() {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(17);
    g = m.mutable_graph();
    g->set_name("if");
  }
  void input(const std::string& name, const std::vector<int64_t>& dims) {
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  std::string bytes() const { return m.SerializeAsString(); }
};

models::OnnxImportOptions options() { return test::cpu_import_options(); }

std::string error_of(const Model& model) { return test::import_error(model.bytes(), "if.onnx"); }

const std::vector<float> kX = {-1.5f, 0.25f, 2.0f, 3.5f};

// y = If(cond) then x + 1 (a Constant in the branch) else x * two (an outer initializer), after
// r = Relu(x) outside when `relu_first` (the branches then read r, an outer node's value).
Model then_else_model(bool cond, bool relu_first) {
  Model m;
  m.input("x", {4});
  add_bool(m.g->mutable_initializer(), "cond", cond);
  add_f32(m.g->mutable_initializer(), "two", {4}, {2, 2, 2, 2});
  std::string v = "x";
  if (relu_first) {
    add_node(m.g, "Relu", {"x"}, {"r"}, "relu");
    v = "r";
  }
  onnx::GraphProto then_g = branch("then", "t_out");
  add_constant(&then_g, "one", {1, 1, 1, 1});
  add_node(&then_g, "Add", {v, "one"}, {"t_out"}, "add");
  onnx::GraphProto else_g = branch("else", "e_out");
  add_node(&else_g, "Mul", {v, "two"}, {"e_out"}, "mul");
  auto* n = add_node(m.g, "If", {"cond"}, {"y"}, "if");
  set_branch(n, "then_branch", then_g);
  set_branch(n, "else_branch", else_g);
  m.g->add_output()->set_name("y");
  return m;
}

std::vector<float> run(const Model& m) {
  ir::Graph g = models::import_onnx_bytes(m.bytes(), "if.onnx", options());
  for (const auto& n : g.nodes) EXPECT_NE(n.op, "If");
  ir::Tensor x(ir::DType::f32, {4});
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = kX[static_cast<size_t>(i)];
  ir::Tensor y = testing::evaluate_graph(g, {x})[0];
  return {y.data<float>(), y.data<float>() + y.numel()};
}

TEST(OnnxIf, ThenBranchTaken) {
  std::vector<float> y = run(then_else_model(true, false));
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(y[i], static_cast<double>(kX[i]) + 1.0);
}

TEST(OnnxIf, ElseBranchTaken) {
  std::vector<float> y = run(then_else_model(false, false));
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(y[i], static_cast<double>(kX[i]) * 2.0);
}

TEST(OnnxIf, BranchReadsAnOuterNodesValue) {
  for (bool cond : {true, false}) {
    std::vector<float> y = run(then_else_model(cond, true));
    for (size_t i = 0; i < 4; ++i) {
      const double r = std::max(0.0, static_cast<double>(kX[i]));
      EXPECT_DOUBLE_EQ(y[i], cond ? r + 1.0 : r * 2.0) << i;
    }
  }
}

// The graph output keeps the file's name: after inlining the If, its tensor is `y`, not the branch
// value "if/then/t_out" (what the report and the saved .npy files would say); the same through an
// Identity chain after it (z = Identity(Identity(y2)), y2 the If's second output), and through
// every pass (the passes keep Graph::outputs: tests/passes/invariant_test.cpp).
TEST(OnnxIf, GraphOutputsKeepTheirNamesThroughInliningAndIdentityChains) {
  for (bool cond : {true, false}) {
    Model m = then_else_model(cond, true);
    onnx::NodeProto* n = m.g->mutable_node(m.g->node_size() - 1);
    n->add_output("y2");
    for (int b = 0; b < n->attribute_size(); ++b) {
      onnx::GraphProto* br = n->mutable_attribute(b)->mutable_g();
      br->add_output()->set_name("r");  // an outer value, passed through as the second output
    }
    add_node(m.g, "Identity", {"y2"}, {"i1"}, "id1");
    add_node(m.g, "Identity", {"i1"}, {"z"}, "id2");
    m.g->add_output()->set_name("z");
    const ir::Graph g = models::import_onnx_bytes(m.bytes(), "if.onnx", options());
    EXPECT_EQ(g.outputs, (std::vector<std::string>{"y", "z"})) << (cond ? "then" : "else");
    for (const auto& out : g.outputs) EXPECT_TRUE(g.has_tensor(out)) << out;
  }
}

// A branch that passes a graph input through, to two outputs of the If: each graph output keeps
// its own name ('y' and 'w', not the input 'x' twice, which saved x.npy and x_2.npy), and holds x.
TEST(OnnxIf, AGraphInputPassedThroughKeepsEachOutputsName) {
  for (bool cond : {true, false}) {
    Model m;
    m.input("x", {4});
    add_bool(m.g->mutable_initializer(), "cond", cond);
    onnx::GraphProto then_g = branch("then", "x"), else_g = branch("else", "x");
    then_g.add_output()->set_name("x");
    else_g.add_output()->set_name("x");
    auto* n = add_node(m.g, "If", {"cond"}, {"y", "w"}, "if");
    set_branch(n, "then_branch", then_g);
    set_branch(n, "else_branch", else_g);
    m.g->add_output()->set_name("y");
    m.g->add_output()->set_name("w");
    const ir::Graph g = models::import_onnx_bytes(m.bytes(), "if.onnx", options());
    EXPECT_EQ(g.outputs, (std::vector<std::string>{"y", "w"})) << (cond ? "then" : "else");
    ir::Tensor x(ir::DType::f32, {4});
    for (int i = 0; i < 4; ++i) x.data<float>()[i] = kX[static_cast<size_t>(i)];
    const std::vector<ir::Tensor> out = testing::evaluate_graph(g, {x});
    ASSERT_EQ(out.size(), 2u);
    for (const ir::Tensor& t : out)
      for (size_t i = 0; i < 4; ++i) EXPECT_EQ(t.data<float>()[i], kX[i]);
  }
}

// The outer If's then-branch (with its own initializer) computes s = x + 1, then an inner If
// (its condition an outer initializer) whose branches read s: s * two or s - s.
TEST(OnnxIf, NestedIfReadsTheEnclosingBranchsValues) {
  for (bool inner : {true, false}) {
    Model m;
    m.input("x", {4});
    add_bool(m.g->mutable_initializer(), "outer_cond", true);
    add_bool(m.g->mutable_initializer(), "inner_cond", inner);
    add_f32(m.g->mutable_initializer(), "two", {4}, {2, 2, 2, 2});
    onnx::GraphProto inner_then = branch("inner_then", "it");
    add_node(&inner_then, "Mul", {"s", "two"}, {"it"}, "mul");
    onnx::GraphProto inner_else = branch("inner_else", "ie");
    add_node(&inner_else, "Sub", {"s", "s"}, {"ie"}, "sub");
    onnx::GraphProto outer_then = branch("outer_then", "o");
    add_f32(outer_then.mutable_initializer(), "one", {4}, {1, 1, 1, 1});
    add_node(&outer_then, "Add", {"x", "one"}, {"s"}, "add");
    auto* in = add_node(&outer_then, "If", {"inner_cond"}, {"o"}, "inner_if");
    set_branch(in, "then_branch", inner_then);
    set_branch(in, "else_branch", inner_else);
    onnx::GraphProto outer_else = branch("outer_else", "x");  // passes x through
    auto* n = add_node(m.g, "If", {"outer_cond"}, {"y"}, "outer_if");
    set_branch(n, "then_branch", outer_then);
    set_branch(n, "else_branch", outer_else);
    m.g->add_output()->set_name("y");
    std::vector<float> y = run(m);
    for (size_t i = 0; i < 4; ++i) {
      const double s = static_cast<double>(kX[i]) + 1.0;
      EXPECT_DOUBLE_EQ(y[i], inner ? s * 2.0 : 0.0) << i;
    }
  }
}

// cond = Greater(x, zero) on a graph input: refused by the import and listed by inspect, both
// naming the node and the input; the same inside an inlined branch.
TEST(OnnxIf, RunTimeConditionIsRefusedNamingTheNodeAndTheInput) {
  Model m = then_else_model(true, false);
  m.input("xs", {1});
  add_f32(m.g->mutable_initializer(), "zero", {1}, {0});
  // Make the If read c = Greater(xs, zero), computed before it.
  auto* cmp = m.g->add_node();
  cmp->set_op_type("Greater");
  cmp->set_name("cmp");
  cmp->add_input("xs");
  cmp->add_input("zero");
  cmp->add_output("c");
  m.g->mutable_node()->SwapElements(0, 1);  // Greater first, then the If
  m.g->mutable_node(1)->set_input(0, "c");
  const std::string e = error_of(m);
  EXPECT_NE(e.find("If ("), std::string::npos) << e;
  EXPECT_NE(e.find("its condition 'c' depends on run-time input 'xs'"), std::string::npos) << e;
  EXPECT_NE(e.find("'if'"), std::string::npos) << e;
  models::OnnxInspection info = models::inspect_onnx_bytes(m.bytes(), "if.onnx");
  ASSERT_EQ(info.unsupported.size(), 1u);
  EXPECT_EQ(info.unsupported[0].op, "If");
  EXPECT_EQ(info.unsupported[0].nodes, std::vector<std::string>{"if"});
  EXPECT_NE(info.unsupported[0].reason.find("depends on run-time input 'xs'"), std::string::npos);
  EXPECT_NE(info.to_text().find("unsupported: 1 node(s)"), std::string::npos) << info.to_text();

  // Inside a branch taken: the outer If folds, the inner one is refused when it is reached.
  Model n;
  n.input("x", {4});
  n.input("xs", {1});
  add_bool(n.g->mutable_initializer(), "yes", true);
  add_f32(n.g->mutable_initializer(), "zero", {1}, {0});
  onnx::GraphProto inner_then = branch("inner_then", "a");
  add_node(&inner_then, "Relu", {"x"}, {"a"}, "relu");
  onnx::GraphProto inner_else = branch("inner_else", "b");
  add_node(&inner_else, "Neg", {"x"}, {"b"}, "neg");
  onnx::GraphProto outer_then = branch("outer_then", "o");
  add_node(&outer_then, "Greater", {"xs", "zero"}, {"c"}, "cmp");
  auto* in = add_node(&outer_then, "If", {"c"}, {"o"}, "inner_if");
  set_branch(in, "then_branch", inner_then);
  set_branch(in, "else_branch", inner_else);
  auto* outer = add_node(n.g, "If", {"yes"}, {"y"}, "outer_if");
  set_branch(outer, "then_branch", outer_then);
  set_branch(outer, "else_branch", branch("outer_else", "x"));
  n.g->add_output()->set_name("y");
  const std::string e2 = error_of(n);
  EXPECT_NE(e2.find("node 'outer_if/then/inner_if' (If): its condition 'outer_if/then/c' depends on run-time input 'xs'"),
            std::string::npos)
      << e2;
}

// What the inlined branch cannot hold is refused naming the branch node.
TEST(OnnxIf, AnUnsupportedOpInTheBranchTakenIsRefusedNamingIt) {
  Model m = then_else_model(true, false);
  onnx::GraphProto then_g = branch("then", "t_out");
  add_node(&then_g, "Loop", {"x"}, {"t_out"}, "loop");
  for (auto& a : *m.g->mutable_node(0)->mutable_attribute()) *a.mutable_g() = then_g;  // both branches
  const std::string e = error_of(m);
  EXPECT_NE(e.find("node 'if/then/loop' (Loop): no handler for this op"), std::string::npos) << e;
}

}  // namespace
}  // namespace fusebox
