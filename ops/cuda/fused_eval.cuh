#pragma once
// One output element of a FusedElementwise program: the interpreter's body
// (fused_elementwise_kernels.cu runs it per thread). Plain C++ outside nvcc, so
// tests/cuda/fused_program_test.cpp runs the same interpreter on the host against the CPU kernel.
#include <cstdint>

#include "ops/cuda/broadcast_index.cuh"
#include "ops/cuda/ew_math.cuh"
#include "ops/cuda/fused_types.h"

namespace fusebox::cuda {

FUSEBOX_HD float fused_apply(FusedOp op, float a, float b) {
  switch (op) {
    case FusedOp::Add:
      return ew_add(a, b);
    case FusedOp::Sub:
      return ew_sub(a, b);
    case FusedOp::Mul:
      return ew_mul(a, b);
    case FusedOp::Div:
      return ew_div(a, b);
    case FusedOp::Pow:
      return ew_pow(a, b);
    case FusedOp::Relu:
      return ew_relu(a);
    case FusedOp::Gelu:
      return ew_gelu_erf(a);
    case FusedOp::GeluTanh:
      return ew_gelu_tanh(a);
    case FusedOp::Tanh:
      return ew_tanh(a);
    case FusedOp::Sigmoid:
      return ew_sigmoid(a);
    case FusedOp::Exp:
      return ew_exp(a);
    case FusedOp::Erf:
      return ew_erf(a);
    case FusedOp::Sqrt:
      return ew_sqrt(a);
    case FusedOp::Neg:
      return ew_neg(a);
  }
  return 0.0f;
}

FUSEBOX_HD bool fused_is_binary(FusedOp op) { return op <= FusedOp::Pow; }

// Runs the program for output element i (coordinates idx along the collapsed dims) and returns
// its value. Inputs are read through their broadcast offsets when an instruction names them;
// intermediate results live in `regs` (kFusedMaxRegisters floats, the thread's own).
template <typename I>
FUSEBOX_HD float fused_eval(const FusedParams& p, const float* const* inputs, I i, const I* idx, float* regs) {
  auto load = [&](uint8_t o) -> float {
    if (o & kFusedRegister) return regs[o & 0x7F];
    return inputs[o][masked_offset<kFusedMaxDims>(p.mask[o], i, p.rank, p.dims, idx)];
  };
  const int last = p.count - 1;
  float result = 0.0f;
  for (int k = 0; k <= last; ++k) {
    const FusedInstr ins = p.program[k];
    const float a = load(ins.a);
    const float b = fused_is_binary(ins.op) ? load(ins.b) : 0.0f;
    const float v = fused_apply(ins.op, a, b);
    if (k == last) {
      result = v;
    } else {
      regs[ins.dst] = v;
    }
  }
  return result;
}

}  // namespace fusebox::cuda
