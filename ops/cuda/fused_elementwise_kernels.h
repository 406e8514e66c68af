#pragma once
// Launcher and parameters of the FusedElementwise interpreter (fused_elementwise_kernels.cu).
// C++17 with no core headers, so nvcc never sees core's C++20; fused_elementwise.cpp parses the
// node's program (core/ir/elementwise_program.h) into these parameters in prepare().
#include <cuda_runtime_api.h>

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

// inputs: p.num_inputs device pointers to f32 tensors; y: the f32 output, which may be one of the
// inputs (in place). Launches nothing for an empty output; never allocates or synchronizes.
void launch_fused_elementwise(const FusedParams& p, const void* const* inputs, void* y, cudaStream_t stream,
                              int sm_count);

}  // namespace fusebox::cuda
