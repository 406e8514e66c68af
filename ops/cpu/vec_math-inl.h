// The element-wise math of the CPU kernels, written once over Google Highway's vectors: exp and
// the activations the GEMM applies in its store (relu, gelu in its erf and tanh forms, tanh,
// sigmoid), and a span map. math.h has the same functions one float at a time; these are the
// same polynomials, the same order of operations and the same NaN / inf / underflow behaviour,
// Lanes(d) floats at a time (tests/ops/vector_math_test.cpp holds both to double-precision
// references, and to each other on every level).
//
// A Highway "-inl" header: included once per target by a file that compiles itself for several
// (foreach_target.h, with HWY_TARGET_INCLUDE naming the file), it defines the functions below in
// fusebox::cpu::N_AVX3, N_AVX2, ... . vector_math.cpp runs them over spans; packed_gemm.cpp and
// attention.cpp call them on registers from their own intrinsic code (avx512.h, avx2.h say how).
//
// Min and Max are x86's here: for a NaN first operand they return the second, which the clamps
// below rely on to keep the float-to-int conversion defined (the NaN is put back at the end).
// Only the x86 targets (AVX3, AVX2) are compiled; a port elsewhere must revisit those clamps.

// Per-target include guard (Highway's idiom): the header is read again for each target.
#if defined(FUSEBOX_OPS_CPU_VEC_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FUSEBOX_OPS_CPU_VEC_MATH_INL_H_
#undef FUSEBOX_OPS_CPU_VEC_MATH_INL_H_
#else
#define FUSEBOX_OPS_CPU_VEC_MATH_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

#include "ops/cpu/vector_math.h"  // GemmAct

HWY_BEFORE_NAMESPACE();
namespace fusebox::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln(2)/2: math.h's exp_f32 (Cephes expf).
// ExpParts gives y = exp(r) and n (as a float); the callers below apply 2^n.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpParts(D d, V x, V& fn) {
  // Finite even for a NaN x (Min and Max: see the header), so the conversions stay defined.
  const V xc = hn::Max(hn::Min(x, hn::Set(d, 89.0f)), hn::Set(d, -87.33654475f));
  fn = hn::Round(hn::Mul(xc, hn::Set(d, 1.44269504088896341f)));
  V r = hn::NegMulAdd(fn, hn::Set(d, 0.693359375f), xc);  // ln 2 in two parts: r is exact
  r = hn::NegMulAdd(fn, hn::Set(d, -2.12194440e-4f), r);
  V p = hn::Set(d, 1.9875691500e-4f);
  p = hn::MulAdd(p, r, hn::Set(d, 1.3981999507e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 8.3334519073e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 4.1665795894e-2f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.6666665459e-1f));
  p = hn::MulAdd(p, r, hn::Set(d, 5.0000001201e-1f));
  return hn::Add(hn::MulAdd(hn::Mul(p, r), r, r), hn::Set(d, 1.0f));
}

#if HWY_TARGET > HWY_AVX3
// y 2^n as two factors 2^(n/2) 2^(n - n/2) built in the exponent field, so n = 128 (results near
// FLT_MAX) needs no special case. n is read from the bits of fn + 1.5 * 2^23, m = 0x4B400000 + n
// (fn is an integer in -126 .. 128, so the sum is exact): one add, where Highway's ConvertTo adds
// an overflow fix-up this range never needs (it cost AVX2's exp 20%). With C = 0x4B400000 even,
// m >> 1 = C / 2 + floor(n / 2), so the biased exponents are (m >> 1) - C / 2 + 127 and
// m - (m >> 1) - C / 2 + 127.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Scale2n(D d, V y, V fn) {
  const hn::RebindToSigned<D> di;
  const auto m = hn::BitCast(di, hn::Add(fn, hn::Set(d, 12582912.0f)));
  const auto h = hn::ShiftRight<1>(m);
  const auto k = hn::Set(di, 127 - 0x25A00000);
  const V f1 = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(h, k)));
  const V f2 = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::Sub(m, h), k)));
  return hn::Mul(hn::Mul(y, f1), f2);
}

