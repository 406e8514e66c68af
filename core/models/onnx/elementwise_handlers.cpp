// ONNX element-wise ops -> ours: binary arithmetic (numpy broadcasting, opset >= 7), unary math
// and activations, Clip, PRelu, variadic Max/Min, comparisons and logic (bool as i64 0/1), Gelu,
// Where, Cast, Identity.
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

void require_inputs(const OnnxNode& node, int n) {
  for (int i = 0; i < n; ++i)
    if (node.input(i).empty())
      throw Error(node.where() + ": expects " + std::to_string(n) + " inputs, input " + std::to_string(i) + " is missing");
}

// Opset 6 arithmetic (PyTorch's old exports) broadcasts only with attribute broadcast = 1, and
// then aligns B's dims with A's from attribute axis (default: trailing, as numpy): B gets
// trailing 1s so numpy broadcasting from opset 7 computes the same. broadcast = 0 needs equal
// shapes.
std::string legacy_broadcast(ImportContext& ctx, const OnnxNode& node, const std::string& a, const std::string& b) {
  const ir::Shape sa = ctx.type_of(a).shape, sb = ctx.type_of(b).shape;
  if (node.get_int("broadcast", 0) == 0) {
    if (sa != sb)
      throw Error(node.where() + ": inputs " + ir::shape_str(sa) + " and " + ir::shape_str(sb) +
                  " differ and broadcast is 0 (opset " + std::to_string(ctx.opset()) + ")");
    return b;
  }
  if (!node.has("axis")) return b;
  const auto ra = static_cast<int64_t>(sa.size()), rb = static_cast<int64_t>(sb.size());
  int64_t axis = node.get_int("axis", 0);
  if (axis < 0) axis += ra;
  if (axis < 0 || axis + rb > ra)
    throw Error(node.where() + ": B " + ir::shape_str(sb) + " does not fit A " + ir::shape_str(sa) + " from axis " +
                std::to_string(node.get_int("axis", 0)));
  if (axis + rb == ra) return b;
  ir::Shape target = sb;
  target.resize(static_cast<size_t>(ra - axis), 1);
  std::string aligned = ctx.fresh(b + "_aligned");
  ctx.emit(node, "Reshape", {b}, attrs_of({{"shape", std::vector<int64_t>(target)}}), {aligned}, "_align");
  return aligned;
}

