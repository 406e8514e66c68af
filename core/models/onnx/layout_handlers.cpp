// ONNX ops that move or reinterpret data -> ours. Their shape arguments (Reshape's shape, Slice's
// starts/ends/axes/steps, Squeeze/Unsqueeze/Split inputs from opset 13) must be known at load
// time and become attributes.
#include <algorithm>
#include <set>

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
}

}  // namespace fusebox::models::onnx_import
