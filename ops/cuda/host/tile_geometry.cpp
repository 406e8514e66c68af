// Tiling and layout choices of the CUDA kernels (tile_geometry.h).
#include "ops/cuda/host/tile_geometry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fusebox::cuda {

CollapsedStrides collapse_strided(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  if (dims.size() != strides.size())
    throw std::invalid_argument("collapse_strided: " + std::to_string(dims.size()) + " dims but " +
                                std::to_string(strides.size()) + " strides");
  CollapsedStrides c;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!c.dims.empty() && c.strides.back() == strides[d] * dims[d]) {
      c.dims.back() *= dims[d];
      c.strides.back() = strides[d];
    } else {
      c.dims.push_back(dims[d]);
      c.strides.push_back(strides[d]);
    }
  }
  if (c.dims.empty()) {
    c.dims.push_back(1);
    c.strides.push_back(0);
  }
  return c;
}

namespace {

// Whether offsets [begin, begin + len) step by `stride` from offsets[begin].
bool arithmetic(const std::vector<int64_t>& offsets, size_t begin, size_t len, int64_t stride) {
  for (size_t j = 1; j < len; ++j)
    if (offsets[begin + j] != offsets[begin] + static_cast<int64_t>(j) * stride) return false;
  return true;
}

}  // namespace

GemmBatches split_gemm_batches(const std::vector<int64_t>& a_offsets, const std::vector<int64_t>& b_offsets) {
  if (a_offsets.empty() || a_offsets.size() != b_offsets.size())
    throw std::invalid_argument("split_gemm_batches: " + std::to_string(a_offsets.size()) + " A offsets and " +
                                std::to_string(b_offsets.size()) + " B offsets");
  const size_t n = a_offsets.size();
  // Largest divisor first: fewest cuBLAS calls. per_call = 1 always works.
  for (size_t per = n; per >= 1; --per) {
    if (n % per != 0) continue;
    const int64_t sa = per > 1 ? a_offsets[1] - a_offsets[0] : 0;
    const int64_t sb = per > 1 ? b_offsets[1] - b_offsets[0] : 0;
    bool ok = true;
    for (size_t c = 0; ok && c < n; c += per)
      ok = arithmetic(a_offsets, c, per, sa) && arithmetic(b_offsets, c, per, sb);
    if (!ok) continue;
    GemmBatches g;
    g.per_call = static_cast<int64_t>(per);
    g.a_stride = sa;
    g.b_stride = sb;
    for (size_t c = 0; c < n; c += per) {
      g.a_base.push_back(a_offsets[c]);
      g.b_base.push_back(b_offsets[c]);
    }
    return g;
  }
  throw std::logic_error("split_gemm_batches: unreachable");
}

size_t attention_shared_bytes(int rows, int keys, int64_t d, int64_t dv) {
  const int64_t floats = rows * d + keys * (d + 1) + keys * dv + int64_t{rows} * keys + rows * dv + 3 * int64_t{rows};
  return static_cast<size_t>(floats) * sizeof(float);
}

AttentionTiles attention_tiles(int64_t batch, int64_t sq, int64_t skv, int64_t d, int64_t dv, size_t shared_limit) {
  if (batch < 0 || sq < 0 || skv < 0 || d < 0 || dv < 0)
    throw std::invalid_argument("attention_tiles: negative size (batch " + std::to_string(batch) + ", sq " +
                                std::to_string(sq) + ", skv " + std::to_string(skv) + ", d " + std::to_string(d) +
                                ", dv " + std::to_string(dv) + ")");
  auto cap = [](int64_t n, int lo, int hi) {
    int c = lo;
    while (c < n && c < hi) c *= 2;
    return c;
  };
  const int max_rows = cap(sq, 4, 32), max_keys = cap(skv, 16, 64);
  // Best first: more rows per K/V tile, then longer tiles.
  static constexpr int kCandidates[][2] = {{32, 64}, {16, 64}, {32, 32}, {16, 32}, {8, 32}, {8, 16}, {4, 16}};
  AttentionTiles t;
  for (const auto& c : kCandidates) {
    const int rows = std::min(c[0], max_rows), keys = std::min(c[1], max_keys);
    t.rows = rows;
    t.keys = keys;
    t.shared_bytes = attention_shared_bytes(rows, keys, d, dv);
    if (t.shared_bytes <= shared_limit) {
      t.fits = true;
      break;
    }
  }
  t.blocks = batch * ((sq + t.rows - 1) / t.rows);
  return t;
}

}  // namespace fusebox::cuda