void binary(HandlerRegistry& r, const char* op) {
  // Comparisons and logic start at opset 7 in ONNX's numbering of these handlers; arithmetic
  // also reads the opset-6 form.
  const bool arithmetic = std::string(op) == "Add" || std::string(op) == "Sub" || std::string(op) == "Mul" ||
                          std::string(op) == "Div" || std::string(op) == "Pow";
  r.add({op, arithmetic ? 6 : 7, 21, arithmetic ? std::vector<std::string>{"broadcast", "axis"} : std::vector<std::string>{},
         [op = std::string(op)](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 2);
           std::string a = node.input(0), b = node.input(1);
           if (ctx.opset() < 7) b = legacy_broadcast(ctx, node, a, b);
           else if (node.has("broadcast") || node.has("axis"))
             throw Error(node.where() + ": attributes broadcast and axis exist up to opset 6 only (model has " +
                         std::to_string(ctx.opset()) + ")");
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

// A float attribute that must be finite (alpha, beta): NaN or inf would poison every output.
double finite_attr(const OnnxNode& node, const char* attr, double fallback) {
  double v = node.get_float(attr, fallback);
  if (!std::isfinite(v))
    throw Error(node.where() + ": attribute " + attr + " is " + std::to_string(v) + ", not a finite number");
  return v;
}

// A unary activation whose attributes are floats, copied (with their ONNX defaults) onto our op.
void activation(HandlerRegistry& r, const char* op, int64_t min_opset,
                std::vector<std::pair<std::string, double>> params) {
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.first);
  r.add({op, min_opset, 21, names, [op = std::string(op), params](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 1);
           ir::Attributes a;
           for (const auto& [name, fallback] : params) a.set(name, finite_attr(node, name.c_str(), fallback));
           ctx.emit(node, op, {node.input(0)}, std::move(a), {node.output(0)});
         }});
}

// A Clip bound given as input (opset >= 11): one value, known at load time or not.
// Returns true and sets *value when it is a load-time constant.
bool clip_bound(ImportContext& ctx, const OnnxNode& node, int index, const char* what, double* value) {
  const std::string& name = node.input(index);
  if (!ctx.is_constant(name)) {
    if (ir::numel(ctx.type_of(name).shape) != 1)
      throw Error(node.where() + ": " + what + " has shape " + ir::shape_str(ctx.type_of(name).shape) +
                  ", expected one value");
    return false;
  }
  const ir::Tensor& t = ctx.constant(name, node, what);
  if (t.numel() != 1)
    throw Error(node.where() + ": " + what + " has " + std::to_string(t.numel()) + " values, expected one");
  *value = t.dtype() == ir::DType::f32 ? static_cast<double>(t.data<float>()[0])
                                       : static_cast<double>(t.data<int64_t>()[0]);
  if (std::isnan(*value)) throw Error(node.where() + ": " + what + " is NaN");
  return true;
}

// Max/Min with any number of inputs: a chain of binary ops (numpy broadcasting from opset 8;
// opset 6-7 needs equal shapes, which the chain computes the same way).
// Sum chains Adds; Mean is that Sum divided by the input count.
void variadic(HandlerRegistry& r, const char* onnx_op, const char* our_op = nullptr, bool mean = false) {
  r.add({onnx_op, 6, 21, {}, [op = std::string(our_op ? our_op : onnx_op), mean](ImportContext& ctx, const OnnxNode& node) {
           std::vector<std::string> in;
           for (int i = 0; i < node.num_inputs(); ++i) {
             if (node.input(i).empty()) throw Error(node.where() + ": input " + std::to_string(i) + " is empty");
             in.push_back(node.input(i));
           }
           if (in.empty()) throw Error(node.where() + ": needs at least one input");
           if (in.size() == 1) {
             if (ctx.is_constant(in[0]))
               ctx.define_constant(node.output(0), ctx.constant(in[0], node, "input"));
             else
               ctx.emit(node, "Identity", {in[0]}, {}, {node.output(0)});
             return;
           }
           std::string acc = in[0];
           for (size_t i = 1; i < in.size(); ++i) {
             const bool last = i + 1 == in.size() && !mean;
             std::string out = last ? node.output(0) : ctx.fresh(node.output(0) + "_" + op + std::to_string(i));
             ctx.emit(node, op, {acc, in[i]}, {}, {out}, last ? "" : "_" + std::to_string(i));
             acc = out;
           }
           if (mean) {
             std::string n = ctx.fresh(node.output(0) + "_count");
             ctx.define_constant(n, scalar_f32(static_cast<float>(in.size())));
             ctx.emit(node, "Div", {acc, n}, {}, {node.output(0)}, "_Div");
           }
         }});
}

}  // namespace

