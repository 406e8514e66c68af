#pragma once
// The parameters of the FusedElementwise interpreter (fused_elementwise_kernels.h declares its
// launcher): plain C++17 with no CUDA or core headers, so host code and host tests
// (tests/cuda/fused_program_test.cpp) use them on machines without a CUDA toolkit.
#include <cstddef>
#include <cstdint>

namespace fusebox::cuda {

inline constexpr int kFusedMaxDims = 8;           // collapsed broadcast dims (more are refused)
inline constexpr int kFusedMaxInputs = 64;        // the schema's max_inputs
inline constexpr int kFusedMaxInstructions = 64;  // ir::kMaxEwInstructions
inline constexpr int kFusedMaxRegisters = 16;     // ir::kMaxEwLiveResults: live intermediate results

enum class FusedOp : uint8_t { Add, Sub, Mul, Div, Pow, Relu, Gelu, GeluTanh, Tanh, Sigmoid, Exp, Erf, Sqrt, Neg };

// An operand byte: input N (0..63) or, with kFusedRegister set, register N (0..15).
inline constexpr uint8_t kFusedRegister = 0x80;

struct FusedInstr {
  FusedOp op;
  uint8_t a;    // operand
  uint8_t b;    // operand; unused by unary ops
  uint8_t dst;  // register of the result; the last instruction writes the output instead
};

struct FusedParams {
  int32_t count;       // instructions, 1..kFusedMaxInstructions
  int32_t num_inputs;  // 1..kFusedMaxInputs
  int32_t rank;        // collapsed output dims
  bool index32;        // every tensor has at most kIndex32Limit elements
  int64_t numel;       // output elements
  int64_t dims[kFusedMaxDims];
  uint32_t mask[kFusedMaxInputs];  // per input: the collapsed dims it reads along (strided_walk.h)
  FusedInstr program[kFusedMaxInstructions];
};

}  // namespace fusebox::cuda
