// Generation with a KV cache (app/workbench/generation.h) against PyTorch's greedy loop over the
// same module: assets/models/gpt_small_opset17.onnx with the tokens and per-step logits PyTorch
// made for its prompt (export_models.py's export_gpt_small), and the same weights with a stacked
// cache (gpt_small_stacked_opset17.onnx). The same check at GPT-2's vocabulary
// is tests/onnx/generate_test.py (CTest generate_gpt, where python3-torch is installed).
#include "app/workbench/generation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/npy.h"

namespace fusebox::workbench {
namespace {

const std::string kDir = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/";

std::vector<int64_t> ids_of(const std::string& file) {
  const ir::Tensor t = ir::read_npy(kDir + file);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

GenerateOptions small(int threads) {
  GenerateOptions o;
  o.settings.model = kDir + "gpt_small_opset17.onnx";
  o.settings.threads = threads;
  o.prompt = ids_of("gpt_small.prompt.npy");
  o.tokens = 16;
  return o;
}

TEST(Generation, MatchesPyTorchsGreedyLoopTokenForTokenAndStepForStep) {
  const std::vector<int64_t> want = ids_of("gpt_small.tokens.npy");
  const ir::Tensor want_logits = ir::read_npy(kDir + "gpt_small.logits.npy");
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::vector<std::string> seen;
    const Generation g = generate(small(threads), [&](const GenerationStep& s) { seen.push_back(s.phase); });
    EXPECT_EQ(g.tokens, want);
    EXPECT_EQ(g.mapping.how, "Hugging Face / Optimum names (past_key_values.* -> present.*)");
    ASSERT_EQ(g.mapping.pairs.size(), 4u);
    EXPECT_EQ(g.mapping.pairs[3], std::make_pair(std::string("past_key_values.1.value"), std::string("present.1.value")));
    EXPECT_EQ(g.mapping.axis, std::vector<int>(4, 2));
    ASSERT_EQ(g.vocab, 512);
    ASSERT_EQ(g.logits.size(), static_cast<size_t>(want_logits.numel()));
    double worst = 0;
    for (size_t i = 0; i < g.logits.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::fabs(g.logits[i] - want_logits.data<float>()[i])));
    EXPECT_LE(worst, 1e-4);
    // One prefill over the 6 prompt tokens, then one decode step per token from cache length 6.
    ASSERT_EQ(g.steps.size(), 16u);
    std::vector<std::string> phases(16, "decode");
    phases[0] = "prefill";
    EXPECT_EQ(seen, phases);  // the callback saw each step as it ended
    EXPECT_EQ(g.steps[0].phase, "prefill");
    EXPECT_EQ(g.steps[0].seq, 6);
    for (size_t i = 1; i < g.steps.size(); ++i) {
      EXPECT_EQ(g.steps[i].phase, "decode");
      EXPECT_EQ(g.steps[i].past, static_cast<int64_t>(5 + i));
      EXPECT_EQ(g.steps[i].seq, 1);
      // 2 layers x (key, value) x 2 heads x 16 floats a position.
      EXPECT_EQ(g.steps[i].kv_bytes, (g.steps[i].past + 1) * 2 * 2 * 2 * 16 * 4);
    }
    EXPECT_GT(g.tokens_per_s, 0);
    EXPECT_LE(g.decode_p10_ms, g.decode_median_ms);
    EXPECT_LE(g.decode_median_ms, g.decode_p90_ms);
  }
}

// The same weights with the cache as one tensor [2 * layers, batch, heads, past, head_dim]: found
// by its names, its cache length on axis 3, and the same tokens.
TEST(Generation, AStackedCacheTensorIsFoundAndGivesTheSameTokens) {
  GenerateOptions o = small(1);
  o.settings.model = kDir + "gpt_small_stacked_opset17.onnx";
  const Generation g = generate(o);
  EXPECT_EQ(g.mapping.how, "one stacked cache tensor ('past' -> 'present')");
  EXPECT_EQ(g.mapping.axis, std::vector<int>{3});
  EXPECT_EQ(g.tokens, ids_of("gpt_small.tokens.npy"));
  EXPECT_EQ(g.steps.back().kv_bytes, (g.steps.back().past + 1) * 2 * 2 * 2 * 16 * 4);
}

TEST(Generation, CachePairsGivenByHandMustNameTheModelsInputsAndOutputs) {
  const std::string model = kDir + "gpt_small_opset17.onnx";
  const KvMapping k = find_kv_mapping(model, {{"past_key_values.0.key", "present.0.key"},
                                              {"past_key_values.0.value", "present.0.value"},
                                              {"past_key_values.1.key", "present.1.key"},
                                              {"past_key_values.1.value", "present.1.value"}});
  EXPECT_EQ(k.how, "given by --kv");
  EXPECT_EQ(k.ids, "input_ids");
  EXPECT_EQ(k.logits, "logits");
  try {
    find_kv_mapping(model, {{"past_key_values.0.key", "present.9.key"}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no output 'present.9.key'"), std::string::npos) << e.what();
  }
  // Half the cache given by hand leaves the other half unfed: an input generate cannot fill.
  try {
    find_kv_mapping(model, {{"past_key_values.0.key", "present.0.key"}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not know what to feed inputs 'past_key_values.0.value'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fusebox::workbench
