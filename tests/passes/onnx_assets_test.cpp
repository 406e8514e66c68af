// The invariant on real exporter output: the PyTorch-exported assets (opset 13 and 17) through
// every subset of the passes verify and compute what the unoptimized import computes.
#include <filesystem>
#include <iostream>

#include "core/base/strings.h"
#include "core/models/onnx_import.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

class OnnxAssetPassSubsets : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxAssetPassSubsets, VerifyAndComputeTheSameOutputs) {
  const std::string path = asset_path(GetParam());
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  const ir::Graph original = import_asset(GetParam());
  const auto inputs = fusebox::testing::random_inputs(original, 5);
  const auto want = fusebox::testing::evaluate_graph(original, inputs);
  const std::vector<std::string> names = PassRegistry::instance().names();
  for (unsigned mask = 0; mask < (1u << names.size()); ++mask) {
    std::vector<std::string> enabled;
    for (size_t i = 0; i < names.size(); ++i)
      if (mask & (1u << i)) enabled.push_back(names[i]);
    SCOPED_TRACE("passes: " + (enabled.empty() ? std::string("none") : join(enabled, ",")));
    ir::Graph g = original;
    ASSERT_NO_THROW(run_pipeline(g, enabled, cpu_context()));
    auto got = fusebox::testing::evaluate_graph(g, inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_LE(fusebox::testing::tolerance_ratio(got[i], want[i], 1e-4, 1e-4), 1.0)
          << "output " << g.outputs[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Assets, OnnxAssetPassSubsets,
                         ::testing::Values("mlp_opset13.onnx", "mlp_opset17.onnx",
                                           "transformer_opset13.onnx", "transformer_opset17.onnx",
                                           "stack_opset13.onnx", "stack_opset17.onnx",
                                           "decoder_opset13.onnx", "decoder_opset17.onnx",
                                           "decoder_nomask_opset13.onnx",
                                           "decoder_nomask_opset17.onnx"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// The --explain logs of the opset-13 assets, for reading: run with
// --gtest_also_run_disabled_tests --gtest_filter='*PrintLogs*'.
TEST(OnnxAssets, DISABLED_PrintLogs) {
  for (const char* name : {"mlp_opset13.onnx", "transformer_opset13.onnx"}) {
    ir::Graph g = import_asset(name);
    std::cout << "== " << name << "\n"
              << run_pipeline(g, parse_pass_list("all"), cpu_context()).to_text();
  }
}

}  // namespace
}  // namespace fusebox::passes::test