// exp without Exp's last two selects: below ln(FLT_MIN) it gives about exp(ln FLT_MIN) instead of
// 0, and for NaN exp(89) = inf. For callers in which neither changes the result (GeluTanh: x /
// (1 + e) is the same for e = 0 and 1.2e-38, and NaN for a NaN x either way).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpUnfixed(D d, V x) {
  V fn;
  const V y = ExpParts(d, x, fn);
  return Scale2n(d, y, fn);
}
#endif

// exp: 0 below ln(FLT_MIN) (no denormals: softmax over masked scores would hit them constantly,
// ~100x slower on x86), NaN in, NaN out.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Exp(D d, V x) {
  V fn;
  const V y = ExpParts(d, x, fn);
#if HWY_TARGET <= HWY_AVX3
  // Target-specific: AVX-512's vscalefps applies 2^n in one instruction (no split for n = 128);
  // Highway has no generic op for it. Zero-masked, so lanes below ln(FLT_MIN) are never scaled:
  // a denormal result costs a microcode assist (a GEMM epilogue ran 1.7x slower on an AVX-512
  // Xeon when the scaling was done first and the lanes zeroed after).
  const auto keep = hn::Not(hn::Lt(x, hn::Set(d, -87.33654475f)));
  const V res{_mm512_maskz_scalef_ps(keep.raw, y.raw, fn.raw)};
#else
  // Zeroed before the scaling, for the same reason: 0 * 2^n makes no denormal.
  const V res = Scale2n(d, hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, -87.33654475f)), y), fn);
#endif
  return hn::IfThenElse(hn::IsNaN(x), x, res);
}

// Relu that keeps NaN (Max(x, 0) would turn it into 0).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Relu(D d, V x) {
  return hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
}

// Gelu, exact form, 0.5 x (1 + erf(x / sqrt 2)): erf is Eigen's (and XLA's) rational
// x P(x^2) / Q(x^2) on [-4, 4], clamped to [-1, 1] (math.h: erf_f32).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V GeluErf(D d, V x) {
  const V u = hn::Mul(x, hn::Set(d, 0.70710678118654752f));
  const V uc = hn::Min(hn::Max(u, hn::Set(d, -4.0f)), hn::Set(d, 4.0f));
  const V x2 = hn::Mul(uc, uc);
  V p = hn::MulAdd(x2, hn::Set(d, -2.72614225801306e-10f), hn::Set(d, 2.77068142495902e-08f));
  p = hn::MulAdd(x2, p, hn::Set(d, -2.10102402082508e-06f));
  p = hn::MulAdd(x2, p, hn::Set(d, -5.69250639462346e-05f));
  p = hn::MulAdd(x2, p, hn::Set(d, -7.34990630326855e-04f));
  p = hn::MulAdd(x2, p, hn::Set(d, -2.95459980854025e-03f));
  p = hn::MulAdd(x2, p, hn::Set(d, -1.60960333262415e-02f));
  V q = hn::MulAdd(x2, hn::Set(d, -1.45660718464996e-05f), hn::Set(d, -2.13374055278905e-04f));
  q = hn::MulAdd(x2, q, hn::Set(d, -1.68282697438203e-03f));
  q = hn::MulAdd(x2, q, hn::Set(d, -7.37332916720468e-03f));
  q = hn::MulAdd(x2, q, hn::Set(d, -1.42647390514189e-02f));
  V erf = hn::Div(hn::Mul(uc, p), q);
  erf = hn::Min(hn::Max(erf, hn::Set(d, -1.0f)), hn::Set(d, 1.0f));
  const V half_x = hn::Mul(x, hn::Set(d, 0.5f));
  // NaN in, NaN out (the clamps above would turn it into +-1).
  return hn::IfThenElse(hn::IsNaN(x), x, hn::MulAdd(half_x, erf, half_x));
}

