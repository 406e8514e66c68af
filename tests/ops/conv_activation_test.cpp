// Conv with a fused activation (the conv_activation patterns' rewrite): on the GEMM path (ReLU and
// sigmoid in the GEMM's store, the others over the tile), the pointwise path and the depthwise
// loop, on every Isa level this CPU runs, it equals the activation applied in double to the plain
// Conv's output (the plain Conv is checked against direct loops in conv_test.cpp).
#include <cmath>

#include "core/ir/conv_params.h"
#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

struct Act {
  const char* name;
  ir::Attributes attrs;  // the activation attributes a Conv carries
  double (*f)(double, const ir::Attributes&);
};

std::vector<Act> activations() {
  return {
      {"relu", attrs_of({{"activation", std::string("relu")}}), [](double v, const ir::Attributes&) {
         return v < 0 ? 0.0 : v;
       }},
      {"sigmoid", attrs_of({{"activation", std::string("sigmoid")}}),
       [](double v, const ir::Attributes&) { return 1.0 / (1.0 + std::exp(-v)); }},
      {"clip", attrs_of({{"activation", std::string("clip")}, {"activation_min", 0.0}, {"activation_max", 0.75}}),
       [](double v, const ir::Attributes& a) {
         return std::min(std::max(v, a.get_float("activation_min", 0)), a.get_float("activation_max", 0));
       }},
      {"hardsigmoid",
       attrs_of({{"activation", std::string("hardsigmoid")}, {"activation_alpha", 0.3}, {"activation_beta", 0.4}}),
       [](double v, const ir::Attributes& a) {
         return std::min(1.0, std::max(0.0, a.get_float("activation_alpha", 0) * v + a.get_float("activation_beta", 0)));
       }},
      {"hardswish", attrs_of({{"activation", std::string("hardswish")}}),
       [](double v, const ir::Attributes&) { return v * std::min(1.0, std::max(0.0, v / 6.0 + 0.5)); }},
  };
}

struct Layer {
  const char* what;
  Shape x, w;
  ir::Attributes attrs;
};

TEST(ConvActivation, EqualsTheActivationOfThePlainConvOnEveryPath) {
  using V = std::vector<int64_t>;
  const std::vector<Layer> layers{
      {"3x3 (im2col + GEMM)", {1, 5, 9, 11}, {7, 5, 3, 3}, attrs_of({{"pads", V{1, 1, 1, 1}}})},
      // K 873, several of the GEMM's K blocks: the activation and bias belong to the last one only.
      {"3x3, K 873", {1, 97, 4, 5}, {9, 97, 3, 3}, attrs_of({{"pads", V{1, 1, 1, 1}}})},
      {"1x1 (pointwise GEMM)", {2, 8, 6, 6}, {12, 8, 1, 1}, {}},
      {"depthwise 3x3", {1, 6, 10, 21}, {6, 1, 3, 3}, attrs_of({{"group", int64_t{6}}, {"pads", V{1, 1, 1, 1}}})},
  };
  std::mt19937 rng(81);
  for (const Layer& l : layers) {
    // Inputs of scale 3, so every activation's bends and saturations are crossed.
    Tensor x = random_f32(l.x, rng, -3.0f, 3.0f), w = random_f32(l.w, rng, -0.5f, 0.5f);
    Tensor b = random_f32({l.w[0]}, rng);
    const Tensor plain = run1("Conv", {x, w, b}, l.attrs);
    for (const Act& act : activations()) {
      ir::Attributes attrs = l.attrs;
      for (const auto& [k, v] : act.attrs.all()) attrs.set(k, v);
      std::vector<double> want(static_cast<size_t>(plain.numel()));
      for (int64_t i = 0; i < plain.numel(); ++i) want[static_cast<size_t>(i)] = act.f(at(plain, i), attrs);
      for (cpu::Isa isa : runnable_isas()) {
        ScopedIsa scoped(isa);
        for (int threads : {1, 2})
          expect_close(run1("Conv", {x, w, b}, attrs, threads), plain.shape(), want, 1e-5, 1e-5,
                       std::string(l.what) + " + " + act.name + " on " + cpu::isa_name(isa) + " at " +
                           std::to_string(threads) + " threads");
      }
    }
  }
}

TEST(ConvActivation, AnUnknownActivationIsRefusedNamingIt) {
  ir::Node node = make_node("Conv", 2, 1, attrs_of({{"activation", std::string("gelu")}}));
  try {
    ir::infer_node(node, {{DType::f32, {1, 2, 4, 4}}, {DType::f32, {3, 2, 3, 3}}});
    ADD_FAILURE() << "accepted activation 'gelu'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("activation 'gelu' is not one a Conv applies"), std::string::npos)
        << e.what();
  }
}

TEST(ConvActivation, CountsTheActivationsFlops) {
  const std::vector<ir::TensorType> in{{DType::f32, {1, 2, 4, 4}}, {DType::f32, {3, 2, 1, 1}}};
  const std::vector<ir::TensorType> out{{DType::f32, {1, 3, 4, 4}}};
  ir::Node plain = make_node("Conv", 2, 1, {});
  ir::Node fused = make_node("Conv", 2, 1, attrs_of({{"activation", std::string("hardswish")}}));
  EXPECT_DOUBLE_EQ(ir::node_cost(fused, in, out).flops - ir::node_cost(plain, in, out).flops, 4.0 * 48);
}

}  // namespace
}  // namespace fusebox::optest
