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

// The interpreter's register file. A register array indexed by a run-time slot (an instruction's
// operand) is put by nvcc in the thread's local-memory stack frame (64 bytes, an off-chip load or
// store per access). Here every access is an unrolled compare-and-select over all the slots, so
// each slot's index is a compile-time constant and the file stays in hardware registers: 16
// selects per access, cheaper than a local-memory round trip. A slot out of range reads 0 and
// writes nothing (prepare() never emits one).
struct FusedRegisters {
  float r[kFusedMaxRegisters] = {};

  FUSEBOX_HD float get(int slot) const {
    float v = 0.0f;
    FUSEBOX_UNROLL
    for (int j = 0; j < kFusedMaxRegisters; ++j) {
      if (j == slot) v = r[j];
    }
    return v;
  }
  FUSEBOX_HD void set(int slot, float v) {
    FUSEBOX_UNROLL
    for (int j = 0; j < kFusedMaxRegisters; ++j) {
      if (j == slot) r[j] = v;
    }
  }
};

// Runs the program for output element i (coordinates idx along the collapsed dims) and returns
// its value. Inputs are read through their broadcast offsets when an instruction names them;
// intermediate results live in `regs` (the thread's own).
template <typename I>
FUSEBOX_HD float fused_eval(const FusedParams& p, const float* const* inputs, I i, const I* idx, FusedRegisters& regs) {
  auto load = [&](uint8_t o) -> float {
    if (o & kFusedRegister) return regs.get(o & 0x7F);
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
      regs.set(ins.dst, v);
    }
  }
  return result;
}

}  // namespace fusebox::cuda
