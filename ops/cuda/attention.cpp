// Attention(Q, K, V [, mask]) with the CPU's semantics (ops/cpu/attention.cpp): scale, causal
// (top-left aligned), k_transposed, an additive mask broadcast to [..., Sq, Skv], and every
// operand and the output read/written through the strided views of core/ir/attention_layout.h,
// so Q, K, V can be slices of one projection and the output can land in the merged-heads layout.
// prepare() turns the layout into per-operand offsets and strides (attention_kernels.h); the
// kernel needs no scratch, so the planner is told 0 bytes (the schema's figure is the CPU's
// packed K/V panels).
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ir/attention_layout.h"
#include "ops/cuda/attention_kernels.h"
#include "ops/cuda/cuda_backend.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/host/launch_geometry.h"
#include "ops/cuda/host/tile_geometry.h"
#include "ops/cuda/strided_host.h"

namespace fusebox::cuda {
namespace {

struct AttentionState {
  AttentionParams p;
  bool has_mask = false;
};

// Shared memory a block may use without opting in; the device's opt-in limit comes from the
// backend (CudaShared::max_shared_per_block).
constexpr size_t kDefaultSharedLimit = 48 * 1024;

// The leading (batch, head) dims of a view as a StridedIndex over the batch-head number.
StridedIndex lead_index(const exec::KernelContext& ctx, const ir::AttentionLayout& a, const ir::StridedView& view) {
  const size_t r = a.lead.size();
  return strided_index(
      ctx, std::vector<int64_t>(a.lead.begin(), a.lead.end()),
      std::vector<int64_t>(view.strides.begin(), view.strides.begin() + static_cast<std::ptrdiff_t>(r)));
}

std::shared_ptr<const void> prepare_attention(const exec::KernelContext& ctx) {
  if (ctx.inputs.size() != 3 && ctx.inputs.size() != 4)
    fail(ctx, "takes 3 inputs (Q, K, V) and an optional mask, got " + std::to_string(ctx.inputs.size()));
  require_arity(ctx, ctx.inputs.size(), 1);
  const ir::AttentionLayout a = or_fail(ctx, [&] { return ir::attention_layout(ctx.node, ctx.inputs); });
  AttentionState st;
  AttentionParams& p = st.p;
  p.batch = a.batch;
  p.sq = a.sq;
  p.skv = a.skv;
  p.d = a.d;
  p.dv = a.dv;
  p.scale = static_cast<float>(a.scale);
  p.causal = a.causal;
  const size_t r = a.lead.size();
  p.q_lead = lead_index(ctx, a, a.q);
  p.k_lead = lead_index(ctx, a, a.k);
  p.v_lead = lead_index(ctx, a, a.v);
  p.o_lead = lead_index(ctx, a, a.out);
  p.q_offset = a.q.offset;
  p.k_offset = a.k.offset;
  p.v_offset = a.v.offset;
  p.o_offset = a.out.offset;
  p.q_rs = a.q.strides[r];
  p.q_cs = a.q.strides[r + 1];
  p.k_rs = a.k.strides[r];
  p.k_cs = a.k.strides[r + 1];
  p.v_rs = a.v.strides[r];
  p.v_cs = a.v.strides[r + 1];
  p.o_rs = a.out.strides[r];
  p.o_cs = a.out.strides[r + 1];
  if (a.mask) {
    st.has_mask = true;
    if (a.mask->offset != 0) fail(ctx, "mask view with an offset is not supported");
    p.m_lead = lead_index(ctx, a, *a.mask);
    p.m_rs = a.mask->strides[r];
    p.m_cs = a.mask->strides[r + 1];
  }
  size_t limit = kDefaultSharedLimit;
  if (ctx.context && ctx.context->backend_data)
    limit = static_cast<size_t>(static_cast<const CudaShared*>(ctx.context->backend_data)->max_shared_per_block);
  const AttentionTiles tiles = attention_tiles(p.batch, p.sq, p.skv, p.d, p.dv, limit);
  p.rows = tiles.rows;
  p.keys = tiles.keys;
  p.blocks = tiles.blocks;
  p.shared_bytes = tiles.shared_bytes;
  if (!tiles.fits)
    fail(ctx, "head sizes D = " + std::to_string(p.d) + " and Dv = " + std::to_string(p.dv) + " need " +
                  std::to_string(p.shared_bytes) + " bytes of shared memory per block even at the smallest tile (" +
                  std::to_string(tiles.rows) + " query rows x " + std::to_string(tiles.keys) +
                  " keys); this GPU gives a block at most " + std::to_string(limit));
  try {
    (void)row_geometry(p.blocks, tiles.threads);
  } catch (const std::invalid_argument& e) {
    fail(ctx, e.what());
  }
  if (p.shared_bytes > kDefaultSharedLimit)
    check(allow_attention_shared(p.shared_bytes), "node '" + ctx.node.name + "' (Attention): cudaFuncSetAttribute");
  return exec::make_state(st);
}

void run_attention(const exec::KernelArgs& args) {
  const auto& st = state_of<AttentionState>(args);
  const AttentionParams& p = st.p;
  if (p.batch * p.sq * p.dv == 0) return;  // empty output
  launch_attention(input_ptr<float>(args, 0), input_ptr<float>(args, 1), input_ptr<float>(args, 2),
                   st.has_mask ? input_ptr<float>(args, 3) : nullptr, output_ptr<float>(args, 0), p, stream_of(args));
}

size_t attention_scratch(const exec::KernelContext&) {
  return 0;
}

}  // namespace

void add_attention_kernels(exec::KernelTable& k) {
  k.add("Attention", {prepare_attention, run_attention, attention_scratch});
}

}  // namespace fusebox::cuda
