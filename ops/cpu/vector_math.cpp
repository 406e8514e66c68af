// Compiled once per Highway target (foreach_target.h re-includes this file; vec_math-inl.h says
// which targets), then, once, the dispatch from our Isa to a target's functions.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/vector_math.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "ops/cpu/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace fusebox::cpu::HWY_NAMESPACE {

template <GemmAct ACT>
void ActSpanOf(const float* x, float* y, int64_t n) {
  MapSpan(x, y, n, [](auto d, auto v) HWY_ATTR { return Activate<ACT>(d, v); });
}

void ActSpan(GemmAct act, const float* x, float* y, int64_t n) {
  switch (act) {
    case GemmAct::kNone:
      break;  // the caller's memmove
    case GemmAct::kRelu:
      return ActSpanOf<GemmAct::kRelu>(x, y, n);
    case GemmAct::kGelu:
      return ActSpanOf<GemmAct::kGelu>(x, y, n);
    case GemmAct::kGeluTanh:
      return ActSpanOf<GemmAct::kGeluTanh>(x, y, n);
    case GemmAct::kTanh:
      return ActSpanOf<GemmAct::kTanh>(x, y, n);
    case GemmAct::kSigmoid:
      return ActSpanOf<GemmAct::kSigmoid>(x, y, n);
  }
}

void ExpSpan(const float* x, float* y, int64_t n) {
  MapSpan(x, y, n, [](auto d, auto v) HWY_ATTR { return Exp(d, v); });
}

template <ClampAct K>
void ClampSpanOf(float a, float b, float* v, int64_t n) {
  MapSpan(v, v, n, [a, b](auto d, auto x) HWY_ATTR {
    const auto va = hn::Set(d, a), vb = hn::Set(d, b);
    if constexpr (K == ClampAct::kClip) {
      const auto lo = hn::IfThenElse(hn::Lt(x, va), va, x);
      return hn::IfThenElse(hn::Gt(lo, vb), vb, lo);
    } else {
      const auto zero = hn::Zero(d), one = hn::Set(d, 1.0f);
      const auto g = hn::MulAdd(va, x, vb);
      const auto h = hn::IfThenElse(hn::Gt(g, one), one, hn::IfThenElse(hn::Lt(g, zero), zero, g));
      if constexpr (K == ClampAct::kHardSigmoid)
        return h;
      else
        return hn::Mul(x, h);
    }
  });
}

void ClampSpan(ClampAct act, float a, float b, float* v, int64_t n) {
  switch (act) {
    case ClampAct::kClip:
      return ClampSpanOf<ClampAct::kClip>(a, b, v, n);
    case ClampAct::kHardSigmoid:
      return ClampSpanOf<ClampAct::kHardSigmoid>(a, b, v, n);
    case ClampAct::kHardSwish:
      return ClampSpanOf<ClampAct::kHardSwish>(a, b, v, n);
  }
}

}  // namespace fusebox::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cstring>

#include "ops/cpu/math.h"
#include "ops/cpu/vector_math.h"

namespace fusebox::cpu {
namespace {

template <typename F>
void map_span(const float* x, float* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// The portable level: math.h's scalar functions, which the compiler vectorizes for the build's
// target.
void act_span_portable(GemmAct act, const float* x, float* y, int64_t n) {
  switch (act) {
    case GemmAct::kNone:
      break;
    case GemmAct::kRelu:
      return map_span(x, y, n, relu_f32);
    case GemmAct::kGelu:
      return map_span(x, y, n, gelu_erf_f32);
    case GemmAct::kGeluTanh:
      return map_span(x, y, n, gelu_tanh_f32);
    case GemmAct::kTanh:
      return map_span(x, y, n, tanh_f32);
    case GemmAct::kSigmoid:
      return map_span(x, y, n, sigmoid_f32);
  }
}

// The portable level of clamp_act_span.
void clamp_span_portable(ClampAct act, float a, float b, float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (act == ClampAct::kClip) {
      v[i] = v[i] < a ? a : (v[i] > b ? b : v[i]);
      continue;
    }
    const float g = a * v[i] + b;
    const float h = g > 1.0f ? 1.0f : (g < 0.0f ? 0.0f : g);
    v[i] = act == ClampAct::kHardSigmoid ? h : v[i] * h;
  }
}

}  // namespace

void gemm_act_span(Isa isa, GemmAct act, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  if (act == GemmAct::kNone) {
    if (x != y) std::memmove(y, x, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  switch (isa) {
    case Isa::kAvx512:
      return N_AVX3::ActSpan(act, x, y, n);
    case Isa::kAvx2:
      return N_AVX2::ActSpan(act, x, y, n);
    case Isa::kPortable:
      return act_span_portable(act, x, y, n);
  }
}

void exp_span(Isa isa, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  switch (isa) {
    case Isa::kAvx512:
      return N_AVX3::ExpSpan(x, y, n);
    case Isa::kAvx2:
      return N_AVX2::ExpSpan(x, y, n);
    case Isa::kPortable:
      return map_span(x, y, n, exp_f32);
  }
}

void clamp_act_span(Isa isa, ClampAct act, float a, float b, float* v, int64_t n) {
  if (n <= 0) return;
  switch (isa) {
    case Isa::kAvx512:
      return N_AVX3::ClampSpan(act, a, b, v, n);
    case Isa::kAvx2:
      return N_AVX2::ClampSpan(act, a, b, v, n);
    case Isa::kPortable:
      return clamp_span_portable(act, a, b, v, n);
  }
}

}  // namespace fusebox::cpu
#endif  // HWY_ONCE
