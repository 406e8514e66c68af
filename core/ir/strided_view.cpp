#include "core/ir/strided_view.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/base/checked.h"
#include "core/base/error.h"

namespace fusebox::ir {

StridedView StridedView::contiguous(const Shape& shape) {
  return {shape, strides_of(shape), 0};
}

StridedView StridedView::transposed(const std::vector<int64_t>& perm) const {
  if (perm.size() != shape.size()) throw Error("transpose: perm rank differs from the view's");
  StridedView out;
  out.offset = offset;
  for (int64_t p : perm) {
    size_t ax = static_cast<size_t>(normalize_axis(p, shape.size(), "transpose"));
    out.shape.push_back(shape[ax]);
    out.strides.push_back(strides[ax]);
  }
  return out;
}

StridedView StridedView::sliced(size_t axis, int64_t start, int64_t count, int64_t step) const {
  if (axis >= shape.size() || start < 0 || count < 0 || step < 1)
    throw Error("slice: bad axis, start, count or step");
  StridedView out = *this;
  if (count > 0) out.offset += start * strides[axis];
  out.shape[axis] = count;
  out.strides[axis] *= step;
  return out;
}

std::optional<StridedView> StridedView::reshaped(const Shape& new_shape) const {
  if (ir::numel(new_shape) != numel()) return std::nullopt;
  StridedView out{new_shape, strides_of(new_shape), offset};
  if (numel() == 0 || shape.empty()) return out;  // no element to place, or one at `offset`
  // Walk both shapes from the innermost dim. Old dims are grouped into chunks that are contiguous
  // with each other (stride[d-1] == size[d] * stride[d]); each chunk must be exactly covered by a
  // run of new dims, which then get strides inside that chunk.
  std::vector<int64_t> res(new_shape.size(), 0);
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    bool chunk_ends = d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
      res[view_d] = view_numel * chunk_base;
      view_numel *= new_shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base = strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  out.strides = std::move(res);
  return out;
}

int64_t StridedView::extent() const {
  if (numel() == 0) return 0;
  int64_t last = offset;
  for (size_t i = 0; i < shape.size(); ++i) {
    const auto span = checked_mul(shape[i] - 1, strides[i]);
    const auto reach = span ? checked_add(last, *span) : std::nullopt;
    if (!reach) throw Error("view " + to_string() + " reaches past 2^63 elements");
    last = *reach;
  }
  if (last == std::numeric_limits<int64_t>::max())
    throw Error("view " + to_string() + " reaches past 2^63 elements");
  return last + 1;
}

bool StridedView::covers_densely(int64_t storage_numel) const {
  if (numel() != storage_numel) return false;
  if (storage_numel == 0) return true;
  if (offset != 0) return false;
  // Dims of size > 1 sorted by stride must tile the buffer: each stride is the product of the
  // sizes of the dims below it.
  std::vector<size_t> dims;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 1) dims.push_back(i);
  std::sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t i : dims) {
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return expected == storage_numel;
}

int64_t StridedView::offset_of(const std::vector<int64_t>& index) const {
  int64_t o = offset;
  for (size_t i = 0; i < index.size() && i < strides.size(); ++i) o += index[i] * strides[i];
  return o;
}

std::vector<int64_t> StridedView::leading_offsets(size_t dims) const {
  const Shape lead(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(dims));
  std::vector<int64_t> out(static_cast<size_t>(ir::numel(lead)), offset);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i);
    for (size_t d = dims; d-- > 0;) {
      out[i] += (rem % lead[d]) * strides[d];
      rem /= lead[d];
    }
  }
  return out;
}

std::string StridedView::to_string() const {
  std::string s = shape_str(shape) + " strides " + shape_str(strides);
  if (offset) s += " + " + std::to_string(offset);
  return s;
}

}  // namespace fusebox::ir
