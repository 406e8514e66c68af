// The CUDA backend's FusedElementwise: a chain of element-wise ops (the node's `program`, see
// core/ir/elementwise_program.h) interpreted on the device, one thread per output element
// (fused_elementwise_kernels.cu). The same programs, inputs and broadcasting as the CPU's
// (ops/cpu/fused_elementwise.cpp), refused in the same cases: more than 64 instructions, or
// more than 16 intermediate results alive at once.
//
// prepare() builds the parameters with fused_params.h (parse, registers by liveness, byte
// encoding, broadcast walk); run() only launches.
#include <string>
#include <vector>

#include "core/ir/elementwise_program.h"
#include "core/ir/shape.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/fused_elementwise_kernels.h"
#include "ops/cuda/fused_params.h"

namespace fusebox::cuda {

namespace {

std::shared_ptr<const void> prepare_fused(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const int num_inputs = static_cast<int>(ctx.inputs.size());
  std::vector<ir::EwInstr> program;
  try {
    program = parse_fused_program(ctx.node.attrs.get_strings("program"), num_inputs);
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  for (int i = 0; i < num_inputs; ++i) require_dtype(ctx, static_cast<size_t>(i), ir::DType::f32);
  if (ctx.outputs[0].dtype != ir::DType::f32) fail(ctx, "output must be f32");
  std::vector<ir::Shape> shapes;
  for (const auto& t : ctx.inputs) shapes.push_back(t.shape);
  FusedParams p{};
  try {
    p = make_fused_params(program, shapes, ctx.outputs[0].shape);
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  return exec::make_state(p);
}

void run_fused(const exec::KernelArgs& args) {
  launch_fused_elementwise(state_of<FusedParams>(args), args.inputs, args.outputs[0], stream_of(args),
                           shared_of(args).sm_count);
}

}  // namespace

void add_fused_elementwise_kernels(exec::KernelTable& k) {
  k.add("FusedElementwise", exec::KernelDef{prepare_fused, run_fused});
}

}  // namespace fusebox::cuda
