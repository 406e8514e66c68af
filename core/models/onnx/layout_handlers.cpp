// ONNX ops that move or reinterpret data -> ours. Their shape arguments (Reshape's shape, Slice's
// starts/ends/axes/steps, Squeeze/Unsqueeze/Split inputs from opset 13, Expand's shape, Tile's
// repeats, Pad's pads) must be known at load time and become attributes. Range is computed here.
#include <algorithm>
#include <cmath>
#include <set>

#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

void require_input(const OnnxNode& node) {
  if (node.input(0).empty()) throw Error(node.where() + ": missing input");
}

// Axes from the attribute (before `input_since`) or from input 1 (from `input_since` on).
std::vector<int64_t> axes_arg(ImportContext& ctx, const OnnxNode& node, int64_t input_since, bool* given) {
  if (ctx.opset() >= input_since) {
    if (node.has("axes")) throw Error(node.where() + ": from opset " + std::to_string(input_since) + " axes is an input, not an attribute");
    *given = !node.input(1).empty();
    return *given ? ctx.constant_ints(node.input(1), node, "axes") : std::vector<int64_t>{};
  }
  *given = node.has("axes");
  return node.get_ints("axes");
}

}  // namespace

void add_layout_handlers(HandlerRegistry& r) {
  r.add({"Transpose", 1, 21, {"perm"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_input(node);
           ir::Attributes a;
           if (node.has("perm")) a.set("perm", node.get_ints("perm"));
           ctx.emit(node, "Transpose", {node.input(0)}, std::move(a), {node.output(0)});
         }});

  r.add({"Reshape", 1, 21, {"shape", "allowzero", "consumed_inputs"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_input(node);
           std::vector<int64_t> shape;
           if (ctx.opset() < 5) {
             shape = node.get_ints("shape");
           } else {
             if (node.input(1).empty()) throw Error(node.where() + ": missing input 'shape'");
             shape = ctx.constant_ints(node.input(1), node, "shape");
           }
           ir::Attributes a = attrs_of({{"shape", shape}});
           if (node.get_int("allowzero", 0) != 0) a.set("allowzero", int64_t{1});
           ctx.emit(node, "Reshape", {node.input(0)}, std::move(a), {node.output(0)});
         }});

  r.add({"Flatten", 1, 21, {"axis"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_input(node);
           ctx.emit(node, "Flatten", {node.input(0)}, attrs_of({{"axis", node.get_int("axis", 1)}}), {node.output(0)});
         }});

  r.add({"Squeeze", 1, 21, {"axes"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_input(node);
           bool given = false;
           std::vector<int64_t> axes = axes_arg(ctx, node, 13, &given);
           ir::Attributes a;
           if (!axes.empty()) a.set("axes", axes);
           ctx.emit(node, "Squeeze", {node.input(0)}, std::move(a), {node.output(0)});
         }});

  r.add({"Unsqueeze", 1, 21, {"axes"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_input(node);
           bool given = false;
           std::vector<int64_t> axes = axes_arg(ctx, node, 13, &given);
           if (!given) throw Error(node.where() + ": missing axes");
           ctx.emit(node, "Unsqueeze", {node.input(0)}, attrs_of({{"axes", axes}}), {node.output(0)});
         }});

  r.add({"Concat", 4, 21, {"axis"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (!node.has("axis")) throw Error(node.where() + ": missing attribute 'axis'");
           std::vector<std::string> in;
           for (int i = 0; i < node.num_inputs(); ++i)
             if (!node.input(i).empty()) in.push_back(node.input(i));
           if (in.empty()) throw Error(node.where() + ": has no inputs");
           ctx.emit(node, "Concat", in, attrs_of({{"axis", node.get_int("axis", 0)}}), {node.output(0)});
         }});

  // Split -> one Slice per output.
  r.add({"Split", 2, 21, {"axis", "split", "num_outputs"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_input(node);
           ir::Shape shape = ctx.type_of(node.input(0)).shape;
           int axis = ir::normalize_axis(node.get_int("axis", 0), shape.size(), node.where() + " axis");
           int64_t dim = shape[axis];
           int outputs = node.num_outputs();
           if (outputs < 1) throw Error(node.where() + ": has no outputs");
           std::vector<int64_t> split;
           if (ctx.opset() >= 13) {
             if (node.has("split")) throw Error(node.where() + ": from opset 13 split is an input, not an attribute");
             if (!node.input(1).empty()) split = ctx.constant_ints(node.input(1), node, "split");
           } else {
             split = node.get_ints("split");
           }
           if (split.empty()) {
             if (ctx.opset() >= 18) {
               if (!node.has("num_outputs")) throw Error(node.where() + ": needs the split input or num_outputs");
               if (node.get_int("num_outputs", 0) != outputs)
                 throw Error(node.where() + ": num_outputs differs from the number of outputs");
               int64_t chunk = (dim + outputs - 1) / outputs;  // the last chunk may be smaller
               for (int i = 0; i < outputs; ++i) split.push_back(std::max<int64_t>(0, std::min(chunk, dim - chunk * i)));
             } else {
               if (dim % outputs != 0)
                 throw Error(node.where() + ": dim " + std::to_string(dim) + " does not split into " + std::to_string(outputs) + " equal parts");
               split.assign(outputs, dim / outputs);
             }
           }
           if (static_cast<int>(split.size()) != outputs)
             throw Error(node.where() + ": split has " + std::to_string(split.size()) + " entries for " + std::to_string(outputs) + " outputs");
           int64_t start = 0;
           for (int64_t s : split) {
             if (s < 0 || s > dim - start) throw Error(node.where() + ": split sizes do not add up to dim " + std::to_string(dim));
             start += s;
           }
           if (start != dim) throw Error(node.where() + ": split sizes add up to " + std::to_string(start) + ", not dim " + std::to_string(dim));
           start = 0;
           for (int i = 0; i < outputs; ++i) {
             ir::Attributes a = attrs_of({{"starts", std::vector<int64_t>{start}}, {"ends", std::vector<int64_t>{start + split[i]}},
                                          {"axes", std::vector<int64_t>{axis}}});
             ctx.emit(node, "Slice", {node.input(0)}, std::move(a), {node.output(i)}, "_" + std::to_string(i));
             start += split[i];
           }
         }});

  r.add({"Slice", 1, 21, {"starts", "ends", "axes"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_input(node);
           std::vector<int64_t> starts, ends, axes, steps;
           if (ctx.opset() < 10) {
             starts = node.get_ints("starts");
             ends = node.get_ints("ends");
             axes = node.get_ints("axes");
           } else {
             if (node.has("starts") || node.has("ends") || node.has("axes"))
               throw Error(node.where() + ": from opset 10 starts/ends/axes are inputs, not attributes");
             if (node.input(1).empty() || node.input(2).empty()) throw Error(node.where() + ": needs starts and ends");
             starts = ctx.constant_ints(node.input(1), node, "starts");
             ends = ctx.constant_ints(node.input(2), node, "ends");
             if (!node.input(3).empty()) axes = ctx.constant_ints(node.input(3), node, "axes");
             if (!node.input(4).empty()) steps = ctx.constant_ints(node.input(4), node, "steps");
           }
           ir::Shape shape = ctx.type_of(node.input(0)).shape;
           if (starts.size() != ends.size()) throw Error(node.where() + ": starts and ends differ in length");
           if (axes.empty())
             for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
           if (steps.empty()) steps.assign(starts.size(), 1);
           if (axes.size() != starts.size() || steps.size() != starts.size())
             throw Error(node.where() + ": axes/steps differ in length from starts");
           std::set<int> seen;
           for (size_t i = 0; i < axes.size(); ++i) {
             int ax = ir::normalize_axis(axes[i], shape.size(), node.where() + " axes");
             if (!seen.insert(ax).second) throw Error(node.where() + ": axis " + std::to_string(axes[i]) + " repeated");
             axes[i] = ax;
             // Bound the numbers so that the index arithmetic cannot overflow; the result is the same.
             int64_t lim = shape[ax] + 1;
             if (steps[i] == 0) throw Error(node.where() + ": step 0");
             steps[i] = std::clamp<int64_t>(steps[i], -lim, lim);
             starts[i] = std::clamp<int64_t>(starts[i], -2 * lim, 2 * lim);
             ends[i] = std::clamp<int64_t>(ends[i], -2 * lim, 2 * lim);
           }
           ir::Attributes a = attrs_of({{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}});
           ctx.emit(node, "Slice", {node.input(0)}, std::move(a), {node.output(0)});
         }});

  r.add({"Gather", 1, 21, {"axis"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects data and indices");
           ir::Shape shape = ctx.type_of(node.input(0)).shape;
           if (shape.empty()) throw Error(node.where() + ": data must have rank >= 1");
           int axis = ir::normalize_axis(node.get_int("axis", 0), shape.size(), node.where() + " axis");
           std::string indices = node.input(1);
           if (ctx.is_constant(indices)) {
             // Known indices: normalize negative ones and check bounds now.
             const ir::Tensor& t = ctx.constant(indices, node, "indices");
             if (t.dtype() != ir::DType::i64) throw Error(node.where() + ": indices must be integers");
             ir::Tensor fixed(ir::DType::i64, t.shape());
             for (int64_t i = 0; i < t.numel(); ++i) {
               int64_t v = t.data<int64_t>()[i];
               if (v < -shape[axis] || v >= shape[axis])
                 throw Error(node.where() + ": index " + std::to_string(v) + " out of range for dim " + std::to_string(shape[axis]));
               fixed.data<int64_t>()[i] = v < 0 ? v + shape[axis] : v;
             }
             indices = ctx.fresh(indices + "_normalized");
             ctx.define_constant(indices, std::move(fixed));
           }
           ctx.emit(node, "Gather", {node.input(0), indices}, attrs_of({{"axis", int64_t{axis}}}), {node.output(0)});
         }});

  // Ops added for the ONNX conformance count (issue 25).
  r.add({"GatherElements", 11, 21, {"axis"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects data and indices");
           ir::Shape shape = ctx.type_of(node.input(0)).shape;
           if (shape.empty()) throw Error(node.where() + ": data must have rank >= 1");
           int axis = ir::normalize_axis(node.get_int("axis", 0), shape.size(), node.where() + " axis");
           if (ctx.is_constant(node.input(1))) {
             // Known indices: an out-of-range one is refused at load time, naming the node.
             const ir::Tensor& t = ctx.constant(node.input(1), node, "indices");
             for (int64_t i = 0; i < t.numel(); ++i) {
               int64_t v = t.data<int64_t>()[i];
               if (v < -shape[axis] || v >= shape[axis])
                 throw Error(node.where() + ": index " + std::to_string(v) + " (element " + std::to_string(i) +
                             ") out of range for axis " + std::to_string(axis) + " of size " + std::to_string(shape[axis]));
             }
           }
           ctx.emit(node, "GatherElements", {node.input(0), node.input(1)}, attrs_of({{"axis", int64_t{axis}}}),
                    {node.output(0)});
         }});

  // ScatterND and ScatterElements (issue 37), and opsets 9-10's Scatter, which is ScatterElements
  // without reduction. An index out of range is the kernel's error (constant folding runs it at
  // load time when every input is known).
  auto scatter = [](const char* op) {
    return [op = std::string(op)](ImportContext& ctx, const OnnxNode& node) {
      for (int i = 0; i < 3; ++i)
        if (node.input(i).empty())
          throw Error(node.where() + ": expects data, indices and updates");
      ir::Attributes attrs;
      attrs.set("reduction", node.get_string("reduction", "none"));
      if (op == "ScatterElements") attrs.set("axis", node.get_int("axis", 0));
      ctx.emit(node, op, {node.input(0), node.input(1), node.input(2)}, std::move(attrs),
               {node.output(0)});
    };
  };
  r.add({"ScatterND", 11, 21, {"reduction"}, scatter("ScatterND")});
  r.add({"ScatterElements", 11, 21, {"axis", "reduction"}, scatter("ScatterElements")});
  r.add({"Scatter", 9, 10, {"axis"}, scatter("ScatterElements")});

  // DepthToSpace / SpaceToDepth are a Reshape to 6-D, a Transpose and a Reshape back (ONNX's own
  // definition), so they run on the layout kernels and absorb_layout sees through them.
  r.add({"DepthToSpace", 1, 21, {"blocksize", "mode"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           const ir::Shape x = ctx.type_of(node.input(0)).shape;
           const int64_t bs = node.get_int("blocksize", 0);
           const std::string mode = node.get_string("mode", "DCR");
           if (mode != "DCR" && mode != "CRD") throw Error(node.where() + ": mode '" + mode + "' is not DCR or CRD");
           if (mode == "CRD" && ctx.opset() < 11) throw Error(node.where() + ": mode needs opset >= 11");
           if (x.size() != 4) throw Error(node.where() + ": input must be 4-D [N, C, H, W], got " + ir::shape_str(x));
           // blocksize^2, where int64 holds it (2^32 squared does not); the output's H and W too.
           const auto squared = bs > 0 ? checked_mul(bs, bs) : std::nullopt;
           const int64_t groups = squared.value_or(0);
           if (!squared || x[1] % groups != 0)
             throw Error(node.where() + ": blocksize " + std::to_string(bs) + " does not divide the " +
                         std::to_string(x[1]) + " channels into blocksize^2 groups");
           const int64_t c = x[1] / groups;
           const auto h = checked_mul(x[2], bs), w = checked_mul(x[3], bs);
           if (!h || !w)
             throw Error(node.where() + ": blocksize " + std::to_string(bs) + " makes H x W " +
                         std::to_string(x[2]) + " x " + std::to_string(x[3]) + " past 2^63");
           std::vector<int64_t> six = mode == "DCR" ? std::vector<int64_t>{x[0], bs, bs, c, x[2], x[3]}
                                                    : std::vector<int64_t>{x[0], c, bs, bs, x[2], x[3]};
           std::vector<int64_t> perm = mode == "DCR" ? std::vector<int64_t>{0, 3, 4, 1, 5, 2}
                                                     : std::vector<int64_t>{0, 1, 4, 2, 5, 3};
           std::string a = ctx.fresh(node.output(0) + "_6d"), b = ctx.fresh(node.output(0) + "_moved");
           ctx.emit(node, "Reshape", {node.input(0)}, attrs_of({{"shape", six}}), {a}, "_Reshape6d");
           ctx.emit(node, "Transpose", {a}, attrs_of({{"perm", perm}}), {b}, "_Transpose");
           ctx.emit(node, "Reshape", {b}, attrs_of({{"shape", std::vector<int64_t>{x[0], c, *h, *w}}}),
                    {node.output(0)}, "_Reshape");
         }});

  r.add({"SpaceToDepth", 1, 21, {"blocksize"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           const ir::Shape x = ctx.type_of(node.input(0)).shape;
           const int64_t bs = node.get_int("blocksize", 0);
           if (x.size() != 4) throw Error(node.where() + ": input must be 4-D [N, C, H, W], got " + ir::shape_str(x));
           if (bs <= 0 || x[2] % bs != 0 || x[3] % bs != 0)
             throw Error(node.where() + ": blocksize " + std::to_string(bs) + " does not divide H x W " +
                         std::to_string(x[2]) + " x " + std::to_string(x[3]));
           const auto squared = checked_mul(bs, bs);
           const auto channels = squared ? checked_mul(x[1], *squared) : std::nullopt;  // C x blocksize^2
           if (!channels)
             throw Error(node.where() + ": blocksize " + std::to_string(bs) + " makes more than 2^63 channels");
           std::string a = ctx.fresh(node.output(0) + "_6d"), b = ctx.fresh(node.output(0) + "_moved");
           ctx.emit(node, "Reshape", {node.input(0)},
                    attrs_of({{"shape", std::vector<int64_t>{x[0], x[1], x[2] / bs, bs, x[3] / bs, bs}}}), {a}, "_Reshape6d");
           ctx.emit(node, "Transpose", {a}, attrs_of({{"perm", std::vector<int64_t>{0, 3, 5, 1, 2, 4}}}), {b}, "_Transpose");
           ctx.emit(node, "Reshape", {b},
                    attrs_of({{"shape", std::vector<int64_t>{x[0], *channels, x[2] / bs, x[3] / bs}}}),
                    {node.output(0)}, "_Reshape");
         }});

  r.add({"Trilu", 14, 21, {"upper"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           const int64_t upper = node.get_int("upper", 1);
           if (upper != 0 && upper != 1)
             throw Error(node.where() + ": attribute upper is " + std::to_string(upper) + ", expected 0 or 1");
           int64_t k = 0;
           if (!node.input(1).empty()) {
             std::vector<int64_t> ks = ctx.constant_ints(node.input(1), node, "k");
             if (ks.size() != 1) throw Error(node.where() + ": k has " + std::to_string(ks.size()) + " values, expected one");
             k = ks[0];
           }
           ctx.emit(node, "Trilu", {node.input(0)}, attrs_of({{"upper", upper}, {"k", k}}), {node.output(0)});
         }});

  r.add({"Expand", 8, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects input and shape");
           std::vector<int64_t> shape = ctx.constant_ints(node.input(1), node, "shape");
           ctx.emit(node, "Expand", {node.input(0)}, attrs_of({{"shape", shape}}), {node.output(0)});
         }});

  r.add({"Tile", 6, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects input and repeats");
           std::vector<int64_t> repeats = ctx.constant_ints(node.input(1), node, "repeats");
           ctx.emit(node, "Tile", {node.input(0)}, attrs_of({{"repeats", repeats}}), {node.output(0)});
         }});

  // Range's output length depends on its values, so they must be known at load time (the usual
  // case: exporters compute them from shapes); the result is a constant.
  r.add({"Range", 11, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty() || node.input(2).empty())
             throw Error(node.where() + ": expects start, limit and delta");
           const char* what[] = {"start", "limit", "delta"};
           ir::DType dt = ctx.type_of(node.input(0)).dtype;
           double v[3];
           for (int i = 0; i < 3; ++i) {
             if (!ctx.is_constant(node.input(i)))
               throw Error(node.where() + ": " + what[i] + " '" + node.input(i) +
                           "' is computed at run time; fusebox needs Range's inputs at load time (its output length depends on them)");
             const ir::Tensor& t = ctx.constant(node.input(i), node, what[i]);
             if (t.numel() != 1) throw Error(node.where() + ": " + what[i] + " must be a scalar, got " + ir::shape_str(t.shape()));
             if (t.dtype() != dt) throw Error(node.where() + ": start, limit and delta have different types");
             v[i] = dt == ir::DType::f32 ? static_cast<double>(t.data<float>()[0]) : static_cast<double>(t.data<int64_t>()[0]);
           }
           if (v[2] == 0 || !std::isfinite(v[0]) || !std::isfinite(v[1]) || !std::isfinite(v[2]))
             throw Error(node.where() + ": delta must be non-zero and all three finite");
           const double count = std::max(std::ceil((v[1] - v[0]) / v[2]), 0.0);
           if (count > double{1 << 28}) throw Error(node.where() + ": Range of " + std::to_string(count) + " elements is too large");
           const auto n = static_cast<int64_t>(count);
           ir::Tensor out(dt, {n});
           if (dt == ir::DType::f32) {
             // ONNX computes start + i * delta in the input type.
             const float start = ctx.constant(node.input(0), node, what[0]).data<float>()[0];
             const float delta = ctx.constant(node.input(2), node, what[2]).data<float>()[0];
             for (int64_t i = 0; i < n; ++i) out.data<float>()[i] = start + static_cast<float>(i) * delta;
           } else {
             const int64_t start = ctx.constant(node.input(0), node, what[0]).data<int64_t>()[0];
             const int64_t delta = ctx.constant(node.input(2), node, what[2]).data<int64_t>()[0];
             // In unsigned arithmetic: a start near the i64 limits must wrap, not be undefined.
             for (int64_t i = 0; i < n; ++i)
               out.data<int64_t>()[i] = static_cast<int64_t>(static_cast<uint64_t>(start) +
                                                             static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
           }
           ctx.define_constant(node.output(0), std::move(out));
         }});

  // Pad: pads (and the constant) are attributes before opset 11 and inputs from 11; opset 18
  // adds axes, naming the dims that pads covers. Our op takes pads for every dim.
  r.add({"Pad", 2, 21, {"pads", "mode", "value"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_input(node);
           const ir::TensorType x = ctx.type_of(node.input(0));
           const size_t rank = x.shape.size();
           const std::string mode = node.get_string("mode", "constant");
           if (mode != "constant" && mode != "reflect" && mode != "edge")
             throw Error(node.where() + ": mode '" + mode + "' is not supported (constant, reflect or edge)");
           std::vector<int64_t> pads;
           std::vector<std::string> in{node.input(0)};
           if (ctx.opset() < 11) {
             pads = node.get_ints("pads");
             double value = node.get_float("value", 0.0);
             if (value != 0.0) {
               std::string v = ctx.fresh(node.output(0) + "_value");
               ir::Tensor t(x.dtype, {});
               if (x.dtype == ir::DType::f32) t.data<float>()[0] = static_cast<float>(value);
               else t.data<int64_t>()[0] = static_cast<int64_t>(value);
               ctx.define_constant(v, std::move(t));
               in.push_back(v);
             }
           } else {
             if (node.has("pads") || node.has("value"))
               throw Error(node.where() + ": from opset 11 pads and value are inputs, not attributes");
             if (node.input(1).empty()) throw Error(node.where() + ": missing input 'pads'");
             pads = ctx.constant_ints(node.input(1), node, "pads");
             if (!node.input(2).empty() && mode == "constant") in.push_back(node.input(2));
             if (!node.input(3).empty()) {  // axes (opset 18): spread pads over every dim
               std::vector<int64_t> axes = ctx.constant_ints(node.input(3), node, "axes");
               if (pads.size() != 2 * axes.size())
                 throw Error(node.where() + ": pads has " + std::to_string(pads.size()) + " entries for " +
                             std::to_string(axes.size()) + " axes");
               std::vector<int64_t> full(2 * rank, 0);
               for (size_t i = 0; i < axes.size(); ++i) {
                 int ax = ir::normalize_axis(axes[i], rank, node.where() + " axes");
                 full[ax] = pads[i];
                 full[ax + rank] = pads[i + axes.size()];
               }
               pads = full;
             }
           }
           if (pads.size() != 2 * rank)
             throw Error(node.where() + ": pads has " + std::to_string(pads.size()) + " entries for rank " +
                         std::to_string(rank) + " (needs " + std::to_string(2 * rank) + ")");
           ctx.emit(node, "Pad", in, attrs_of({{"pads", pads}, {"mode", mode}}), {node.output(0)});
         }});
}

}  // namespace fusebox::models::onnx_import
