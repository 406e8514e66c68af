#pragma once
// Small hand-built graphs that tests in several folders share.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox::testing {

// x[2,8] -> MatMul(x, Transpose(W[4,8])) -> Add(b[4]) -> Relu: one nn.Linear + ReLU as PyTorch's
// exporter writes it (nodes Transpose_0, MatMul_1, Add_2, Relu_3), weights seeded in [-1, 1).
inline ir::Graph linear_relu() {
  auto weight = [](ir::Shape shape, uint64_t seed) {
    ir::Tensor t(ir::DType::f32, std::move(shape));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    return t;
  };
  ir::Graph g;
  g.name = "linear_relu";
  g.add_input("x", ir::DType::f32, {2, 8});
  g.add_weight("W", weight({4, 8}, 1));
  g.add_weight("b", weight({4}, 2));
  ir::Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  std::string wt = g.add_node("Transpose", {"W"}, perm, "Transpose_0");
  std::string mm = g.add_node("MatMul", {"x", wt}, {}, "MatMul_1");
  std::string a = g.add_node("Add", {mm, "b"}, {}, "Add_2");
  g.outputs = {g.add_node("Relu", {a}, {}, "Relu_3")};
  return g;
}

}  // namespace fusebox::testing
