#include "core/ir/op_schema.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/ir/ops/builtin_ops.h"

namespace fusebox::ir {

const char* math_class_name(MathClass c) {
  switch (c) {
    case MathClass::Unset: return "unset";
    case MathClass::Data: return "data";
    case MathClass::Arithmetic: return "arithmetic";
    case MathClass::Transcendental: return "transcendental";
  }
  return "unset";
}

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Unset:
      return "unset";
    case OpKind::MatMul:
      return "matmul";
    case OpKind::Conv:
      return "conv";
    case OpKind::Fused:
      return "fused";
    case OpKind::Elementwise:
      return "elementwise";
    case OpKind::Normalization:
      return "normalization";
    case OpKind::Layout:
      return "layout";
  }
  return "unset";
}

OpKind op_kind(std::string_view op) {
  const OpSchema* s = OpRegistry::instance().find(op);
  return s ? s->kind : OpKind::Unset;
}

void set_kind(OpRegistry& r, OpKind kind, std::initializer_list<const char*> ops) {
  for (const char* op : ops) {
    OpSchema* s = r.find(op);
    if (!s) throw Error(std::string("set_kind: no op '") + op + "' is registered");
    s->kind = kind;
  }
}

void set_types(OpRegistry& r, const char* types, std::initializer_list<const char*> ops) {
  const std::string_view t = types;
  if (t.empty() || t.find_first_not_of("FIT") != std::string_view::npos)
    throw Error(std::string("set_types: '") + types + "' is not a string of F, I and T");
  for (const char* op : ops) {
    OpSchema* s = r.find(op);
    if (!s) throw Error(std::string("set_types: no op '") + op + "' is registered");
    s->types = types;
  }
}

void set_kind_from(OpRegistry& r, size_t first, OpKind kind) {
  const std::vector<std::string> names = r.names();
  for (size_t i = first; i < names.size(); ++i) {
    OpSchema* s = r.find(names[i]);
    if (s->kind == OpKind::Unset) s->kind = kind;
  }
}

MathFn fixed_math(std::vector<std::string> functions) {
  return [functions = std::move(functions)](const Node&) { return functions; };
}

std::vector<std::string> node_transcendentals(const Node& node) {
  const OpSchema* s = OpRegistry::instance().find(node.op);
  if (!s || !s->transcendentals) return {};
  try {
    return s->transcendentals(node);
  } catch (const Error&) {  // a malformed program or activation: the verifier names it
    return {};
  }
}

void set_math(OpRegistry& r, MathClass math, std::initializer_list<const char*> ops, const MathFn& transcendentals) {
  for (const char* op : ops) {
    OpSchema* s = r.find(op);
    if (!s) throw Error(std::string("set_math: no op '") + op + "' is registered");
    s->math = math;
    s->transcendentals = transcendentals;
  }
}

OpRegistry& OpRegistry::instance() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_builtin_ops(*r);
    return r;
  }();
  return *registry;
}

const char* type_letter_name(char letter) {
  switch (letter) {
    case 'F': return "f32";
    case 'I': return "i64";
    case 'T': return "f32|i64";
    default: return "?";
  }
}

std::string type_mismatch(std::string_view op, std::string_view types, const std::vector<DType>& inputs) {
  if (types.empty()) return {};
  int first_t = -1;  // the first input a T stands for: the others' dtype must be its
  for (size_t i = 0; i < inputs.size(); ++i) {
    const char letter = types[std::min(i, types.size() - 1)];
    const std::string is = "input " + std::to_string(i) + " is " + dtype_name(inputs[i]);
    if (letter == 'F' && inputs[i] != DType::f32) return is + ", but " + std::string(op) + " takes f32 there";
    if (letter == 'I' && inputs[i] != DType::i64) return is + ", but " + std::string(op) + " takes i64 there";
    if (letter != 'T') continue;
    if (first_t < 0) {
      first_t = static_cast<int>(i);
    } else if (inputs[i] != inputs[first_t]) {
      return is + " and input " + std::to_string(first_t) + " " + dtype_name(inputs[first_t]) + ", but " +
             std::string(op) + " takes one dtype for both";
    }
  }
  return {};
}

std::vector<TensorType> infer_node(const Node& node, const std::vector<TensorType>& inputs) {
  const OpSchema& s = OpRegistry::instance().get(node.op);
  const std::string where = "node '" + node.name + "' (" + node.op + ")";
  int n = static_cast<int>(inputs.size());
  if (n < s.min_inputs || n > s.max_inputs) {
    throw Error(where + ": expected " +
                (s.min_inputs == s.max_inputs ? std::to_string(s.min_inputs)
                                              : std::to_string(s.min_inputs) + ".." +
                                                    std::to_string(s.max_inputs)) +
                " inputs, got " + std::to_string(n));
  }
  int outs = static_cast<int>(node.outputs.size());
  if (outs < s.min_outputs || outs > s.max_outputs) {
    throw Error(where + ": expected " + std::to_string(s.min_outputs) + ".." +
                std::to_string(s.max_outputs) + " outputs, got " + std::to_string(outs));
  }
  std::vector<DType> dtypes;
  for (const TensorType& t : inputs) dtypes.push_back(t.dtype);
  if (std::string why = type_mismatch(node.op, s.types, dtypes); !why.empty()) throw Error(where + ": " + why);
  std::vector<TensorType> result;
  try {
    result = s.infer(node, inputs);
    // Every output's bytes must fit size_t: a shape whose elements fit int64 but whose bytes do
    // not would be planned as the wrapped, tiny size (and then run forever).
    for (const TensorType& t : result) (void)t.nbytes();
  } catch (const Error& e) {
    std::vector<std::string> shapes;
    for (const auto& t : inputs) shapes.push_back(std::string(dtype_name(t.dtype)) + shape_str(t.shape));
    throw Error(where + " with inputs " + join(shapes, " ") + ": " + e.what());
  }
  result.resize(node.outputs.size());
  return result;
}

OpCost node_cost(const Node& node, const std::vector<TensorType>& inputs,
                 const std::vector<TensorType>& outputs, bool written_in_place) {
  const OpSchema& s = OpRegistry::instance().get(node.op);
  OpCost cost;
  if (s.view) return cost;  // no bytes move for a view
  if (s.flops) cost.flops = s.flops(node, inputs, outputs);
  if (written_in_place && s.in_place && s.in_place_bytes) {
    cost.bytes = s.in_place_bytes(node, inputs, outputs);
    return cost;
  }
  if (s.bytes) {
    cost.bytes = s.bytes(node, inputs, outputs);
    return cost;
  }
  for (const auto& t : inputs) cost.bytes += static_cast<double>(t.nbytes());
  for (const auto& t : outputs) cost.bytes += static_cast<double>(t.nbytes());
  return cost;
}

OpCost graph_cost(const Graph& g) {
  OpCost total;
  for (const Node& n : g.nodes) {
    std::vector<TensorType> in, out;
    for (const auto& t : n.inputs) in.push_back({g.tensor(t).dtype, g.tensor(t).shape});
    for (const auto& t : n.outputs) out.push_back({g.tensor(t).dtype, g.tensor(t).shape});
    const OpCost c = node_cost(n, in, out);
    total.flops += c.flops;
    total.bytes += c.bytes;
  }
  return total;
}

size_t node_scratch_bytes(const Node& node, const std::vector<TensorType>& inputs,
                          const std::vector<TensorType>& outputs) {
  const OpSchema& s = OpRegistry::instance().get(node.op);
  return s.scratch_bytes ? s.scratch_bytes(node, inputs, outputs) : 0;
}

}  // namespace fusebox::ir
