// The ONNX handlers added for the conformance count (issue 25) on small models built here: what
// fusebox does not run is refused with a sentence naming the node (Dropout in training mode, Mod
// of floats with fmod 0, a Trilu k computed at run time, GatherElements indices out of range),
// and Dropout, Sum and Mean import as what they mean. (ONNX's own node tests for these ops run
// in tests/conformance.)
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/models/onnx_import.h"
#include "tests/onnx/onnx_test_model.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/support/graph_eval.h"

namespace fusebox {
namespace {

using Model = test::OnnxModel;

models::OnnxImportOptions options() { return test::cpu_import_options(); }

std::string error_of(const Model& model) { return test::import_error(model.bytes()); }

void bool_init(Model& model, const std::string& name, bool v) {
  auto* t = model.g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(v ? 1 : 0);
}

// A Dropout on x [2, 3] with its mask output, as `train` and `ratio` say.
Model dropout(bool train, float ratio) {
  Model model(13);
  model.input("x", {2, 3});
  bool_init(model, "train", train);
  model.init("ratio", {}, {ratio});
  model.node("Dropout", {"x", "ratio", "train"}, {"y", "mask"});
  return model;
}

// y is x and the mask all true.
void expect_identity(const Model& model) {
  ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
  ir::Tensor x = testing::random_inputs(g, 3)[0];
  std::vector<ir::Tensor> out = testing::evaluate_graph(g, {x});
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(out[0].data<float>()[i], x.data<float>()[i]);
    EXPECT_EQ(out[1].data<int64_t>()[i], 1);
  }
}

TEST(OnnxMoreOpsImport, DropoutIsIdentityWithAnAllTrueMask) {
  expect_identity(dropout(false, 0.5f));
}

TEST(OnnxMoreOpsImport, DropoutInTrainingModeIsRefused) {
  Model on(13);
  on.input("x", {2, 3});
  bool_init(on, "train", true);
  on.node("Dropout", {"x", "", "train"}, {"y"});
  std::string e = error_of(on);
  EXPECT_NE(e.find("Dropout_1"), std::string::npos) << e;
  EXPECT_NE(e.find("training_mode is true"), std::string::npos) << e;

  Model runtime(13);
  runtime.input("x", {2, 3});
  runtime.input("flag", {1});
  runtime.node("Dropout", {"x", "", "flag"}, {"y"});
  e = error_of(runtime);
  EXPECT_NE(e.find("Dropout_1"), std::string::npos) << e;
  EXPECT_NE(e.find("computed at run time"), std::string::npos) << e;
}

// Training mode drops nothing at ratio 0 (torchvision's Swin exports F.dropout(p=0.0), whose
// training flag defaults to true): the identity, as in inference. A ratio of 0.5 is still refused.
TEST(OnnxMoreOpsImport, DropoutInTrainingModeWithRatioZeroIsIdentity) {
  expect_identity(dropout(true, 0.0f));
  const std::string e = error_of(dropout(true, 0.5f));
  EXPECT_NE(e.find("training_mode is true with a ratio other than a constant 0"), std::string::npos)
      << e;
}

TEST(OnnxMoreOpsImport, FloatModNeedsFmod) {
  Model model(13);
  model.input("a", {4});
  model.input("b", {4});
  model.node("Mod", {"a", "b"}, {"y"});
  const std::string e = error_of(model);
  EXPECT_NE(e.find("Mod_1"), std::string::npos) << e;
  EXPECT_NE(e.find("fmod = 1"), std::string::npos) << e;
}

TEST(OnnxMoreOpsImport, TriluKMustBeKnownAtLoadTime) {
  Model model(14);
  model.input("x", {3, 3});
  model.input("k", {1});
  model.node("Trilu", {"x", "k"}, {"y"});
  const std::string e = error_of(model);
  EXPECT_NE(e.find("Trilu_1"), std::string::npos) << e;
  EXPECT_NE(e.find("known at load time"), std::string::npos) << e;
}

// CumSum's axis is an input: an initializer (int32 here, as ONNX allows) imports as the attribute,
// negative counting from the end; one computed at run time is refused, naming the node.
TEST(OnnxMoreOpsImport, CumSumTakesItsAxisFromAConstant) {
  Model model(14);
  model.input("x", {2, 5});
  auto* t = model.g->add_initializer();
  t->set_name("axis");
  t->set_data_type(onnx::TensorProto::INT32);
  t->add_int32_data(-1);
  Model::i(model.node("CumSum", {"x", "axis"}, {"y"}), "reverse", 1);
  ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
  const std::vector<ir::Tensor> in = testing::random_inputs(g, 9);
  const ir::Tensor y = testing::evaluate_graph(g, in)[0];
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 5; ++c) {
      double s = 0;
      for (int k = c; k < 5; ++k) s += in[0].data<float>()[r * 5 + k];
      EXPECT_NEAR(y.data<float>()[r * 5 + c], s, 1e-6) << r << " " << c;
    }

