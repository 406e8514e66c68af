// ONNX element-wise ops -> ours: binary arithmetic (numpy broadcasting, opset >= 7), unary math,
// Gelu, Where, Cast, Identity.
#include <cstdint>

#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

void require_inputs(const OnnxNode& node, int n) {
  for (int i = 0; i < n; ++i)
    if (node.input(i).empty())
      throw Error(node.where() + ": expects " + std::to_string(n) + " inputs, input " + std::to_string(i) + " is missing");
}

void binary(HandlerRegistry& r, const char* op) {
  r.add({op, 7, 21, {}, [op = std::string(op)](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 2);
           std::string a = node.input(0), b = node.input(1);
           // Pow's exponent may have another type (opset >= 12): a constant one is converted.
           if (op == "Pow" && ctx.type_of(a).dtype == ir::DType::f32 && ctx.type_of(b).dtype == ir::DType::i64 &&
               ctx.is_constant(b)) {
             const ir::Tensor& e = ctx.constant(b, node, "exponent");
             ir::Tensor f(ir::DType::f32, e.shape());
             for (int64_t i = 0; i < e.numel(); ++i) f.data<float>()[i] = static_cast<float>(e.data<int64_t>()[i]);
             b = ctx.fresh(b + "_f32");
             ctx.define_constant(b, std::move(f));
           }
           ctx.emit(node, op, {a, b}, {}, {node.output(0)});
         }});
}

void unary(HandlerRegistry& r, const char* op, int64_t min_opset = 6) {
  r.add({op, min_opset, 21, {}, [op = std::string(op)](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 1);
           ctx.emit(node, op, {node.input(0)}, {}, {node.output(0)});
         }});
}

// Cast of a constant to any integer or bool type, computed here (the value stays i64).
ir::Tensor cast_constant(const ir::Tensor& in, int32_t to) {
  ir::Tensor out(to == onnx::TensorProto::FLOAT ? ir::DType::f32 : ir::DType::i64, in.shape());
  for (int64_t i = 0; i < in.numel(); ++i) {
    double v = in.dtype() == ir::DType::f32 ? in.data<float>()[i] : static_cast<double>(in.data<int64_t>()[i]);
    if (to == onnx::TensorProto::FLOAT) {
      out.data<float>()[i] = static_cast<float>(v);
      continue;
    }
    int64_t x;
    if (to == onnx::TensorProto::BOOL) x = v != 0;
    else if (in.dtype() == ir::DType::i64) x = in.data<int64_t>()[i];
    else if (!(v > -9.2e18 && v < 9.2e18)) x = 0;  // NaN, inf, out of range: unspecified in ONNX
    else x = static_cast<int64_t>(v);
    switch (to) {  // wrap like a C cast to the narrower type
      case onnx::TensorProto::INT32: x = static_cast<int32_t>(x); break;
      case onnx::TensorProto::INT16: x = static_cast<int16_t>(x); break;
      case onnx::TensorProto::INT8: x = static_cast<int8_t>(x); break;
      case onnx::TensorProto::UINT8: x = static_cast<uint8_t>(x); break;
      case onnx::TensorProto::UINT16: x = static_cast<uint16_t>(x); break;
      case onnx::TensorProto::UINT32: x = static_cast<uint32_t>(x); break;
      default: break;
    }
    out.data<int64_t>()[i] = x;
  }
  return out;
}

}  // namespace

void add_elementwise_handlers(HandlerRegistry& r) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) binary(r, op);
  for (const char* op : {"Relu", "Tanh", "Sigmoid", "Exp", "Sqrt", "Neg"}) unary(r, op);
  unary(r, "Erf", 9);

  r.add({"Gelu", 20, 21, {"approximate"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 1);
           std::string a = node.get_string("approximate", "none");
           if (a != "none" && a != "tanh") throw Error(node.where() + ": approximate='" + a + "' is not supported");
           ctx.emit(node, "Gelu", {node.input(0)}, attrs_of({{"approximate", a}}), {node.output(0)});
         }});

  r.add({"Where", 9, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 3);
           ctx.emit(node, "Where", {node.input(0), node.input(1), node.input(2)}, {}, {node.output(0)});
         }});

  r.add({"Identity", 1, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 1);
           if (ctx.is_constant(node.input(0)))
             ctx.define_constant(node.output(0), ctx.constant(node.input(0), node, "input"));
           else
             ctx.emit(node, "Identity", {node.input(0)}, {}, {node.output(0)});
         }});

  r.add({"Cast", 6, 21, {"to", "saturate"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 1);
           if (!node.has("to")) throw Error(node.where() + ": missing attribute 'to'");
           int64_t to_attr = node.get_int("to", 0);
           if (to_attr < INT32_MIN || to_attr > INT32_MAX ||
               !onnx::TensorProto_DataType_IsValid(static_cast<int>(to_attr)) ||
               to_attr == onnx::TensorProto::UNDEFINED)
             throw Error(node.where() + ": attribute 'to' is " + std::to_string(to_attr) +
                         ", not an ONNX data type");
           auto to = static_cast<int32_t>(to_attr);
           ir::DType target;
           if (!dtype_from_onnx(to, &target))
             throw Error(node.where() + ": cast to " + onnx_type_name(to) +
                         " is not supported (fusebox computes float32 and int64)");
           const std::string& in = node.input(0);
           if (ctx.is_constant(in)) {
             ctx.define_constant(node.output(0), cast_constant(ctx.constant(in, node, "input"), to));
             return;
           }
           if (to != onnx::TensorProto::FLOAT && to != onnx::TensorProto::INT64)
             throw Error(node.where() + ": cast to " + onnx_type_name(to) +
                         " at run time is not supported (fusebox computes float32 and int64)");
           if (ctx.type_of(in).dtype == target)
             ctx.emit(node, "Identity", {in}, {}, {node.output(0)});
           else
             ctx.emit(node, "Cast", {in}, attrs_of({{"to", std::string(ir::dtype_name(target))}}), {node.output(0)});
         }});
}

}  // namespace fusebox::models::onnx_import
