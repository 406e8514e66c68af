// The activations a Conv applies as it stores (conv_common.h).
#include "ops/cpu/conv_common.h"

#include <algorithm>

#include "ops/cpu/avx2.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

namespace {

// Clip, HardSigmoid and HardSwish over n floats in AVX2 registers, with the plain loops'
// comparisons (a NaN compares false, so Clip keeps it and HardSigmoid's clamp passes it on).
// Clip to [a, b]: kind 0; HardSigmoid max(0, min(1, a v + b)): kind 1; HardSwish v * that with
// a = 1/6, b = 1/2: kind 2.
template <int kKind>
FUSEBOX_AVX2 void clamp_act_avx2(float a, float b, float* v, int64_t n) {
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  const auto f = [&](__m256 x) {
    if constexpr (kKind == 0) {
      const __m256 lo = _mm256_blendv_ps(x, va, _mm256_cmp_ps(x, va, _CMP_LT_OQ));
      return _mm256_blendv_ps(lo, vb, _mm256_cmp_ps(lo, vb, _CMP_GT_OQ));
    } else {
      const __m256 g = _mm256_fmadd_ps(va, x, vb);
      const __m256 lo = _mm256_blendv_ps(g, zero, _mm256_cmp_ps(g, zero, _CMP_LT_OQ));
      const __m256 h = _mm256_blendv_ps(lo, one, _mm256_cmp_ps(lo, one, _CMP_GT_OQ));
      return kKind == 1 ? h : _mm256_mul_ps(x, h);
    }
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(v + i, f(_mm256_loadu_ps(v + i)));
  if (i < n) {
    const __m256i m = tail_mask256(n - i);
    _mm256_maskstore_ps(v + i, m, f(_mm256_maskload_ps(v + i, m)));
  }
}

}  // namespace

// The fused activation over n values in cache: ReLU and sigmoid on the vector code the GEMM's
// epilogue uses, the others as the standalone ops' kernels compute them (ew_ops.h, elementwise.cpp),
// in AVX2 registers above the portable level.
void apply_activation(const ir::ConvActivation& act, Isa isa, float* v, int64_t n) {
  if (isa != Isa::kPortable) {
    switch (act.kind) {
      case ir::ConvActKind::kClip:
        return clamp_act_avx2<0>(act.a, act.b, v, n);
      case ir::ConvActKind::kHardSigmoid:
        return clamp_act_avx2<1>(act.a, act.b, v, n);
      case ir::ConvActKind::kHardSwish:
        return clamp_act_avx2<2>(1.0f / 6.0f, 0.5f, v, n);
      default:
        break;
    }
  }
  switch (act.kind) {
    case ir::ConvActKind::kNone:
      return;
    case ir::ConvActKind::kRelu:
      gemm_act_span(isa, GemmAct::kRelu, v, v, n);
      return;
    case ir::ConvActKind::kSigmoid:
      gemm_act_span(isa, GemmAct::kSigmoid, v, v, n);
      return;
    case ir::ConvActKind::kClip:  // keeps NaN, as Clip does
      for (int64_t i = 0; i < n; ++i) v[i] = v[i] < act.a ? act.a : (v[i] > act.b ? act.b : v[i]);
      return;
    case ir::ConvActKind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) {
        const float g = act.a * v[i] + act.b;
        v[i] = g < 0.0f ? 0.0f : (g > 1.0f ? 1.0f : g);
      }
      return;
    case ir::ConvActKind::kHardSwish:
      for (int64_t i = 0; i < n; ++i) {
        const float g = v[i] * (1.0f / 6.0f) + 0.5f;
        v[i] = v[i] * (g < 0.0f ? 0.0f : (g > 1.0f ? 1.0f : g));
      }
      return;
  }
}

// The GEMM epilogue's own activation where it has one: applied in registers before the store.
GemmAct epilogue_act(const ir::ConvActivation& act) {
  if (act.kind == ir::ConvActKind::kRelu) return GemmAct::kRelu;
  if (act.kind == ir::ConvActKind::kSigmoid) return GemmAct::kSigmoid;
  return GemmAct::kNone;
}

ConvShare share_conv(int64_t tiles, int64_t cog, double flops) {
  ConvShare s;
  const int64_t want = std::min<int64_t>(ir::kConvScratchSlots, threads_for(flops / kGemmFlopsPerUs));
  const int64_t panels = (cog + ir::kConvPanelWidth - 1) / ir::kConvPanelWidth;
  s.col_chunks = want > 1 && tiles < 2 * want ? std::max<int64_t>(1, std::min(panels, (2 * want + tiles - 1) / tiles)) : 1;
  s.items = tiles * s.col_chunks;
  s.team = static_cast<int>(std::max<int64_t>(1, std::min(s.items, want)));
  s.chunk = std::max<int64_t>(1, (s.items + s.team - 1) / s.team);  // parallel_for_team's chunks
  return s;
}

ConvItem conv_item(int64_t item, int64_t col_chunks, int64_t tiles, int64_t tile_rows, int64_t positions,
                   int64_t groups, int64_t cog) {
  ConvItem it;
  const int64_t chunk = item % col_chunks, rest = item / col_chunks;
  const int64_t tile = rest % tiles, ng = rest / tiles;
  it.g = ng % groups;
  it.n = ng / groups;
  it.p0 = tile * tile_rows;
  it.rows = std::min(tile_rows, positions - it.p0);
  const int64_t panels = (cog + ir::kConvPanelWidth - 1) / ir::kConvPanelWidth;
  it.c0 = panels * chunk / col_chunks * ir::kConvPanelWidth;
  it.cn = std::min(cog, panels * (chunk + 1) / col_chunks * ir::kConvPanelWidth) - it.c0;
  return it;
}

}  // namespace fusebox::cpu
