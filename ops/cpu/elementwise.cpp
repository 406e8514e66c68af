// Element-wise kernels: binary arithmetic, Max/Min, PRelu, comparisons and logic with numpy
// broadcasting (f32, and i64 where the op allows it), unary math and activations, Gelu, Cast and
// Where.
//
// Every kernel here shares one state: a collapsed StridedPlan (strided.h) and the loop to run,
// picked in prepare() from the dtypes and attributes. Broadcasting becomes segments along the
// innermost collapsed dim in which each input has stride 1 (reads along) or 0 (one value), so
// the three cases that matter are plain vectorizable loops:
//   same shape          -> one segment per thread chunk, y[i] = a[i] op b[i]
//   scalar operand      -> one segment, y[i] = a[i] op v
//   bias [64,256]+[256] -> one segment per row, both sides stride 1
// and anything else (e.g. [N,1] + [1,M]) is the same loops per row.
//
// i64 arithmetic wraps on overflow (computed in unsigned: signed overflow would be undefined
// behaviour), and i64 Div defines x / 0 = 0 and INT64_MIN / -1 = INT64_MIN instead of trapping:
// a kernel must not crash on data.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/ew_ops.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/math.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/strided.h"
#include "ops/cpu/vector_math.h"

namespace fusebox::cpu {

namespace {

struct EwState;
using EwImpl = void (*)(const EwState&, const exec::KernelArgs&);

struct EwState {
  StridedPlan plan;  // binary and Where: inputs broadcast to the output
  int64_t numel = 0;
  EwImpl impl = nullptr;
  Isa isa = Isa::kPortable;      // unary math: kernel_isa at prepare picks the vector code
  GemmAct act = GemmAct::kNone;  // Gelu / Tanh / Sigmoid: the function (gemm_act_span)
  float p0 = 0, p1 = 0;          // LeakyRelu / Elu alpha, HardSigmoid alpha and beta
  double lo = 0, hi = 0;         // Clip's bounds (f32), absent ones +-inf
  int64_t ilo = 0, ihi = 0;      // the same for i64 inputs, within the type's range
};

void run_ew(const exec::KernelArgs& args) {
  const auto& st = state_of<EwState>(args);
  if (st.numel > 0) st.impl(st, args);
}

// ---- Pow fast paths ----------------------------------------------------------------------

// Pow with a constant exponent of 2 or 3 (the variance and tanh-Gelu patterns exporters emit):
// multiplications instead of a pow call per element.
struct SquareOp {
  float operator()(float a, float) const { return a * a; }
};
struct CubeOp {
  float operator()(float a, float) const { return a * a * a; }
};

// ---- binary --------------------------------------------------------------------------------

// One run of output elements; sa/sb are 0 (one value) or 1 (contiguous). No __restrict: an
// in-place op (y == a) is allowed, and GCC's overlap check keeps equal pointers vectorized.
// R is the result type: T for arithmetic, i64 for comparisons.
template <typename T, typename Op, typename R = T>
inline void binary_segment(const T* a, int64_t sa, const T* b, int64_t sb, R* y, int64_t n) {
  Op op;
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = op(a[i], b[i]);
  } else if (sa == 1) {
    const T vb = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = op(a[i], vb);
  } else if (sb == 1) {
    const T va = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = op(va, b[i]);
  } else {
    const R v = op(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

// The operand (0 or 1) that is one short row repeated down the output ([N, H, W, C] * [1, 1, 1, C]:
// a channels-last scale or bias) while the other reads the output's order, or -1. Segments would be
// one row each, C floats: 3,136 calls for a squeeze-and-excite Mul at 56x56x16, whose overhead
// was ten times the arithmetic.
constexpr int64_t kRepeatRowMax = 64;
int repeated_row_operand(const StridedPlan& p) {
  if (p.rank != 2 || p.inner() > kRepeatRowMax || p.dims[0] < 2) return -1;
  for (int k = 0; k < 2; ++k) {
    const int o = 1 - k;
    if (p.stride(k, 0) == 0 && p.stride(k, 1) == 1 && p.stride(o, 0) == p.inner() && p.stride(o, 1) == 1)
      return k;
  }
  return -1;
}

// y[i] = a[i] op b[i % C] (k == 1) or a[i % C] op b[i] (k == 0) over [begin, end): the short row
// laid out repeated once, on the stack, then long runs against it.
template <typename T, typename Op, typename R>
void repeated_row_segments(const StridedPlan& p, int k, const T* a, const T* b, R* y, int64_t begin, int64_t end) {
  const int64_t c = p.inner(), reps = std::max<int64_t>(1, 256 / c), run = reps * c;
  T row[256 + 2 * kRepeatRowMax];
  const T* src = (k == 0 ? a : b) + p.base[k];
  for (int64_t i = 0; i < run + c; ++i) row[i] = src[i % c];
  const T* full = (k == 0 ? b : a) + p.base[1 - k];
  for (int64_t i = begin; i < end;) {
    const int64_t phase = i % c, len = std::min(run, end - i);
    if (k == 0) binary_segment<T, Op, R>(row + phase, 1, full + i, 1, y + i, len);
    else binary_segment<T, Op, R>(full + i, 1, row + phase, 1, y + i, len);
    i += len;
  }
}

template <typename T, typename Op, int64_t Grain, typename R = T>
void binary_impl(const EwState& st, const exec::KernelArgs& args) {
  const T* a = input_ptr<T>(args, 0);
  const T* b = input_ptr<T>(args, 1);
  R* y = output_ptr<R>(args, 0);
  const StridedPlan& p = st.plan;
  const int64_t sa = p.inner_stride(0), sb = p.inner_stride(1);
  if (const int k = repeated_row_operand(p); k >= 0) {
    parallel_for(p.numel, Grain, [&](int64_t begin, int64_t end) {
      repeated_row_segments<T, Op, R>(p, k, a, b, y, begin, end);
    });
    return;
  }
  parallel_for(p.numel, Grain, [&](int64_t begin, int64_t end) {
    for_each_segment(p, begin, end, [&](int64_t o, const int64_t* off, int64_t len) {
      binary_segment<T, Op, R>(a + off[0], sa, b + off[1], sb, y + o, len);
    });
  });
}

void pow_impl(const EwState& st, const exec::KernelArgs& args) {
  if (st.plan.constant(1)) {
    const float e = input_ptr<float>(args, 1)[0];
    if (e == 2.0f) return binary_impl<float, SquareOp, kGrainSimple>(st, args);
    if (e == 3.0f) return binary_impl<float, CubeOp, kGrainSimple>(st, args);
  }
  binary_impl<float, PowOp, kGrainMath>(st, args);
}

exec::KernelDef binary_kernel(EwImpl f32, EwImpl i64) {
  auto prepare = [f32, i64](const exec::KernelContext& ctx) {
    require_arity(ctx, 2, 1);
    const ir::DType dt = ctx.inputs[0].dtype;
    if (ctx.inputs[1].dtype != dt) fail(ctx, "inputs have different dtypes");
    EwState st;
    st.impl = dt == ir::DType::f32 ? f32 : i64;
    if (!st.impl) fail(ctx, std::string("no kernel for ") + ir::dtype_name(dt) + " inputs");
    try {
      st.plan =
          make_broadcast_plan({ctx.inputs[0].shape, ctx.inputs[1].shape}, ctx.outputs[0].shape);
    } catch (const Error& e) {
      fail(ctx, e.what());
    }
    st.numel = st.plan.numel;
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

// Mod: fmod = 1 (C's fmod, both dtypes) or 0 (Python's %, i64 only).
exec::KernelDef mod_kernel() {
  const exec::KernelDef fmod = binary_kernel(binary_impl<float, FmodOp, kGrainMath>,
                                             binary_impl<int64_t, FmodOp, kGrainSimple>);
  const exec::KernelDef mod = binary_kernel(nullptr, binary_impl<int64_t, ModOp, kGrainSimple>);
  auto prepare = [fmod, mod](const exec::KernelContext& ctx) {
    return ctx.node.attrs.get_int("fmod", 0) != 0 ? fmod.prepare(ctx) : mod.prepare(ctx);
  };
  return {prepare, run_ew};
}

// BitShift: attribute direction picks the shift (the schema checks it is LEFT or RIGHT).
exec::KernelDef bitshift_kernel() {
  const exec::KernelDef left = binary_kernel(nullptr, binary_impl<int64_t, ShiftLeftOp, kGrainSimple>);
  const exec::KernelDef right = binary_kernel(nullptr, binary_impl<int64_t, ShiftRightOp, kGrainSimple>);
  auto prepare = [left, right](const exec::KernelContext& ctx) {
    return ctx.node.attrs.get_string("direction", "") == "LEFT" ? left.prepare(ctx) : right.prepare(ctx);
  };
  return {prepare, run_ew};
}

// ---- unary ---------------------------------------------------------------------------------

template <typename T, typename F, int64_t Grain>
void unary_impl(const EwState& st, const exec::KernelArgs& args) {
  const T* x = input_ptr<T>(args, 0);
  T* y = output_ptr<T>(args, 0);
  parallel_for(st.numel, Grain, [&](int64_t begin, int64_t end) {
    F f;
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

void sqrt_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  parallel_for(st.numel, kGrainSimple,
               [&](int64_t begin, int64_t end) { sqrt_span(x + begin, y + begin, end - begin); });
}

EwState unary_state(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  EwState st;
  st.numel = ir::numel(ctx.inputs[0].shape);
  st.isa = kernel_isa(ctx);
  return st;
}

exec::KernelDef unary_kernel(EwImpl f32, EwImpl i64 = nullptr) {
  auto prepare = [f32, i64](const exec::KernelContext& ctx) {
    EwState st = unary_state(ctx);
    const ir::DType dt = ctx.inputs[0].dtype;
    st.impl = dt == ir::DType::f32 ? f32 : i64;
    if (!st.impl) fail(ctx, std::string("no kernel for ") + ir::dtype_name(dt) + " input");
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

// Gelu (both forms), Tanh and Sigmoid on the state's Isa: explicit AVX-512 / AVX2 code where the
// kernel runs it (GCC vectorizes the scalar forms as fully masked loops, about half as fast).
void act_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  parallel_for(st.numel, kGrainMath, [&](int64_t begin, int64_t end) {
    gemm_act_span(st.isa, st.act, x + begin, y + begin, end - begin);
  });
}

void exp_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  parallel_for(st.numel, kGrainMath, [&](int64_t begin, int64_t end) {
    exp_span(st.isa, x + begin, y + begin, end - begin);
  });
}

// ---- activations with attributes -----------------------------------------------------------

// LeakyRelu, HardSigmoid, Clip: plain loops over the state's two parameters, which GCC
// vectorizes like Relu's.
void leaky_relu_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const float alpha = st.p0;
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] >= 0.0f ? x[i] : alpha * x[i];
  });
}

void hard_sigmoid_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const float alpha = st.p0, beta = st.p1;
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float v = alpha * x[i] + beta;
      y[i] = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    }
  });
}

