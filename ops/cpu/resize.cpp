// Resize on the CPU. prepare() turns core/ir/resize_params.h's per-dim tap tables into two
// tables for this shape: for each output row (every dim but the last), the input rows it mixes
// with their weights (the product of the taps of the dims before the last); for the last dim,
// each output column's taps. run() is then, per output row, a loop over the columns reading
// those rows: no coordinate arithmetic, no branches on the mode. Leading dims the resize leaves
// as they are (N and C of an NCHW image) are planes run one after another.
#include <algorithm>
#include <cstring>

#include "core/ir/resize_params.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

namespace {

struct ResizeState {
  bool copy = false;  // no dim changes: the output is the input
  int64_t total = 0;  // output elements (for the copy)
  int64_t planes = 1, plane_in = 0, plane_out = 0;
  int64_t rows = 1;  // output rows per plane
  int combos = 1;    // input rows each output row mixes
  std::vector<int64_t> row_offset;  // [rows][combos]: input row start within the plane
  std::vector<float> row_weight;    // [rows][combos]
  std::vector<uint8_t> row_outside; // [rows]: tf_crop_and_resize fell outside in a row dim
  int64_t out_last = 0;
  int last_taps = 1;
  bool last_identity = false;       // the last dim is left as it is: rows are added whole
  std::vector<int64_t> last_index;  // [out_last][last_taps]
  std::vector<float> last_weight;   // [out_last][last_taps]
  std::vector<int64_t> last_outside;  // columns outside the input (tf_crop_and_resize)
  float extrapolation = 0;
};

std::shared_ptr<const void> prepare_resize(const exec::KernelContext& ctx) {
  require_arity(ctx, 1, 1);
  require_dtype(ctx, 0, ir::DType::f32);
  const ir::ResizeParams p = or_fail(ctx, [&] { return ir::resize_params(ctx.node, ctx.inputs[0].shape); });
  const size_t rank = p.in.size();
  std::vector<ir::ResizeAxis> axes;
  for (size_t d = 0; d < rank; ++d) axes.push_back(ir::resize_axis(p, d));

  ResizeState st;
  st.extrapolation = p.extrapolation;
  st.total = ir::numel(p.out);
  size_t first = 0;
  while (first < rank && axes[first].identity) ++first;
  if (first == rank) {
    st.copy = true;
    return exec::make_state(std::move(st));
  }
  // Dims before `first` are planes; rows are the output positions over [first, rank - 1).
  for (size_t d = 0; d < first; ++d) st.planes *= p.in[d];
  st.plane_in = 1, st.plane_out = 1;
  for (size_t d = first; d < rank; ++d) st.plane_in *= p.in[d], st.plane_out *= p.out[d];
  const size_t last = rank - 1;
  st.out_last = p.out[last];
  for (size_t d = first; d < last; ++d) st.rows *= p.out[d];

  // The row table, built dim by dim: each entry of the previous dims' product fans out into this
  // dim's taps (one tap, weight 1, for a dim left as it is).
  std::vector<int64_t> offset{0};
  std::vector<double> weight{1.0};
  std::vector<uint8_t> outside{0};
  int combos = 1;
  for (size_t d = first; d < last; ++d) {
    const ir::ResizeAxis& a = axes[d];
    const int taps = a.identity ? 1 : a.taps;
    int64_t stride = 1;  // input elements per step along d
    for (size_t k = d + 1; k < rank; ++k) stride *= p.in[k];
    const int64_t prev_rows = static_cast<int64_t>(outside.size());
    std::vector<int64_t> o2;
    std::vector<double> w2;
    std::vector<uint8_t> out2;
    for (int64_t r = 0; r < prev_rows; ++r)
      for (int64_t x = 0; x < p.out[d]; ++x) {
        out2.push_back(outside[static_cast<size_t>(r)] || a.outside[static_cast<size_t>(x)]);
        for (int c = 0; c < combos; ++c)
          for (int t = 0; t < taps; ++t) {
            const size_t k = static_cast<size_t>(r * combos + c);
            const int64_t idx = a.identity ? x : a.index[static_cast<size_t>(x * a.taps + t)];
            const double w = a.identity ? 1.0 : a.weight[static_cast<size_t>(x * a.taps + t)];
            o2.push_back(offset[k] + idx * stride);
            w2.push_back(weight[k] * w);
          }
      }
    offset.swap(o2), weight.swap(w2), outside.swap(out2);
    combos *= taps;
  }
  st.combos = combos;
  st.row_offset = std::move(offset);
  st.row_weight.assign(weight.begin(), weight.end());
  st.row_outside = std::move(outside);

  const ir::ResizeAxis& a = axes[last];
  st.last_identity = a.identity;
  st.last_taps = a.taps;
  st.last_index = a.index;
  st.last_weight.assign(a.weight.begin(), a.weight.end());
  for (int64_t x = 0; x < st.out_last; ++x)
    if (a.outside[static_cast<size_t>(x)]) st.last_outside.push_back(x);
  return exec::make_state(std::move(st));
}

// y[j] = (accumulate ? y[j] : 0) + w * sum_t lw[j][t] * x[li[j][t]] over the columns.
template <int kTaps>
void mix_row(const float* x, float w, const int64_t* li, const float* lw, int64_t n, float* y, bool accumulate) {
  for (int64_t j = 0; j < n; ++j) {
    float v = 0;
    for (int t = 0; t < kTaps; ++t) v += lw[j * kTaps + t] * x[li[j * kTaps + t]];
    y[j] = accumulate ? y[j] + w * v : w * v;
  }
}

void resize_rows(const ResizeState& st, const float* in, float* out, int64_t begin, int64_t end) {
  const int64_t n = st.out_last;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t plane = item / st.rows, row = item % st.rows;
    const float* x = in + plane * st.plane_in;
    float* y = out + plane * st.plane_out + row * n;
    if (st.row_outside[static_cast<size_t>(row)]) {
      std::fill(y, y + n, st.extrapolation);
      continue;
    }
    for (int c = 0; c < st.combos; ++c) {
      const size_t k = static_cast<size_t>(row * st.combos + c);
      const float* xr = x + st.row_offset[k];
      const float w = st.row_weight[k];
      const bool acc = c > 0;
      if (st.last_identity) {
        for (int64_t j = 0; j < n; ++j) y[j] = acc ? y[j] + w * xr[j] : w * xr[j];
        continue;
      }
      const int64_t* li = st.last_index.data();
      const float* lw = st.last_weight.data();
      switch (st.last_taps) {
        case 1: mix_row<1>(xr, w, li, lw, n, y, acc); break;
        case 2: mix_row<2>(xr, w, li, lw, n, y, acc); break;
        default: mix_row<4>(xr, w, li, lw, n, y, acc); break;
      }
    }
    for (int64_t j : st.last_outside) y[j] = st.extrapolation;
  }
}

void run_resize(const exec::KernelArgs& args) {
  const auto& st = state_of<ResizeState>(args);
  const float* x = input_ptr<float>(args, 0);
  float* y = output_ptr<float>(args, 0);
  if (st.copy) {
    if (st.total > 0) std::memcpy(y, x, static_cast<size_t>(st.total) * sizeof(float));
    return;
  }
  const int64_t per_row = std::max<int64_t>(1, st.out_last * st.combos * st.last_taps);
  parallel_for(st.planes * st.rows, std::max<int64_t>(1, kGrainSimple / per_row),
               [&](int64_t b, int64_t e) { resize_rows(st, x, y, b, e); });
}

}  // namespace

void add_resize_kernels(exec::KernelTable& table) { table.add("Resize", {prepare_resize, run_resize}); }

}  // namespace fusebox::cpu
