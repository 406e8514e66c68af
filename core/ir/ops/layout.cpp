// Ops that move or reinterpret data: the zero-copy views (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity), Transpose, Concat, Slice, Gather, Expand, Tile, Pad, Trilu, GatherElements. Shape arguments are attributes: the importer and
// constant folding resolve ONNX's shape inputs at load time.
#include <algorithm>

#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/ir/ops/builtin_ops.h"

namespace fusebox::ir {

namespace {

OpSchema view_op(const char* name, const char* doc,
                 std::function<Shape(const Node&, const Shape&)> shape_fn) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.view = true;
  s.infer = [shape_fn](const Node& n, const std::vector<TensorType>& in) {
    Shape out = shape_fn(n, in[0].shape);
    if (numel(out) != numel(in[0].shape))
      throw Error("cannot view " + shape_str(in[0].shape) + " as " + shape_str(out));
    return std::vector<TensorType>{{in[0].dtype, out}};
  };
  return s;
}

Shape reshape_shape(const Node& n, const Shape& in) {
  if (!n.attrs.has("shape")) throw Error("missing attribute 'shape'");
  Shape target = n.attrs.get_ints("shape");
  bool allowzero = n.attrs.get_int("allowzero", 0) != 0;
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowzero) {
      if (i >= in.size()) throw Error("shape has 0 at dim " + std::to_string(i) + " beyond the input rank");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer_at >= 0) throw Error("shape has more than one -1");
      infer_at = static_cast<int>(i);
    } else if (target[i] < 0) {
      throw Error("shape has negative dim " + std::to_string(target[i]));
    } else if (auto product = checked_mul(known, target[i])) {
      known = *product;
    } else {
      throw Error("shape " + shape_str(n.attrs.get_ints("shape")) + " has too many elements");
    }
  }
  if (infer_at >= 0) {
    int64_t total = numel(in);
    if (known == 0 || total % known != 0)
      throw Error("cannot infer -1 reshaping " + shape_str(in) + " to " + shape_str(n.attrs.get_ints("shape")));
    target[infer_at] = total / known;
  }
  return target;
}

}  // namespace