// Clip keeps NaN (comparisons with NaN are false, so neither bound replaces it).
template <typename T>
void clip_impl(const EwState& st, const exec::KernelArgs& args) {
  const T* x = input_ptr<T>(args, 0);
  T* y = output_ptr<T>(args, 0);
  T lo, hi;
  if constexpr (std::is_same_v<T, float>) {
    lo = static_cast<float>(st.lo);
    hi = static_cast<float>(st.hi);
  } else {
    lo = st.ilo;
    hi = st.ihi;
  }
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T v = x[i] < lo ? lo : x[i];
      y[i] = v > hi ? hi : v;
    }
  });
}

// Elu: exp on the state's Isa (exp_span) in stack blocks, then the select, so the transcendental
// part runs on the vector code like Exp's.
void elu_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const float alpha = st.p0;
  parallel_for(st.numel, kGrainMath, [&](int64_t begin, int64_t end) {
    constexpr int64_t kBlock = 256;
    float e[kBlock];
    for (int64_t i0 = begin; i0 < end; i0 += kBlock) {
      const int64_t n = std::min(kBlock, end - i0);
      exp_span(st.isa, x + i0, e, n);
      for (int64_t i = 0; i < n; ++i) {
        const float v = x[i0 + i];
        y[i0 + i] = v >= 0.0f ? v : alpha * (e[i] - 1.0f);
      }
    }
  });
}

