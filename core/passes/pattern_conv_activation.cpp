// Conv followed by an activation: the Conv applies it to each output before storing it, while
// the output tile is in cache (ReLU and sigmoid in the GEMM's registers), so the activation
// never rereads the output (core/ir/conv_params.h: ConvActivation).
//   Conv + Relu        -> Conv(activation = relu)
//   Conv + Clip        -> Conv(activation = clip, activation_min/max)   (ReLU6 is Clip [0, 6])
//   Conv + HardSwish   -> Conv(activation = hardswish)
//   Conv + HardSigmoid -> Conv(activation = hardsigmoid, activation_alpha/beta)
//   Conv + Sigmoid     -> Conv(activation = sigmoid)
// Registered after conv_batchnorm, so Conv + BatchNorm + Relu folds the BatchNorm first.
#include <limits>

#include "core/ir/conv_params.h"
#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

namespace {

TryMatchFn match_conv_activation(const std::string& kind) {
  return [kind](const ir::Graph& g, const GraphUses& uses, size_t anchor) {
    const ir::Node& act = g.nodes[anchor];
    auto conv_index = uses.produced_by(act.inputs[0], "Conv");
    if (!conv_index) return MatchResult::none();
    const ir::Node& conv = g.nodes[*conv_index];
    const std::string& y = conv.outputs[0];
    if (conv.attrs.has("activation"))
      return MatchResult::miss(conv.name + " already applies " +
                               ir::conv_activation_text(ir::conv_activation(conv)) + "; a Conv applies one activation");
    if (!uses.only_read_by(y, anchor)) return MatchResult::miss(conv.name + "'s output is " + uses.other_uses(y, anchor));
    FusionMatch m;
    m.nodes = {*conv_index, anchor};
    m.op = "Conv";
    m.inputs = conv.inputs;
    m.attrs = conv.attrs;
    m.attrs.set("activation", kind);
    const double inf = std::numeric_limits<double>::infinity();
    if (kind == "clip") {
      m.attrs.set("activation_min", act.attrs.get_float("min", -inf));
      m.attrs.set("activation_max", act.attrs.get_float("max", inf));
    } else if (kind == "hardsigmoid") {
      m.attrs.set("activation_alpha", act.attrs.get_float("alpha", 0.2));
      m.attrs.set("activation_beta", act.attrs.get_float("beta", 0.5));
    }
    ir::Node probe{conv.name, "Conv", {}, {}, m.attrs};
    m.note = ir::conv_activation_text(ir::conv_activation(probe)) + " in the Conv's store";
    return MatchResult::found(std::move(m));
  };
}

}  // namespace

void register_conv_activation_fusions(FusionRegistry& registry) {
  registry.add({"conv_relu", "Conv + Relu -> Conv applying ReLU as it stores", "Relu", match_conv_activation("relu")});
  registry.add({"conv_clip", "Conv + Clip (ReLU6) -> Conv clipping as it stores", "Clip", match_conv_activation("clip")});
  registry.add({"conv_hardswish", "Conv + HardSwish -> Conv applying HardSwish as it stores", "HardSwish",
                match_conv_activation("hardswish")});
  registry.add({"conv_hardsigmoid", "Conv + HardSigmoid -> Conv applying HardSigmoid as it stores", "HardSigmoid",
                match_conv_activation("hardsigmoid")});
  registry.add({"conv_sigmoid", "Conv + Sigmoid -> Conv applying sigmoid as it stores", "Sigmoid",
                match_conv_activation("sigmoid")});
}

}  // namespace fusebox::passes
