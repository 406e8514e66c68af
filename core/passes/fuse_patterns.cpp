// fuse_patterns: replaces known subgraphs by one fused op (GELU, LayerNorm, LayerNorm after a
// residual Add, Attention, MatMul with a bias and ReLU, MatMul with an added tensor, Conv with a
// BatchNorm or an activation). Each pattern
// lives in its own file and registers itself in the FusionRegistry (fusion_patterns.h); this file
// tries them in order and performs the rewrites, all the same way. Each pattern sweeps the whole
// graph once, in registry order, so a pattern sees what the earlier ones made (bias_relu runs
// before matmul_add takes its MatMul+Add).
#include <algorithm>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/ir/op_schema.h"
#include "core/passes/fusion_patterns.h"
#include "core/passes/pass_manager.h"

namespace fusebox::passes {

// Builtin patterns, one file each, in the order they are tried: a new pattern is its file and a
// row in each list.
void register_gelu_fusion(FusionRegistry& registry);            // erf GELU -> Gelu
void register_layernorm_fusion(FusionRegistry& registry);       // decomposed LayerNorm -> LayerNorm
void register_skip_layernorm_fusion(FusionRegistry& registry);  // Add -> LayerNorm -> SkipLayerNorm
void register_attention_fusion(FusionRegistry& registry);       // MatMul Softmax MatMul -> Attention
void register_matmul_bias_fusions(FusionRegistry& registry);    // -> FusedBiasRelu, MatMulAdd
void register_conv_batchnorm_fusion(FusionRegistry& registry);  // Conv + BatchNorm -> Conv
void register_conv_activation_fusions(FusionRegistry& registry);  // Conv + Relu, Clip, ... -> Conv

FusionRegistry& FusionRegistry::instance() {
  static FusionRegistry* registry = [] {
    auto* r = new FusionRegistry();
    register_gelu_fusion(*r);
    register_layernorm_fusion(*r);
    register_skip_layernorm_fusion(*r);
    register_attention_fusion(*r);
    register_matmul_bias_fusions(*r);
    register_conv_batchnorm_fusion(*r);
    register_conv_activation_fusions(*r);
    return r;
  }();
  return *registry;
}

std::vector<std::pair<size_t, std::string>> operands_from(const GraphUses& uses,
                                                          const ir::Node& node,
                                                          const std::string& op) {
  std::vector<std::pair<size_t, std::string>> out;
  if (node.inputs.size() != 2) return out;
  for (int side : {0, 1})
    if (auto p = uses.produced_by(node.inputs[side], op))
      out.emplace_back(*p, node.inputs[1 - side]);
  return out;
}

std::string check_scalar(const ir::Graph& g, const std::string& tensor, double want,
                         const std::string& what) {
  auto v = scalar_constant(g, tensor);
  if (!v) return what + " is not a scalar constant";
  if (!near(*v, want)) return what + " is " + fmt_num(*v) + ", expected " + fmt_num(want);
  return "";
}

namespace {

// Conditions every pattern shares, checked here so no pattern can forget them: intermediates are
// read only inside the pattern (else the fused node would have to produce them too), and the fused
// node infers to exactly the anchor's output type.
std::string check_match(const ir::Graph& g, const GraphUses& uses, size_t anchor,
                        const FusionMatch& m, const PassContext& ctx) {
  if (*std::max_element(m.nodes.begin(), m.nodes.end()) != anchor)
    return "internal: pattern matched nodes after its anchor";
  for (size_t k : m.nodes) {
    if (k == anchor) continue;
    for (const auto& out : g.nodes[k].outputs) {
      if (g.is_output(out)) return g.nodes[k].name + "'s output is a graph output";
      for (size_t r : uses.readers_of(out))
        if (std::find(m.nodes.begin(), m.nodes.end(), r) == m.nodes.end())
          return g.nodes[k].name + "'s output is also read by " + g.nodes[r].name;
    }
  }
  ir::Node probe{g.nodes[anchor].name, m.op, m.inputs, g.nodes[anchor].outputs, m.attrs};
  std::vector<ir::TensorType> in;
  for (const auto& t : m.inputs) {
    auto w = std::find_if(m.new_weights.begin(), m.new_weights.end(),
                          [&](const auto& nw) { return nw.first == t; });
    if (w != m.new_weights.end())
      in.push_back({w->second.dtype(), w->second.shape()});
    else
      in.push_back({g.tensor(t).dtype, g.tensor(t).shape});
  }
  try {
    auto out = ir::infer_node(probe, in);
    const ir::TensorInfo& want = g.tensor(g.nodes[anchor].outputs[0]);
    if (out[0].shape != want.shape || out[0].dtype != want.dtype)
      return "shapes disagree: " + m.op + " would give " + ir::shape_str(out[0].shape) +
             ", the pattern gives " + ir::shape_str(want.shape);
  } catch (const Error& e) {
    return std::string("shapes disagree: ") + e.what();
  }
  return target_refuses(ctx, m.op, in);  // no op the target cannot run
}

PassResult fuse_patterns(ir::Graph& g, const PassContext& ctx) {
  PassResult r;
  for (const FusionPattern& pattern : FusionRegistry::instance().entries()) {
    if (ctx.disabled_patterns.count(pattern.name))
      continue;  // switched off: no rewrite, no near miss
    // Kept up to date through each rewrite instead of rebuilt, with the node list compacted once
    // per pattern: rebuilding and erasing per rewrite made the pass quadratic
    // (stack:layers=128: 9 s).
    std::optional<LiveUses> live;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].op != pattern.anchor_op) continue;
      if (!live) live.emplace(g);
      const GraphUses& uses = live->uses();
      MatchResult found = pattern.try_match(g, uses, i);
      std::string why = found.near_miss;
      if (found.match && why.empty()) why = check_match(g, uses, i, *found.match, ctx);
      if (!why.empty()) {
        r.near_miss(pattern.name, g.nodes[i].name,
                    pattern.name + " at " + g.nodes[i].name + ": " + why);
        continue;
      }
      if (!found.match) continue;
      FusionMatch& m = *found.match;
      std::sort(m.nodes.begin(), m.nodes.end());
      for (auto& [name, value] : m.new_weights) g.add_weight(name, std::move(value));
      ir::Node fused{
          fused_node_name(g, m.op, g.nodes[m.nodes.front()]), m.op, m.inputs, {}, m.attrs};
      std::vector<std::string> removed;
      for (size_t k : m.nodes) removed.push_back(g.nodes[k].name);
      r.rewrite(pattern.name, removed, {fused.name}, {},
                "fused " + node_list(g, m.nodes) + " -> " + fused.name +
                    (m.note.empty() ? "" : " (" + m.note + ")"));
      live->replace_nodes(g, m.nodes, std::move(fused));  // at the anchor, i: go on after it
      r.changed = true;
    }
    if (live) live->compact(g);
  }
  return r;
}

}  // namespace

void register_fuse_patterns(PassRegistry& registry) {
  registry.add({"fuse_patterns",
                "replaces known subgraphs by fused ops (" +
                    join(FusionRegistry::instance().names(), ", ") + ")",
                fuse_patterns,
                /*to_fixed_point=*/false});
}

}  // namespace fusebox::passes
