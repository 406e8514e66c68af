// ONNX MatMul and Gemm -> our MatMul (transA/transB/alpha as attributes) and Add.
#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

void add_linalg_handlers(HandlerRegistry& r) {
  r.add({"MatMul", 1, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects 2 inputs");
           ctx.emit(node, "MatMul", {node.input(0), node.input(1)}, {}, {node.output(0)});
         }});

  // Gemm: Y = alpha * op(A) op(B) + beta * C, C broadcast to [M, N]. Becomes MatMul with flags and
  // alpha, then Add of C (scaled by beta: folded at load time when C is a constant).
  // Opset 6 has attribute broadcast: 1 broadcasts C as from opset 7, 0 needs C to be [M, N].
  r.add({"Gemm", 6, 21, {"alpha", "beta", "transA", "transB", "broadcast"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects inputs A and B");
           if (node.has("broadcast") && ctx.opset() >= 7)
             throw Error(node.where() + ": attribute broadcast exists up to opset 6 only (model has " +
                         std::to_string(ctx.opset()) + ")");
           const bool exact_c = ctx.opset() < 7 && node.get_int("broadcast", 0) == 0;
           for (int i = 0; i < 2; ++i)
             if (ctx.type_of(node.input(i)).shape.size() != 2)
               throw Error(node.where() + ": input " + std::to_string(i) + " must be 2-D, got " +
                           ir::shape_str(ctx.type_of(node.input(i)).shape));
           double alpha = node.get_float("alpha", 1.0), beta = node.get_float("beta", 1.0);
           ir::Attributes mm;
           if (node.get_int("transA", 0) != 0) mm.set("transA", int64_t{1});
           if (node.get_int("transB", 0) != 0) mm.set("transB", int64_t{1});
           if (alpha != 1.0) mm.set("alpha", alpha);
           bool has_c = !node.input(2).empty() && beta != 0.0;
           std::string y = node.output(0);
           std::string product = has_c ? ctx.fresh(y + "_matmul") : y;
           ctx.emit(node, "MatMul", {node.input(0), node.input(1)}, std::move(mm), {product}, has_c ? "_MatMul" : "");
           if (!has_c) return;
           std::string c = node.input(2);
           if (exact_c && ctx.type_of(c).shape != ctx.type_of(product).shape)
             throw Error(node.where() + ": C " + ir::shape_str(ctx.type_of(c).shape) + " must be " +
                         ir::shape_str(ctx.type_of(product).shape) + " when broadcast is 0 (opset 6)");
           if (beta != 1.0) {
             std::string b = ctx.fresh(y + "_beta");
             ctx.define_constant(b, scalar_f32(static_cast<float>(beta)));
             std::string scaled = ctx.fresh(c + "_scaled");
             ctx.emit(node, "Mul", {c, b}, {}, {scaled}, "_beta");
             c = scaled;
           }
           ctx.emit(node, "Add", {product, c}, {}, {y}, "_Add");
           // Gemm's output is exactly [M, N]: a C that would broadcast it larger is an error.
           ir::TensorType pt = ctx.type_of(product), yt = ctx.type_of(y);
           if (pt.shape != yt.shape)
             throw Error(node.where() + ": C " + ir::shape_str(ctx.type_of(c).shape) + " does not broadcast to " +
                         ir::shape_str(pt.shape));
         }});
}

}  // namespace fusebox::models::onnx_import
