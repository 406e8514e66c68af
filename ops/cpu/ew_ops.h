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

// ---- ops added for the ONNX conformance count (issue 25) -----------------------------------
// Library calls (std::log, std::sin, ...): these ops are rare in models, so exactness beats speed.
struct ReciprocalF {
  float operator()(float x) const { return 1.0f / x; }
};
struct FloorF {
  float operator()(float x) const { return std::floor(x); }
};
struct CeilF {
  float operator()(float x) const { return std::ceil(x); }
};
// ONNX Round rounds halves to even (numpy's round): nearbyint in the default rounding mode.
struct RoundF {
  float operator()(float x) const { return std::nearbyint(x); }
};
struct SignF {
  float operator()(float x) const { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }  // keeps NaN, 0
  int64_t operator()(int64_t x) const { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
};
struct LogF {
  float operator()(float x) const { return std::log(x); }
};
struct SinF {
  float operator()(float x) const { return std::sin(x); }
};
struct CosF {
  float operator()(float x) const { return std::cos(x); }
};
struct TanF {
  float operator()(float x) const { return std::tan(x); }
};
struct AsinF {
  float operator()(float x) const { return std::asin(x); }
};
struct AcosF {
  float operator()(float x) const { return std::acos(x); }
};
struct AtanF {
  float operator()(float x) const { return std::atan(x); }
};
struct SinhF {
  float operator()(float x) const { return std::sinh(x); }
};
struct CoshF {
  float operator()(float x) const { return std::cosh(x); }
};
struct AsinhF {
  float operator()(float x) const { return std::asinh(x); }
};
struct AcoshF {
  float operator()(float x) const { return std::acosh(x); }
};
struct AtanhF {
  float operator()(float x) const { return std::atanh(x); }
};
// log(1 + exp(x)) without overflow: x + log1p(exp(-x)) for x > 0.
struct SoftplusF {
  float operator()(float x) const { return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
};
struct SoftsignF {
  float operator()(float x) const { return x / (1.0f + std::fabs(x)); }
};
// IsNaN and IsInf give ONNX bool, held as i64 0/1.
struct IsNaNF {
  int64_t operator()(float x) const { return x != x ? 1 : 0; }
};
// Mod: fmod = 0 (integers only) takes the divisor's sign, like Python's %; fmod = 1 takes the
// dividend's, like C's fmod. x mod 0 is 0 for integers (a kernel must not trap) and NaN for floats.
struct ModOp {
  int64_t operator()(int64_t a, int64_t b) const {
    if (b == 0 || b == -1) return 0;  // -1: INT64_MIN % -1 traps in C++, and every x mod -1 is 0
    const int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
};
struct FmodOp {
  float operator()(float a, float b) const { return std::fmod(a, b); }
  int64_t operator()(int64_t a, int64_t b) const { return (b == 0 || b == -1) ? 0 : a % b; }
};
struct GreaterOrEqualOp {
  template <typename T>
  int64_t operator()(T a, T b) const { return a >= b ? 1 : 0; }
};
struct LessOrEqualOp {
  template <typename T>
  int64_t operator()(T a, T b) const { return a <= b ? 1 : 0; }
};
// BitShift on the bits of the (unsigned) value: ONNX defines it for unsigned types, which the
// importer holds as i64. A shift by 64 or more (or a negative amount) gives 0.
struct ShiftLeftOp {
  int64_t operator()(int64_t a, int64_t b) const { return (b < 0 || b > 63) ? 0 : wrap_i64(as_u64(a) << b); }
};
struct ShiftRightOp {
  int64_t operator()(int64_t a, int64_t b) const { return (b < 0 || b > 63) ? 0 : wrap_i64(as_u64(a) >> b); }
};
struct XorOp {
  int64_t operator()(int64_t a, int64_t b) const { return ((a != 0) != (b != 0)) ? 1 : 0; }
};

}  // namespace fusebox::cpu
