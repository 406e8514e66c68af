// ONNX Conv, ConvTranspose, BatchNormalization (inference), MaxPool, AveragePool, GlobalAveragePool and
// GlobalMaxPool -> our ops of the same names (BatchNormalization -> BatchNorm), window attributes
// passed through as they are: core/ir/conv_params.h reads them, and shape inference at emit
// checks them against the input shapes.
#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

// The window attributes `names` the node sets, copied.
ir::Attributes window_attrs(const OnnxNode& node, const std::vector<std::string>& names) {
  ir::Attributes a;
  for (const auto& name : names) {
    if (!node.has(name)) continue;
    if (name == "auto_pad") a.set(name, node.get_string(name, "NOTSET"));
    else if (name == "group" || name == "ceil_mode" || name == "count_include_pad") a.set(name, node.get_int(name, 0));
    else a.set(name, node.get_ints(name));
  }
  return a;
}

// Pools and Conv compute the first output only; a second one (MaxPool's Indices) is refused.
void require_one_output(const OnnxNode& node, const char* what) {
  for (int i = 1; i < node.num_outputs(); ++i)
    if (!node.output(i).empty()) throw Error(node.where() + ": " + what + " is not supported (only the output Y)");
}

}  // namespace

void add_conv_handlers(HandlerRegistry& r) {
  r.add({"Conv", 1, 21, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
         [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects inputs X and W");
           std::vector<std::string> in{node.input(0), node.input(1)};
           if (!node.input(2).empty()) in.push_back(node.input(2));
           ctx.emit(node, "Conv", in,
                    window_attrs(node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}),
                    {node.output(0)});
         }});

  r.add({"ConvTranspose", 1, 21,
         {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"},
         [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects inputs X and W");
           std::vector<std::string> in{node.input(0), node.input(1)};
           if (!node.input(2).empty()) in.push_back(node.input(2));
           ctx.emit(node, "ConvTranspose", in,
                    window_attrs(node, {"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                                        "output_shape", "pads", "strides"}),
                    {node.output(0)});
         }});

  // Opset 6 (PyTorch's old exports) says inference with is_test = 1; from 7 that is implied.
  r.add({"BatchNormalization", 6, 21, {"epsilon", "momentum", "spatial", "training_mode", "is_test"},
         [](ImportContext& ctx, const OnnxNode& node) {
           for (int i = 0; i < 5; ++i)
             if (node.input(i).empty()) throw Error(node.where() + ": expects inputs X, scale, B, input_mean and input_var");
           if (node.has("is_test") && ctx.opset() >= 7)
             throw Error(node.where() + ": attribute is_test exists up to opset 6 only (model has " +
                         std::to_string(ctx.opset()) + ")");
           if (ctx.opset() < 7 && node.get_int("is_test", 0) == 0)
             throw Error(node.where() + ": is_test 0 (training: batch statistics) is not supported, inference only");
           if (node.get_int("training_mode", 0) != 0)
             throw Error(node.where() + ": training_mode 1 is not supported (inference only: batch statistics are not computed)");
           if (node.get_int("spatial", 1) != 1)
             throw Error(node.where() + ": spatial 0 (per-element statistics) is not supported");
           require_one_output(node, "outputs running_mean / running_var (training mode)");
           ctx.emit(node, "BatchNorm", {node.input(0), node.input(1), node.input(2), node.input(3), node.input(4)},
                    attrs_of({{"epsilon", node.get_float("epsilon", 1e-5)}}), {node.output(0)});
         }});

  r.add({"MaxPool", 1, 21, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"},
         [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           require_one_output(node, "the Indices output");
           ctx.emit(node, "MaxPool", {node.input(0)},
                    window_attrs(node, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"}),
                    {node.output(0)});
         }});

  r.add({"AveragePool", 1, 21,
         {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"},
         [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           ctx.emit(node, "AveragePool", {node.input(0)},
                    window_attrs(node, {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                                        "pads", "strides"}),
                    {node.output(0)});
         }});

  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    r.add({op, 1, 21, {}, [op](ImportContext& ctx, const OnnxNode& node) {
             if (node.input(0).empty()) throw Error(node.where() + ": missing input");
             ctx.emit(node, op, {node.input(0)}, {}, {node.output(0)});
           }});
}

}  // namespace fusebox::models::onnx_import