// sigmoid: 1 / (1 + exp(-x)).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Sigmoid(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  return hn::Div(one, hn::Add(one, Exp(d, hn::Sub(hn::Zero(d), x))));
}

// tanh (Cephes tanhf): the odd polynomial below |x| = 0.625, where 1 - 2 / (e^2|x| + 1) would
// cancel, the exp form (sign restored) above it.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Tanh(D d, V x) {
  const V ax = hn::Abs(x);
  const V z = hn::Mul(x, x);
  V p = hn::Set(d, -5.70498872745e-3f);
  p = hn::MulAdd(p, z, hn::Set(d, 2.06390887954e-2f));
  p = hn::MulAdd(p, z, hn::Set(d, -5.37397155531e-2f));
  p = hn::MulAdd(p, z, hn::Set(d, 1.33314422036e-1f));
  p = hn::MulAdd(p, z, hn::Set(d, -3.33332819422e-1f));
  const V small = hn::MulAdd(hn::Mul(p, z), x, x);
  const V e = Exp(d, hn::Add(ax, ax));
  V big = hn::Sub(hn::Set(d, 1.0f), hn::Div(hn::Set(d, 2.0f), hn::Add(e, hn::Set(d, 1.0f))));
  big = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Sub(hn::Zero(d), big), big);
  const V r = hn::IfThenElse(hn::Lt(ax, hn::Set(d, 0.625f)), small, big);
  return hn::IfThenElse(hn::IsNaN(x), x, r);  // NaN stays NaN
}

// Gelu, tanh form: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), written as
// x / (1 + exp(-2u)): the same value without the cancellation of 1 + tanh(u) for negative x.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V GeluTanh(D d, V x) {
  const V x3 = hn::Mul(hn::Mul(x, x), x);
  const V u = hn::Mul(hn::Set(d, 0.7978845608028654f), hn::MulAdd(hn::Set(d, 0.044715f), x3, x));
  const V z = hn::Mul(hn::Set(d, -2.0f), u);
#if HWY_TARGET <= HWY_AVX3
  const V e = Exp(d, z);  // its masked scaling makes no denormal (see Exp)
#else
  const V e = ExpUnfixed(d, z);
#endif
  return hn::Div(x, hn::Add(hn::Set(d, 1.0f), e));
}

// The activation ACT of a vector (kNone: x itself).
template <GemmAct ACT, class D, class V = hn::Vec<D>>
HWY_INLINE V Activate(D d, V x) {
  if constexpr (ACT == GemmAct::kRelu)
    return Relu(d, x);
  else if constexpr (ACT == GemmAct::kGelu)
    return GeluErf(d, x);
  else if constexpr (ACT == GemmAct::kGeluTanh)
    return GeluTanh(d, x);
  else if constexpr (ACT == GemmAct::kTanh)
    return Tanh(d, x);
  else if constexpr (ACT == GemmAct::kSigmoid)
    return Sigmoid(d, x);
  else
    return x;
}

// y[i] = f(d, x[i]) for n floats, a whole vector at a time and the tail masked (in place is
// fine).
template <class F>
HWY_INLINE void MapSpan(const float* x, float* y, int64_t n, F f) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {  // two at a time, as GCC unrolls a plain loop
    const auto a = f(d, hn::LoadU(d, x + i));
    const auto b = f(d, hn::LoadU(d, x + i + lanes));
    hn::StoreU(a, d, y + i);
    hn::StoreU(b, d, y + i + lanes);
  }
  if (i + lanes <= n) {
    hn::StoreU(f(d, hn::LoadU(d, x + i)), d, y + i);
    i += lanes;
  }
  if (i < n) {
    const auto m = hn::FirstN(d, static_cast<size_t>(n - i));
    hn::BlendedStore(f(d, hn::MaskedLoad(m, d, x + i)), m, d, y + i);
  }
}

}  // namespace fusebox::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