void add_elementwise_handlers(HandlerRegistry& r) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) binary(r, op);
  for (const char* op : {"Relu", "Tanh", "Sigmoid", "Exp", "Sqrt", "Neg"}) unary(r, op);
  unary(r, "Erf", 9);
  unary(r, "Abs", 6);
  unary(r, "HardSwish", 14);
  unary(r, "Not", 1);
  activation(r, "LeakyRelu", 6, {{"alpha", 0.01}});
  activation(r, "Elu", 6, {{"alpha", 1.0}});
  activation(r, "HardSigmoid", 6, {{"alpha", 0.2}, {"beta", 0.5}});
  for (const char* op : {"Equal", "Less", "Greater", "And", "Or"}) binary(r, op);
  // PRelu: opset 6 (PyTorch's old exports) has one slope per channel (dim 1) or one for all; from
  // 7 the slope broadcasts like numpy. An opset-6 slope of [C] becomes [C, 1, ..., 1].
  r.add({"PRelu", 6, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 2);
           std::string slope = node.input(1);
           const ir::Shape x = ctx.type_of(node.input(0)).shape, s = ctx.type_of(slope).shape;
           if (ctx.opset() < 7 && s.size() == 1 && s[0] != 1 && x.size() >= 2) {
             if (s[0] != x[1])
               throw Error(node.where() + ": slope " + ir::shape_str(s) + " is not one per channel of x " +
                           ir::shape_str(x) + " (opset 6)");
             ir::Shape target(x.size() - 1, 1);
             target[0] = s[0];
             std::string aligned = ctx.fresh(slope + "_per_channel");
             ctx.emit(node, "Reshape", {slope}, attrs_of({{"shape", std::vector<int64_t>(target)}}), {aligned}, "_align");
             slope = aligned;
           }
           ctx.emit(node, "PRelu", {node.input(0), slope}, {}, {node.output(0)});
         }});
  variadic(r, "Max");
  variadic(r, "Min");

  // Ops added for the ONNX conformance count (issue 25).
  for (const char* op : {"Reciprocal", "Floor", "Ceil", "Log"}) unary(r, op);
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan"}) unary(r, op, 7);
  for (const char* op : {"Sign", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNaN"}) unary(r, op, 9);
  unary(r, "Round", 11);
  unary(r, "Softplus", 1);
  unary(r, "Softsign", 1);
  activation(r, "Selu", 6, {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}});
  activation(r, "Celu", 12, {{"alpha", 1.0}});
  activation(r, "ThresholdedRelu", 10, {{"alpha", 1.0}});
  activation(r, "Shrink", 9, {{"bias", 0.0}, {"lambd", 0.5}});
  r.add({"IsInf", 10, 21, {"detect_negative", "detect_positive"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 1);
           ir::Attributes a = attrs_of({{"detect_negative", int64_t{node.get_int("detect_negative", 1) != 0}},
                                        {"detect_positive", int64_t{node.get_int("detect_positive", 1) != 0}}});
           ctx.emit(node, "IsInf", {node.input(0)}, std::move(a), {node.output(0)});
         }});
  r.add({"Mod", 10, 21, {"fmod"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 2);
           const int64_t fmod = node.get_int("fmod", 0);
           if (fmod != 0 && fmod != 1)
             throw Error(node.where() + ": attribute fmod is " + std::to_string(fmod) + ", expected 0 or 1");
           if (fmod == 0 && ctx.type_of(node.input(0)).dtype == ir::DType::f32)
             throw Error(node.where() + ": float inputs need fmod = 1 (ONNX defines fmod = 0 for integers only)");
           ctx.emit(node, "Mod", {node.input(0), node.input(1)}, attrs_of({{"fmod", fmod}}), {node.output(0)});
         }});
  for (const char* op : {"GreaterOrEqual", "LessOrEqual"}) {
    r.add({op, 12, 21, {}, [op = std::string(op)](ImportContext& ctx, const OnnxNode& node) {
             require_inputs(node, 2);
             ctx.emit(node, op, {node.input(0), node.input(1)}, {}, {node.output(0)});
           }});
  }
  r.add({"Xor", 7, 21, {}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 2);
           ctx.emit(node, "Xor", {node.input(0), node.input(1)}, {}, {node.output(0)});
         }});
  r.add({"BitShift", 11, 21, {"direction"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 2);
           const std::string d = node.get_string("direction", "");
           if (d != "LEFT" && d != "RIGHT")
             throw Error(node.where() + ": attribute direction is '" + d + "', expected LEFT or RIGHT");
           for (int i = 0; i < 2; ++i)
             if (ctx.type_of(node.input(i)).dtype != ir::DType::i64)
               throw Error(node.where() + ": input " + std::to_string(i) + " must be an unsigned integer tensor");
           ctx.emit(node, "BitShift", {node.input(0), node.input(1)}, attrs_of({{"direction", d}}), {node.output(0)});
         }});
  variadic(r, "Sum", "Add");
  variadic(r, "Mean", "Add", /*mean=*/true);

  // Dropout at inference is the identity, and its optional mask is all true. Training mode
  // (opset 12: a training_mode input) must be a constant false, or true with a constant ratio of
  // 0: anything else would ask for random masks, which an inference runtime does not draw.
  r.add({"Dropout", 7, 21, {"ratio", "seed"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 1);
           if (ctx.opset() >= 12 && !node.input(2).empty()) {
             const std::string& flag = node.input(2);
             if (!ctx.is_constant(flag))
               throw Error(node.where() + ": training_mode '" + flag +
                           "' is computed at run time; fusebox runs Dropout in inference mode only "
                           "(training_mode must be a constant false)");
             const ir::Tensor& t = ctx.constant(flag, node, "training_mode");
             const bool on = t.numel() > 0 && (t.dtype() == ir::DType::f32 ? t.data<float>()[0] != 0
                                                                          : t.data<int64_t>()[0] != 0);
             // Training mode with a ratio of 0 drops nothing and scales by 1/(1 - 0): the identity.
             // torchvision's Swin exports this (F.dropout(attn, p=0.0) defaults to training=True).
             const std::string& ratio = node.input(1);
             bool zero_ratio = false;
             if (!ratio.empty() && ctx.is_constant(ratio)) {
               const ir::Tensor& r = ctx.constant(ratio, node, "ratio");
               zero_ratio = r.numel() == 1 && (r.dtype() == ir::DType::f32 ? r.data<float>()[0] == 0.0f
                                                                           : r.data<int64_t>()[0] == 0);
             }
             if (on && !zero_ratio)
               throw Error(node.where() + ": training_mode is true with a ratio other than a constant 0; "
                           "fusebox runs Dropout in inference mode only (random masks are not supported)");
           }
           const std::string& x = node.input(0);
           if (ctx.is_constant(x))
             ctx.define_constant(node.output(0), ctx.constant(x, node, "input"));
           else
             ctx.emit(node, "Identity", {x}, {}, {node.output(0)});
           if (!node.output(1).empty()) {
             ir::Tensor mask(ir::DType::i64, ctx.type_of(x).shape);
             for (int64_t i = 0; i < mask.numel(); ++i) mask.data<int64_t>()[i] = 1;
             ctx.define_constant(node.output(1), std::move(mask));
           }
         }});

  // Clip: bounds are attributes before opset 11 and optional inputs from 11. Constant bounds
  // become our attributes; a bound computed at run time becomes a Max / Min against it.
  r.add({"Clip", 6, 21, {"min", "max"}, [](ImportContext& ctx, const OnnxNode& node) {
           require_inputs(node, 1);
           ir::Attributes a;
           std::vector<std::pair<std::string, const char*>> runtime;  // (value, "Max" | "Min")
           if (ctx.opset() < 11) {
             for (const char* bound : {"min", "max"})
               if (node.has(bound)) {
                 double v = node.get_float(bound, 0);
                 if (std::isnan(v)) throw Error(node.where() + ": attribute " + bound + " is NaN");
                 a.set(bound, v);
               }
           } else {
             if (node.has("min") || node.has("max"))
               throw Error(node.where() + ": from opset 11 min and max are inputs, not attributes");
             const char* names[] = {"min", "max"};
             for (int i = 1; i <= 2; ++i) {
               if (node.input(i).empty()) continue;
               double v = 0;
               if (clip_bound(ctx, node, i, names[i - 1], &v)) a.set(names[i - 1], v);
               else runtime.push_back({node.input(i), i == 1 ? "Max" : "Min"});
             }
           }
           if (runtime.empty()) {
             ctx.emit(node, "Clip", {node.input(0)}, std::move(a), {node.output(0)});
             return;
           }
           // Constant bounds first (Clip), then each run-time bound, max(x, lo) before min(., hi).
           std::string acc = node.input(0);
           if (!a.all().empty()) {
             std::string out = ctx.fresh(node.output(0) + "_clip");
             ctx.emit(node, "Clip", {acc}, std::move(a), {out}, "_Clip");
             acc = out;
           }
           for (size_t i = 0; i < runtime.size(); ++i) {
             const bool last = i + 1 == runtime.size();
             std::string out = last ? node.output(0) : ctx.fresh(node.output(0) + "_" + runtime[i].second);
             ctx.emit(node, runtime[i].second, {acc, runtime[i].first}, {}, {out},
                      std::string("_") + runtime[i].second);
             acc = out;
           }
         }});

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
           if (to == onnx::TensorProto::BOOL) {  // true where non-zero (ONNX's Cast), as i64 0/1
             const ir::DType from = ctx.type_of(in).dtype;
             const std::string zero = ctx.fresh(node.output(0) + "_zero");
             ir::Tensor z(from, {});
             if (from == ir::DType::f32) z.data<float>()[0] = 0.0f;
             else z.data<int64_t>()[0] = 0;
             ctx.define_constant(zero, std::move(z));
             const std::string is_zero = ctx.fresh(node.output(0) + "_is_zero");
             ctx.emit(node, "Equal", {in, zero}, {}, {is_zero}, "_is_zero");
             ctx.emit(node, "Not", {is_zero}, {}, {node.output(0)});
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
