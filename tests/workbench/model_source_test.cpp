// load_model's dims: a dim the .onnx model does not have is an error naming it and the model's
// dims, not silently ignored (the run would use another shape than the one asked for). An input
// given as a .npy file binds its dynamic dims, and a conflict names both sides.
#define ONNX_ML 1
#define ONNX_NAMESPACE onnx
#include "app/workbench/model_source.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <string>

#include "app/workbench/pipeline.h"
#include "core/base/error.h"
#include "core/ir/npy.h"
#include "core/models/onnx_import.h"
#include "tests/support/onnx_values.h"
#include "tests/support/temp_dir.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::workbench {
namespace {

const std::string kMlp = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/mlp_opset17.onnx";

std::string error_of(const std::map<std::string, int64_t>& dims) {
  try {
    load_model(kMlp, 1, dims);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelSource, AnUnknownDimIsAnErrorListingTheModelsDims) {
  const auto inputs = models::inspect_onnx_file(kMlp).inputs;
  ASSERT_EQ(inputs.size(), 1u);
  const std::string x = inputs[0].name;
  EXPECT_EQ(error_of({{"bacth", 2}}),
            "dims.bacth: " + kMlp + " has no dim 'bacth' (its dims: " + x + ":0, " + x + ":1)");
  // The names it lists are the ones it takes.
  EXPECT_EQ(load_model(kMlp, 1, {{x + ":0", 3}}).tensor(x).shape.at(0), 3);
}

// A builtin spec has no dynamic dims: the error spells out the options that set its sizes.
TEST(ModelSource, DimsOnABuiltinSpecListItsSizeOptions) {
  try {
    load_model("transformer:seq=16", 1, {{"batch", 2}});
    FAIL() << "dims on a builtin spec were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dims: only a .onnx model has dynamic dims ('transformer:seq=16' is a builtin spec; its sizes are set "
              "in the spec itself: transformer:seq=16,d=256,heads=4,ffn=1024,batch=1)");
  }
}

// Inputs from .npy files: the others keep the values they have without them (the seeded draws
// are the same), and a file's input is not also drawn (no second copy of a large input).
TEST(ModelSource, AnInputFromAFileLeavesTheOthersSeededValues) {
  ir::Graph g;
  g.add_input("a", ir::DType::f32, {3});
  g.add_input("b", ir::DType::f32, {2});
  g.outputs = {g.add_node("Mul", {"b", "b"}, {}, "mul")};
  const std::vector<ir::Tensor> seeded = random_inputs(g, 7);
  const std::string file = ::testing::TempDir() + "/model_source_a.npy";
  ir::Tensor a(ir::DType::f32, {3});
  for (int i = 0; i < 3; ++i) a.data<float>()[i] = static_cast<float>(i) + 0.5f;
  ir::write_npy(file, a);
  const std::vector<ir::Tensor> in = load_inputs(g, 7, {{"a", file}});
  ASSERT_EQ(in.size(), 2u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(in[0].data<float>()[i], static_cast<float>(i) + 0.5f);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(in[1].data<float>()[i], seeded[1].data<float>()[i]);
}

// z = x + y at opset 17, as exporters write dynamic dims: x [n, <unnamed>, 3] and y [n, 1, 3],
// `n` named as PaddleOCR's exports name theirs.
std::string write_dynamic_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("dynamic");
  auto add_value = [](onnx::ValueInfoProto* v, const std::string& name,
                      const std::vector<std::string>& dims) {
    fusebox::test::onnx_tensor_value(v, name, onnx::TensorProto::FLOAT, dims);
  };
  add_value(g->add_input(), "x", {"p2o.DynamicDimension.0", "", "3"});
  add_value(g->add_input(), "y", {"p2o.DynamicDimension.0", "1", "3"});
  auto* n = g->add_node();
  n->set_op_type("Add");
  n->set_name("add");
  n->add_input("x");
  n->add_input("y");
  n->add_output("z");
  add_value(g->add_output(), "z", {"p2o.DynamicDimension.0", "", "3"});
  const std::string path = fusebox::test::process_temp_dir() + "/dynamic_dims.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

std::string npy_of_shape(const std::string& name, const ir::Shape& shape) {
  const std::string path = fusebox::test::process_temp_dir() + "/" + name + ".npy";
  ir::Tensor t(ir::DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  ir::write_npy(path, t);
  return path;
}

std::string load_error(const std::string& model, const std::map<std::string, int64_t>& dims,
                       const std::map<std::string, std::string>& inputs) {
  try {
    load_model(model, 1, dims, inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelSource, AnInputFileBindsItsDynamicDims) {
  const std::string model = write_dynamic_model();
  const std::string x = npy_of_shape("x253", {2, 5, 3}), y = npy_of_shape("y213", {2, 1, 3});
  // Without a value for either dynamic dim the model is refused; the files give both.
  EXPECT_NE(load_error(model, {}, {}).find("dynamic dims without values"), std::string::npos);
  const ir::Graph g = load_model(model, 1, {}, {{"x", x}, {"y", y}});
  EXPECT_EQ(g.tensor("x").shape, (ir::Shape{2, 5, 3}));
  EXPECT_EQ(g.tensor("y").shape, (ir::Shape{2, 1, 3}));
  // One file is enough when it fixes every dynamic dim; the other input is seeded at that shape.
  const ir::Graph one = load_model(model, 1, {}, {{"x", x}});
  EXPECT_EQ(one.tensor("y").shape, (ir::Shape{2, 1, 3}));
  const std::vector<ir::Tensor> in = load_inputs(one, 1, {{"x", x}});
  EXPECT_EQ(in.at(0).data<float>()[29], 29.0f);
  // The same value from the dims setting agrees.
  EXPECT_EQ(load_model(model, 1, {{"p2o.DynamicDimension.0", 2}}, {{"x", x}}).tensor("x").shape,
            (ir::Shape{2, 5, 3}));
}

TEST(ModelSource, AnInputFileThatDisagreesIsRefusedNamingBothSides) {
  const std::string model = write_dynamic_model();
  const std::string x = npy_of_shape("x253", {2, 5, 3}), y4 = npy_of_shape("y413", {4, 1, 3});
  EXPECT_EQ(load_error(model, {}, {{"x", x}, {"y", y4}}),
            "inputs.y (" + y4 +
                ", shape [4,1,3]) makes dim 'p2o.DynamicDimension.0' 4, but inputs.x (" + x +
                ", shape [2,5,3]) makes it 2");
  EXPECT_EQ(load_error(model, {{"p2o.DynamicDimension.0", 7}}, {{"x", x}}),
            "inputs.x (" + x +
                ", shape [2,5,3]) makes dim 'p2o.DynamicDimension.0' 2, but "
                "dims.p2o.DynamicDimension.0 is 7");
  const std::string flat = npy_of_shape("x10", {10});
  EXPECT_EQ(load_error(model, {}, {{"x", flat}}),
            "inputs.x (" + flat + ", shape [10]): has rank 1, the model's input 'x' rank 3");
}

// Silero VAD's shape: y = If(sr == 16000, x * 2, x * 3) at opset 17, with sr (int64, a scalar) an
// input. The If's condition is known only once sr is.
std::string write_if_on_input_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("if_on_input");
  auto value = fusebox::test::onnx_tensor_value;
  value(g->add_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  value(g->add_input(), "sr", onnx::TensorProto::INT64, {});  // a scalar
  auto* rate = g->add_initializer();
  rate->set_name("rate");
  rate->set_data_type(onnx::TensorProto::INT64);
  rate->add_int64_data(16000);
  for (auto [name, v] : {std::pair{"two", 2.0f}, std::pair{"three", 3.0f}}) {
    auto* c = g->add_initializer();
    c->set_name(name);
    c->set_data_type(onnx::TensorProto::FLOAT);
    c->add_float_data(v);
  }
  auto* eq = g->add_node();
  eq->set_op_type("Equal");
  eq->set_name("eq");
  eq->add_input("sr");
  eq->add_input("rate");
  eq->add_output("cond");
  auto* n = g->add_node();
  n->set_op_type("If");
  n->set_name("if");
  n->add_input("cond");
  n->add_output("y");
  for (auto [attr, factor] : {std::pair{"then_branch", "two"}, std::pair{"else_branch", "three"}}) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* b = a->mutable_g();
    b->set_name(attr);
    auto* mul = b->add_node();
    mul->set_op_type("Mul");
    mul->set_name(std::string(attr) + "/mul");
    mul->add_input("x");
    mul->add_input(factor);
    mul->add_output(std::string(attr) + "/y");
    value(b->add_output(), std::string(attr) + "/y", onnx::TensorProto::FLOAT, {"2"});
  }
  value(g->add_output(), "y", onnx::TensorProto::FLOAT, {"2"});
  const std::string path = fusebox::test::process_temp_dir() + "/if_on_input.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

// consts: an input made a constant before the passes, so the If is inlined at load time and the
// branch its value picks runs.
TEST(ModelSource, AConstInputLetsAnIfOnItBeInlined) {
  const std::string model = write_if_on_input_model();
  EXPECT_NE(load_error(model, {}, {})
                .find("known at load time (give 'sr' a value with consts.sr=VALUE; on the command "
                      "line --const sr=VALUE)"),
            std::string::npos)
      << load_error(model, {}, {});
  Pipeline p(test::fixed_roofline);
  for (auto [rate, factor] : {std::pair{"16000", 2.0f}, std::pair{"8000", 3.0f}}) {
    Settings s = test::small_settings(model);
    s.consts = {{"sr", rate}};
    const std::string x = npy_of_shape("x2", {2});  // 0, 1
    s.inputs = {{"x", x}};
    auto r = p.run(s);
    ASSERT_EQ(r->model->graph.inputs, std::vector<std::string>{"x"}) << "sr=" << rate;
    for (const auto& node : r->model->graph.nodes) EXPECT_NE(node.op, "If");
    ASSERT_EQ(r->outputs.size(), 1u);
    EXPECT_EQ(r->outputs[0].data<float>()[0], 0.0f);
    EXPECT_EQ(r->outputs[0].data<float>()[1], factor) << "sr=" << rate;
  }
  // A .npy file gives the value as well; a value that does not fit the input is refused.
  ir::Tensor sr(ir::DType::i64, {});
  sr.data<int64_t>()[0] = 16000;
  const std::string file = fusebox::test::process_temp_dir() + "/sr.npy";
  ir::write_npy(file, sr);
  EXPECT_EQ(load_model(model, 1, {}, {}, {{"sr", file}}).inputs, std::vector<std::string>{"x"});
  auto const_error = [&](const std::map<std::string, std::string>& consts,
                         const std::map<std::string, std::string>& inputs = {}) {
    try {
      load_model(model, 1, {}, inputs, consts);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(const_error({{"sr", "16k"}}),
            "consts.sr: expected a .npy file or an integer (input 'sr' is INT64), got '16k'");
  EXPECT_EQ(const_error({{"rate", "1"}}),
            "consts.rate: " + model + " has no input 'rate' (its inputs: x, sr)");
  EXPECT_EQ(const_error({{"x", "1"}}, {{"x", file}}),
            "consts.x: input 'x' is also fed from a file (inputs.x); give it one or the other");
  EXPECT_EQ(const_error({{"x", file}}), "consts.x: " + file + " (i64[]): input 'x' is FLOAT");
}

}  // namespace
}  // namespace fusebox::workbench
