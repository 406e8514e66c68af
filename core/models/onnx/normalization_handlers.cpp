// ONNX Softmax (opset < 13: 2-D coercion at axis; >= 13: one axis), LayerNormalization (with its
// optional Mean and InvStdDev outputs), ReduceMean/Max/Min (axes attribute < 18, input >= 18),
// ReduceSum (input from 13) and ArgMax.
#include <utility>

#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

// ReduceMean/Sum/Max/Min: axes are an attribute before opset `input_since` and an optional input
// from it on, where noop_with_empty_axes makes "no axes" mean "reduce nothing" instead of all.
void reduce(HandlerRegistry& r, const char* op, int64_t input_since) {
  r.add({op, 1, 21, {"axes", "keepdims", "noop_with_empty_axes"},
         [op = std::string(op), input_since](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           std::vector<int64_t> axes;
           if (ctx.opset() >= input_since) {
             if (node.has("axes"))
               throw Error(node.where() + ": opset " + std::to_string(input_since) +
                           " takes axes as an input, not an attribute");
             if (!node.input(1).empty()) axes = ctx.constant_ints(node.input(1), node, "axes");
             if (axes.empty() && node.get_int("noop_with_empty_axes", 0) != 0) {
               ctx.emit(node, "Identity", {node.input(0)}, {}, {node.output(0)});
               return;
             }
           } else {
             if (node.has("noop_with_empty_axes"))
               throw Error(node.where() + ": noop_with_empty_axes needs opset >= " + std::to_string(input_since));
             axes = node.get_ints("axes");
           }
           ir::Attributes a = attrs_of({{"keepdims", node.get_int("keepdims", 1)}});
           if (!axes.empty()) a.set("axes", axes);
           ctx.emit(node, op, {node.input(0)}, std::move(a), {node.output(0)});
         }});
}

}  // namespace

void add_normalization_handlers(HandlerRegistry& r) {
  r.add({"Softmax", 1, 21, {"axis"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           const std::string& x = node.input(0);
           ir::Shape shape = ctx.type_of(x).shape;
           auto rank = static_cast<int64_t>(shape.size());
           if (ctx.opset() >= 13) {
             ctx.emit(node, "Softmax", {x}, attrs_of({{"axis", node.get_int("axis", -1)}}), {node.output(0)});
             return;
           }
           // Before opset 13: the input is seen as 2-D [prod(dims < axis), prod(dims >= axis)] and
           // normalized over the second dim.
           int64_t axis = node.get_int("axis", 1);
           if (axis < 0) axis += rank;
           if (axis < 0 || axis > rank || (rank > 0 && axis == rank))
             throw Error(node.where() + ": axis " + std::to_string(node.get_int("axis", 1)) + " out of range for rank " +
                         std::to_string(rank));
           if (rank == 0 || axis == rank - 1) {
             ctx.emit(node, "Softmax", {x}, attrs_of({{"axis", int64_t{-1}}}), {node.output(0)});
             return;
           }
           std::string flat = ctx.fresh(node.output(0) + "_2d"), soft = ctx.fresh(node.output(0) + "_softmax");
           ctx.emit(node, "Flatten", {x}, attrs_of({{"axis", axis}}), {flat}, "_Flatten");
           ctx.emit(node, "Softmax", {flat}, attrs_of({{"axis", int64_t{-1}}}), {soft}, "_Softmax");
           ctx.emit(node, "Reshape", {soft}, attrs_of({{"shape", std::vector<int64_t>(shape)}}), {node.output(0)},
                    "_Reshape");
         }});

  r.add({"LayerNormalization", 17, 21, {"axis", "epsilon", "stash_type"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects X and Scale");
           int64_t stash = node.get_int("stash_type", 1);
           if (stash != 1) throw Error(node.where() + ": stash_type " + std::to_string(stash) + " is not supported (only 1, float32)");
           std::vector<std::string> in{node.input(0), node.input(1)};
           if (!node.input(2).empty()) in.push_back(node.input(2));
           std::vector<std::string> out;
           int n = std::min(node.num_outputs(), 3);
           for (int i = 0; i < n; ++i) out.push_back(node.output(i));
           if (out.empty()) throw Error(node.where() + ": has no outputs");
           ir::Attributes a = attrs_of({{"axis", node.get_int("axis", -1)}, {"epsilon", node.get_float("epsilon", 1e-5)}});
           ctx.emit(node, "LayerNorm", in, std::move(a), out);
         }});

  for (auto [op, since] : {std::pair{"ReduceMean", 18}, {"ReduceSum", 13}, {"ReduceMax", 18}, {"ReduceMin", 18}})
    reduce(r, op, since);

  r.add({"ArgMax", 1, 21, {"axis", "keepdims", "select_last_index"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           if (node.has("select_last_index") && ctx.opset() < 12)
             throw Error(node.where() + ": select_last_index needs opset >= 12");
           ir::Shape x = ctx.type_of(node.input(0)).shape;
           int axis = ir::normalize_axis(node.get_int("axis", 0), x.size(), node.where() + " axis");
           ir::Attributes a = attrs_of({{"axis", int64_t{axis}},
                                        {"keepdims", int64_t{node.get_int("keepdims", 1) != 0}},
                                        {"select_last_index", int64_t{node.get_int("select_last_index", 0) != 0}}});
           ctx.emit(node, "ArgMax", {node.input(0)}, std::move(a), {node.output(0)});
         }});
}

}  // namespace fusebox::models::onnx_import
