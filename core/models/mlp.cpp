// The MLP builder: nn.Sequential(Linear, ReLU, ..., Linear) as torch.onnx.export writes it.
// The exporter emits Gemm(x, W, b, transB=1) per nn.Linear; our importer lowers Gemm to
// Transpose(W) + MatMul + Add, and so does this builder, leaving the transpose for the BLAS-flag
// absorption pass and MatMul + Add + Relu for the fusion pass to find.
#include "core/base/error.h"
#include "core/models/builder_util.h"
#include "core/models/builtin_models.h"

namespace fusebox::models {

ir::Graph build_mlp(const MlpConfig& config, uint64_t seed, const std::string& name) {
  if (config.dims.size() < 2)
    throw Error("mlp needs at least 2 dims (input and output width), got " +
                std::to_string(config.dims.size()));
  if (config.batch < 1) throw Error("mlp batch must be >= 1, got " + std::to_string(config.batch));
  for (int64_t d : config.dims)
    if (d < 1) throw Error("mlp dims must be >= 1, got " + std::to_string(d));

  ir::Graph g;
  g.name = name;
  std::string h = g.add_input("x", ir::DType::f32, {config.batch, config.dims.front()});
  const size_t layers = config.dims.size() - 1;
  for (size_t i = 0; i < layers; ++i) {
    const std::string prefix = "fc" + std::to_string(i) + ".";
    h = add_linear(g, h, prefix, config.dims[i], config.dims[i + 1], seed);
    if (i + 1 < layers) h = g.add_node("Relu", {h}, {}, prefix + "Relu");
  }
  rename_tensor(g, h, "logits");
  g.outputs = {"logits"};
  return g;
}

}  // namespace fusebox::models
