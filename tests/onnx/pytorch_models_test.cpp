// The models exported from PyTorch by assets/models/export_models.py (the builtin MLP's and
// transformer block's architectures at smaller sizes, a 2-layer stack, a GPT-style decoder block
// with and without its causal mask; opsets 13 and 17; a 2-layer LSTM and a bidirectional GRU, each
// with a Linear head; opset 17) and torchvision's MobileNetV3-Small load, run
// with all passes on, on every executor, and match PyTorch's saved outputs within 1e-4.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/exec/session.h"
#include "core/ir/npy.h"
#include "core/models/onnx_import.h"
#include "core/passes/pass_manager.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox {
namespace {

struct Case {
  std::string model;   // "transformer_opset17"
  std::string prefix;  // "transformer"
  std::string output;  // "y"
};

std::string asset(const std::string& file) { return std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/" + file; }

// The case's export imported (constants folded on the CPU), its input and PyTorch's output.
struct Loaded {
  ir::Graph graph;
  ir::Tensor x, want;
};
Loaded load(const Case& c) {
  cpu::register_backend();
  auto cpu = cpu::make_backend();
  models::OnnxImportOptions opt;
  opt.evaluator = cpu.get();
  return {models::import_onnx_file(asset(c.model + ".onnx"), opt), ir::read_npy(asset(c.prefix + ".x.npy")),
          ir::read_npy(asset(c.prefix + "." + c.output + ".npy"))};
}

// max |got - want| over two f32 tensors of the same shape.
double max_abs_diff(const ir::Tensor& got, const ir::Tensor& want) {
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    worst = std::max(worst, static_cast<double>(std::abs(got.data<float>()[i] - want.data<float>()[i])));
  return worst;
}

class PyTorchModels : public ::testing::TestWithParam<Case> {};

TEST_P(PyTorchModels, MatchPyTorchWithAllPasses) {
  const Case& c = GetParam();
  const auto [g, x, want] = load(c);
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  for (const char* executor : {"eager", "interpreted", "compiled"}) {
    exec::SessionOptions so;
    so.executor = executor;
    so.passes = "all";
    exec::Session session(g, so);
    std::vector<ir::Tensor> got = session.run({x});
    ASSERT_EQ(got[0].shape(), want.shape()) << executor;
    const double worst = max_abs_diff(got[0], want);
    EXPECT_LE(worst, 1e-4) << c.model << " on " << executor;
    if (std::string(executor) == "compiled")
      std::printf("%s: max |fusebox - pytorch| = %.3g, %zu nodes -> %zu after passes\n", c.model.c_str(), worst,
                  g.nodes.size(), session.graph().nodes.size());
  }
}

// Every subset of the passes (compiled executor) against PyTorch's outputs, not only against the
// unoptimized import (tests/passes/onnx_assets_test.cpp): a rewrite that is wrong in the same way
// as the import would still show here.
TEST_P(PyTorchModels, MatchPyTorchWithEverySubsetOfPasses) {
  const Case& c = GetParam();
  const auto [g, x, want] = load(c);
  const std::vector<std::string> names = passes::PassRegistry::instance().names();
  for (unsigned mask = 0; mask < (1u << names.size()); ++mask) {
    std::string list;
    for (size_t i = 0; i < names.size(); ++i)
      if (mask & (1u << i)) list += (list.empty() ? "" : ",") + names[i];
    exec::SessionOptions so;
    so.executor = "compiled";
    so.passes = list.empty() ? "none" : list;
    exec::Session session(g, so);
    std::vector<ir::Tensor> got = session.run({x});
    ASSERT_EQ(got[0].shape(), want.shape()) << so.passes;
    const double worst = max_abs_diff(got[0], want);
    EXPECT_LE(worst, 1e-4) << c.model << " with passes " << so.passes;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Assets, PyTorchModels,
    ::testing::Values(Case{"mlp_opset13", "mlp", "logits"}, Case{"mlp_opset17", "mlp", "logits"},
                      Case{"transformer_opset13", "transformer", "y"},
                      Case{"transformer_opset17", "transformer", "y"},
                      Case{"stack_opset13", "stack", "y"}, Case{"stack_opset17", "stack", "y"},
                      Case{"decoder_opset13", "decoder", "y"},
                      Case{"decoder_opset17", "decoder", "y"},
                      Case{"decoder_nomask_opset13", "decoder_nomask", "y"},
                      Case{"decoder_nomask_opset17", "decoder_nomask", "y"},
                      Case{"lstm_opset17", "lstm", "y"}, Case{"bigru_opset17", "bigru", "y"},
                      Case{"swin_attn_opset17", "swin_attn", "y"}),
    [](const auto& info) { return info.param.model; });

// The conv nets (torchvision's MobileNetV3-Small at 224 x 224, BatchNormalization folded by
// PyTorch's exporter in one copy and kept as nodes in the other): every executor, with the passes
// off and on (conv_batchnorm then folds all 34 BatchNorms), against PyTorch's logits. Every subset
// of the passes would take minutes at this size; the pass tests cover the subsets on small graphs.
class PyTorchConvNets : public ::testing::TestWithParam<Case> {};

TEST_P(PyTorchConvNets, MatchPyTorchWithThePassesOffAndOn) {
  const Case& c = GetParam();
  const auto [g, x, want] = load(c);
  for (const char* passes : {"none", "all"}) {
    for (const char* executor : {"eager", "interpreted", "compiled"}) {
      exec::SessionOptions so;
      so.executor = executor;
      so.passes = passes;
      exec::Session session(g, so);
      std::vector<ir::Tensor> got = session.run({x});
      ASSERT_EQ(got[0].shape(), want.shape()) << executor;
      const double worst = max_abs_diff(got[0], want);
      EXPECT_LE(worst, 1e-4) << c.model << " on " << executor << " with passes " << passes;
      if (std::string(passes) == "all") {
        const auto ops = session.graph().op_histogram();
        EXPECT_EQ(ops.count("BatchNorm"), 0u) << "every BatchNorm follows a Conv and folds into it";
        if (std::string(executor) == "compiled")
          std::printf("%s: max |fusebox - pytorch| = %.3g, %zu nodes -> %zu after passes\n", c.model.c_str(), worst,
                      g.nodes.size(), session.graph().nodes.size());
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Assets, PyTorchConvNets,
                         ::testing::Values(Case{"mobilenet_v3_small_opset17", "mobilenet_v3_small", "y"},
                                           Case{"mobilenet_v3_small_bn_opset17", "mobilenet_v3_small_bn", "y"}),
                         [](const auto& info) { return info.param.model; });

}  // namespace
}  // namespace fusebox
