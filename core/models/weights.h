#pragma once
// Seeded, platform-independent weight generation for the builtin models.
//
// Every weight tensor gets its own random stream, derived from (seed, tensor name) only, so a
// tensor's values do not change when an unrelated option (another layer's width, the number of
// layers) changes. Streams are std::mt19937_64, whose output sequence the C++ standard fixes
// exactly; the conversion to floating point is done here with plain IEEE arithmetic (no
// std::uniform_real_distribution, no libm calls), so the same seed gives bit-identical weights
// on every platform and standard library.
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "core/ir/graph.h"
#include "core/ir/tensor.h"

namespace fusebox::models {

// The seed the front ends use when the user gives none.
inline constexpr uint64_t kDefaultSeed = 0;

// A random stream: mt19937_64 plus hand-written conversions.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  uint64_t next_u64() { return engine_(); }
  // Uniform in [0, 1): the top 53 bits of one draw, scaled by 2^-53.
  double uniform01();
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  // Approximately standard normal (Irwin-Hall: sum of 12 uniforms minus 6; bounded by +-6).
  // Exact IEEE arithmetic only, so it is reproducible everywhere.
  double normal();

 private:
  std::mt19937_64 engine_;
};

// The stream seed of one named tensor: splitmix64(seed ^ fnv1a64(name)).
uint64_t tensor_seed(uint64_t seed, std::string_view name);

// f32 tensors.
ir::Tensor uniform_tensor(const ir::Shape& shape, float lo, float hi, uint64_t seed,
                          std::string_view name);
ir::Tensor constant_tensor(const ir::Shape& shape, float value);
ir::Tensor scalar_tensor(float value);  // shape [] (a 0-d constant, as exporters emit)

// Adds weights to a graph under `name` (the name also picks the random stream).
// Linear layer in nn.Linear layout: weight [out, in] and bias [out], both U(-1/sqrt(in),
// 1/sqrt(in)).
void add_linear_weights(ir::Graph& g, const std::string& weight_name, const std::string& bias_name,
                        int64_t in_features, int64_t out_features, uint64_t seed);
// Uniform values in [center - spread, center + spread): e.g. LayerNorm gamma 1 +- 0.1.
const std::string& add_noisy_weight(ir::Graph& g, const std::string& name, const ir::Shape& shape,
                                    float center, float spread, uint64_t seed);
const std::string& add_scalar_weight(ir::Graph& g, const std::string& name, float value);

}  // namespace fusebox::models
