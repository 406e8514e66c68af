// The seeded weight generator: reproducible from published reference values (the C++ standard's
// mt19937_64 check value, FNV-1a and SplitMix64 test vectors), same seed same weights, different
// seed different weights, PyTorch-like ranges.
#include "core/models/weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "core/ir/graph.h"
#include "core/models/builtin_models.h"

namespace fusebox::models {
namespace {

bool same_bytes(const ir::Tensor& a, const ir::Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
}

TEST(Rng, MatchesTheStandardsMt19937_64) {
  // [rand.predef]: the 10000th invocation of a default-constructed mt19937_64 yields this value.
  Rng rng(5489);
  uint64_t v = 0;
  for (int i = 0; i < 10000; ++i) v = rng.next_u64();
  EXPECT_EQ(v, 9981545732273789042ull);
}

TEST(Rng, Uniform01UsesTheTop53Bits) {
  // First output of mt19937_64 seeded 5489 is 14514284786278117030.
  Rng rng(5489);
  EXPECT_EQ(rng.uniform01(),
            static_cast<double>(14514284786278117030ull >> 11) / 9007199254740992.0);
  for (int i = 0; i < 10000; ++i) {
    double u = rng.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Rng, NormalIsCenteredAndBounded) {
  Rng rng(7);
  double sum = 0, sq = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    double z = rng.normal();
    ASSERT_LE(std::abs(z), 6.0);
    sum += z;
    sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.05);
  EXPECT_NEAR(sq / n, 1.0, 0.05);
}

TEST(Rng, TensorSeedIsSplitMixOfSeedXorFnv) {
  // FNV-1a 64 of "" is its offset basis 0xcbf29ce484222325, so this seed xors to 0, and
  // SplitMix64's first output from state 0 is 0xe220a8397b1dcdaf.
  EXPECT_EQ(tensor_seed(0xcbf29ce484222325ull, ""), 0xe220a8397b1dcdafull);
  // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c.
  EXPECT_EQ(tensor_seed(0xaf63dc4c8601ec8cull, "a"), 0xe220a8397b1dcdafull);
  EXPECT_NE(tensor_seed(1, "fc0.weight"), tensor_seed(1, "fc0.bias"));
  EXPECT_NE(tensor_seed(1, "fc0.weight"), tensor_seed(2, "fc0.weight"));
}

TEST(Weights, UniformTensorIsDeterministicAndInRange) {
  ir::Tensor a = uniform_tensor({3, 5}, -0.5f, 0.25f, 42, "w");
  ir::Tensor b = uniform_tensor({3, 5}, -0.5f, 0.25f, 42, "w");
  EXPECT_TRUE(same_bytes(a, b));
  // Same values as drawing from the tensor's own stream by hand.
  Rng rng(tensor_seed(42, "w"));
  for (int64_t i = 0; i < a.numel(); ++i) {
    float expect = static_cast<float>(-0.5 + 0.75 * rng.uniform01());
    EXPECT_EQ(a.data<float>()[i], expect);
    EXPECT_GE(a.data<float>()[i], -0.5f);
    EXPECT_LE(a.data<float>()[i], 0.25f);
  }
  EXPECT_FALSE(same_bytes(a, uniform_tensor({3, 5}, -0.5f, 0.25f, 43, "w")));
  EXPECT_FALSE(same_bytes(a, uniform_tensor({3, 5}, -0.5f, 0.25f, 42, "v")));
}

TEST(Weights, SameSeedSameWeights) {
  for (const char* spec : {"mlp:dims=16-8-4", "stack:layers=2,seq=4,d=8,heads=2,ffn=16"}) {
    ir::Graph a = build_model(spec, 123);
    ir::Graph b = build_model(spec, 123);
    ASSERT_EQ(a.tensors().size(), b.tensors().size());
    for (const auto& [name, t] : a.tensors()) {
      if (t.kind != ir::TensorKind::Weight) continue;
      ASSERT_TRUE(b.has_tensor(name)) << name;
      EXPECT_TRUE(same_bytes(*t.value, *b.tensor(name).value)) << spec << ": " << name;
    }
  }
}

TEST(Weights, DifferentSeedDifferentWeights) {
  ir::Graph a = build_model("transformer:seq=4,d=8,heads=2,ffn=16", 1);
  ir::Graph b = build_model("transformer:seq=4,d=8,heads=2,ffn=16", 2);
  int random = 0;
  for (const auto& [name, t] : a.tensors()) {
    if (t.kind != ir::TensorKind::Weight) continue;
    const bool constant = t.shape.empty();  // scale, eps, 2, sqrt 2, 1, 0.5: fixed by the model
    EXPECT_EQ(same_bytes(*t.value, *b.tensor(name).value), constant) << name;
    random += !constant;
  }
  EXPECT_EQ(random, 16);  // 12 linear tensors + 2 x (gamma, beta)
}

TEST(Weights, ATensorDependsOnlyOnSeedAndName) {
  // The first layer of an MLP keeps its weights when a later layer changes width.
  ir::Graph a = build_model("mlp:dims=16-8-4", 5);
  ir::Graph b = build_model("mlp:dims=16-8-3", 5);
  EXPECT_TRUE(same_bytes(*a.tensor("fc0.weight").value, *b.tensor("fc0.weight").value));
  // Stack layers get different weights from each other.
  ir::Graph s = build_model("stack:layers=2,seq=4,d=8,heads=2,ffn=16", 5);
  EXPECT_FALSE(same_bytes(*s.tensor("layer0.attn.q_proj.weight").value,
                          *s.tensor("layer1.attn.q_proj.weight").value));
}

TEST(Weights, PyTorchLikeRanges) {
  ir::Graph g = build_model("transformer:seq=4,d=64,heads=4,ffn=256", 9);
  auto check_range = [&](const std::string& name, float lo, float hi) {
    const ir::Tensor& t = *g.tensor(name).value;
    float mn = 1e30f, mx = -1e30f;
    for (int64_t i = 0; i < t.numel(); ++i) {
      mn = std::min(mn, t.data<float>()[i]);
      mx = std::max(mx, t.data<float>()[i]);
    }
    EXPECT_GE(mn, lo) << name;
    EXPECT_LE(mx, hi) << name;
    // Spread over most of the range, not constant.
    EXPECT_LT(mn, lo + 0.2f * (hi - lo)) << name;
    EXPECT_GT(mx, hi - 0.2f * (hi - lo)) << name;
  };
  check_range("attn.q_proj.weight", -0.125f, 0.125f);  // U(-1/sqrt(64), 1/sqrt(64))
  check_range("attn.q_proj.bias", -0.125f, 0.125f);
  check_range("ffn.fc1.weight", -0.125f, 0.125f);
  check_range("ffn.fc2.weight", -0.0625f, 0.0625f);  // in_features = 256
  check_range("norm1.weight", 0.9f, 1.1f);           // gamma near 1
  check_range("norm2.bias", -0.1f, 0.1f);            // beta near 0
}

}  // namespace
}  // namespace fusebox::models
