// The element-wise math of the CPU kernels, written once over Google Highway's vectors: exp and
// the activations the GEMM applies in its store (relu, gelu in its erf and tanh forms, tanh,
// sigmoid), and a span map. math.h has the same functions one float at a time; these are the
// same polynomials, the same order of operations and the same NaN / inf / underflow behaviour,
// Lanes(d) floats at a time (tests/ops/vector_math_test.cpp holds both to double-precision
// references, and to each other on every level). Then the row reductions built on them:
// attention's online softmax and LayerNorm's three passes (their kernels' tests hold them to
// double-precision loops on every level).
//
// A Highway "-inl" header: included once per target by a file that compiles itself for several
// (foreach_target.h, with HWY_TARGET_INCLUDE naming the file), it defines the functions below in
// fusebox::cpu::N_AVX3, N_AVX2, ... . vector_math.cpp runs them over spans; gemm_micro-inl.h
// applies the activations in registers; attention.cpp and normalization.cpp call the row
// functions per row.
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
#include <limits>

#include "ops/cpu/math.h"         // exp_f32, for the softmax's scalar correction
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


// ---- Row reductions: the online softmax of attention and LayerNorm's three passes ----
// Plain inline functions, not HWY_INLINE: a kernel file's untargeted code calls them per row
// (N_AVX2::LnSum), which GCC refuses for an always-inline function of another target. Vector
// targets only: the portable level is the kernel file's own scalar loop.
#if HWY_TARGET != HWY_SCALAR

