#pragma once
// Host-side (C++20) helpers the CUDA kernel families' prepare() functions share: the collapsed
// strided walk of an output in row-major order, and its broadcast form as per-operand dim masks.
//
// The collapse is the CPU's (ops/cpu/strided.h, make_strided_plan): size-1 dims are dropped and
// neighbouring dims merge when every operand walks them as one (outer stride == inner stride *
// inner size), so same-shape operands become one dim and a [64,256] + [256] bias two. The device
// kernels then decompose a flat output index over at most a handful of dims.
//
// For broadcasting (every operand a dense row-major tensor broadcast to the output) each
// operand's stride along a collapsed dim is either 0 or the product of the sizes of the inner
// dims it reads along; so one bit per dim says it all, and a FusedElementwise node with 64
// inputs still fits its walk in a few hundred bytes of kernel parameters. The device rebuilds
// the offsets from the masks (ops/cuda/broadcast_index.cuh); make_broadcast_walk checks that
// the rebuilt strides are the real ones.
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/shape.h"

namespace fusebox::cuda {

// Tensors up to this many elements are walked with 32-bit indices (integer division is several
// times cheaper); 2^30 leaves room for a grid-stride step past the end without overflow.
inline constexpr int64_t kIndex32Limit = int64_t{1} << 30;

struct CollapsedWalk {
  std::vector<int64_t> dims;                  // >= 1 dim (a scalar output is one dim of size 1)
  std::vector<std::vector<int64_t>> strides;  // per operand, one per dim of `dims`
};

// `strides[k]` has one entry per dim of `out`.
inline CollapsedWalk collapse_walk(const ir::Shape& out, const std::vector<std::vector<int64_t>>& strides) {
  CollapsedWalk w;
  w.strides.resize(strides.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !w.dims.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k) merge = w.strides[k].back() == strides[k][d] * out[d];
    if (merge) {
      w.dims.back() *= out[d];
      for (size_t k = 0; k < strides.size(); ++k) w.strides[k].back() = strides[k][d];
    } else {
      w.dims.push_back(out[d]);
      for (size_t k = 0; k < strides.size(); ++k) w.strides[k].push_back(strides[k][d]);
    }
  }
  if (w.dims.empty()) {
    w.dims.push_back(1);
    for (auto& s : w.strides) s.push_back(0);
  }
  return w;
}

struct BroadcastWalk {
  std::vector<int64_t> dims;     // collapsed output dims, outermost first
  std::vector<uint32_t> masks;   // per operand: bit d set when it reads along dims[d] (else stride 0)
};

// Every input broadcast (numpy rules) to `out`, collapsed. Throws fusebox::Error when an input
// does not broadcast, or when the walk needs more than `max_dims` dims after collapsing.
inline BroadcastWalk make_broadcast_walk(const std::vector<ir::Shape>& inputs, const ir::Shape& out, int max_dims) {
  CollapsedWalk c = collapse_walk(out, ir::broadcast_strides(inputs, out));
  if (static_cast<int>(c.dims.size()) > max_dims)
    throw Error("broadcasting to " + ir::shape_str(out) + " needs " + std::to_string(c.dims.size()) +
                " dims after collapsing; the CUDA kernels support at most " + std::to_string(max_dims));
  BroadcastWalk w;
  w.dims = c.dims;
  const int rank = static_cast<int>(c.dims.size());
  for (const auto& s : c.strides) {
    uint32_t mask = 0;
    int64_t dense = 1;  // the stride a dense operand has along dim d: what the device assumes
    for (int d = rank - 1; d >= 0; --d) {
      if (s[d] == 0) continue;
      if (s[d] != dense) throw Error("internal: broadcast walk of " + ir::shape_str(out) + " is not dense");
      mask |= uint32_t{1} << d;
      dense *= c.dims[d];
    }
    w.masks.push_back(mask);
  }
  return w;
}

}  // namespace fusebox::cuda
