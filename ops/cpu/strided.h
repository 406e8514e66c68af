#pragma once
// Strided walks over a contiguous output: the one mechanism behind broadcasting (stride 0),
// Transpose (permuted strides), Slice (offset + stepped strides) and the general fallbacks.
//
// A StridedPlan describes, for every output element in row-major order, where each operand's
// element is: operand k's offset is base[k] + sum_d idx[d] * stride(k, d). make_strided_plan
// collapses it first: size-1 dims are dropped and neighbouring dims merge when every operand
// walks them as one (outer stride == inner stride * inner size). After that the common cases are
// tiny plans: same-shape inputs become one dim of numel elements, a scalar one dim with stride
// 0, a [64,256] + [256] bias two dims with the bias strides (0, 1). Kernels then work on
// segments: runs along the innermost dim, where every operand has one constant stride, usually
// 0 or 1, so inner loops are plain vectorizable loops.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/shape.h"

namespace fusebox::cpu {

// Collapsed plans deeper than this are refused in prepare (they need ~16 dims alternating
// between broadcast and not); run() keeps its walk counters in fixed stack arrays.
inline constexpr int kMaxPlanRank = 16;
inline constexpr int kMaxPlanOperands = 64;

struct StridedPlan {
  int rank = 1;  // >= 1 after collapsing (a scalar output is one dim of size 1)
  int operands = 0;
  int64_t numel = 0;             // output elements
  std::vector<int64_t> dims;     // [rank], innermost last
  std::vector<int64_t> strides;  // [operands * rank]: operand k, dim d at k * rank + d
  std::vector<int64_t> base;     // [operands]: offset of the first element

  int64_t inner() const { return dims[rank - 1]; }
  int64_t stride(int k, int d) const { return strides[static_cast<size_t>(k) * rank + d]; }
  int64_t inner_stride(int k) const { return stride(k, rank - 1); }
  // True when operand k reads exactly output order (a full-size, same-layout input).
  bool contiguous(int k) const { return rank == 1 && inner_stride(k) == 1 && base[k] == 0; }
  // True when operand k is one value for the whole output.
  bool constant(int k) const {
    for (int d = 0; d < rank; ++d)
      if (stride(k, d) != 0) return false;
    return true;
  }
};

// `strides[k]` has one entry per dim of `dims`. Throws fusebox::Error past the fixed limits.
inline StridedPlan make_strided_plan(const ir::Shape& dims,
                                     const std::vector<std::vector<int64_t>>& strides,
                                     std::vector<int64_t> base = {}) {
  StridedPlan p;
  p.operands = static_cast<int>(strides.size());
  if (p.operands > kMaxPlanOperands)
    throw Error("strided walk over " + std::to_string(p.operands) +
                " operands; the CPU kernels support at most " + std::to_string(kMaxPlanOperands));
  if (base.empty()) base.assign(strides.size(), 0);
  p.base = std::move(base);
  p.numel = ir::numel(dims);
  // Keep dims of size != 1, outermost first, merging each into the previous kept one when
  // possible.
  std::vector<int64_t> kd;
  std::vector<std::vector<int64_t>> ks(strides.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    bool merge = !kd.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k)
      merge = ks[k].back() == strides[k][d] * dims[d];
    if (merge) {
      kd.back() *= dims[d];
      for (size_t k = 0; k < strides.size(); ++k) ks[k].back() = strides[k][d];
    } else {
      kd.push_back(dims[d]);
      for (size_t k = 0; k < strides.size(); ++k) ks[k].push_back(strides[k][d]);
    }
  }
  if (kd.empty()) {
    kd.push_back(1);
    for (auto& s : ks) s.push_back(0);
  }
  if (kd.size() > static_cast<size_t>(kMaxPlanRank))
    throw Error("strided walk needs " + std::to_string(kd.size()) + " dims after collapsing " +
                ir::shape_str(dims) + "; the CPU kernels support at most " +
                std::to_string(kMaxPlanRank));
  p.rank = static_cast<int>(kd.size());
  p.dims = kd;
  for (const auto& s : ks) p.strides.insert(p.strides.end(), s.begin(), s.end());
  return p;
}

// Every input broadcast (numpy rules) to `out`. Throws fusebox::Error when one does not.
inline StridedPlan make_broadcast_plan(const std::vector<ir::Shape>& inputs, const ir::Shape& out) {
  return make_strided_plan(out, ir::broadcast_strides(inputs, out));
}

// Calls fn(out_offset, offsets, len) for each run of output elements in [begin, end) that lies
// within one innermost row; offsets[k] is operand k's offset of the run's first element, and
// the run continues with stride p.inner_stride(k). No allocation: counters live on the stack.
template <typename Fn>
void for_each_segment(const StridedPlan& p, int64_t begin, int64_t end, Fn&& fn) {
  if (begin >= end) return;
  const int r = p.rank, nk = p.operands;
  int64_t idx[kMaxPlanRank];
  int64_t row[kMaxPlanOperands];  // operand offsets at the start of the current innermost row
  int64_t off[kMaxPlanOperands];
  int64_t rem = begin;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rem % p.dims[d];
    rem /= p.dims[d];
  }
  for (int k = 0; k < nk; ++k) {
    int64_t o = p.base[k];
    for (int d = 0; d < r - 1; ++d) o += idx[d] * p.stride(k, d);
    row[k] = o;
  }
  const int64_t inner = p.dims[r - 1];
  int64_t col = idx[r - 1], pos = begin;
  while (true) {
    int64_t len = std::min(inner - col, end - pos);
    for (int k = 0; k < nk; ++k) off[k] = row[k] + col * p.inner_stride(k);
    fn(pos, static_cast<const int64_t*>(off), len);
    pos += len;
    if (pos >= end) return;
    // The run ended at the end of a row: step the outer counters (odometer with carry).
    col = 0;
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[d] < p.dims[d]) {
        for (int k = 0; k < nk; ++k) row[k] += p.stride(k, d);
        break;
      }
      idx[d] = 0;
      for (int k = 0; k < nk; ++k) row[k] -= (p.dims[d] - 1) * p.stride(k, d);
    }
  }
}

// dst[i] = src[operand 0 of p at output element i], for output elements [begin, end).
// T is any trivially copyable element type (copies are by value, so f32 and i64 share it).
template <typename T>
void strided_copy(const StridedPlan& p, const T* src, T* dst, int64_t begin, int64_t end) {
  const int64_t s = p.inner_stride(0);
  for_each_segment(p, begin, end, [&](int64_t o, const int64_t* off, int64_t len) {
    const T* a = src + off[0];
    T* y = dst + o;
    if (s == 1) {
      std::copy(a, a + len, y);
    } else if (s == 0) {
      std::fill(y, y + len, *a);
    } else {
      for (int64_t i = 0; i < len; ++i) y[i] = a[i * s];
    }
  });
}

}  // namespace fusebox::cpu
