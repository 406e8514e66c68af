// Element-wise op schemas: unary math and activations, binary arithmetic, Max/Min, comparisons
// and logic with numpy broadcasting, Cast, Where, and FusedElementwise (a chain of them run as
// one kernel). Logic results are i64 0/1, as the importer holds ONNX bool.
#include <algorithm>
#include <cmath>
#include <functional>

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

void add_unary(OpRegistry& r, const char* name, const char* doc, double flops) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.elementwise = true;
  s.infer = [](const Node&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
  s.flops = per_element(flops);
  r.add(std::move(s));
}

void add_binary(OpRegistry& r, const char* name, const char* doc) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.min_inputs = s.max_inputs = 2;
  s.elementwise = true;
  s.infer = [](const Node&, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{{in[0].dtype, broadcast_shapes(in[0].shape, in[1].shape)}};
  };
  s.flops = per_element(1);
  r.add(std::move(s));
}

// Comparisons and logic: an i64 0/1 result.
void add_predicate(OpRegistry& r, const char* name, const char* doc) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.min_inputs = s.max_inputs = 2;
  s.elementwise = true;
  s.infer = [](const Node&, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{{DType::i64, broadcast_shapes(in[0].shape, in[1].shape)}};
  };
  s.flops = per_element(1);
  r.add(std::move(s));
}

// A unary f32 activation whose attributes are plain floats; `check` validates them.
void add_activation(OpRegistry& r, const char* name, const char* doc, double flops,
                    std::function<void(const Node&)> check) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.elementwise = true;
  s.infer = [check](const Node& n, const std::vector<TensorType>& in) {
    if (check) check(n);
    return std::vector<TensorType>{in[0]};
  };
  s.flops = per_element(flops);
  r.add(std::move(s));
}

void require_finite(const Node& n, const char* attr, double fallback) {
  double v = n.attrs.get_float(attr, fallback);
  if (!std::isfinite(v)) throw Error(std::string("attribute ") + attr + " must be finite");
}

