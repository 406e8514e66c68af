#pragma once
// The builtin models: builders that emit fine-grained primitive ops exactly as the PyTorch ONNX
// exporter (opset < 17) writes them: nn.Linear as Transpose(W) + MatMul + Add, attention with
// explicit head reshapes, transposes and a scalar scale, LayerNorm and GELU spelled out op by op.
// No fused ops: finding the fusions is the optimizer's job, and the workbench shows it doing so.
//
// A model is named by a spec string, "<kind>[:<option>=<value>,...]":
//   mlp                                  784-512-512-10 perceptron, batch 1
//   mlp:dims=784-1024-10,batch=8
//   transformer:seq=128,d=256,heads=4,ffn=1024,batch=1
//   stack:layers=6                       6 encoder blocks chained (default seq 128)
// builtin_model_help() lists every kind and option with its default.
//
//   ir::Graph g = models::build_model("transformer:seq=128", models::kDefaultSeed);
//
// Everything here throws fusebox::Error with a message naming the spec, the option and the value.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/models/weights.h"

namespace fusebox::models {

// Limits that make a spec "absurd" (refused before anything is allocated).
inline constexpr int64_t kMaxModelDim = int64_t{1} << 20;           // any single option value
inline constexpr int64_t kMaxModelLayers = 256;                     // stack layers, mlp layers
inline constexpr double kMaxModelBytes = 4.0 * 1024 * 1024 * 1024;  // weights + activations

// A parsed, validated spec. Every option of the kind is present (defaults filled in).
struct ModelSpec {
  std::string kind;                                          // "mlp", "transformer", "stack"
  std::map<std::string, int64_t> options;                    // integer options
  std::map<std::string, std::vector<int64_t>> list_options;  // e.g. mlp "dims"
  std::string text;                                          // the spec as given (trimmed)

  // An integer option; throws fusebox::Error if the kind has no such option.
  int64_t get(const std::string& option) const;
  // A list option (e.g. "dims"); throws fusebox::Error if the kind has no such option.
  const std::vector<int64_t>& get_list(const std::string& option) const;
  // Every option spelled out in a fixed order: "transformer:seq=64,d=256,heads=4,ffn=1024,batch=1".
  std::string canonical() const;
};

// Parses and validates: kind, option names, integer values, ranges, divisibility, total size.
ModelSpec parse_model_spec(const std::string& text);
// Builds the graph named by `spec` (g.name = the spec text), weights drawn from `seed`.
ir::Graph build_model(const std::string& spec, uint64_t seed);
ir::Graph build_model(const ModelSpec& spec, uint64_t seed);

// "mlp", "transformer", "stack".
std::vector<std::string> builtin_model_names();
// Multi-line help: each kind, what it emits, its options and their defaults.
std::string builtin_model_help();
// True when the text before ':' names a builtin kind (so a front end can tell a spec from a path).
bool is_builtin_model_spec(const std::string& text);

// Bytes of weights and of activations (every intermediate tensor, no reuse: what the naive
// planner would allocate, including view outputs) of the graph a spec builds. Exact for the
// builtin builders; computed from the options alone, before anything is allocated.
struct ModelFootprint {
  double weight_bytes = 0;
  double activation_bytes = 0;  // graph inputs + intermediates
  double total() const { return weight_bytes + activation_bytes; }
};
ModelFootprint model_footprint(const ModelSpec& spec);

// ---- The builders behind the specs (usable directly, e.g. from tests and benchmarks) ----------

struct MlpConfig {
  std::vector<int64_t> dims{784, 512, 512, 10};  // input width, hidden widths..., output width
  int64_t batch = 1;
};
// Input "x" [batch, dims.front()], output "logits" [batch, dims.back()]. Per layer i:
// fc<i>.Transpose(fc<i>.weight [out,in]) -> fc<i>.MatMul -> fc<i>.Add(fc<i>.bias) -> fc<i>.Relu
// (no Relu after the last layer).
ir::Graph build_mlp(const MlpConfig& config, uint64_t seed, const std::string& name = "mlp");

struct TransformerConfig {
  int64_t batch = 1;
  int64_t seq = 64;
  int64_t d = 256;     // model width (d_model)
  int64_t heads = 4;   // d % heads == 0
  int64_t ffn = 1024;  // feed-forward width (dim_feedforward)
};
// One post-LN encoder block, like nn.TransformerEncoderLayer(norm_first=False, activation="gelu",
// dropout=0), appended to `g` reading `x` [batch, seq, d]. Node and weight names start with
// `prefix` ("layer0." or ""). Returns the name of the block's output tensor.
std::string add_encoder_block(ir::Graph& g, const std::string& x, const TransformerConfig& config,
                              const std::string& prefix, uint64_t seed);
// One block: input "x" [batch, seq, d], output "y" [batch, seq, d], names unprefixed
// ("attn.q_proj.MatMul", "attn.q_proj.weight", ...).
ir::Graph build_transformer(const TransformerConfig& config, uint64_t seed,
                            const std::string& name = "transformer");
// `layers` blocks chained, names prefixed "layer0.", "layer1.", ...; input "x", output "y".
ir::Graph build_transformer_stack(const TransformerConfig& config, int64_t layers, uint64_t seed,
                                  const std::string& name = "stack");

}  // namespace fusebox::models
