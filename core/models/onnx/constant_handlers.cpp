// ONNX ops whose outputs are known at load time: Constant, Shape (every shape is static once
// dims are set), Size, ConstantOfShape.
#include <algorithm>

#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

void add_constant_handlers(HandlerRegistry& r) {
  r.add({"Constant", 1, 21,
         {"value", "value_float", "value_floats", "value_int", "value_ints", "sparse_value", "value_string",
          "value_strings"},
         [](ImportContext& ctx, const OnnxNode& node) {
           if (node.proto().attribute_size() != 1) throw Error(node.where() + ": needs exactly one value attribute");
           const onnx::AttributeProto& a = node.proto().attribute(0);
           const std::string& which = a.name();
           ir::Tensor t;
           if (which == "value") {
             if (a.type() != onnx::AttributeProto::TENSOR) throw Error(node.where() + ": attribute 'value' must be a tensor");
             t = tensor_from_proto(a.t(), ctx.owner(), ctx.model_dir(), node.where() + " value");
           } else if (which == "value_float") {
             t = scalar_f32(static_cast<float>(node.get_float(which, 0)));
           } else if (which == "value_floats") {
             std::vector<double> v = node.get_floats(which);
             t = ir::Tensor(ir::DType::f32, {static_cast<int64_t>(v.size())});
             for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = static_cast<float>(v[i]);
           } else if (which == "value_int") {
             t = ir::Tensor(ir::DType::i64, {});
             t.data<int64_t>()[0] = node.get_int(which, 0);
           } else if (which == "value_ints") {
             t = vector_i64(node.get_ints(which));
           } else {
             throw Error(node.where() + ": attribute '" + which + "' is not supported (strings and sparse tensors)");
           }
           ctx.define_constant(node.output(0), std::move(t));
         }});

  r.add({"Shape", 1, 21, {"start", "end"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           ir::Shape shape = ctx.type_of(node.input(0)).shape;
           auto rank = static_cast<int64_t>(shape.size());
           auto clampi = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
           int64_t b = clampi(node.get_int("start", 0)), e = clampi(node.get_int("end", rank));
           std::vector<int64_t> dims;
           for (int64_t i = b; i < e; ++i) dims.push_back(shape[i]);
           ctx.define_constant(node.output(0), vector_i64(dims));
         }});

  r.add({"Size", 1, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           ir::Tensor t(ir::DType::i64, {});
           t.data<int64_t>()[0] = ir::numel(ctx.type_of(node.input(0)).shape);
           ctx.define_constant(node.output(0), std::move(t));
         }});

  r.add({"ConstantOfShape", 9, 21, {"value"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           std::vector<int64_t> shape = ctx.constant_ints(node.input(0), node, "shape");
           for (int64_t d : shape)
             if (d < 0) throw Error(node.where() + ": negative dim " + std::to_string(d));
           ir::Tensor value = scalar_f32(0);
           if (const onnx::AttributeProto* a = node.find("value")) {
             if (a->type() != onnx::AttributeProto::TENSOR) throw Error(node.where() + ": attribute 'value' must be a tensor");
             value = tensor_from_proto(a->t(), nullptr, "", node.where() + " value");
             if (value.numel() != 1) throw Error(node.where() + ": value must have one element");
           }
           // Computed now, so it counts against the load-time folding budget (no run-time op).
           const int64_t n = ir::numel(shape);
           std::string why =
               n > (int64_t{1} << 40)
                   ? "too many elements"
                   : ctx.take_fold_bytes(static_cast<size_t>(n) * ir::dtype_size(value.dtype()));
           if (!why.empty())
             throw Error(node.where() + ": shape " + ir::shape_str(shape) +
                         " is too large to fold at load time (" + why + ")");
           ir::Tensor out(value.dtype(), shape);
           for (int64_t i = 0; i < out.numel(); ++i) {
             if (out.dtype() == ir::DType::f32) out.data<float>()[i] = value.data<float>()[0];
             else out.data<int64_t>()[i] = value.data<int64_t>()[0];
           }
           ctx.define_constant(node.output(0), std::move(out));
         }});
}

}  // namespace fusebox::models::onnx_import
