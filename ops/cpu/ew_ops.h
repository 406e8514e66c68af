#pragma once
// The element-wise operations as function objects, shared by the element-wise kernels
// (elementwise.cpp) and the FusedElementwise interpreter (fused_elementwise.cpp), so a fused
// chain computes exactly what its unfused ops compute. Plain inline calls on scalars: loops over
// them vectorize (math.h).
//
// i64 arithmetic wraps on overflow (computed in unsigned: signed overflow is undefined
// behaviour), and i64 Div defines x / 0 = 0 and INT64_MIN / -1 = INT64_MIN instead of trapping:
// a kernel must not crash on data.
#include <cmath>
#include <cstdint>

#include "ops/cpu/math.h"

namespace fusebox::cpu {

inline int64_t wrap_i64(uint64_t v) {
  return static_cast<int64_t>(v);
}
inline uint64_t as_u64(int64_t v) {
  return static_cast<uint64_t>(v);
}

struct AddOp {
  float operator()(float a, float b) const { return a + b; }
  int64_t operator()(int64_t a, int64_t b) const { return wrap_i64(as_u64(a) + as_u64(b)); }
};
struct SubOp {
  float operator()(float a, float b) const { return a - b; }
  int64_t operator()(int64_t a, int64_t b) const { return wrap_i64(as_u64(a) - as_u64(b)); }
};
struct MulOp {
  float operator()(float a, float b) const { return a * b; }
  int64_t operator()(int64_t a, int64_t b) const { return wrap_i64(as_u64(a) * as_u64(b)); }
};
struct DivOp {
  float operator()(float a, float b) const { return a / b; }
  int64_t operator()(int64_t a, int64_t b) const {
    if (b == 0) return 0;
    if (b == -1) return wrap_i64(0 - as_u64(a));
    return a / b;  // C++ truncates toward zero, as ONNX asks
  }
};
struct PowOp {
  float operator()(float a, float b) const { return std::pow(a, b); }
};
struct ReluF {
  float operator()(float x) const { return relu_f32(x); }
};
struct TanhF {
  float operator()(float x) const { return tanh_f32(x); }
};
struct SigmoidF {
  float operator()(float x) const { return sigmoid_f32(x); }
};
struct ExpF {
  float operator()(float x) const { return exp_f32(x); }
};
struct ErfF {
  float operator()(float x) const { return erf_f32(x); }
};
struct GeluErfF {
  float operator()(float x) const { return gelu_erf_f32(x); }
};
struct GeluTanhF {
  float operator()(float x) const { return gelu_tanh_f32(x); }
};
struct NegF {
  float operator()(float x) const { return -x; }
  int64_t operator()(int64_t x) const { return wrap_i64(0 - as_u64(x)); }
};

struct AbsF {
  float operator()(float x) const { return std::fabs(x); }
  int64_t operator()(int64_t x) const { return x < 0 ? wrap_i64(0 - as_u64(x)) : x; }
};
struct HardSwishF {
  float operator()(float x) const {
    const float g = x * (1.0f / 6.0f) + 0.5f;
    return x * (g < 0.0f ? 0.0f : (g > 1.0f ? 1.0f : g));
  }
};
// Max/Min propagate NaN from either side, as numpy and ONNX Runtime do (a bare comparison would
// drop a NaN in one operand position and keep it in the other).
struct MaxOp {
  float operator()(float a, float b) const { return a != a ? a : (a > b ? a : b); }
  int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};
struct MinOp {
  float operator()(float a, float b) const { return a != a ? a : (a < b ? a : b); }
  int64_t operator()(int64_t a, int64_t b) const { return a < b ? a : b; }
};
// Comparisons and logic: i64 0/1 results (ONNX bool as the importer holds it).
struct EqualOp {
  template <typename T>
  int64_t operator()(T a, T b) const { return a == b ? 1 : 0; }
};
struct LessOp {
  template <typename T>
  int64_t operator()(T a, T b) const { return a < b ? 1 : 0; }
};
struct GreaterOp {
  template <typename T>
  int64_t operator()(T a, T b) const { return a > b ? 1 : 0; }
};
struct AndOp {
  int64_t operator()(int64_t a, int64_t b) const { return (a != 0 && b != 0) ? 1 : 0; }
};
struct OrOp {
  int64_t operator()(int64_t a, int64_t b) const { return (a != 0 || b != 0) ? 1 : 0; }
};
struct NotF {
  int64_t operator()(int64_t x) const { return x == 0 ? 1 : 0; }
};

}  // namespace fusebox::cpu
