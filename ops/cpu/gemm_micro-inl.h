// The packed GEMM's micro-kernel, written once over Google Highway's vectors: C[R x NV vectors]
// (+)= A[R x kc] * B[kc x NV vectors], then the epilogue in registers before the store.
// packed_gemm.cpp says how the blocks and panels around it are laid out and how big R and NV are
// on each level (a register budget: AVX3 runs 14 x 2 zmm, AVX2 6 x 2 or 2 x 4 ymm).
//
// A Highway "-inl" header, like vec_math-inl.h (which it includes for the activations): included
// once per target through gemm_micro.h, it defines GemmMicroKernel in fusebox::cpu::N_AVX3,
// N_AVX2, ... and packed_gemm.cpp takes the instantiations it needs into its kernel tables.

// Per-target include guard (Highway's idiom): the header is read again for each target.
#if defined(FUSEBOX_OPS_CPU_GEMM_MICRO_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FUSEBOX_OPS_CPU_GEMM_MICRO_INL_H_
#undef FUSEBOX_OPS_CPU_GEMM_MICRO_INL_H_
#else
#define FUSEBOX_OPS_CPU_GEMM_MICRO_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "ops/cpu/vec_math-inl.h"  // Activate
#include "ops/cpu/vector_math.h"   // GemmAct

HWY_BEFORE_NAMESPACE();
namespace fusebox::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR  // vector targets only: the portable level is packed_gemm's loop

// C[R x NV * N] (+)= A[R x kc] * B[kc x NV * N], N = the target's floats per vector.
//  a:    the A block, row r at a + r * a_stride. kAs, when not 0, is that stride fixed at compile
//        time (the caller's buffer fixes it per R): every row is then a constant displacement
//        from one pointer, so the 14-row AVX3 block needs no per-row pointer registers and keeps
//        its 28 accumulators and 2 B vectors in 30 of the 32 zmm.
//  b:    kc rows of B, ldb floats apart (kLdb likewise), each row aligned to a vector.
//  c:    R rows, ldc floats apart. beta == 0: C is written without being read.
//  last: the valid columns of the last vector (1..N). C and bias are masked past them; B is
//        zero-padded, so it is read whole.
//  bias: NV * N floats, or null. The epilogue adds it, then applies ACT, before the store;
//        callers ask for it with the last K block only. ACT is a template parameter so the plain
//        kernels stay small: Gelu inlined 28 times makes a kernel 7x larger, and as a run-time
//        switch that cost the plain GEMM a few percent.
// Only the last vector is masked, and only when partial: AMD microcodes masked stores (179a606).
template <int R, int NV, GemmAct ACT, int64_t kAs, int64_t kLdb>
HWY_ATTR void GemmMicroKernel(int64_t kc, const float* HWY_RESTRICT a, int64_t a_stride,
                              const float* HWY_RESTRICT b, int64_t ldb, float* HWY_RESTRICT c,
                              int64_t ldc, float beta, int last, const float* HWY_RESTRICT bias) {
  constexpr hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(d));
  const int64_t as = kAs != 0 ? kAs : a_stride;
  const int64_t bs = kLdb != 0 ? kLdb : ldb;
  // Independent accumulator sets over K, enough for 8 FMA chains in flight (4-cycle latency x 2
  // FMA pipes), summed at the end: a GEMV (R = 1) still issues two FMAs a cycle.
  constexpr int kU = std::max(1, (8 + R * NV - 1) / (R * NV));
  V acc[kU][R][NV];
#pragma GCC unroll 64
  for (int u = 0; u < kU; ++u)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[u][r][v] = hn::Zero(d);

  int64_t p = 0;
  for (; p + kU <= kc; p += kU) {
#pragma GCC unroll 8
    for (int u = 0; u < kU; ++u) {
      const float* bp = b + (p + u) * bs;
      V bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = hn::Load(d, bp + N * v);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const V av = hn::Set(d, a[r * as + p + u]);  // folded into the FMA as a broadcast
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[u][r][v] = hn::MulAdd(av, bv[v], acc[u][r][v]);
      }
    }
  }
  for (; p < kc; ++p) {
    const float* bp = b + p * bs;
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = hn::Load(d, bp + N * v);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const V av = hn::Set(d, a[r * as + p]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[0][r][v] = hn::MulAdd(av, bv[v], acc[0][r][v]);
    }
  }
#pragma GCC unroll 8
  for (int u = 1; u < kU; ++u)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[0][r][v] = hn::Add(acc[0][r][v], acc[u][r][v]);

  const bool partial = last < N;
  const auto mask = hn::FirstN(d, static_cast<size_t>(last));
  const V vbeta = hn::Set(d, beta);
  V vbias[NV];  // zero when there is no bias (not added then)
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    vbias[v] = hn::Zero(d);
    if (bias)
      vbias[v] = v == NV - 1 && partial ? hn::MaskedLoad(mask, d, bias + N * v)
                                        : hn::LoadU(d, bias + N * v);
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const bool masked = v == NV - 1 && partial;
      V x = acc[0][r][v];
      if (beta != 0.0f) {
        const V old = masked ? hn::MaskedLoad(mask, d, cr + N * v) : hn::LoadU(d, cr + N * v);
        x = hn::MulAdd(vbeta, old, x);
      }
      if (bias) x = hn::Add(x, vbias[v]);
      x = Activate<ACT>(d, x);
      if (masked)
        hn::BlendedStore(x, mask, d, cr + N * v);
      else
        hn::StoreU(x, d, cr + N * v);
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace fusebox::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
