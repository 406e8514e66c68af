// winograd: 3x3 stride-1 convs as Winograd F(2x2, 3x3) (core/ir/conv_params.h, the CPU kernel in
// ops/cpu/conv_winograd.cpp).
//
// A channels-last conv (NhwcConv, from channels_last) with a 3x3 kernel, stride 1, no dilation, one
// group and a constant weight is marked winograd = 1: the kernel then computes each 2x2 block of
// outputs from a 4x4 block of input in Winograd's transformed domain, 16 multiplies per channel
// pair where the direct conv does 36. Each mark is a rewrite saying what it saves; a 3x3 conv of
// one group that is not marked (a stride, a dilation, a stem reading its input channels-first) is
// a near miss saying why. The node's FLOPs (its schema) become the Winograd kernel's own, so the
// profiler's GFLOP/s and roofline stay the arithmetic the machine does.
#include <cstdio>
#include <string>

#include "core/ir/conv_params.h"
#include "core/passes/pass_manager.h"

namespace fusebox::passes {

namespace {

constexpr const char* kPattern = "winograd";

std::string mflop(double flops) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", flops / 1e6);
  return buf;
}

PassResult winograd(ir::Graph& g, const PassContext&) {
  PassResult r;
  for (ir::Node& n : g.nodes) {
    if (n.op != "NhwcConv" || ir::wants_winograd(n) || n.inputs.size() < 2 || n.outputs.size() != 1) continue;
    if (!g.is_weight(n.inputs[1])) continue;  // channels_last converts only convs with a constant weight
    const ir::TensorInfo& x = g.tensor(n.inputs[0]);
    const ir::Shape* bias = n.inputs.size() > 2 && !n.inputs[2].empty() ? &g.tensor(n.inputs[2]).shape : nullptr;
    const ir::ConvShape c =
        ir::conv_shape(n, ir::nhwc_conv_input_as_channels_first(n, x.shape), g.tensor(n.inputs[1]).shape, bias);
    const bool three_by_three = c.g.in.size() == 2 && c.g.kernel[0] == 3 && c.g.kernel[1] == 3 && c.group == 1;
    if (!three_by_three) continue;  // 1x1, depthwise, stems: the GEMM or their own loops
    if (std::string why = ir::winograd_refusal(n, c); !why.empty()) {
      r.near_miss(kPattern, n.name, n.name + " stays on the im2col GEMM: " + why);
      continue;
    }
    const double direct = 2.0 * static_cast<double>(c.g.batch * c.g.out_size() * c.c_out * c.k());
    n.attrs.set("winograd", int64_t{1});
    const double wino = ir::winograd_flops(c);
    r.rewrite(kPattern, {}, {}, {n.name},
              n.name + ": 3x3 conv " + std::to_string(c.c_in) + " -> " + std::to_string(c.c_out) + " channels over " +
                  std::to_string(c.g.out[0]) + "x" + std::to_string(c.g.out[1]) + " as Winograd F(2x2, 3x3): 16 GEMMs over " +
                  std::to_string(c.g.batch * ir::winograd_tiles(c)) + " tiles, " + mflop(direct) + " -> " + mflop(wino) +
                  " MFLOP a run (transforms included)");
  }
  r.changed = !r.rewrites.empty();
  return r;
}

}  // namespace

void register_winograd(PassRegistry& registry) {
  registry.add({"winograd",
                "3x3 stride-1 channels-last convs as Winograd F(2x2, 3x3): each 2x2 block of outputs from a "
                "4x4 block of input in the transformed domain, 16 GEMMs with 2.25x fewer multiplies than the "
                "im2col GEMM",
                winograd, /*to_fixed_point=*/false});
}

}  // namespace fusebox::passes
