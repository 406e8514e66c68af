// The activations a Conv applies as it stores (conv_common.h).
#include "ops/cpu/conv_common.h"

#include <algorithm>

#include "ops/cpu/blas.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

// The fused activation over n values in cache, on the level's vector code: ReLU and sigmoid as
// the GEMM's epilogue computes them, Clip, HardSigmoid and HardSwish as the standalone ops do
// (vector_math.h).
void apply_activation(const ir::ConvActivation& act, Isa isa, float* v, int64_t n) {
  switch (act.kind) {
    case ir::ConvActKind::kNone:
      return;
    case ir::ConvActKind::kRelu:
      return gemm_act_span(isa, GemmAct::kRelu, v, v, n);
    case ir::ConvActKind::kSigmoid:
      return gemm_act_span(isa, GemmAct::kSigmoid, v, v, n);
    case ir::ConvActKind::kClip:
      return clamp_act_span(isa, ClampAct::kClip, act.a, act.b, v, n);
    case ir::ConvActKind::kHardSigmoid:
      return clamp_act_span(isa, ClampAct::kHardSigmoid, act.a, act.b, v, n);
    case ir::ConvActKind::kHardSwish:
      return clamp_act_span(isa, ClampAct::kHardSwish, 1.0f / 6.0f, 0.5f, v, n);
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