// A FusedElementwise program's transcendental instructions, in order, without repeats.
std::vector<std::string> program_math(const Node& n) {
  std::vector<std::string> out;
  auto add = [&](const char* f) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  for (const EwInstr& i : parse_ew_program(n.attrs.get_strings("program"), static_cast<int>(n.inputs.size()))) {
    switch (i.op) {
      case EwOp::Tanh:
      case EwOp::GeluTanh: add("tanh"); break;
      case EwOp::Erf:
      case EwOp::Gelu: add("erf"); break;
      case EwOp::Exp: add("exp"); break;
      case EwOp::Sigmoid: add("sigmoid"); break;
      default: break;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> gelu_math(const Node& n) {
  return {n.attrs.get_string("approximate", "none") == "tanh" ? "tanh" : "erf"};
}

namespace {

// What each element-wise op computes (op_schema.h: MathClass), declared once they are added.
void declare_elementwise_math(OpRegistry& r) {
  set_math(r, MathClass::Arithmetic,
           {"Add", "Sub", "Mul", "Div", "Relu", "Sqrt", "Neg", "Abs", "HardSwish", "LeakyRelu", "HardSigmoid", "Clip",
            "PRelu", "Max", "Min", "Equal", "Less", "Greater", "And", "Or", "Not", "Reciprocal", "Floor", "Ceil",
            "Round", "Sign", "Softsign", "ThresholdedRelu", "Shrink", "IsNaN", "IsInf", "Mod", "GreaterOrEqual",
            "LessOrEqual", "BitShift", "Xor", "Where"});
  // Pow's exponent is an input: the 2 and 3 exporters emit take a multiply fast path, so no
  // transcendental is claimed for it.
  set_math(r, MathClass::Arithmetic, {"Pow"});
  set_math(r, MathClass::Data, {"Cast"});
  set_math(r, MathClass::Transcendental, {"Tanh"}, fixed_math({"tanh"}));
  set_math(r, MathClass::Transcendental, {"Sigmoid"}, fixed_math({"sigmoid"}));
  set_math(r, MathClass::Transcendental, {"Exp", "Elu", "Selu", "Celu"}, fixed_math({"exp"}));
  set_math(r, MathClass::Transcendental, {"Erf"}, fixed_math({"erf"}));
  set_math(r, MathClass::Transcendental, {"Log"}, fixed_math({"log"}));
  set_math(r, MathClass::Transcendental, {"Softplus"}, fixed_math({"exp", "log"}));
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
    std::string f = op;
    f[0] = static_cast<char>(f[0] - 'A' + 'a');
    set_math(r, MathClass::Transcendental, {op}, fixed_math({f}));
  }
  set_math(r, MathClass::Transcendental, {"Gelu"}, gelu_math);
  // A program's class is its instructions': arithmetic unless they evaluate a transcendental.
  set_math(r, MathClass::Arithmetic, {"FusedElementwise"}, program_math);
}

// The dtypes each element-wise op takes (op_schema.h: OpSchema::types): the CPU kernels'.
void declare_elementwise_types(OpRegistry& r) {
  set_types(r, "TT", {"Add", "Sub", "Mul", "Div", "Max", "Min", "Mod", "Equal", "Less", "Greater", "GreaterOrEqual",
                      "LessOrEqual"});
  set_types(r, "FF", {"Pow", "PRelu"});
  set_types(r, "II", {"And", "Or", "Xor", "BitShift"});
  set_types(r, "I", {"Not"});
  set_types(r, "T", {"Neg", "Abs", "Sign", "Clip", "Shrink", "Cast"});
  set_types(r, "F", {"Relu", "Tanh", "Sigmoid", "Exp", "Erf", "Sqrt", "HardSwish", "LeakyRelu", "Elu", "HardSigmoid",
                     "Reciprocal", "Floor", "Ceil", "Round", "Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                     "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus", "Softsign", "Selu", "Celu",
                     "ThresholdedRelu", "IsNaN", "IsInf", "Gelu", "FusedElementwise"});
  set_types(r, "ITT", {"Where"});
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  const size_t first = r.size();
  add_binary(r, "Add", "a + b, numpy broadcasting");
  add_binary(r, "Sub", "a - b, numpy broadcasting");
  add_binary(r, "Mul", "a * b, numpy broadcasting");
  add_binary(r, "Div", "a / b, numpy broadcasting (i64: truncating)");
  add_binary(r, "Pow", "a ^ b, numpy broadcasting");

  add_unary(r, "Relu", "max(x, 0)", 1);
  add_unary(r, "Tanh", "tanh(x)", 4);
  add_unary(r, "Sigmoid", "1 / (1 + exp(-x))", 4);
  add_unary(r, "Exp", "exp(x)", 4);
  add_unary(r, "Erf", "erf(x)", 8);
  add_unary(r, "Sqrt", "sqrt(x)", 1);
  add_unary(r, "Neg", "-x", 1);
  add_unary(r, "Abs", "|x|", 1);
  add_unary(r, "HardSwish", "x * max(0, min(1, x / 6 + 1/2))", 4);
  add_activation(r, "LeakyRelu", "x >= 0 ? x : alpha * x (attribute alpha, default 0.01)", 2,
                 [](const Node& n) { require_finite(n, "alpha", 0.01); });
  add_activation(r, "Elu", "x >= 0 ? x : alpha * (exp(x) - 1) (attribute alpha, default 1)", 4,
                 [](const Node& n) { require_finite(n, "alpha", 1.0); });
  add_activation(r, "HardSigmoid",
                 "max(0, min(1, alpha * x + beta)) (attributes alpha 0.2, beta 0.5)", 3,
                 [](const Node& n) {
                   require_finite(n, "alpha", 0.2);
                   require_finite(n, "beta", 0.5);
                 });
  {
    OpSchema s;
    s.name = "Clip";
    s.doc = "min(max(x, min), max) (attributes min, max, each optional)";
    s.elementwise = true;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      for (const char* bound : {"min", "max"})
        if (n.attrs.has(bound) && std::isnan(n.attrs.get_float(bound, 0)))
          throw Error(std::string("attribute ") + bound + " is NaN");
      return std::vector<TensorType>{in[0]};
    };
    s.flops = per_element(2);
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "PRelu";
    s.doc = "x >= 0 ? x : slope * x; slope broadcasts to x (unidirectional)";
    s.min_inputs = s.max_inputs = 2;
    s.elementwise = true;
    s.infer = [](const Node&, const std::vector<TensorType>& in) {
      if (broadcast_shapes(in[0].shape, in[1].shape) != in[0].shape)
        throw Error("slope " + shape_str(in[1].shape) + " does not broadcast to x " +
                    shape_str(in[0].shape));
      return std::vector<TensorType>{in[0]};
    };
    s.flops = per_element(2);
    r.add(std::move(s));
  }
  add_binary(r, "Max", "max(a, b), numpy broadcasting (NaN propagates)");
  add_binary(r, "Min", "min(a, b), numpy broadcasting (NaN propagates)");
  add_predicate(r, "Equal", "a == b -> i64 0/1, numpy broadcasting");
  add_predicate(r, "Less", "a < b -> i64 0/1, numpy broadcasting");
  add_predicate(r, "Greater", "a > b -> i64 0/1, numpy broadcasting");
  add_predicate(r, "And", "a != 0 and b != 0 -> i64 0/1, numpy broadcasting");
  add_predicate(r, "Or", "a != 0 or b != 0 -> i64 0/1, numpy broadcasting");
  {
    OpSchema s;
    s.name = "Not";
    s.doc = "x == 0 -> i64 0/1";
    s.elementwise = true;
    s.infer = [](const Node&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
    s.flops = per_element(1);
    r.add(std::move(s));
  }
  // Ops added for the ONNX conformance count (issue 25).
  add_unary(r, "Reciprocal", "1 / x", 1);
  add_unary(r, "Floor", "floor(x)", 1);
  add_unary(r, "Ceil", "ceil(x)", 1);
  add_unary(r, "Round", "x rounded to the nearest integer, halves to even", 1);
  add_unary(r, "Sign", "-1, 0 or 1 by the sign of x (NaN stays NaN)", 1);
  add_unary(r, "Log", "natural log of x", 8);
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"})
    add_unary(r, op, "the trigonometric or hyperbolic function of x", 10);
  add_unary(r, "Softplus", "log(1 + exp(x))", 8);
  add_unary(r, "Softsign", "x / (1 + |x|)", 3);
  add_activation(r, "Selu", "gamma * (x > 0 ? x : alpha * (exp(x) - 1)) (attributes alpha, gamma)", 4,
                 [](const Node& n) {
                   require_finite(n, "alpha", 1.67326319217681884765625);
                   require_finite(n, "gamma", 1.05070102214813232421875);
                 });
  add_activation(r, "Celu", "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (attribute alpha, default 1)", 5,
                 [](const Node& n) {
                   require_finite(n, "alpha", 1.0);
                   if (n.attrs.get_float("alpha", 1.0) == 0) throw Error("attribute alpha must not be 0");
                 });
  add_activation(r, "ThresholdedRelu", "x > alpha ? x : 0 (attribute alpha, default 1)", 1,
                 [](const Node& n) { require_finite(n, "alpha", 1.0); });
  {
    OpSchema s;
    s.name = "Shrink";
    s.doc = "x < -lambd ? x + bias : x > lambd ? x - bias : 0 (attributes bias 0, lambd 0.5)";
    s.elementwise = true;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      require_finite(n, "bias", 0.0);
      require_finite(n, "lambd", 0.5);
      if (n.attrs.get_float("lambd", 0.5) < 0) throw Error("attribute lambd must not be negative");
      return std::vector<TensorType>{in[0]};
    };
    s.flops = per_element(2);
    r.add(std::move(s));
  }
  for (const char* op : {"IsNaN", "IsInf"}) {
    OpSchema s;
    s.name = op;
    s.doc = std::string(op) == "IsNaN"
                ? "x is NaN -> i64 0/1"
                : "x is +inf (detect_positive, default 1) or -inf (detect_negative, default 1) -> i64 0/1";
    s.elementwise = true;
    s.infer = [](const Node&, const std::vector<TensorType>& in) {
      return std::vector<TensorType>{{DType::i64, in[0].shape}};
    };
    s.flops = per_element(1);
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Mod";
    s.doc = "a mod b, numpy broadcasting; attribute fmod: 0 = sign of b (integers only), 1 = sign of a";
    s.min_inputs = s.max_inputs = 2;
    s.elementwise = true;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const int64_t fmod = n.attrs.get_int("fmod", 0);
      if (fmod != 0 && fmod != 1) throw Error("attribute fmod must be 0 or 1, got " + std::to_string(fmod));
      if (in[0].dtype == DType::f32 && fmod == 0) throw Error("float inputs need fmod = 1");
      return std::vector<TensorType>{{in[0].dtype, broadcast_shapes(in[0].shape, in[1].shape)}};
    };
    s.flops = per_element(1);
    r.add(std::move(s));
  }
  add_predicate(r, "GreaterOrEqual", "a >= b -> i64 0/1, numpy broadcasting");
  add_predicate(r, "LessOrEqual", "a <= b -> i64 0/1, numpy broadcasting");
  {
    OpSchema s;
    s.name = "BitShift";
    s.doc = "a << b or a >> b on i64 bits (attribute direction LEFT | RIGHT), numpy broadcasting";
    s.min_inputs = s.max_inputs = 2;
    s.elementwise = true;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const std::string d = n.attrs.get_string("direction", "");
      if (d != "LEFT" && d != "RIGHT") throw Error("direction must be LEFT or RIGHT, got '" + d + "'");
      return std::vector<TensorType>{{DType::i64, broadcast_shapes(in[0].shape, in[1].shape)}};
    };
    s.flops = per_element(1);
    r.add(std::move(s));
  }
  add_predicate(r, "Xor", "(a != 0) != (b != 0) -> i64 0/1, numpy broadcasting");
  {
    OpSchema s;
    s.name = "Gelu";
    s.doc = "x * Phi(x); attribute approximate = none (erf) | tanh";
    s.elementwise = true;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      std::string a = n.attrs.get_string("approximate", "none");
      if (a != "none" && a != "tanh") throw Error("approximate must be 'none' or 'tanh', got '" + a + "'");
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
      for (const auto& t : in) out = broadcast_shapes(out, t.shape);
      return std::vector<TensorType>{{DType::f32, out}};
    };
    s.flops = [](const Node& n, const std::vector<TensorType>&, const std::vector<TensorType>& outs) {
      return static_cast<double>(n.attrs.get_strings("program").size()) * numel_of(outs);
    };
    r.add(std::move(s));
  }
  declare_elementwise_math(r);
  declare_elementwise_types(r);
  set_kind(r, OpKind::Fused, {"Gelu", "FusedElementwise"});  // what the fusion passes make
  set_kind_from(r, first, OpKind::Elementwise);
}

}  // namespace fusebox::ir
