// The models exported from PyTorch by assets/models/export_models.py (the builtin MLP's and
// transformer block's architectures at smaller sizes, a 2-layer stack; opsets 13 and 17) load, run with all passes on, on every executor, and
// match PyTorch's saved outputs within 1e-4.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/exec/session.h"
#include "core/ir/npy.h"
#include "core/models/onnx_import.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox {
namespace {

struct Case {
  std::string model;   // "transformer_opset17"
  std::string prefix;  // "transformer"
  std::string output;  // "y"
};

std::string asset(const std::string& file) { return std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/" + file; }

class PyTorchModels : public ::testing::TestWithParam<Case> {};

TEST_P(PyTorchModels, MatchPyTorchWithAllPasses) {
  const Case& c = GetParam();
  cpu::register_backend();
  auto cpu = cpu::make_backend();
  models::OnnxImportOptions opt;
  opt.evaluator = cpu.get();
  ir::Graph g = models::import_onnx_file(asset(c.model + ".onnx"), opt);
  ir::Tensor x = ir::read_npy(asset(c.prefix + ".x.npy"));
  ir::Tensor want = ir::read_npy(asset(c.prefix + "." + c.output + ".npy"));
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  for (const char* executor : {"eager", "interpreted", "compiled"}) {
    exec::SessionOptions so;
    so.executor = executor;
    so.passes = "all";
    exec::Session session(g, so);
    std::vector<ir::Tensor> got = session.run({x});
    ASSERT_EQ(got[0].shape(), want.shape()) << executor;
    double worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i)
      worst = std::max(worst, static_cast<double>(std::abs(got[0].data<float>()[i] - want.data<float>()[i])));
    EXPECT_LE(worst, 1e-4) << c.model << " on " << executor;
    if (std::string(executor) == "compiled")
      std::printf("%s: max |fusebox - pytorch| = %.3g, %zu nodes -> %zu after passes\n", c.model.c_str(), worst,
                  g.nodes.size(), session.graph().nodes.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Assets, PyTorchModels,
                         ::testing::Values(Case{"mlp_opset13", "mlp", "logits"}, Case{"mlp_opset17", "mlp", "logits"},
                                           Case{"transformer_opset13", "transformer", "y"},
                                           Case{"transformer_opset17", "transformer", "y"},
                                           Case{"stack_opset13", "stack", "y"}, Case{"stack_opset17", "stack", "y"}),
                         [](const auto& info) { return info.param.model; });

}  // namespace
}  // namespace fusebox