// The sum and the maximum of v's lanes, halving the vector until 128 bits are left: the order
// of adds of the hand-written AVX2 and AVX-512 reductions these replaced (so results stayed
// bit-identical), and no lane-crossing shuffle on a whole 256 or 512-bit vector (Highway's
// SumOfLanes broadcasts the result to every lane first).
template <class D, class V = hn::Vec<D>>
HWY_INLINE hn::TFromD<D> HorizontalSum(D d, V v) {
  if constexpr (hn::MaxLanes(D()) * sizeof(hn::TFromD<D>) > 16) {
    const hn::Half<D> dh;
    return HorizontalSum(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else {
    return hn::GetLane(hn::SumOfLanes(d, v));
  }
}
template <class D, class V = hn::Vec<D>>
HWY_INLINE hn::TFromD<D> HorizontalMax(D d, V v) {
  if constexpr (hn::MaxLanes(D()) * sizeof(hn::TFromD<D>) > 16) {
    const hn::Half<D> dh;
    return HorizontalMax(dh, hn::Max(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else {
    return hn::GetLane(hn::MaxOfLanes(d, v));
  }
}

// One chunk of attention's online softmax (attention.cpp) over `rows` score rows of `kc` floats,
// ld apart: folds the chunk's maxima into row_max, writes P = exp(S - row_max) over S, adds its
// sums to row_sum, and returns in correction[i] the factor the rows accumulated so far must be
// scaled by, exp(old max - new max) (1 for the first chunk). The tail is masked: its lanes take
// no part in the max (-inf) or the sum (zero).
inline void SoftmaxChunk(float* s, int64_t rows, int64_t kc, int64_t ld, float* row_max, float* row_sum,
                         float* correction) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t full = kc / lanes * lanes;
  const auto tail = hn::FirstN(d, static_cast<size_t>(kc - full));
  const V neg_inf = hn::Set(d, kNegInf);
  for (int64_t i = 0; i < rows; ++i) {
    float* srow = s + i * ld;
    V vmax = hn::Set(d, row_max[i]);
    for (int64_t j = 0; j < full; j += lanes) vmax = hn::Max(vmax, hn::LoadU(d, srow + j));
    if (full < kc) vmax = hn::Max(vmax, hn::IfThenElse(tail, hn::MaskedLoad(tail, d, srow + full), neg_inf));
    const float m = HorizontalMax(d, vmax);
    // Every key so far masked (-inf): exp against 0 instead of -inf, which gives P = 0, not NaN.
    const V vm = hn::Set(d, m == kNegInf ? 0.0f : m);
    V vsum = hn::Zero(d);
    for (int64_t j = 0; j < full; j += lanes) {
      const V e = Exp(d, hn::Sub(hn::LoadU(d, srow + j), vm));
      hn::StoreU(e, d, srow + j);
      vsum = hn::Add(vsum, e);
    }
    if (full < kc) {
      const V e = Exp(d, hn::Sub(hn::MaskedLoad(tail, d, srow + full), vm));
      hn::BlendedStore(e, tail, d, srow + full);
      vsum = hn::Add(vsum, hn::IfThenElseZero(tail, e));
    }
    correction[i] = row_sum[i] == 0.0f ? 1.0f : exp_f32(row_max[i] - m);
    row_sum[i] = row_sum[i] * correction[i] + HorizontalSum(d, vsum);
    row_max[i] = m;
  }
}

// LayerNorm's three passes over a row of n floats (normalization.cpp says why they are in double
// and why the mean comes in as a float pair m + m_lo):
//   LnSum    the row's sum in double (with skip: y = x + skip is stored, and its floats summed)
//   LnSqDev  the sum of (x - mean)^2 in double, the difference and square in double
//   LnNorm   y = ((x - m) - m_lo) * s * scale + bias (no bias: without the add)
// A vector of floats is two of doubles, and two vectors a step feed four accumulators: the double
// adds' latency, not their throughput, would bound one chain. Tails are masked loads, which read
// zeros past n.
inline double LnSum(const float* x, const float* skip, float* y, int64_t n) {
  const hn::ScalableTag<float> d;
  const hn::Half<decltype(d)> dh;
  const hn::Repartition<double, decltype(d)> dd;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto a0 = hn::Zero(dd), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    auto v0 = hn::LoadU(d, x + i), v1 = hn::LoadU(d, x + i + lanes);
    if (skip) {
      v0 = hn::Add(v0, hn::LoadU(d, skip + i));
      v1 = hn::Add(v1, hn::LoadU(d, skip + i + lanes));
      hn::StoreU(v0, d, y + i);
      hn::StoreU(v1, d, y + i + lanes);
    }
    a0 = hn::Add(a0, hn::PromoteTo(dd, hn::LowerHalf(dh, v0)));
    a1 = hn::Add(a1, hn::PromoteTo(dd, hn::UpperHalf(dh, v0)));
    a2 = hn::Add(a2, hn::PromoteTo(dd, hn::LowerHalf(dh, v1)));
    a3 = hn::Add(a3, hn::PromoteTo(dd, hn::UpperHalf(dh, v1)));
  }
  for (; i < n; i += lanes) {
    const auto m = hn::FirstN(d, static_cast<size_t>(n - i));  // every lane while `lanes` remain
    auto v = hn::MaskedLoad(m, d, x + i);
    if (skip) {
      v = hn::Add(v, hn::MaskedLoad(m, d, skip + i));
      hn::BlendedStore(v, m, d, y + i);
    }
    a0 = hn::Add(a0, hn::PromoteTo(dd, hn::LowerHalf(dh, v)));
    a1 = hn::Add(a1, hn::PromoteTo(dd, hn::UpperHalf(dh, v)));
  }
  return HorizontalSum(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
}

inline double LnSqDev(const float* x, double mean, int64_t n) {
  const hn::ScalableTag<float> d;
  const hn::Half<decltype(d)> dh;
  const hn::Repartition<double, decltype(d)> dd;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto mu = hn::Set(dd, mean);
  auto a0 = hn::Zero(dd), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto v0 = hn::LoadU(d, x + i), v1 = hn::LoadU(d, x + i + lanes);
    const auto t0 = hn::Sub(hn::PromoteTo(dd, hn::LowerHalf(dh, v0)), mu);
    const auto t1 = hn::Sub(hn::PromoteTo(dd, hn::UpperHalf(dh, v0)), mu);
    const auto t2 = hn::Sub(hn::PromoteTo(dd, hn::LowerHalf(dh, v1)), mu);
    const auto t3 = hn::Sub(hn::PromoteTo(dd, hn::UpperHalf(dh, v1)), mu);
    a0 = hn::MulAdd(t0, t0, a0);
    a1 = hn::MulAdd(t1, t1, a1);
    a2 = hn::MulAdd(t2, t2, a2);
    a3 = hn::MulAdd(t3, t3, a3);
  }
  for (; i < n; i += lanes) {
    const size_t left = static_cast<size_t>(n - i);
    const size_t half = static_cast<size_t>(lanes / 2);
    const auto v = hn::MaskedLoad(hn::FirstN(d, left), d, x + i);
    // Lanes past n would add mean^2: their differences are zeroed.
    const auto t0 = hn::IfThenElseZero(hn::FirstN(dd, left), hn::Sub(hn::PromoteTo(dd, hn::LowerHalf(dh, v)), mu));
    const auto t1 = hn::IfThenElseZero(hn::FirstN(dd, left > half ? left - half : 0),
                                       hn::Sub(hn::PromoteTo(dd, hn::UpperHalf(dh, v)), mu));
    a0 = hn::MulAdd(t0, t0, a0);
    a1 = hn::MulAdd(t1, t1, a1);
  }
  return HorizontalSum(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
}

inline void LnNorm(const float* x, float m, float m_lo, float s, const float* scale, const float* bias, float* y,
                   int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vm = hn::Set(d, m), vlo = hn::Set(d, m_lo), vs = hn::Set(d, s);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto t = hn::Mul(hn::Sub(hn::Sub(hn::LoadU(d, x + i), vm), vlo), vs);
    const auto g = hn::LoadU(d, scale + i);
    hn::StoreU(bias ? hn::MulAdd(t, g, hn::LoadU(d, bias + i)) : hn::Mul(t, g), d, y + i);
  }
  if (i < n) {
    const auto mk = hn::FirstN(d, static_cast<size_t>(n - i));
    const auto t = hn::Mul(hn::Sub(hn::Sub(hn::MaskedLoad(mk, d, x + i), vm), vlo), vs);
    const auto g = hn::MaskedLoad(mk, d, scale + i);
    hn::BlendedStore(bias ? hn::MulAdd(t, g, hn::MaskedLoad(mk, d, bias + i)) : hn::Mul(t, g), mk, d, y + i);
  }
}
#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace fusebox::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
