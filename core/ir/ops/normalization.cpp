// Softmax, LayerNorm, SkipLayerNorm, the reductions (ReduceMean/Sum/Max/Min) and ArgMax schemas.
#include <algorithm>

#include "core/base/error.h"
#include "core/ir/normalization_params.h"
#include "core/ir/ops/builtin_ops.h"

namespace fusebox::ir {

namespace {
// Checks scale and bias (params) against the block LayerNorm normalizes in x: dims axis.. .
void check_layer_norm(const Node& n, const Shape& x, const std::vector<TensorType>& params,
                      const char* op) {
  if (x.empty()) throw Error("input must have rank >= 1");
  int axis = normalize_axis(n.attrs.get_int("axis", -1), x.size(), op);
  Shape norm(x.begin() + axis, x.end());
  for (const auto& p : params) {
    if (broadcast_shapes(norm, p.shape) != norm)
      throw Error("scale/bias " + shape_str(p.shape) + " does not broadcast to " + shape_str(norm));
  }
}
// The output of a reduction over attribute axes (default all) with keepdims (default 1).
Shape reduced_shape(const Node& n, const Shape& x) {
  const std::vector<bool> reduce = reduce_mean_split(n, x).reduce;
  bool keep = n.attrs.get_int("keepdims", 1) != 0;
  Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!reduce[i]) out.push_back(x[i]);
    else if (keep) out.push_back(1);
  }
  return out;
}

void add_reduce(OpRegistry& r, const char* name, const char* doc) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.infer = [](const Node& n, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{{in[0].dtype, reduced_shape(n, in[0].shape)}};
  };
  s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return static_cast<double>(numel(in[0].shape));
  };
  r.add(std::move(s));
}

}  // namespace

