// THE invariant: any subset of the passes, on the builtin models, leaves a graph that verifies
// and computes what the unoptimized graph computes (atol 1e-4, rtol 1e-4).
#include <iostream>

#include "core/base/strings.h"
#include "core/ir/verifier.h"
#include "core/models/builtin_models.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

class EveryPassSubset : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPassSubset, VerifiesAndComputesTheSameOutputs) {
  const ir::Graph original = models::build_model(GetParam(), 11);
  const auto inputs = fusebox::testing::random_inputs(original, 5);
  const auto want = fusebox::testing::evaluate_graph(original, inputs);
  const std::vector<std::string> names = PassRegistry::instance().names();
  ASSERT_EQ(names.size(), 9u);
  for (unsigned mask = 0; mask < (1u << names.size()); ++mask) {
    std::vector<std::string> enabled;
    for (size_t i = 0; i < names.size(); ++i)
      if (mask & (1u << i)) enabled.push_back(names[i]);
    SCOPED_TRACE("passes: " + (enabled.empty() ? std::string("none") : join(enabled, ",")));
    ir::Graph g = original;
    ASSERT_NO_THROW(run_pipeline(g, enabled, cpu_context()));
    ASSERT_NO_THROW(ir::verify(g));
    ASSERT_EQ(g.outputs, original.outputs);
    auto got = fusebox::testing::evaluate_graph(g, inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_LE(fusebox::testing::tolerance_ratio(got[i], want[i], 1e-4, 1e-4), 1.0)
          << "output " << g.outputs[i];
  }
}

INSTANTIATE_TEST_SUITE_P(BuiltinModels, EveryPassSubset,
                         ::testing::Values("mlp:dims=64-32-10,batch=2",
                                           "transformer:seq=8,d=32,heads=4,ffn=64",
                                           "stack:layers=2,seq=8,d=32,heads=2,ffn=64"),
                         [](const auto& info) {
                           return std::string(1, "mts"[info.index]) + "_" +
                                  std::to_string(info.index);
                         });

TEST(DefaultTransformer, AllPassesHalveTheNodesAndFindTheFusions) {
  const ir::Graph original = models::build_model("transformer", models::kDefaultSeed);
  ir::Graph g = original;
  PassLog log = run_pipeline(g, parse_pass_list("all"), cpu_context());
  EXPECT_LE(g.nodes.size() * 2, original.nodes.size()) << log.to_text();
  auto ops = g.op_histogram();
  EXPECT_GE(ops["Attention"], 1) << log.to_text();
  EXPECT_GE(ops["SkipLayerNorm"], 2) << log.to_text();  // post-LN: both follow a residual Add
  EXPECT_GE(ops["MatMulAdd"], 1) << log.to_text();
  bool gelu = ops["Gelu"] + ops["FusedBiasGelu"] >= 1;
  for (const auto& n : g.nodes)
    if (n.op == "FusedElementwise")
      for (const auto& instr : n.attrs.get_strings("program"))
        gelu = gelu || instr.rfind("Gelu", 0) == 0;
  EXPECT_TRUE(gelu) << log.to_text();
  expect_same_outputs(original, g, 3);
}

// The --explain log of the default transformer, for reading: run with
// --gtest_also_run_disabled_tests --gtest_filter='*PrintLog*'.
TEST(DefaultTransformer, DISABLED_PrintLog) {
  ir::Graph g = models::build_model("transformer", models::kDefaultSeed);
  std::cout << run_pipeline(g, parse_pass_list("all"), cpu_context()).to_text();
}

}  // namespace
}  // namespace fusebox::passes::test
