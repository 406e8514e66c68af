// The ONNX Conv, BatchNormalization and pool handlers on small models built here: a Conv with
// weight and bias initializers imports as one Conv and computes what a double-precision loop
// written here computes; what fusebox does not run (unknown attributes, training-mode
// BatchNormalization, MaxPool's Indices output, inconsistent channels) is refused with a sentence
// naming the node. (ONNX's own node tests for these ops run in tests/conformance.)
#include <gtest/gtest.h>

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

std::vector<float> ramp(int64_t n, float scale, float offset) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>((i * 7) % 11) * scale + offset);
  return v;
}

TEST(OnnxConvImport, ConvWithInitializersMatchesDirectLoops) {
  // x [1, 4, 5, 6], w [6, 2, 3, 3], group 2, strides (2, 1), pads (1, 0, 0, 1).
  Model model(11);
  model.input("x", {1, 4, 5, 6});
  const std::vector<float> w = ramp(6 * 2 * 9, 0.25f, -1.0f), bias = ramp(6, 0.5f, -1.5f);
  model.init("w", {6, 2, 3, 3}, w);
  model.init("b", {6}, bias);
  auto* n = model.node("Conv", {"x", "w", "b"}, {"y"});
  Model::i(n, "group", 2);
  Model::ints(n, "strides", {2, 1});
  Model::ints(n, "pads", {1, 0, 0, 1});
  Model::ints(n, "kernel_shape", {3, 3});
  ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
  EXPECT_EQ(g.op_histogram(), (std::map<std::string, int>{{"Conv", 1}}));
  ir::Tensor x = testing::random_inputs(g, 5)[0];
  ir::Tensor y = testing::evaluate_graph(g, {x})[0];
  // Output: H (5 + 1 - 3) / 2 + 1 = 2, W (6 + 1 - 3) / 1 + 1 = 5.
  ASSERT_EQ(y.shape(), (ir::Shape{1, 6, 2, 5}));
  for (int co = 0; co < 6; ++co)
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 5; ++ow) {
        double acc = bias[co];
        const int g0 = co / 3;
        for (int ci = 0; ci < 2; ++ci)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              const int ih = oh * 2 - 1 + kh, iw = ow + kw;
              if (ih < 0 || ih >= 5 || iw >= 6) continue;
              acc += static_cast<double>(x.data<float>()[((g0 * 2 + ci) * 5 + ih) * 6 + iw]) *
                     w[static_cast<size_t>(((co * 2 + ci) * 3 + kh) * 3 + kw)];
            }
        EXPECT_NEAR(y.data<float>()[(co * 2 + oh) * 5 + ow], acc, 1e-4) << co << "," << oh << "," << ow;
      }
}

TEST(OnnxConvImport, UnknownAttributesAreRefused) {
  Model model;
  model.input("x", {1, 2, 5, 5});
  model.init("w", {3, 2, 3, 3}, ramp(54, 0.1f, 0));
  Model::i(model.node("Conv", {"x", "w"}, {"y"}), "winograd", 1);
  const std::string e = error_of(model);
  EXPECT_NE(e.find("winograd"), std::string::npos) << e;
}

TEST(OnnxConvImport, InconsistentChannelsNameTheNode) {
  Model model;
  model.input("x", {1, 3, 5, 5});
  model.init("w", {4, 2, 3, 3}, ramp(72, 0.1f, 0));
  model.node("Conv", {"x", "w"}, {"y"});
  const std::string e = error_of(model);
  EXPECT_NE(e.find("Conv_1"), std::string::npos) << e;
  EXPECT_NE(e.find("input channels per group"), std::string::npos) << e;
}

TEST(OnnxConvImport, TrainingModeBatchNormIsRefused) {
  Model model(15);
  model.input("x", {2, 3, 4});
  for (const char* p : {"s", "b", "m", "v"}) model.init(p, {3}, {1, 1, 1});
  Model::i(model.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "rm", "rv"}), "training_mode", 1);
  const std::string e = error_of(model);
  EXPECT_NE(e.find("training_mode 1 is not supported"), std::string::npos) << e;
}

TEST(OnnxConvImport, BatchNormImportsAsOneOp) {
  Model model(15);
  model.input("x", {2, 3, 4});
  model.init("s", {3}, {1, 2, 0.5f});
  model.init("b", {3}, {0, 1, -1});
  model.init("m", {3}, {0.5f, -0.5f, 0});
  model.init("v", {3}, {1, 4, 0.25f});
  model.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"});
  ir::Graph g = models::import_onnx_bytes(model.bytes(), "m", options());
  EXPECT_EQ(g.op_histogram(), (std::map<std::string, int>{{"BatchNorm", 1}}));
  ir::Tensor x = testing::random_inputs(g, 6)[0];
  ir::Tensor y = testing::evaluate_graph(g, {x})[0];
  const double s[3] = {1, 2, 0.5}, b[3] = {0, 1, -1}, m[3] = {0.5, -0.5, 0}, v[3] = {1, 4, 0.25};
  for (int i = 0; i < 24; ++i) {
    const int c = (i / 4) % 3;
    EXPECT_NEAR(y.data<float>()[i], (x.data<float>()[i] - m[c]) / std::sqrt(v[c] + 1e-5) * s[c] + b[c], 1e-5);
  }
}

TEST(OnnxConvImport, MaxPoolIndicesOutputIsRefused) {
  Model model(12);
  model.input("x", {1, 1, 4, 4});
  Model::ints(model.node("MaxPool", {"x"}, {"y", "idx"}), "kernel_shape", {2, 2});
  const std::string e = error_of(model);
  EXPECT_NE(e.find("Indices output is not supported"), std::string::npos) << e;
}

}  // namespace
}  // namespace fusebox
