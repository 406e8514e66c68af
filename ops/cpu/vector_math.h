#pragma once
// Element-wise math over spans of floats on a kernel's instruction-set level (isa.h): the
// activations the GEMM applies in its store and the element-wise ops share, and exp. The vector
// levels run vec_math-inl.h's functions, written once over Highway and compiled for AVX-512 and
// AVX2; the portable one is math.h's scalar definitions, which they mirror.
#include <cstdint>

#include "ops/cpu/isa.h"

namespace fusebox::cpu {

// kGelu: the exact (erf) form; kGeluTanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
enum class GemmAct : uint8_t { kNone, kRelu, kGelu, kGeluTanh, kTanh, kSigmoid };

// y[i] = act(x[i]) for n floats (in place is fine) on `isa`'s vector code: the epilogue as a
// pass, for results the GEMM could not finish in registers and for the element-wise ops.
void gemm_act_span(Isa isa, GemmAct act, const float* x, float* y, int64_t n);
// y[i] = exp(x[i]) (exp_f32 of math.h; vec_math-inl.h's Exp on the vector levels), in place is fine.
void exp_span(Isa isa, const float* x, float* y, int64_t n);

// The clamping activations a Conv applies as it stores, in place over n floats: Clip to [a, b];
// HardSigmoid max(0, min(1, a v + b)); HardSwish v times HardSigmoid with a = 1/6, b = 1/2. With
// the plain loops' comparisons on every level: a NaN compares false, so Clip keeps it and
// HardSigmoid's clamp passes it on.
enum class ClampAct : uint8_t { kClip, kHardSigmoid, kHardSwish };
void clamp_act_span(Isa isa, ClampAct act, float a, float b, float* v, int64_t n);

}  // namespace fusebox::cpu
