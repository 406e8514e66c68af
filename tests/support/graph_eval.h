#pragma once
// Test support: evaluates a whole graph node by node with exec::evaluate_node on the CPU
// backend, with no planner and no executor involved. Tests use it to compare graphs (e.g. before
// and after a pass) independently of the code that plans and runs them.
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/backend/evaluate.h"
#include "core/ir/graph.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox::testing {

// Seeded inputs for every graph input: f32 uniform in [-1, 1), i64 uniform in [0, i64_max).
inline std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed, int64_t i64_max = 16) {
  std::mt19937_64 rng(seed);
  std::vector<ir::Tensor> out;
  for (const auto& name : g.inputs) {
    const ir::TensorInfo& info = g.tensor(name);
    ir::Tensor t(info.dtype, info.shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (info.dtype == ir::DType::f32)
        t.data<float>()[i] = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
      else
        t.data<int64_t>()[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(i64_max));
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Returns the graph outputs, in g.outputs order.
inline std::vector<ir::Tensor> evaluate_graph(const ir::Graph& g, const std::vector<ir::Tensor>& inputs) {
  static auto backend = cpu::make_backend();
  std::map<std::string, ir::Tensor> values;
  for (size_t i = 0; i < g.inputs.size(); ++i) values[g.inputs[i]] = inputs.at(i);
  for (const auto& [name, info] : g.tensors())
    if (info.kind == ir::TensorKind::Weight) values[name] = *info.value;
  for (const auto& node : g.nodes) {
    std::vector<ir::Tensor> in;
    for (const auto& n : node.inputs) in.push_back(values.at(n));
    std::vector<ir::Tensor> out = exec::evaluate_node(*backend, node, in);
    for (size_t i = 0; i < node.outputs.size(); ++i) values[node.outputs[i]] = out[i];
  }
  std::vector<ir::Tensor> result;
  for (const auto& o : g.outputs) result.push_back(values.at(o));
  return result;
}

// Largest |a-b| / (atol + rtol*|b|) over all elements; <= 1 means within tolerance.
inline double tolerance_ratio(const ir::Tensor& a, const ir::Tensor& b, double atol, double rtol) {
  if (a.shape() != b.shape()) return 1e30;
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.dtype() == ir::DType::f32 ? a.data<float>()[i] : static_cast<double>(a.data<int64_t>()[i]);
    double y = b.dtype() == ir::DType::f32 ? b.data<float>()[i] : static_cast<double>(b.data<int64_t>()[i]);
    double r = std::abs(x - y) / (atol + rtol * std::abs(y));
    if (!(r <= worst)) worst = std::isnan(r) ? 1e30 : r;
  }
  return worst;
}

}  // namespace fusebox::testing
