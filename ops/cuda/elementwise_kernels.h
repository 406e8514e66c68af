#pragma once
// Launchers and parameters of the element-wise kernels (elementwise_kernels.cu): binary
// arithmetic with numpy broadcasting, unary math, Cast and Where. C++17 with no core headers, so
// nvcc never sees core's C++20; elementwise.cpp fills the parameters in prepare().
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace fusebox::cuda {

// Collapsed broadcast walks deeper than this are refused in prepare() (they need dims that
// alternate between broadcast and not, 8 times over).
inline constexpr int kEwMaxDims = 8;
inline constexpr int kEwMaxOperands = 3;  // Where: cond, a, b

enum class EwDType : int32_t { F32, I64 };
enum class EwBinaryOp : int32_t { Add, Sub, Mul, Div, Pow };
enum class EwUnaryOp : int32_t { Neg, Sqrt, Exp, Erf, Relu, Sigmoid, Tanh, GeluErf, GeluTanh };

// Operands broadcast to a contiguous output (ops/cuda/strided_walk.h): collapsed output dims,
// and per operand a mask of the dims it reads along (stride 0 along the others).
struct EwBroadcast {
  int32_t rank;
  int64_t dims[kEwMaxDims];
  uint32_t mask[kEwMaxOperands];
};

struct EwBinaryParams {
  EwBinaryOp op;
  EwDType dtype;        // of both inputs and the output (Pow: f32 only)
  int64_t numel;        // output elements
  bool index32;         // every tensor has at most kIndex32Limit elements
  bool b_constant;      // b is one value for the whole output (Pow's x^2 / x^3 fast paths)
  EwBroadcast walk;     // operands a, b
};

// Same-shape input and output, contiguous.
struct EwUnaryParams {
  EwUnaryOp op;
  EwDType dtype;  // f32, or i64 for Neg
  int64_t numel;
  bool index32;
};

struct EwCastParams {
  EwDType from, to;
  int64_t numel;
  bool index32;
};

struct EwWhereParams {
  EwDType dtype;  // of a, b and the output; cond is i64
  int64_t numel;
  bool index32;
  EwBroadcast walk;  // operands cond, a, b
};

// Each launches nothing for an empty output. Launch errors stay with the runtime (the backend's
// synchronize() reports them); none allocates or synchronizes, so all are graph-capturable.
void launch_ew_binary(const EwBinaryParams& p, const void* a, const void* b, void* y, cudaStream_t stream,
                      int sm_count);
void launch_ew_unary(const EwUnaryParams& p, const void* x, void* y, cudaStream_t stream, int sm_count);
void launch_ew_cast(const EwCastParams& p, const void* x, void* y, cudaStream_t stream, int sm_count);
void launch_ew_where(const EwWhereParams& p, const void* cond, const void* a, const void* b, void* y,
                     cudaStream_t stream, int sm_count);

}  // namespace fusebox::cuda