exec::KernelDef param_kernel(EwImpl impl, const char* p0_name, double p0_default,
                             const char* p1_name = nullptr, double p1_default = 0) {
  auto prepare = [=](const exec::KernelContext& ctx) {
    EwState st = unary_state(ctx);
    require_dtype(ctx, 0, ir::DType::f32);
    st.p0 = static_cast<float>(ctx.node.attrs.get_float(p0_name, p0_default));
    if (p1_name) st.p1 = static_cast<float>(ctx.node.attrs.get_float(p1_name, p1_default));
    st.impl = impl;
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

// Clip's bounds are attributes (the importer reads ONNX's min/max inputs at load time); an
// absent bound is the type's limit.
exec::KernelDef clip_kernel() {
  auto prepare = [](const exec::KernelContext& ctx) {
    EwState st = unary_state(ctx);
    const auto& a = ctx.node.attrs;
    const bool f32 = ctx.inputs[0].dtype == ir::DType::f32;
    const double inf = std::numeric_limits<double>::infinity();
    st.lo = a.get_float("min", -inf);
    st.hi = a.get_float("max", inf);
    if (std::isnan(st.lo) || std::isnan(st.hi)) fail(ctx, "min and max must not be NaN");
    if (!f32) {  // i64: bounds past the type's range are its limits (converting them is UB)
      constexpr double kTwo63 = 9.223372036854775808e18;
      st.ilo = st.lo <= -kTwo63 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(std::ceil(st.lo));
      st.ihi = st.hi >= kTwo63 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(std::floor(st.hi));
    }
    st.impl = f32 ? clip_impl<float> : clip_impl<int64_t>;
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

// Selu, Celu, ThresholdedRelu, Shrink: the activations ONNX defines with float attributes.
void selu_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const float alpha = st.p0, gamma = st.p1;
  parallel_for(st.numel, kGrainMath, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = x[i] > 0.0f ? gamma * x[i] : gamma * alpha * std::expm1(x[i]);
  });
}

void celu_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const float alpha = st.p0;
  parallel_for(st.numel, kGrainMath, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float v = x[i];
      y[i] = v > 0.0f ? v : alpha * std::expm1(v / alpha);
    }
  });
}

