#include "ops/cpu/vector_math.h"

#include <cstring>

#include "ops/cpu/avx2.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/math.h"

namespace fusebox::cpu {
namespace {

template <typename F>
void map_span(const float* x, float* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

FUSEBOX_AVX512 void act_span512(GemmAct act, const float* x, float* y, int64_t n) {
  switch (act) {
    case GemmAct::kNone:
      if (x != y) std::memmove(y, x, static_cast<size_t>(n) * sizeof(float));
      break;
    case GemmAct::kRelu:
      map_span(x, y, n, relu_f32);
      break;
    case GemmAct::kGelu:
      map_span512<gelu_erf512>(x, y, n);
      break;
    case GemmAct::kGeluTanh:
      map_span512<gelu_tanh512>(x, y, n);
      break;
    case GemmAct::kTanh:
      map_span512<tanh512>(x, y, n);
      break;
    case GemmAct::kSigmoid:
      map_span512<sigmoid512>(x, y, n);
      break;
  }
}

FUSEBOX_AVX2 void act_span256(GemmAct act, const float* x, float* y, int64_t n) {
  switch (act) {
    case GemmAct::kNone:
      if (x != y) std::memmove(y, x, static_cast<size_t>(n) * sizeof(float));
      break;
    case GemmAct::kRelu:
      map_span256<relu256>(x, y, n);
      break;
    case GemmAct::kGelu:
      map_span256<gelu_erf256>(x, y, n);
      break;
    case GemmAct::kGeluTanh:
      map_span256<gelu_tanh256>(x, y, n);
      break;
    case GemmAct::kTanh:
      map_span256<tanh256>(x, y, n);
      break;
    case GemmAct::kSigmoid:
      map_span256<sigmoid256>(x, y, n);
      break;
  }
}

void act_span_portable(GemmAct act, const float* x, float* y, int64_t n) {
  switch (act) {
    case GemmAct::kNone:
      if (x != y) std::memmove(y, x, static_cast<size_t>(n) * sizeof(float));
      break;
    case GemmAct::kRelu:
      map_span(x, y, n, relu_f32);
      break;
    case GemmAct::kGelu:
      map_span(x, y, n, gelu_erf_f32);
      break;
    case GemmAct::kGeluTanh:
      map_span(x, y, n, gelu_tanh_f32);
      break;
    case GemmAct::kTanh:
      map_span(x, y, n, tanh_f32);
      break;
    case GemmAct::kSigmoid:
      map_span(x, y, n, sigmoid_f32);
      break;
  }
}

}  // namespace

void gemm_act_span(Isa isa, GemmAct act, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  switch (isa) {
    case Isa::kAvx512:
      act_span512(act, x, y, n);
      return;
    case Isa::kAvx2:
      act_span256(act, x, y, n);
      return;
    case Isa::kPortable:
      act_span_portable(act, x, y, n);
      return;
  }
}

FUSEBOX_AVX512 void exp_span512(const float* x, float* y, int64_t n) {
  map_span512<exp512>(x, y, n);
}
FUSEBOX_AVX2 void exp_span256(const float* x, float* y, int64_t n) {
  map_span256<exp256>(x, y, n);
}

void exp_span(Isa isa, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  switch (isa) {
    case Isa::kAvx512:
      exp_span512(x, y, n);
      return;
    case Isa::kAvx2:
      exp_span256(x, y, n);
      return;
    case Isa::kPortable:
      map_span(x, y, n, exp_f32);
      return;
  }
}

}  // namespace fusebox::cpu
