// The element-wise kernels behind elementwise_kernels.h: one thread per output element in a
// grid-stride loop (device_util.cuh), the math from ew_math.cuh (shared with the
// FusedElementwise interpreter), broadcast offsets from broadcast_index.cuh.
#include <cuda_runtime.h>

#include "ops/cuda/broadcast_index.cuh"
#include "ops/cuda/device_util.cuh"
#include "ops/cuda/elementwise_kernels.h"
#include "ops/cuda/ew_math.cuh"
#include "ops/cuda/host/launch_geometry.h"

namespace fusebox::cuda {

namespace {

// Kernels whose parameter structs are indexed at run time take them as __grid_constant__ (sm_70+):
// read in place from the parameter bank instead of copied to each thread's local memory.

// ---- binary --------------------------------------------------------------------------------

template <EwBinaryOp Op, typename T>
__device__ __forceinline__ T binary_op(T a, T b) {
  if constexpr (Op == EwBinaryOp::Add) {
    return ew_add(a, b);
  } else if constexpr (Op == EwBinaryOp::Sub) {
    return ew_sub(a, b);
  } else if constexpr (Op == EwBinaryOp::Mul) {
    return ew_mul(a, b);
  } else if constexpr (Op == EwBinaryOp::Div) {
    return ew_div(a, b);
  } else {
    return ew_pow(a, b);
  }
}

// No __restrict__ in this file: an in-place op (y aliasing an input) is allowed, as on the CPU.
template <EwBinaryOp Op, typename T, typename I>
__global__ void binary_kernel(const __grid_constant__ EwBinaryParams p, const T* a, const T* b, T* y) {
  const I n = static_cast<I>(p.numel);
  const int rank = p.walk.rank;
  for (I i = first_index<I>(); i < n; i += grid_stride<I>()) {
    I idx[kEwMaxDims];
    decompose_index<kEwMaxDims>(i, rank, p.walk.dims, idx);
    const I oa = masked_offset<kEwMaxDims>(p.walk.mask[0], i, rank, p.walk.dims, idx);
    const I ob = masked_offset<kEwMaxDims>(p.walk.mask[1], i, rank, p.walk.dims, idx);
    y[i] = binary_op<Op>(a[oa], b[ob]);
  }
}

// Pow with one exponent for the whole output: x^2 and x^3 are multiplications, as on the CPU
// (its SquareOp / CubeOp paths for the variance and tanh-Gelu patterns), anything else powf.
template <typename I>
__global__ void pow_const_kernel(const __grid_constant__ EwBinaryParams p, const float* a, const float* b, float* y) {
  const I n = static_cast<I>(p.numel);
  const int rank = p.walk.rank;
  const float e = b[0];
  for (I i = first_index<I>(); i < n; i += grid_stride<I>()) {
    I idx[kEwMaxDims];
    decompose_index<kEwMaxDims>(i, rank, p.walk.dims, idx);
    const float x = a[masked_offset<kEwMaxDims>(p.walk.mask[0], i, rank, p.walk.dims, idx)];
    y[i] = e == 2.0f ? x * x : e == 3.0f ? x * x * x : ew_pow(x, e);
  }
}

template <EwBinaryOp Op, typename T>
void binary_typed(const EwBinaryParams& p, const void* a, const void* b, void* y, cudaStream_t s, dim3 g, dim3 bl) {
  const T* ta = static_cast<const T*>(a);
  const T* tb = static_cast<const T*>(b);
  T* ty = static_cast<T*>(y);
  if (p.index32) {
    binary_kernel<Op, T, int32_t><<<g, bl, 0, s>>>(p, ta, tb, ty);
  } else {
    binary_kernel<Op, T, int64_t><<<g, bl, 0, s>>>(p, ta, tb, ty);
  }
}

template <EwBinaryOp Op>
void binary_dtype(const EwBinaryParams& p, const void* a, const void* b, void* y, cudaStream_t s, dim3 g, dim3 bl) {
  if (p.dtype == EwDType::F32) {
    binary_typed<Op, float>(p, a, b, y, s, g, bl);
  } else {
    binary_typed<Op, int64_t>(p, a, b, y, s, g, bl);
  }
}

// ---- unary ---------------------------------------------------------------------------------

template <EwUnaryOp Op>
__device__ __forceinline__ float unary_op(float x) {
  if constexpr (Op == EwUnaryOp::Neg) {
    return ew_neg(x);
  } else if constexpr (Op == EwUnaryOp::Sqrt) {
    return ew_sqrt(x);
  } else if constexpr (Op == EwUnaryOp::Exp) {
    return ew_exp(x);
  } else if constexpr (Op == EwUnaryOp::Erf) {
    return ew_erf(x);
  } else if constexpr (Op == EwUnaryOp::Relu) {
    return ew_relu(x);
  } else if constexpr (Op == EwUnaryOp::Sigmoid) {
    return ew_sigmoid(x);
  } else if constexpr (Op == EwUnaryOp::Tanh) {
    return ew_tanh(x);
  } else if constexpr (Op == EwUnaryOp::GeluErf) {
    return ew_gelu_erf(x);
  } else {
    return ew_gelu_tanh(x);
  }
}

template <EwUnaryOp Op, typename I>
__global__ void unary_kernel(EwUnaryParams p, const float* x, float* y) {
  // No: an in-place op (y == x) is allowed, as on the CPU.
  const I n = static_cast<I>(p.numel);
  for (I i = first_index<I>(); i < n; i += grid_stride<I>()) y[i] = unary_op<Op>(x[i]);
}

template <typename I>
__global__ void neg_i64_kernel(EwUnaryParams p, const int64_t* x, int64_t* y) {
  const I n = static_cast<I>(p.numel);
  for (I i = first_index<I>(); i < n; i += grid_stride<I>()) y[i] = ew_neg(x[i]);
}

template <EwUnaryOp Op>
void unary_f32(const EwUnaryParams& p, const void* x, void* y, cudaStream_t s, dim3 g, dim3 bl) {
  const float* tx = static_cast<const float*>(x);
  float* ty = static_cast<float*>(y);
  if (p.index32) {
    unary_kernel<Op, int32_t><<<g, bl, 0, s>>>(p, tx, ty);
  } else {
    unary_kernel<Op, int64_t><<<g, bl, 0, s>>>(p, tx, ty);
  }
}

// ---- Cast ----------------------------------------------------------------------------------

template <typename I>
__global__ void cast_f32_i64_kernel(int64_t numel, const float* x, int64_t* y) {
  const I n = static_cast<I>(numel);
  for (I i = first_index<I>(); i < n; i += grid_stride<I>()) y[i] = ew_f32_to_i64(x[i]);
}

// Round to nearest, as static_cast<float>(int64_t) on the CPU.
template <typename I>
__global__ void cast_i64_f32_kernel(int64_t numel, const int64_t* x, float* y) {
  const I n = static_cast<I>(numel);
  for (I i = first_index<I>(); i < n; i += grid_stride<I>()) y[i] = static_cast<float>(x[i]);
}

// ---- Where ---------------------------------------------------------------------------------

// T is a same-size unsigned word: the branches are copied by value, bit for bit (NaN payloads
// included), whatever the dtype.
template <typename T, typename I>
__global__ void where_kernel(const __grid_constant__ EwWhereParams p, const int64_t* c, const T* a,
                             const T* b, T* y) {
  const I n = static_cast<I>(p.numel);
  const int rank = p.walk.rank;
  for (I i = first_index<I>(); i < n; i += grid_stride<I>()) {
    I idx[kEwMaxDims];
    decompose_index<kEwMaxDims>(i, rank, p.walk.dims, idx);
    const I oc = masked_offset<kEwMaxDims>(p.walk.mask[0], i, rank, p.walk.dims, idx);
    const I oa = masked_offset<kEwMaxDims>(p.walk.mask[1], i, rank, p.walk.dims, idx);
    const I ob = masked_offset<kEwMaxDims>(p.walk.mask[2], i, rank, p.walk.dims, idx);
    y[i] = c[oc] != 0 ? a[oa] : b[ob];
  }
}

template <typename T>
void where_typed(const EwWhereParams& p, const void* c, const void* a, const void* b, void* y, cudaStream_t s,
                 dim3 g, dim3 bl) {
  const int64_t* tc = static_cast<const int64_t*>(c);
  const T* ta = static_cast<const T*>(a);
  const T* tb = static_cast<const T*>(b);
  T* ty = static_cast<T*>(y);
  if (p.index32) {
    where_kernel<T, int32_t><<<g, bl, 0, s>>>(p, tc, ta, tb, ty);
  } else {
    where_kernel<T, int64_t><<<g, bl, 0, s>>>(p, tc, ta, tb, ty);
  }
}

}  // namespace

void launch_ew_binary(const EwBinaryParams& p, const void* a, const void* b, void* y, cudaStream_t stream,
                      int sm_count) {
  dim3 g, bl;
  if (!ew_grid(p.numel, sm_count, &g, &bl)) return;
  switch (p.op) {
    case EwBinaryOp::Add:
      return binary_dtype<EwBinaryOp::Add>(p, a, b, y, stream, g, bl);
    case EwBinaryOp::Sub:
      return binary_dtype<EwBinaryOp::Sub>(p, a, b, y, stream, g, bl);
    case EwBinaryOp::Mul:
      return binary_dtype<EwBinaryOp::Mul>(p, a, b, y, stream, g, bl);
    case EwBinaryOp::Div:
      return binary_dtype<EwBinaryOp::Div>(p, a, b, y, stream, g, bl);
    case EwBinaryOp::Pow: {
      // f32 only (prepare refuses i64).
      const float* ta = static_cast<const float*>(a);
      const float* tb = static_cast<const float*>(b);
      float* ty = static_cast<float*>(y);
      if (!p.b_constant) return binary_typed<EwBinaryOp::Pow, float>(p, a, b, y, stream, g, bl);
      if (p.index32) {
        pow_const_kernel<int32_t><<<g, bl, 0, stream>>>(p, ta, tb, ty);
      } else {
        pow_const_kernel<int64_t><<<g, bl, 0, stream>>>(p, ta, tb, ty);
      }
      return;
    }
  }
}

void launch_ew_unary(const EwUnaryParams& p, const void* x, void* y, cudaStream_t stream, int sm_count) {
  dim3 g, bl;
  if (!ew_grid(p.numel, sm_count, &g, &bl)) return;
  if (p.dtype == EwDType::I64) {
    // Only Neg takes i64 (prepare refuses the others).
    const int64_t* tx = static_cast<const int64_t*>(x);
    int64_t* ty = static_cast<int64_t*>(y);
    if (p.index32) {
      neg_i64_kernel<int32_t><<<g, bl, 0, stream>>>(p, tx, ty);
    } else {
      neg_i64_kernel<int64_t><<<g, bl, 0, stream>>>(p, tx, ty);
    }
    return;
  }
  switch (p.op) {
    case EwUnaryOp::Neg:
      return unary_f32<EwUnaryOp::Neg>(p, x, y, stream, g, bl);
    case EwUnaryOp::Sqrt:
      return unary_f32<EwUnaryOp::Sqrt>(p, x, y, stream, g, bl);
    case EwUnaryOp::Exp:
      return unary_f32<EwUnaryOp::Exp>(p, x, y, stream, g, bl);
    case EwUnaryOp::Erf:
      return unary_f32<EwUnaryOp::Erf>(p, x, y, stream, g, bl);
    case EwUnaryOp::Relu:
      return unary_f32<EwUnaryOp::Relu>(p, x, y, stream, g, bl);
    case EwUnaryOp::Sigmoid:
      return unary_f32<EwUnaryOp::Sigmoid>(p, x, y, stream, g, bl);
    case EwUnaryOp::Tanh:
      return unary_f32<EwUnaryOp::Tanh>(p, x, y, stream, g, bl);
    case EwUnaryOp::GeluErf:
      return unary_f32<EwUnaryOp::GeluErf>(p, x, y, stream, g, bl);
    case EwUnaryOp::GeluTanh:
      return unary_f32<EwUnaryOp::GeluTanh>(p, x, y, stream, g, bl);
  }
}

void launch_ew_cast(const EwCastParams& p, const void* x, void* y, cudaStream_t stream, int sm_count) {
  if (p.numel <= 0) return;
  if (p.from == p.to) {
    // A copy (or nothing, in place). Device-to-device copies on the stream are graph-capturable.
    const size_t bytes = static_cast<size_t>(p.numel) * (p.from == EwDType::F32 ? 4 : 8);
    if (x != y) cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, stream);
    return;
  }
  dim3 g, bl;
  if (!ew_grid(p.numel, sm_count, &g, &bl)) return;
  if (p.from == EwDType::F32) {
    const float* tx = static_cast<const float*>(x);
    int64_t* ty = static_cast<int64_t*>(y);
    if (p.index32) {
      cast_f32_i64_kernel<int32_t><<<g, bl, 0, stream>>>(p.numel, tx, ty);
    } else {
      cast_f32_i64_kernel<int64_t><<<g, bl, 0, stream>>>(p.numel, tx, ty);
    }
  } else {
    const int64_t* tx = static_cast<const int64_t*>(x);
    float* ty = static_cast<float*>(y);
    if (p.index32) {
      cast_i64_f32_kernel<int32_t><<<g, bl, 0, stream>>>(p.numel, tx, ty);
    } else {
      cast_i64_f32_kernel<int64_t><<<g, bl, 0, stream>>>(p.numel, tx, ty);
    }
  }
}

void launch_ew_where(const EwWhereParams& p, const void* cond, const void* a, const void* b, void* y,
                     cudaStream_t stream, int sm_count) {
  dim3 g, bl;
  if (!ew_grid(p.numel, sm_count, &g, &bl)) return;
  if (p.dtype == EwDType::F32) {
    where_typed<uint32_t>(p, cond, a, b, y, stream, g, bl);
  } else {
    where_typed<uint64_t>(p, cond, a, b, y, stream, g, bl);
  }
}

}  // namespace fusebox::cuda