  Model computed(14);
  computed.input("x", {2, 5});
  computed.input("axis", {1});
  computed.node("CumSum", {"x", "axis"}, {"y"});
  const std::string e = error_of(computed);
  EXPECT_NE(e.find("CumSum_1"), std::string::npos) << e;
  EXPECT_NE(e.find("known at load time"), std::string::npos) << e;
}

TEST(OnnxMoreOpsImport, GatherElementsConstantIndexOutOfRangeIsRefused) {
  Model model(13);
  model.input("x", {2, 3});
  auto* t = model.g->add_initializer();
  t->set_name("idx");
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(2);
  t->add_dims(1);
  t->add_int64_data(1);
  t->add_int64_data(3);
  Model::i(model.node("GatherElements", {"x", "idx"}, {"y"}), "axis", 1);
  const std::string e = error_of(model);
  EXPECT_NE(e.find("GatherElements_1"), std::string::npos) << e;
  EXPECT_NE(e.find("index 3 (element 1) out of range for axis 1 of size 3"), std::string::npos) << e;
}

TEST(OnnxMoreOpsImport, SumAndMeanOfThree) {
  for (const char* op : {"Sum", "Mean"}) {
    Model model(13);
    for (const char* v : {"a", "b", "c"}) model.input(v, {2, 3});
    model.node(op, {"a", "b", "c"}, {"y"});
    ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
    std::vector<ir::Tensor> in = testing::random_inputs(g, 8);
    ir::Tensor y = testing::evaluate_graph(g, in)[0];
    for (int i = 0; i < 6; ++i) {
      double s = 0;
      for (const auto& t : in) s += t.data<float>()[i];
      if (std::string(op) == "Mean") s /= 3;
      EXPECT_NEAR(y.data<float>()[i], s, 1e-6) << op << " " << i;
    }
  }
}

TEST(OnnxMoreOpsImport, CompositeReductionsMatchDoubleLoops) {
  const std::vector<std::pair<const char*, std::function<double(const std::vector<double>&)>>> cases = {
      {"ReduceL1", [](const std::vector<double>& v) { double s = 0; for (double x : v) s += std::abs(x); return s; }},
      {"ReduceL2", [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x * x; return std::sqrt(s); }},
      {"ReduceSumSquare", [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x * x; return s; }},
      {"ReduceLogSum", [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x + 2; return std::log(s); }},
      {"ReduceLogSumExp", [](const std::vector<double>& v) { double s = 0; for (double x : v) s += std::exp(x); return std::log(s); }},
      {"ReduceProd", [](const std::vector<double>& v) { double s = 1; for (double x : v) s *= x; return s; }},
  };
  for (const auto& [op, ref] : cases) {
    Model model(13);
    model.input("x", {3, 4});
    std::string x = "x";
    if (std::string(op) == "ReduceLogSum") {  // positive sums for the log
      model.init("two", {}, {2.0f});
      model.node("Add", {"x", "two"}, {"xp"});
      model.g->mutable_output()->RemoveLast();
      x = "xp";
    }
    auto* n = model.node(op, {x}, {"y"});
    Model::ints(n, "axes", {1});
    Model::i(n, "keepdims", 0);
    ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
    ir::Tensor in = testing::random_inputs(g, 12)[0];
    ir::Tensor y = testing::evaluate_graph(g, {in})[0];
    ASSERT_EQ(y.shape(), (ir::Shape{3})) << op;
    for (int r = 0; r < 3; ++r) {
      std::vector<double> row;
      for (int c = 0; c < 4; ++c) row.push_back(in.data<float>()[r * 4 + c]);
      EXPECT_NEAR(y.data<float>()[r], ref(row), 1e-5) << op << " row " << r;
    }
  }
}