void register_normalization_ops(OpRegistry& r) {
  const size_t first = r.size();
  add_reduce(r, "ReduceSum", "sum over axes (attributes axes, default all; keepdims, default 1)");
  add_reduce(r, "ReduceMax",
             "max over axes (attributes axes, default all; keepdims, default 1); -inf over none");
  add_reduce(r, "ReduceProd", "product over axes (attributes axes, default all; keepdims, default 1); 1 over none");
  add_reduce(r, "ReduceMin",
             "min over axes (attributes axes, default all; keepdims, default 1); +inf over none");
  for (const char* op : {"ArgMax", "ArgMin"}) {
    OpSchema s;
    s.name = op;
    s.doc = std::string(op) == "ArgMax"
                ? "index of the maximum along attribute axis (default 0) as i64; keepdims (default 1), "
                  "select_last_index (default 0: the first of equal maxima)"
                : "index of the minimum along attribute axis (default 0) as i64; keepdims (default 1), "
                  "select_last_index (default 0: the first of equal minima)";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const Shape& x = in[0].shape;
      const int axis = normalize_axis(n.attrs.get_int("axis", 0), x.size(), n.op + " axis");
      if (x[axis] == 0) throw Error("axis " + std::to_string(axis) + " is empty: no extremum to find");
      Shape out;
      for (size_t i = 0; i < x.size(); ++i) {
        if (static_cast<int>(i) != axis) out.push_back(x[i]);
        else if (n.attrs.get_int("keepdims", 1) != 0) out.push_back(1);
      }
      return std::vector<TensorType>{{DType::i64, out}};
    };
    s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return static_cast<double>(numel(in[0].shape));
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "CumSum";
    s.doc = "running sum along attribute axis (default 0); exclusive (default 0: each element's own value "
            "included), reverse (default 0: from the start of the axis)";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      normalize_axis(n.attrs.get_int("axis", 0), in[0].shape.size(), "CumSum axis");
      return std::vector<TensorType>{in[0]};
    };
    s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return static_cast<double>(numel(in[0].shape));
    };
    r.add(std::move(s));
  }
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    OpSchema s;
    s.name = op;
    const std::string name = op;
    s.doc = name == "Softmax"      ? "exp(x - max) / sum over one axis (attribute axis, default -1)"
            : name == "LogSoftmax" ? "x - max - log(sum exp(x - max)) over one axis (attribute axis, default -1)"
                                   : "1 at the first maximum along one axis, 0 elsewhere (attribute axis, default -1)";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      normalize_axis(n.attrs.get_int("axis", -1), std::max<size_t>(in[0].shape.size(), 1), "Softmax");
      return std::vector<TensorType>{in[0]};
    };
    s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return 5.0 * static_cast<double>(numel(in[0].shape));
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "LayerNorm";
    s.doc = "(x - mean) / sqrt(var + epsilon) * scale + bias over dims axis.. (ONNX LayerNormalization)";
    s.min_inputs = 2;
    s.max_inputs = 3;
    s.max_outputs = 3;  // Y, Mean, InvStdDev
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const Shape& x = in[0].shape;
      check_layer_norm(n, x, {in.begin() + 1, in.end()}, "LayerNorm");
      const int axis = normalize_axis(n.attrs.get_int("axis", -1), x.size(), "LayerNorm");
      Shape stat = x;
      for (size_t i = static_cast<size_t>(axis); i < stat.size(); ++i) stat[i] = 1;
      return std::vector<TensorType>{in[0], {DType::f32, stat}, {DType::f32, stat}};
    };
    s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return 8.0 * static_cast<double>(numel(in[0].shape));
    };
    r.add(std::move(s));
  }
  {
    // LayerNorm(x + skip): the residual Add before a post-LN transformer's LayerNorm folded in, so
    // the sum never goes to memory (ONNX Runtime's SkipLayerNormalization).
    OpSchema s;
    s.name = "SkipLayerNorm";
    s.doc = "LayerNorm(x + skip, scale, bias) over dims axis..; x and skip have the same shape";
    s.min_inputs = 3;
    s.max_inputs = 4;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      if (in[0].shape != in[1].shape)
        throw Error("x " + shape_str(in[0].shape) + " and skip " + shape_str(in[1].shape) +
                    " differ (SkipLayerNorm does not broadcast)");
      check_layer_norm(n, in[0].shape, {in.begin() + 2, in.end()}, "SkipLayerNorm");
      return std::vector<TensorType>{in[0]};
    };
    s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return 9.0 * static_cast<double>(numel(in[0].shape));
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "ReduceMean";
    s.doc = "mean over axes (attributes axes, default all; keepdims, default 1)";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      return std::vector<TensorType>{{DType::f32, reduced_shape(n, in[0].shape)}};
    };
    s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return static_cast<double>(numel(in[0].shape));
    };
    r.add(std::move(s));
  }
  // Sums, maxima, means and a square root (LayerNorm's): arithmetic; the softmaxes exponentiate.
  set_math(r, MathClass::Arithmetic, {"ReduceSum", "ReduceMax", "ReduceProd", "ReduceMin", "ReduceMean", "ArgMax",
                                      "ArgMin", "CumSum", "Hardmax", "LayerNorm", "SkipLayerNorm"});
  set_math(r, MathClass::Transcendental, {"Softmax"}, fixed_math({"exp"}));
  set_types(r, "T", {"ReduceSum", "ReduceMax", "ReduceProd", "ReduceMin", "ArgMax", "ArgMin", "CumSum"});
  set_types(r, "F", {"Softmax", "LogSoftmax", "Hardmax", "LayerNorm", "SkipLayerNorm", "ReduceMean"});
  set_math(r, MathClass::Transcendental, {"LogSoftmax"}, fixed_math({"exp", "log"}));
  set_kind(r, OpKind::Fused, {"LayerNorm", "SkipLayerNorm"});  // what the fusion passes make
  set_kind_from(r, first, OpKind::Normalization);
}

}  // namespace fusebox::ir
