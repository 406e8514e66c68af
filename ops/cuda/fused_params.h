#pragma once
// Host-side (C++20) parameter building for the CUDA FusedElementwise interpreter: the program
// parsed and checked as the CPU checks it, each intermediate result given a register by liveness
// exactly as the CPU assigns its tile registers (so both backends accept and refuse the same
// programs), the instructions encoded as bytes, and the inputs' broadcast walk. Header-only and
// free of the backend, so prepare() and the host test of the interpreter
// (tests/cuda/fused_program_test.cpp) build the very same parameters. Each function throws
// fusebox::Error with the message prepare() reports for the node.
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/elementwise_program.h"
#include "core/ir/shape.h"
#include "ops/cuda/fused_types.h"
#include "ops/cuda/strided_walk.h"

namespace fusebox::cuda {

static_assert(kFusedMaxInstructions == ir::kMaxEwInstructions, "the device program holds what the IR allows");
static_assert(kFusedMaxRegisters == ir::kMaxEwLiveResults, "the device register file holds what the IR allows");
static_assert(kFusedMaxInputs < kFusedRegister && kFusedMaxRegisters < kFusedRegister, "operand bytes");

inline FusedOp fused_device_op(ir::EwOp op) {
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

// The node's program, parsed and validated against its input count.
inline std::vector<ir::EwInstr> parse_fused_program(const std::vector<std::string>& text, int num_inputs) {
  if (static_cast<int>(text.size()) > kFusedMaxInstructions)
    throw Error("program has " + std::to_string(text.size()) + " instructions; the CUDA kernel runs at most " +
                std::to_string(kFusedMaxInstructions) + ": split the chain into several FusedElementwise nodes");
  if (num_inputs > kFusedMaxInputs)
    throw Error(std::to_string(num_inputs) + " inputs; the CUDA kernel takes at most " +
                std::to_string(kFusedMaxInputs));
  return ir::parse_ew_program(text, num_inputs);
}

// Register of each instruction's result by liveness, as every backend assigns them
// (ir::assign_ew_registers).
inline std::vector<int> assign_fused_registers(const std::vector<ir::EwInstr>& program) {
  return ir::assign_ew_registers(program, "the CUDA kernel");
}

// The interpreter's parameters for a parsed program over inputs of `shapes` broadcast to `out`.
inline FusedParams make_fused_params(const std::vector<ir::EwInstr>& program, const std::vector<ir::Shape>& shapes,
                                     const ir::Shape& out) {
  const std::vector<int> reg = assign_fused_registers(program);
  const BroadcastWalk walk = make_broadcast_walk(shapes, out, kFusedMaxDims);
  auto operand = [&](const ir::EwOperand& o) {
    if (o.is_input) return static_cast<uint8_t>(o.index);
    return static_cast<uint8_t>(kFusedRegister | reg[static_cast<size_t>(o.index)]);
  };
  FusedParams p{};
  p.count = static_cast<int32_t>(program.size());
  p.num_inputs = static_cast<int32_t>(shapes.size());
  p.rank = static_cast<int32_t>(walk.dims.size());
  p.numel = ir::numel(out);
  p.index32 = p.numel <= kIndex32Limit;
  for (const auto& s : shapes) p.index32 = p.index32 && ir::numel(s) <= kIndex32Limit;
  for (size_t d = 0; d < walk.dims.size(); ++d) p.dims[d] = walk.dims[d];
  for (size_t i = 0; i < shapes.size(); ++i) p.mask[i] = walk.masks[i];
  for (size_t k = 0; k < program.size(); ++k) {
    const ir::EwInstr& ins = program[k];
    FusedInstr& d = p.program[k];
    d.op = fused_device_op(ins.op);
    d.a = operand(ins.a);
    d.b = ir::ew_is_binary(ins.op) ? operand(ins.b) : d.a;
    d.dst = reg[k] < 0 ? 0 : static_cast<uint8_t>(reg[k]);
  }
  return p;
}

}  // namespace fusebox::cuda
