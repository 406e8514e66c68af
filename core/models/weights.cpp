#include "core/models/weights.h"

#include <cmath>

namespace fusebox::models {

namespace {

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

double Rng::uniform01() {
  return static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}

double Rng::normal() {
  double sum = 0;
  for (int i = 0; i < 12; ++i) sum += uniform01();
  return sum - 6.0;
}

uint64_t tensor_seed(uint64_t seed, std::string_view name) {
  return splitmix64(seed ^ fnv1a64(name));
}

ir::Tensor uniform_tensor(const ir::Shape& shape, float lo, float hi, uint64_t seed,
                          std::string_view name) {
  ir::Tensor t(ir::DType::f32, shape);
  Rng rng(tensor_seed(seed, name));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(rng.uniform(lo, hi));
  return t;
}

ir::Tensor constant_tensor(const ir::Shape& shape, float value) {
  ir::Tensor t(ir::DType::f32, shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = value;
  return t;
}

ir::Tensor scalar_tensor(float value) {
  return constant_tensor({}, value);
}

void add_linear_weights(ir::Graph& g, const std::string& weight_name, const std::string& bias_name,
                        int64_t in_features, int64_t out_features, uint64_t seed) {
  // std::sqrt is correctly rounded (IEEE 754), so the bound is the same everywhere.
  const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in_features)));
  g.add_weight(weight_name,
               uniform_tensor({out_features, in_features}, -bound, bound, seed, weight_name));
  g.add_weight(bias_name, uniform_tensor({out_features}, -bound, bound, seed, bias_name));
}

const std::string& add_noisy_weight(ir::Graph& g, const std::string& name, const ir::Shape& shape,
                                    float center, float spread, uint64_t seed) {
  return g.add_weight(name, uniform_tensor(shape, center - spread, center + spread, seed, name));
}

const std::string& add_scalar_weight(ir::Graph& g, const std::string& name, float value) {
  return g.add_weight(name, scalar_tensor(value));
}

}  // namespace fusebox::models
