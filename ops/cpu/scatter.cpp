// ScatterND and ScatterElements (core/ir/scatter_params.h): the output is data, copied, with the
// updates written or reduced into it in index order. Every index is checked before the first
// write, so an out-of-range one is an error naming the node and the element, on the calling
// thread. The updates are applied in order on one thread (a later duplicate index sees the earlier
// write, as ONNX's reference does); the copy of data, usually the bulk of the bytes, is parallel.
#include <algorithm>
#include <cstring>
#include <string>

#include "core/base/error.h"
#include "core/ir/scatter_params.h"
#include "core/ir/shape.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

namespace {

struct ScatterState {
  ir::ScatterParams p;
  bool f32 = true;
  std::string where, indices;
};

std::shared_ptr<const void> prepare_scatter(const exec::KernelContext& ctx) {
  require_arity(ctx, 3, 1);
  ScatterState st;
  st.p = or_fail(ctx, [&] { return ir::scatter_params(ctx.node, ctx.inputs); });
  st.f32 = ctx.inputs[0].dtype == ir::DType::f32;
  st.where = "node '" + ctx.node.name + "' (" + ctx.node.op + ")";
  st.indices = ctx.node.inputs.size() > 1 ? ctx.node.inputs[1] : "";
  return exec::make_state(std::move(st));
}

[[noreturn]] void out_of_range(const ScatterState& st, int64_t element, int64_t value, int dim, int64_t size) {
  throw Error(st.where + ": input '" + st.indices + "' element " + std::to_string(element) + " is index " +
              std::to_string(value) + ", out of range for dim " + std::to_string(dim) + " of size " +
              std::to_string(size) + " (valid: " + std::to_string(-size) + ".." + std::to_string(size - 1) + ")");
}

// Every index in [-size, size): ScatterND's along the dim its position in a tuple names,
// ScatterElements' along the axis.
void check_indices(const ScatterState& st, const int64_t* idx) {
  const ir::ScatterParams& p = st.p;
  if (p.nd) {
    for (int64_t i = 0; i < p.tuples * p.k; ++i) {
      const int d = static_cast<int>(i % p.k);
      if (idx[i] < -p.data[d] || idx[i] >= p.data[d]) out_of_range(st, i, idx[i], d, p.data[d]);
    }
    return;
  }
  const int64_t size = p.data[p.axis];
  for (int64_t i = 0; i < p.updates; ++i)
    if (idx[i] < -size || idx[i] >= size) out_of_range(st, i, idx[i], p.axis, size);
}

template <typename T>
struct Combine {
  ir::ScatterReduction r;
  T operator()(T old, T update) const {
    switch (r) {
      case ir::ScatterReduction::kNone:
        return update;
      case ir::ScatterReduction::kAdd:
        return old + update;
      case ir::ScatterReduction::kMul:
        return old * update;
      case ir::ScatterReduction::kMax:
        return std::max(old, update);
      case ir::ScatterReduction::kMin:
        return std::min(old, update);
    }
    return update;
  }
};

template <typename T>
void scatter_nd(const ir::ScatterParams& p, const int64_t* idx, const T* upd, T* y) {
  const Combine<T> combine{p.reduction};
  for (int64_t t = 0; t < p.tuples; ++t) {
    int64_t off = 0;
    for (int64_t d = 0; d < p.k; ++d) {
      int64_t v = idx[t * p.k + d];
      if (v < 0) v += p.data[d];
      off += v * p.strides[d];
    }
    T* dst = y + off;
    const T* src = upd + t * p.slice;
    if (p.reduction == ir::ScatterReduction::kNone) {
      std::memcpy(dst, src, static_cast<size_t>(p.slice) * sizeof(T));
      continue;
    }
    for (int64_t j = 0; j < p.slice; ++j) dst[j] = combine(dst[j], src[j]);
  }
}

template <typename T>
void scatter_elements(const ir::ScatterParams& p, const int64_t* idx, const T* upd, T* y) {
  const Combine<T> combine{p.reduction};
  const int rank = static_cast<int>(p.indices.size());
  for (int64_t u = 0; u < p.updates; ++u) {
    int64_t rest = u, off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = rest % p.indices[d];
      rest /= p.indices[d];
      if (d == p.axis) {
        c = idx[u];
        if (c < 0) c += p.data[d];
      }
      off += c * p.strides[d];
    }
    y[off] = combine(y[off], upd[u]);
  }
}

template <typename T>
void scatter_impl(const ScatterState& st, const exec::KernelArgs& args) {
  const T* x = input_ptr<T>(args, 0);
  const T* upd = input_ptr<T>(args, 2);
  T* y = output_ptr<T>(args, 0);
  const int64_t n = ir::numel(st.p.data);
  if (y != x)
    parallel_for(n, kGrainCopyBytes / static_cast<int64_t>(sizeof(T)), [&](int64_t begin, int64_t end) {
      std::memcpy(y + begin, x + begin, static_cast<size_t>(end - begin) * sizeof(T));
    });
  const int64_t* idx = input_ptr<int64_t>(args, 1);
  if (st.p.nd) scatter_nd(st.p, idx, upd, y);
  else scatter_elements(st.p, idx, upd, y);
}

void run_scatter(const exec::KernelArgs& args) {
  const auto& st = state_of<ScatterState>(args);
  check_indices(st, input_ptr<int64_t>(args, 1));
  if (st.f32) scatter_impl<float>(st, args);
  else scatter_impl<int64_t>(st, args);
}

}  // namespace

void add_scatter_kernels(exec::KernelTable& table) {
  for (const char* op : {"ScatterND", "ScatterElements"}) table.add(op, {prepare_scatter, run_scatter});
}

}  // namespace fusebox::cpu