// Opset 6 arithmetic broadcasts B from attribute axis (PyTorch's old exports): B [3] on A
// [2, 3, 4] at axis 1 adds B[j] along dim 1; without broadcast = 1 the shapes must be equal.
TEST(OnnxMoreOpsImport, Opset6BroadcastAlignsBAtAxis) {
  Model model(6);
  model.input("a", {2, 3, 4});
  model.init("b", {3}, {10, 20, 30});
  auto* n = model.node("Add", {"a", "b"}, {"y"});
  Model::i(n, "broadcast", 1);
  Model::i(n, "axis", 1);
  ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
  ir::Tensor a = testing::random_inputs(g, 2)[0];
  ir::Tensor y = testing::evaluate_graph(g, {a})[0];
  ASSERT_EQ(y.shape(), (ir::Shape{2, 3, 4}));
  for (int i = 0; i < 24; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], a.data<float>()[i] + 10.0f * static_cast<float>((i / 4) % 3 + 1)) << i;

  Model strict(6);
  strict.input("a", {2, 3});
  strict.init("b", {3}, {1, 2, 3});
  strict.node("Mul", {"a", "b"}, {"y"});
  const std::string e = error_of(strict);
  EXPECT_NE(e.find("Mul_1"), std::string::npos) << e;
  EXPECT_NE(e.find("broadcast is 0"), std::string::npos) << e;

  Model late(13);
  late.input("a", {2, 3});
  late.init("b", {3}, {1, 2, 3});
  Model::i(late.node("Sub", {"a", "b"}, {"y"}), "broadcast", 1);
  const std::string e2 = error_of(late);
  EXPECT_NE(e2.find("up to opset 6 only"), std::string::npos) << e2;
}

// DepthToSpace (DCR) against index arithmetic written here: y[n, c, h*bs + i, w*bs + j] =
// x[n, (i*bs + j)*C' + c, h, w]; and the refusals of a blocksize or a scale that does not fit.
TEST(OnnxMoreOpsImport, DepthToSpaceAndInstanceNormChecks) {
  Model model(13);
  model.input("x", {1, 8, 2, 3});
  Model::i(model.node("DepthToSpace", {"x"}, {"y"}), "blocksize", 2);
  ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
  ir::Tensor x = testing::random_inputs(g, 4)[0];
  ir::Tensor y = testing::evaluate_graph(g, {x})[0];
  ASSERT_EQ(y.shape(), (ir::Shape{1, 2, 4, 6}));
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w)
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j)
            EXPECT_EQ(y.data<float>()[(c * 4 + h * 2 + i) * 6 + w * 2 + j],
                      x.data<float>()[(((i * 2 + j) * 2 + c) * 2 + h) * 3 + w]);

  Model bad(13);
  bad.input("x", {1, 6, 2, 2});
  Model::i(bad.node("DepthToSpace", {"x"}, {"y"}), "blocksize", 2);
  std::string e = error_of(bad);
  EXPECT_NE(e.find("DepthToSpace_1"), std::string::npos) << e;
  EXPECT_NE(e.find("does not divide the 6 channels"), std::string::npos) << e;

  Model inorm(13);
  inorm.input("x", {2, 3, 4});
  inorm.init("s", {2}, {1, 1});
  inorm.init("b", {3}, {0, 0, 0});
  inorm.node("InstanceNormalization", {"x", "s", "b"}, {"y"});
  e = error_of(inorm);
  EXPECT_NE(e.find("InstanceNormalization_1"), std::string::npos) << e;
  EXPECT_NE(e.find("one per channel"), std::string::npos) << e;
}

void i64_init(Model& model, const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  auto* t = model.g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
}

// NegativeLogLikelihoodLoss, mean over weighted elements with one ignored, against a loop here;
// a class index out of range and a target computed at run time are refused naming the node.
TEST(OnnxMoreOpsImport, NllLossWeightedMeanAndRefusals) {
  Model model(13);
  model.input("x", {3, 4});
  model.input("w", {4});
  i64_init(model, "t", {3}, {2, -1, 0});
  auto* n = model.node("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"y"});
  Model::i(n, "ignore_index", -1);
  ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
  std::vector<ir::Tensor> in = testing::random_inputs(g, 9);
  ASSERT_EQ(in.size(), 2u);
  ir::Tensor y = testing::evaluate_graph(g, in)[0];
  const float* x = in[0].data<float>();
  const float* w = in[1].data<float>();
  const double want = -(x[0 * 4 + 2] * double{w[2]} + x[2 * 4 + 0] * double{w[0]}) / (double{w[2]} + w[0]);
  ASSERT_EQ(y.numel(), 1);
  EXPECT_NEAR(y.data<float>()[0], want, 1e-5);

  Model bad(13);
  bad.input("x", {2, 3});
  i64_init(bad, "t", {2}, {1, 3});
  bad.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"y"});
  std::string e = error_of(bad);
  EXPECT_NE(e.find("NegativeLogLikelihoodLoss_1"), std::string::npos) << e;
  EXPECT_NE(e.find("class 3, out of range for 3 classes"), std::string::npos) << e;

  Model runtime(13);
  runtime.input("x", {2, 3});
  runtime.input("t", {2});
  runtime.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"y"});
  e = error_of(runtime);
  EXPECT_NE(e.find("NegativeLogLikelihoodLoss_1"), std::string::npos) << e;
  EXPECT_NE(e.find("known at load time"), std::string::npos) << e;
}

}  // namespace
}  // namespace fusebox
