#include "core/ir/layout_params.h"

#include <algorithm>
#include <string>

#include "core/base/error.h"

namespace fusebox::ir {

StridedRead transpose_read(const Shape& x, std::vector<int64_t> perm) {
  if (perm.empty())
    for (size_t i = 0; i < x.size(); ++i) perm.push_back(static_cast<int64_t>(x.size() - 1 - i));
  if (perm.size() != x.size()) throw Error("perm does not match the input rank");
  const std::vector<int64_t> in_strides = strides_of(x);
  StridedRead r;
  std::vector<bool> seen(x.size(), false);
  for (int64_t p : perm) {
    const int ax = normalize_axis(p, x.size(), "Transpose");
    if (seen[ax]) throw Error("perm is not a permutation");
    seen[ax] = true;
    r.shape.push_back(x[ax]);
    r.strides.push_back(in_strides[ax]);
  }
  return r;
}

StridedRead slice_read(const Shape& x, const Shape& out, const std::vector<int64_t>& starts,
                       std::vector<int64_t> axes, std::vector<int64_t> steps) {
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size() || out.size() != x.size())
    throw Error("starts/axes/steps differ in length");
  const std::vector<int64_t> in_strides = strides_of(x);
  std::vector<int64_t> start(x.size(), 0), step(x.size(), 1);
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int ax = normalize_axis(axes[i], x.size(), "Slice");
    if (seen[ax]) throw Error("axis " + std::to_string(axes[i]) + " is sliced twice");
    seen[ax] = true;
    if (steps[i] == 0) throw Error("step 0");
    const int64_t dim = x[ax];
    if (out[ax] == 0 || dim == 0) continue;  // nothing is read along this axis
    int64_t b = starts[i];
    if (b < 0) b += dim;
    b = steps[i] > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
    start[ax] = b;
    step[ax] = steps[i];
  }
  StridedRead r;
  r.shape = out;
  r.strides.resize(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    r.offset += start[d] * in_strides[d];
    r.strides[d] = step[d] * in_strides[d];
  }
  return r;
}

ConcatSplit concat_split(const Node& node, const std::vector<TensorType>& inputs,
                         const TensorType& out) {
  if (out.shape.empty()) throw Error("cannot concat scalars");
  ConcatSplit s;
  s.axis = normalize_axis(node.attrs.get_int("axis", 0), out.shape.size(), "Concat");
  s.outer = numel(Shape(out.shape.begin(), out.shape.begin() + s.axis));
  const int64_t inner = numel(Shape(out.shape.begin() + s.axis + 1, out.shape.end()));
  for (const TensorType& t : inputs) {
    if (t.dtype != out.dtype || t.shape.size() != out.shape.size())
      throw Error("inputs differ in dtype or rank");
    s.chunk.push_back(t.shape[s.axis] * inner);
    s.row += s.chunk.back();
  }
  return s;
}

GatherSplit gather_split(const Node& node, const Shape& data, const Shape& indices) {
  if (data.empty()) throw Error("data must have rank >= 1");
  GatherSplit s;
  s.axis = normalize_axis(node.attrs.get_int("axis", 0), data.size(), "Gather");
  s.outer = numel(Shape(data.begin(), data.begin() + s.axis));
  s.axis_dim = data[s.axis];
  s.inner = numel(Shape(data.begin() + s.axis + 1, data.end()));
  s.count = numel(indices);
  return s;
}

}  // namespace fusebox::ir