void thresholded_relu_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  const float alpha = st.p0;
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] > alpha ? x[i] : 0.0f;
  });
}

// Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0 (attributes bias 0, lambd 0.5).
template <typename T>
void shrink_impl(const EwState& st, const exec::KernelArgs& args) {
  const T* x = input_ptr<T>(args, 0);
  T* y = output_ptr<T>(args, 0);
  const double bias = st.p0, lambd = st.p1;
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double v = static_cast<double>(x[i]);
      y[i] = static_cast<T>(v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
    }
  });
}

exec::KernelDef shrink_kernel() {
  auto prepare = [](const exec::KernelContext& ctx) {
    EwState st = unary_state(ctx);
    st.p0 = static_cast<float>(ctx.node.attrs.get_float("bias", 0.0));
    st.p1 = static_cast<float>(ctx.node.attrs.get_float("lambd", 0.5));
    st.impl = ctx.inputs[0].dtype == ir::DType::f32 ? shrink_impl<float> : shrink_impl<int64_t>;
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

// IsNaN / IsInf: f32 in, ONNX bool (i64 0/1) out. IsInf's two flags ride in p0/p1.
void isnan_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  int64_t* y = output_ptr<int64_t>(args, 0);
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    IsNaNF f;
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

void isinf_impl(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  int64_t* y = output_ptr<int64_t>(args, 0);
  const bool neg = st.p0 != 0.0f, pos = st.p1 != 0.0f;
  const float inf = std::numeric_limits<float>::infinity();
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = ((pos && x[i] == inf) || (neg && x[i] == -inf)) ? 1 : 0;
  });
}

