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

}  // namespace fusebox::cpu
#endif  // HWY_ONCE
