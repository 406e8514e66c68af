// The CUDA backend's FusedElementwise: a chain of element-wise ops (the node's `program`, see
// core/ir/elementwise_program.h) interpreted on the device, one thread per output element
// (fused_elementwise_kernels.cu). The same programs, inputs and broadcasting as the CPU's
// (ops/cpu/fused_elementwise.cpp), refused in the same cases: more than 64 instructions, or
// more than 16 intermediate results alive at once.
//
// prepare() parses the program, assigns each intermediate result a register by liveness (a
// register is reused once its last reader has run, exactly as the CPU assigns its tile
// registers, so both backends accept the same programs), encodes the instructions as bytes and
// builds the broadcast walk of the inputs; run() only launches.
#include <string>
#include <vector>

#include "core/ir/elementwise_program.h"
#include "core/ir/shape.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/fused_elementwise_kernels.h"
#include "ops/cuda/strided_walk.h"

namespace fusebox::cuda {

namespace {

static_assert(kFusedMaxInstructions == ir::kMaxEwInstructions, "the device program holds what the IR allows");
static_assert(kFusedMaxRegisters == ir::kMaxEwLiveResults, "the device register file holds what the IR allows");
static_assert(kFusedMaxInputs < kFusedRegister && kFusedMaxRegisters < kFusedRegister, "operand bytes");

FusedOp device_op(ir::EwOp op) {
  switch (op) {
    case ir::EwOp::Add:
      return FusedOp::Add;
    case ir::EwOp::Sub:
      return FusedOp::Sub;
    case ir::EwOp::Mul:
      return FusedOp::Mul;
    case ir::EwOp::Div:
      return FusedOp::Div;
    case ir::EwOp::Pow:
      return FusedOp::Pow;
    case ir::EwOp::Relu:
      return FusedOp::Relu;
    case ir::EwOp::Gelu:
      return FusedOp::Gelu;
    case ir::EwOp::GeluTanh:
      return FusedOp::GeluTanh;
    case ir::EwOp::Tanh:
      return FusedOp::Tanh;
    case ir::EwOp::Sigmoid:
      return FusedOp::Sigmoid;
    case ir::EwOp::Exp:
      return FusedOp::Exp;
    case ir::EwOp::Erf:
      return FusedOp::Erf;
    case ir::EwOp::Sqrt:
      return FusedOp::Sqrt;
    case ir::EwOp::Neg:
      return FusedOp::Neg;
  }
  throw Error("internal: unknown element-wise op");
}

// Register of each instruction's result by liveness (the last instruction's is -1: it writes
// the output). Instruction k takes a free register, never one of its own operands' (freed only
// after it is assigned), and its operands' registers are freed after their last reader.
std::vector<int> assign_registers(const exec::KernelContext& ctx, const std::vector<ir::EwInstr>& program) {
  const int count = static_cast<int>(program.size());
  std::vector<int> last_use(count, -1);
  for (int k = 0; k < count; ++k) {
    const ir::EwInstr& ins = program[k];
    if (!ins.a.is_input) last_use[ins.a.index] = k;
    if (ir::ew_is_binary(ins.op) && !ins.b.is_input) last_use[ins.b.index] = k;
  }
  std::vector<int> reg(count, -1), free_regs;
  int used = 0;
  for (int k = 0; k + 1 < count; ++k) {
    if (free_regs.empty()) {
      if (used == kFusedMaxRegisters)
        fail(ctx, "program keeps more than " + std::to_string(kFusedMaxRegisters) +
                      " intermediate results alive at once (at instruction " + std::to_string(k) +
                      "); the CUDA kernel supports " + std::to_string(kFusedMaxRegisters) +
                      ": split the chain into several FusedElementwise nodes");
      free_regs.push_back(used++);
    }
    reg[k] = free_regs.back();
    free_regs.pop_back();
    for (int j = 0; j <= k; ++j)
      if (last_use[j] == k || (j == k && last_use[j] < 0)) free_regs.push_back(reg[j]);
  }
  return reg;
}

uint8_t operand_byte(const ir::EwOperand& o, const std::vector<int>& reg) {
  if (o.is_input) return static_cast<uint8_t>(o.index);
  return static_cast<uint8_t>(kFusedRegister | reg[static_cast<size_t>(o.index)]);
}

std::shared_ptr<const void> prepare_fused(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  const std::vector<std::string> text = ctx.node.attrs.get_strings("program");
  if (static_cast<int>(text.size()) > kFusedMaxInstructions)
    fail(ctx, "program has " + std::to_string(text.size()) + " instructions; the CUDA kernel runs at most " +
                  std::to_string(kFusedMaxInstructions) + ": split the chain into several FusedElementwise nodes");
  const int num_inputs = static_cast<int>(ctx.inputs.size());
  if (num_inputs > kFusedMaxInputs)
    fail(ctx, std::to_string(num_inputs) + " inputs; the CUDA kernel takes at most " + std::to_string(kFusedMaxInputs));
  std::vector<ir::EwInstr> program;
  try {
    program = ir::parse_ew_program(text, num_inputs);
  } catch (const Error& e) {
    fail(ctx, e.what());
  }
  for (int i = 0; i < num_inputs; ++i) require_dtype(ctx, static_cast<size_t>(i), ir::DType::f32);
  if (ctx.outputs[0].dtype != ir::DType::f32) fail(ctx, "output must be f32");
  const std::vector<int> reg = assign_registers(ctx, program);

  std::vector<ir::Shape> shapes;
  for (const auto& t : ctx.inputs) shapes.push_back(t.shape);
  const ir::Shape& out = ctx.outputs[0].shape;
  BroadcastWalk walk;
  try {
    walk = make_broadcast_walk(shapes, out, kFusedMaxDims);
  } catch (const Error& e) {
    fail(ctx, e.what());
  }

  FusedParams p{};
  p.count = static_cast<int32_t>(program.size());
  p.num_inputs = num_inputs;
  p.rank = static_cast<int32_t>(walk.dims.size());
  p.numel = ir::numel(out);
  p.index32 = p.numel <= kIndex32Limit;
  for (const auto& s : shapes) p.index32 = p.index32 && ir::numel(s) <= kIndex32Limit;
  for (size_t d = 0; d < walk.dims.size(); ++d) p.dims[d] = walk.dims[d];
  for (int i = 0; i < num_inputs; ++i) p.mask[i] = walk.masks[static_cast<size_t>(i)];
  for (size_t k = 0; k < program.size(); ++k) {
    const ir::EwInstr& ins = program[k];
    FusedInstr& d = p.program[k];
    d.op = device_op(ins.op);
    d.a = operand_byte(ins.a, reg);
    d.b = ir::ew_is_binary(ins.op) ? operand_byte(ins.b, reg) : d.a;
    d.dst = reg[k] < 0 ? 0 : static_cast<uint8_t>(reg[k]);
  }
  return exec::make_state(p);
}

void run_fused(const exec::KernelArgs& args) {
  launch_fused_elementwise(state_of<FusedParams>(args), args.inputs, args.outputs[0], stream_of(args),
                           shared_of(args).sm_count);
}

}  // namespace

void add_fused_elementwise_kernels(CudaKernels& k) {
  k.add("FusedElementwise", exec::KernelDef{prepare_fused, run_fused});
}

}  // namespace fusebox::cuda
