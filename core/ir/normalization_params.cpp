#include "core/ir/normalization_params.h"

#include <string>

#include "core/base/error.h"

namespace fusebox::ir {

AxisSplit split_at(const Shape& x, int axis) {
  AxisSplit s;
  for (int d = 0; d < static_cast<int>(x.size()); ++d)
    (d < axis ? s.outer : d == axis ? s.n : s.inner) *= x[d];
  return s;
}

AxisSplit softmax_split(const Node& node, const Shape& x) {
  if (x.empty()) return {};
  return split_at(x, normalize_axis(node.attrs.get_int("axis", -1), x.size(), "Softmax"));
}

LayerNormSplit layer_norm_split(const Node& node, const std::vector<TensorType>& inputs,
                                int first_param) {
  const Shape& x = inputs.at(0).shape;
  if (x.empty()) throw Error("input must have rank >= 1");
  if (first_param == 2 && inputs.at(1).shape != x)
    throw Error("x " + shape_str(x) + " and skip " + shape_str(inputs[1].shape) + " differ");
  const int axis = normalize_axis(node.attrs.get_int("axis", -1), x.size(), node.op);
  LayerNormSplit s;
  s.norm = Shape(x.begin() + axis, x.end());
  s.d = numel(s.norm);
  s.rows = numel(Shape(x.begin(), x.begin() + axis));
  s.epsilon = node.attrs.get_float("epsilon", 1e-5);
  s.first_param = first_param;
  s.has_bias = inputs.size() > static_cast<size_t>(first_param) + 1;
  auto named = [&](size_t i) { return node.outputs.size() > i && !node.outputs[i].empty(); };
  s.write_mean = named(1);
  s.write_inv_std = named(2);
  return s;
}

ReduceSplit reduce_mean_split(const Node& node, const Shape& x) {
  const std::vector<int64_t> axes = node.attrs.get_ints("axes");
  ReduceSplit s;
  s.reduce.assign(x.size(), axes.empty());
  for (int64_t a : axes) s.reduce[normalize_axis(a, x.size(), node.op + " axes")] = true;
  const std::vector<int64_t> strides = strides_of(x);
  for (size_t d = 0; d < x.size(); ++d) {
    (s.reduce[d] ? s.reduced_dims : s.kept_dims).push_back(x[d]);
    (s.reduce[d] ? s.reduced_strides : s.kept_strides).push_back(strides[d]);
    if (s.reduce[d]) s.count *= x[d];
  }
  return s;
}

}  // namespace fusebox::ir