void register_layout_ops(OpRegistry& r) {
  const size_t first = r.size();
  r.add(view_op("Reshape", "same bytes, new shape (attribute shape; 0 copies a dim, -1 infers one)",
                reshape_shape));
  r.add(view_op("Identity", "same tensor under another name", [](const Node&, const Shape& in) { return in; }));
  r.add(view_op("Flatten",
                "2-D view: dims before axis x dims from axis (attribute axis, default 1)",
                [](const Node& n, const Shape& in) {
                  // axis may be rank itself ([prod, 1]); checked before narrowing, so 2^32 or
                  // -2^63 is refused rather than cut to 0.
                  const int64_t rank = static_cast<int64_t>(in.size());
                  const int64_t given = n.attrs.get_int("axis", 1);
                  if (given < -rank || given > rank)
                    throw Error("Flatten: axis " + std::to_string(given) +
                                " out of range for rank " + std::to_string(rank));
                  const int axis = static_cast<int>(given < 0 ? given + rank : given);
                  int64_t a = 1, b = 1;
                  for (int i = 0; i < static_cast<int>(in.size()); ++i) {
                    int64_t& side = i < axis ? a : b;
                    auto product = checked_mul(side, in[i]);
                    if (!product) throw Error("flattening " + shape_str(in) + " overflows int64");
                    side = *product;
                  }
                  return Shape{a, b};
                }));
  r.add(view_op("Unsqueeze", "inserts size-1 dims at attribute axes", [](const Node& n, const Shape& in) {
    std::vector<int64_t> axes = n.attrs.get_ints("axes");
    size_t rank = in.size() + axes.size();
    std::vector<bool> is_new(rank, false);
    for (int64_t a : axes) {
      int ax = normalize_axis(a, rank, "Unsqueeze");
      if (is_new[ax]) throw Error("axis " + std::to_string(a) + " repeated");
      is_new[ax] = true;
    }
    Shape out;
    size_t j = 0;
    for (size_t i = 0; i < rank; ++i) out.push_back(is_new[i] ? 1 : in[j++]);
    return out;
  }));
  r.add(view_op("Squeeze", "removes size-1 dims at attribute axes (all size-1 dims when absent)",
                [](const Node& n, const Shape& in) {
                  std::vector<int64_t> axes = n.attrs.get_ints("axes");
                  std::vector<bool> drop(in.size(), false);
                  if (axes.empty()) {
                    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
                  }
                  for (int64_t a : axes) {
                    int ax = normalize_axis(a, in.size(), "Squeeze");
                    if (in[ax] != 1) throw Error("cannot squeeze dim " + std::to_string(a) + " of size " + std::to_string(in[ax]));
                    drop[ax] = true;
                  }
                  Shape out;
                  for (size_t i = 0; i < in.size(); ++i)
                    if (!drop[i]) out.push_back(in[i]);
                  return out;
                }));
  {
    OpSchema s;
    s.name = "Transpose";
    s.doc = "permutes dims (attribute perm, default reversed)";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const Shape& x = in[0].shape;
      std::vector<int64_t> perm = n.attrs.get_ints("perm");
      if (perm.empty())
        for (size_t i = 0; i < x.size(); ++i) perm.push_back(static_cast<int64_t>(x.size() - 1 - i));
      if (perm.size() != x.size()) throw Error("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.size()));
      std::vector<bool> seen(x.size(), false);
      Shape out;
      for (int64_t p : perm) {
        int ax = normalize_axis(p, x.size(), "Transpose");
        if (seen[ax]) throw Error("perm is not a permutation");
        seen[ax] = true;
        out.push_back(x[ax]);
      }
      return std::vector<TensorType>{{in[0].dtype, out}};
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Concat";
    s.doc = "joins inputs along attribute axis";
    s.min_inputs = 1;
    s.max_inputs = 1024;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      Shape out = in[0].shape;
      if (out.empty()) throw Error("cannot concat scalars");
      int axis = normalize_axis(n.attrs.get_int("axis", 0), out.size(), "Concat");
      out[axis] = 0;
      for (const auto& t : in) {
        if (t.shape.size() != out.size()) throw Error("inputs have different ranks");
        for (size_t i = 0; i < out.size(); ++i)
          if (static_cast<int>(i) != axis && t.shape[i] != in[0].shape[i])
            throw Error("inputs differ in dim " + std::to_string(i));
        auto sum = checked_add(out[axis], t.shape[axis]);
        if (!sum) throw Error("concatenated dim " + std::to_string(axis) + " overflows int64");
        out[axis] = *sum;
      }
      return std::vector<TensorType>{{in[0].dtype, out}};
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Slice";
    s.doc = "strided slice (attributes starts, ends, axes, steps; ONNX clamping rules)";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      Shape out = in[0].shape;
      auto starts = n.attrs.get_ints("starts"), ends = n.attrs.get_ints("ends");
      auto axes = n.attrs.get_ints("axes"), steps = n.attrs.get_ints("steps");
      if (starts.size() != ends.size()) throw Error("starts and ends differ in length");
      if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      if (steps.empty()) steps.assign(starts.size(), 1);
      if (axes.size() != starts.size() || steps.size() != starts.size())
        throw Error("axes/steps differ in length from starts");
      std::vector<bool> seen(out.size(), false);
      for (size_t i = 0; i < starts.size(); ++i) {
        int ax = normalize_axis(axes[i], out.size(), "Slice");
        if (seen[ax]) throw Error("axis " + std::to_string(axes[i]) + " repeated");
        seen[ax] = true;
        int64_t dim = in[0].shape[ax], step = steps[i];
        if (step == 0) throw Error("step 0");
        // Clamp first (starts/ends may be +-2^63 as exporters write "to the end"), then count
        // with steps capped at the dim so nothing overflows.
        int64_t b = std::clamp<int64_t>(starts[i], -dim - 1, dim + 1);
        int64_t e = std::clamp<int64_t>(ends[i], -dim - 1, dim + 1);
        if (b < 0) b += dim;
        if (e < 0) e += dim;
        int64_t span_step = step > 0 ? std::min(step, dim + 1) : (step < -(dim + 1) ? dim + 1 : -step);
        if (dim == 0) {
          out[ax] = 0;
        } else if (step > 0) {
          b = std::clamp<int64_t>(b, 0, dim);
          e = std::clamp<int64_t>(e, 0, dim);
          out[ax] = e > b ? (e - b + span_step - 1) / span_step : 0;
        } else {
          b = std::clamp<int64_t>(b, 0, dim - 1);
          e = std::clamp<int64_t>(e, -1, dim - 1);
          out[ax] = b > e ? (b - e + span_step - 1) / span_step : 0;
        }
      }
      return std::vector<TensorType>{{in[0].dtype, out}};
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Gather";
    s.doc = "picks slices of data along attribute axis by i64 indices (embedding lookup)";
    s.min_inputs = s.max_inputs = 2;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const Shape& x = in[0].shape;
      if (x.empty()) throw Error("data must have rank >= 1");
      int axis = normalize_axis(n.attrs.get_int("axis", 0), x.size(), "Gather");
      Shape out(x.begin(), x.begin() + axis);
      out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
      out.insert(out.end(), x.begin() + axis + 1, x.end());
      return std::vector<TensorType>{{in[0].dtype, out}};
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Expand";
    s.doc = "broadcasts x to attribute shape (numpy rules, both ways: the result may be larger)";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      if (!n.attrs.has("shape")) throw Error("missing attribute 'shape'");
      Shape target = n.attrs.get_ints("shape");
      for (int64_t d : target)
        if (d < 0) throw Error("shape " + shape_str(target) + " has a negative dim");
      return std::vector<TensorType>{{in[0].dtype, broadcast_shapes(in[0].shape, target)}};
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Tile";
    s.doc = "repeats x along each dim (attribute repeats, one count per dim)";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const Shape& x = in[0].shape;
      std::vector<int64_t> rep = n.attrs.get_ints("repeats");
      if (rep.size() != x.size())
        throw Error("repeats has " + std::to_string(rep.size()) + " entries for rank " + std::to_string(x.size()));
      Shape out(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        if (rep[i] < 0) throw Error("repeats has negative entry " + std::to_string(rep[i]));
        auto product = checked_mul(x[i], rep[i]);
        if (!product) throw Error("tiling " + shape_str(x) + " overflows int64");
        out[i] = *product;
      }
      return std::vector<TensorType>{{in[0].dtype, out}};
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Pad";
    s.doc = "pads x (attribute pads: begins then ends per dim, negative crops; mode constant | "
            "reflect | edge; optional input 1: the constant value, one element)";
    s.max_inputs = 2;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const Shape& x = in[0].shape;
      std::vector<int64_t> pads = n.attrs.get_ints("pads");
      if (pads.size() != 2 * x.size())
        throw Error("pads has " + std::to_string(pads.size()) + " entries for rank " +
                    std::to_string(x.size()) + " (needs " + std::to_string(2 * x.size()) + ")");
      std::string mode = n.attrs.get_string("mode", "constant");
      if (mode != "constant" && mode != "reflect" && mode != "edge")
        throw Error("mode must be constant, reflect or edge, got '" + mode + "'");
      if (in.size() > 1) {
        if (numel(in[1].shape) != 1) throw Error("constant value must be one element, got " + shape_str(in[1].shape));
      }
      Shape out(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const int64_t b = pads[i], e = pads[i + x.size()];
        if (b < -x[i] || e < -x[i] || x[i] + b + e < 0)
          throw Error("pads crop dim " + std::to_string(i) + " of size " + std::to_string(x[i]) + " below zero");
        if (b > (int64_t{1} << 40) || e > (int64_t{1} << 40)) throw Error("pads are too large");
        out[i] = x[i] + b + e;
        if (mode != "constant" && out[i] > 0 && x[i] == 0)
          throw Error(mode + " padding of an empty dim " + std::to_string(i));
      }
      return std::vector<TensorType>{{in[0].dtype, out}};
    };
    r.add(std::move(s));
  }
  // Ops added for the ONNX conformance count (issue 25).
  {
    OpSchema s;
    s.name = "Trilu";
    s.doc = "keeps the upper (attribute upper = 1) or lower triangle of the last two dims from "
            "diagonal k (attribute k: > 0 above the main diagonal), zeroing the rest";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      if (in[0].shape.size() < 2) throw Error("input must have rank >= 2, got " + shape_str(in[0].shape));
      const int64_t upper = n.attrs.get_int("upper", 1);
      if (upper != 0 && upper != 1) throw Error("attribute upper must be 0 or 1");
      return std::vector<TensorType>{in[0]};
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "GatherElements";
    s.doc = "y[..i..] = data[..indices[..i..]..] along attribute axis; indices (i64, negative from the "
            "end) have data's rank and give the output shape";
    s.min_inputs = s.max_inputs = 2;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const Shape& x = in[0].shape;
      const Shape& idx = in[1].shape;
      if (x.empty()) throw Error("data must have rank >= 1");
      if (idx.size() != x.size())
        throw Error("indices " + shape_str(idx) + " and data " + shape_str(x) + " differ in rank");
      const int axis = normalize_axis(n.attrs.get_int("axis", 0), x.size(), "GatherElements");
      for (size_t d = 0; d < x.size(); ++d)
        if (static_cast<int>(d) != axis && idx[d] > x[d])
          throw Error("indices " + shape_str(idx) + " exceed data " + shape_str(x) + " in dim " + std::to_string(d));
      if (x[axis] == 0 && numel(idx) > 0) throw Error("axis " + std::to_string(axis) + " of data is empty");
      return std::vector<TensorType>{{in[0].dtype, idx}};
    };
    r.add(std::move(s));
  }
  set_math(r, MathClass::Data, {"Reshape", "Identity", "Flatten", "Unsqueeze", "Squeeze", "Transpose", "Concat",
                                "Slice", "Gather", "Expand", "Tile", "Pad", "Trilu", "GatherElements"});
  // Any element type: they move elements by their size. Concat's inputs, and Pad's value and x,
  // share one.
  set_types(r, "T", {"Reshape", "Identity", "Flatten", "Unsqueeze", "Squeeze", "Transpose", "Concat", "Slice", "Expand",
                     "Tile", "Pad", "Trilu"});
  set_types(r, "TI", {"Gather", "GatherElements"});
  set_kind_from(r, first, OpKind::Layout);
}

}  // namespace fusebox::ir
