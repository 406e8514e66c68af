#include "core/ir/scatter_params.h"

#include "core/base/error.h"

namespace fusebox::ir {

ScatterReduction parse_scatter_reduction(const std::string& name) {
  if (name == "none") return ScatterReduction::kNone;
  if (name == "add") return ScatterReduction::kAdd;
  if (name == "mul") return ScatterReduction::kMul;
  if (name == "max") return ScatterReduction::kMax;
  if (name == "min") return ScatterReduction::kMin;
  throw Error("attribute reduction is '" + name + "'; expected none, add, mul, max or min");
}

ScatterParams scatter_params(const Node& node, const std::vector<TensorType>& in) {
  if (in.size() != 3) throw Error("expects data, indices and updates");
  if (in[1].dtype != DType::i64) throw Error("indices must be i64");
  if (in[2].dtype != in[0].dtype)
    throw Error(std::string("updates are ") + dtype_name(in[2].dtype) + " but data is " + dtype_name(in[0].dtype));
  ScatterParams p;
  p.nd = node.op == "ScatterND";
  p.reduction = parse_scatter_reduction(node.attrs.get_string("reduction", "none"));
  p.data = in[0].shape;
  p.indices = in[1].shape;
  const Shape& upd = in[2].shape;
  const size_t r = p.data.size();
  p.strides.assign(r, 1);
  for (size_t d = r; d-- > 1;) p.strides[d - 1] = p.strides[d] * p.data[d];

  if (p.nd) {
    if (r == 0) throw Error("data must have rank >= 1");
    if (p.indices.empty()) throw Error("indices must have rank >= 1");
    p.k = p.indices.back();
    if (p.k < 1 || p.k > static_cast<int64_t>(r))
      throw Error("indices " + shape_str(p.indices) + " end in " + std::to_string(p.k) +
                  ", but each index tuple must have 1.." + std::to_string(r) + " entries (data " + shape_str(p.data) +
                  ")");
    Shape want(p.indices.begin(), p.indices.end() - 1);
    want.insert(want.end(), p.data.begin() + p.k, p.data.end());
    if (upd != want)
      throw Error("updates " + shape_str(upd) + " must be " + shape_str(want) + " (indices " + shape_str(p.indices) +
                  " without their last dim, then data " + shape_str(p.data) + " from dim " + std::to_string(p.k) + ")");
    p.tuples = numel(Shape(p.indices.begin(), p.indices.end() - 1));
    p.slice = numel(Shape(p.data.begin() + p.k, p.data.end()));
    for (int64_t d = 0; d < p.k; ++d)
      if (p.data[d] == 0 && p.tuples > 0) throw Error("dim " + std::to_string(d) + " of data is empty");
    return p;
  }

  if (r == 0) throw Error("data must have rank >= 1");
  if (p.indices.size() != r)
    throw Error("indices " + shape_str(p.indices) + " and data " + shape_str(p.data) + " differ in rank");
  if (upd != p.indices)
    throw Error("updates " + shape_str(upd) + " must have the shape of indices " + shape_str(p.indices));
  p.axis = normalize_axis(node.attrs.get_int("axis", 0), r, "axis");
  for (size_t d = 0; d < r; ++d)
    if (static_cast<int>(d) != p.axis && p.indices[d] > p.data[d])
      throw Error("indices " + shape_str(p.indices) + " exceed data " + shape_str(p.data) + " in dim " +
                  std::to_string(d));
  p.updates = numel(p.indices);
  if (p.data[p.axis] == 0 && p.updates > 0) throw Error("axis " + std::to_string(p.axis) + " of data is empty");
  return p;
}

}  // namespace fusebox::ir