exec::KernelDef is_kernel(bool isinf) {
  auto prepare = [isinf](const exec::KernelContext& ctx) {
    EwState st = unary_state(ctx);
    require_dtype(ctx, 0, ir::DType::f32);
    st.p0 = static_cast<float>(ctx.node.attrs.get_int("detect_negative", 1) != 0);
    st.p1 = static_cast<float>(ctx.node.attrs.get_int("detect_positive", 1) != 0);
    st.impl = isinf ? isinf_impl : isnan_impl;
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

// PRelu: x and a slope broadcast to x's shape (the binary plan with x as the output shape).
struct PReluOp {
  float operator()(float x, float slope) const { return x >= 0.0f ? x : slope * x; }
};

// Tanh, Sigmoid: act_impl with the function fixed.
exec::KernelDef act_kernel(GemmAct act) {
  auto prepare = [act](const exec::KernelContext& ctx) {
    EwState st = unary_state(ctx);
    require_dtype(ctx, 0, ir::DType::f32);
    st.act = act;
    st.impl = act_impl;
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

exec::KernelDef gelu_kernel() {
  auto prepare = [](const exec::KernelContext& ctx) {
    EwState st = unary_state(ctx);
    require_dtype(ctx, 0, ir::DType::f32);
    const std::string mode = ctx.node.attrs.get_string("approximate", "none");
    st.impl = act_impl;
    if (mode == "none") {
      st.act = GemmAct::kGelu;
    } else if (mode == "tanh") {
      st.act = GemmAct::kGeluTanh;
    } else {
      fail(ctx, "approximate must be 'none' or 'tanh', got '" + mode + "'");
    }
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

// ---- Cast ----------------------------------------------------------------------------------

// f32 -> i64 truncates toward zero. Values outside the i64 range saturate and NaN becomes 0:
// converting them directly is undefined behaviour in C++.
inline int64_t f32_to_i64(float x) {
  constexpr float kLimit = 9.223372036854775808e18f;  // 2^63
  if (x != x) return 0;
  if (x >= kLimit) return std::numeric_limits<int64_t>::max();
  if (x < -kLimit) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

void cast_f32_i64(const EwState& st, const exec::KernelArgs& args) {
  const float* x = input_ptr<float>(args, 0);
  int64_t* y = output_ptr<int64_t>(args, 0);
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f32_to_i64(x[i]);
  });
}

void cast_i64_f32(const EwState& st, const exec::KernelArgs& args) {
  const int64_t* x = input_ptr<int64_t>(args, 0);
  float* y = output_ptr<float>(args, 0);
  parallel_for(st.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = static_cast<float>(x[i]);
  });
}

template <typename T>
void copy_impl(const EwState& st, const exec::KernelArgs& args) {
  if (args.inputs[0] != args.outputs[0])
    std::memcpy(args.outputs[0], args.inputs[0], static_cast<size_t>(st.numel) * sizeof(T));
}

exec::KernelDef cast_kernel() {
  auto prepare = [](const exec::KernelContext& ctx) {
    EwState st = unary_state(ctx);
    const ir::DType from = ctx.inputs[0].dtype, to = ctx.outputs[0].dtype;
    if (from == to) {
      st.impl = from == ir::DType::f32 ? copy_impl<float> : copy_impl<int64_t>;
    } else {
      st.impl = from == ir::DType::f32 ? cast_f32_i64 : cast_i64_f32;
    }
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

// ---- Where ---------------------------------------------------------------------------------

template <typename T>
void where_impl(const EwState& st, const exec::KernelArgs& args) {
  const int64_t* c = input_ptr<int64_t>(args, 0);
  const T* a = input_ptr<T>(args, 1);
  const T* b = input_ptr<T>(args, 2);
  T* y = output_ptr<T>(args, 0);
  const StridedPlan& p = st.plan;
  const int64_t sc = p.inner_stride(0), sa = p.inner_stride(1), sb = p.inner_stride(2);
  parallel_for(p.numel, kGrainSimple, [&](int64_t begin, int64_t end) {
    for_each_segment(p, begin, end, [&](int64_t o, const int64_t* off, int64_t len) {
      const int64_t* pc = c + off[0];
      const T* pa = a + off[1];
      const T* pb = b + off[2];
      T* py = y + o;
      if (sc == 1 && sa == 1 && sb == 1) {
        for (int64_t i = 0; i < len; ++i) py[i] = pc[i] != 0 ? pa[i] : pb[i];
      } else {
        for (int64_t i = 0; i < len; ++i) py[i] = pc[i * sc] != 0 ? pa[i * sa] : pb[i * sb];
      }
    });
  });
}

exec::KernelDef where_kernel() {
  auto prepare = [](const exec::KernelContext& ctx) {
    require_arity(ctx, 3, 1);
    require_dtype(ctx, 0, ir::DType::i64);
    const ir::DType dt = ctx.inputs[1].dtype;
    if (ctx.inputs[2].dtype != dt) fail(ctx, "branches have different dtypes");
    EwState st;
    st.impl = dt == ir::DType::f32 ? where_impl<float> : where_impl<int64_t>;
    try {
      st.plan = make_broadcast_plan({ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.inputs[2].shape},
                                    ctx.outputs[0].shape);
    } catch (const Error& e) {
      fail(ctx, e.what());
    }
    st.numel = st.plan.numel;
    return exec::make_state(std::move(st));
  };
  return {prepare, run_ew};
}

}  // namespace

void add_elementwise_kernels(exec::KernelTable& table) {
  table.add("Add", binary_kernel(binary_impl<float, AddOp, kGrainSimple>,
                                 binary_impl<int64_t, AddOp, kGrainSimple>));
  table.add("Sub", binary_kernel(binary_impl<float, SubOp, kGrainSimple>,
                                 binary_impl<int64_t, SubOp, kGrainSimple>));
  table.add("Mul", binary_kernel(binary_impl<float, MulOp, kGrainSimple>,
                                 binary_impl<int64_t, MulOp, kGrainSimple>));
  table.add("Div", binary_kernel(binary_impl<float, DivOp, kGrainSimple>,
                                 binary_impl<int64_t, DivOp, kGrainSimple>));
  table.add("Pow", binary_kernel(pow_impl, nullptr));

  table.add("Relu", unary_kernel(unary_impl<float, ReluF, kGrainSimple>));
  table.add("Tanh", act_kernel(GemmAct::kTanh));
  table.add("Sigmoid", act_kernel(GemmAct::kSigmoid));
  table.add("Exp", unary_kernel(exp_impl));
  table.add("Erf", unary_kernel(unary_impl<float, ErfF, kGrainMath>));
  table.add("Sqrt", unary_kernel(sqrt_impl));
  table.add("Neg", unary_kernel(unary_impl<float, NegF, kGrainSimple>,
                                unary_impl<int64_t, NegF, kGrainSimple>));
  table.add("Abs", unary_kernel(unary_impl<float, AbsF, kGrainSimple>,
                                unary_impl<int64_t, AbsF, kGrainSimple>));
  table.add("HardSwish", unary_kernel(unary_impl<float, HardSwishF, kGrainSimple>));
  table.add("Not", unary_kernel(nullptr, unary_impl<int64_t, NotF, kGrainSimple>));
  table.add("LeakyRelu", param_kernel(leaky_relu_impl, "alpha", 0.01));
  table.add("Elu", param_kernel(elu_impl, "alpha", 1.0));
  table.add("HardSigmoid", param_kernel(hard_sigmoid_impl, "alpha", 0.2, "beta", 0.5));
  table.add("Clip", clip_kernel());
  table.add("PRelu", binary_kernel(binary_impl<float, PReluOp, kGrainSimple>, nullptr));
  table.add("Max", binary_kernel(binary_impl<float, MaxOp, kGrainSimple>,
                                 binary_impl<int64_t, MaxOp, kGrainSimple>));
  table.add("Min", binary_kernel(binary_impl<float, MinOp, kGrainSimple>,
                                 binary_impl<int64_t, MinOp, kGrainSimple>));
  // Comparisons and logic: the binary loops with an i64 0/1 result.
  table.add("Equal", binary_kernel(binary_impl<float, EqualOp, kGrainSimple, int64_t>,
                                      binary_impl<int64_t, EqualOp, kGrainSimple, int64_t>));
  table.add("Less", binary_kernel(binary_impl<float, LessOp, kGrainSimple, int64_t>,
                                     binary_impl<int64_t, LessOp, kGrainSimple, int64_t>));
  table.add("Greater", binary_kernel(binary_impl<float, GreaterOp, kGrainSimple, int64_t>,
                                        binary_impl<int64_t, GreaterOp, kGrainSimple, int64_t>));
  table.add("And", binary_kernel(nullptr, binary_impl<int64_t, AndOp, kGrainSimple>));
  table.add("Or", binary_kernel(nullptr, binary_impl<int64_t, OrOp, kGrainSimple>));
  // Ops added for the ONNX conformance count (issue 25).
  table.add("Reciprocal", unary_kernel(unary_impl<float, ReciprocalF, kGrainSimple>));
  table.add("Floor", unary_kernel(unary_impl<float, FloorF, kGrainSimple>));
  table.add("Ceil", unary_kernel(unary_impl<float, CeilF, kGrainSimple>));
  table.add("Round", unary_kernel(unary_impl<float, RoundF, kGrainSimple>));
  table.add("Sign", unary_kernel(unary_impl<float, SignF, kGrainSimple>,
                                 unary_impl<int64_t, SignF, kGrainSimple>));
  table.add("Log", unary_kernel(unary_impl<float, LogF, kGrainMath>));
  table.add("Sin", unary_kernel(unary_impl<float, SinF, kGrainMath>));
  table.add("Cos", unary_kernel(unary_impl<float, CosF, kGrainMath>));
  table.add("Tan", unary_kernel(unary_impl<float, TanF, kGrainMath>));
  table.add("Asin", unary_kernel(unary_impl<float, AsinF, kGrainMath>));
  table.add("Acos", unary_kernel(unary_impl<float, AcosF, kGrainMath>));
  table.add("Atan", unary_kernel(unary_impl<float, AtanF, kGrainMath>));
  table.add("Sinh", unary_kernel(unary_impl<float, SinhF, kGrainMath>));
  table.add("Cosh", unary_kernel(unary_impl<float, CoshF, kGrainMath>));
  table.add("Asinh", unary_kernel(unary_impl<float, AsinhF, kGrainMath>));
  table.add("Acosh", unary_kernel(unary_impl<float, AcoshF, kGrainMath>));
  table.add("Atanh", unary_kernel(unary_impl<float, AtanhF, kGrainMath>));
  table.add("Softplus", unary_kernel(unary_impl<float, SoftplusF, kGrainMath>));
  table.add("Softsign", unary_kernel(unary_impl<float, SoftsignF, kGrainSimple>));
  table.add("IsNaN", is_kernel(false));
  table.add("IsInf", is_kernel(true));
  table.add("Selu", param_kernel(selu_impl, "alpha", 1.67326319217681884765625, "gamma",
                                 1.05070102214813232421875));
  table.add("Celu", param_kernel(celu_impl, "alpha", 1.0));
  table.add("ThresholdedRelu", param_kernel(thresholded_relu_impl, "alpha", 1.0));
  table.add("Shrink", shrink_kernel());
  // Mod: attribute fmod picks the sign rule (ew_ops.h); floats take fmod = 1 only (the schema).
  table.add("Mod", mod_kernel());
  table.add("GreaterOrEqual", binary_kernel(binary_impl<float, GreaterOrEqualOp, kGrainSimple, int64_t>,
                                            binary_impl<int64_t, GreaterOrEqualOp, kGrainSimple, int64_t>));
  table.add("LessOrEqual", binary_kernel(binary_impl<float, LessOrEqualOp, kGrainSimple, int64_t>,
                                         binary_impl<int64_t, LessOrEqualOp, kGrainSimple, int64_t>));
  table.add("Xor", binary_kernel(nullptr, binary_impl<int64_t, XorOp, kGrainSimple>));
  table.add("BitShift", bitshift_kernel());
  table.add("Gelu", gelu_kernel());
  table.add("Cast", cast_kernel());
  table.add("Where", where_kernel());
}

}  // namespace fusebox::cpu
