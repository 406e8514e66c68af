// Element-wise op schemas: unary math, binary arithmetic with numpy broadcasting, Cast, Where,
// and FusedElementwise (a chain of them run as one kernel).
#include "core/base/error.h"
#include "core/ir/elementwise_program.h"
#include "core/ir/ops/builtin_ops.h"

namespace fusebox::ir {

namespace {

double numel_of(const std::vector<TensorType>& outs) {
  return outs.empty() ? 0.0 : static_cast<double>(numel(outs[0].shape));
}

FlopsFn per_element(double flops) {
  return [flops](const Node&, const std::vector<TensorType>&, const std::vector<TensorType>& outs) {
    return flops * numel_of(outs);
  };
}

void add_unary(OpRegistry& r, const char* name, const char* doc, double flops, bool f32_only) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.elementwise = true;
  s.infer = [f32_only](const Node&, const std::vector<TensorType>& in) {
    if (f32_only && in[0].dtype != DType::f32) throw Error("input must be f32");
    return std::vector<TensorType>{in[0]};
  };
  s.flops = per_element(flops);
  r.add(std::move(s));
}

void add_binary(OpRegistry& r, const char* name, const char* doc, bool allow_i64) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.min_inputs = s.max_inputs = 2;
  s.elementwise = true;
  s.infer = [allow_i64](const Node&, const std::vector<TensorType>& in) {
    if (in[0].dtype != in[1].dtype) throw Error("inputs have different dtypes");
    if (in[0].dtype == DType::i64 && !allow_i64) throw Error("i64 inputs are not supported");
    return std::vector<TensorType>{{in[0].dtype, broadcast_shapes(in[0].shape, in[1].shape)}};
  };
  s.flops = per_element(1);
  r.add(std::move(s));
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  add_binary(r, "Add", "a + b, numpy broadcasting", true);
  add_binary(r, "Sub", "a - b, numpy broadcasting", true);
  add_binary(r, "Mul", "a * b, numpy broadcasting", true);
  add_binary(r, "Div", "a / b, numpy broadcasting (i64: truncating)", true);
  add_binary(r, "Pow", "a ^ b, numpy broadcasting", false);

  add_unary(r, "Relu", "max(x, 0)", 1, true);
  add_unary(r, "Tanh", "tanh(x)", 4, true);
  add_unary(r, "Sigmoid", "1 / (1 + exp(-x))", 4, true);
  add_unary(r, "Exp", "exp(x)", 4, true);
  add_unary(r, "Erf", "erf(x)", 8, true);
  add_unary(r, "Sqrt", "sqrt(x)", 1, true);
  add_unary(r, "Neg", "-x", 1, false);
  {
    OpSchema s;
    s.name = "Gelu";
    s.doc = "x * Phi(x); attribute approximate = none (erf) | tanh";
    s.elementwise = true;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      std::string a = n.attrs.get_string("approximate", "none");
      if (a != "none" && a != "tanh") throw Error("approximate must be 'none' or 'tanh', got '" + a + "'");
      if (in[0].dtype != DType::f32) throw Error("input must be f32");
      return std::vector<TensorType>{in[0]};
    };
    s.flops = per_element(10);
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Cast";
    s.doc = "converts between f32 and i64; attribute to = f32 | i64";
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      return std::vector<TensorType>{{parse_dtype(n.attrs.get_string("to", "f32")), in[0].shape}};
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Where";
    s.doc = "cond != 0 ? a : b, numpy broadcasting (cond is i64 0/1)";
    s.min_inputs = s.max_inputs = 3;
    s.infer = [](const Node&, const std::vector<TensorType>& in) {
      if (in[0].dtype != DType::i64) throw Error("condition must be i64 (0 or 1)");
      if (in[1].dtype != in[2].dtype) throw Error("branches have different dtypes");
      Shape s = broadcast_shapes(broadcast_shapes(in[0].shape, in[1].shape), in[2].shape);
      return std::vector<TensorType>{{in[1].dtype, s}};
    };
    s.flops = per_element(1);
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "FusedElementwise";
    s.doc = "a chain of element-wise ops run as one kernel over tiles (attribute program)";
    s.min_inputs = 1;
    s.max_inputs = 64;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      auto program = parse_ew_program(n.attrs.get_strings("program"), static_cast<int>(in.size()));
      Shape out;
      for (const auto& t : in) {
        if (t.dtype != DType::f32) throw Error("FusedElementwise inputs must be f32");
        out = broadcast_shapes(out, t.shape);
      }
      return std::vector<TensorType>{{DType::f32, out}};
    };
    s.flops = [](const Node& n, const std::vector<TensorType>&, const std::vector<TensorType>& outs) {
      return static_cast<double>(n.attrs.get_strings("program").size()) * numel_of(outs);
    };
    r.add(std::move(s));
  }
}

}  // namespace fusebox::ir
