// LSTM, GRU and RNN schemas (ONNX's, every optional input present: core/ir/recurrent_params.h).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "core/ir/ops/builtin_ops.h"
#include "core/ir/recurrent_params.h"

namespace fusebox::ir {

namespace {

// The transcendental functions among a recurrent op's activations (attribute activations, else
// the op's defaults: sigmoid and tanh, tanh for an RNN).
std::vector<std::string> recurrent_math(const Node& node) {
  std::vector<std::string> names = node.attrs.get_strings("activations", {});
  if (names.empty()) names = node.op == "RNN" ? std::vector<std::string>{"tanh"} : std::vector<std::string>{"sigmoid", "tanh"};
  std::vector<std::string> out;
  auto add = [&](const char* f) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  for (std::string n : names) {
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (n == "sigmoid") add("sigmoid");
    if (n == "tanh" || n == "scaledtanh") add("tanh");
    if (n == "elu" || n == "softplus") add("exp");
  }
  return out;
}

}  // namespace

void register_recurrent_ops(OpRegistry& r) {
  struct Family {
    const char* name;
    const char* doc;
  };
  for (const Family& f : {
           Family{"LSTM", "ONNX LSTM over a sequence (gates i, o, f, c; peepholes P; clip, input_forget): Y, Y_h, Y_c"},
           Family{"GRU", "ONNX GRU over a sequence (gates z, r, h; linear_before_reset): Y, Y_h"},
           Family{"RNN", "ONNX RNN over a sequence (Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb)): Y, Y_h"},
       }) {
    OpSchema s;
    s.name = f.name;
    s.doc = f.doc;
    const bool lstm = s.name == "LSTM";
    s.min_inputs = s.max_inputs = lstm ? 8 : 6;
    s.min_outputs = s.max_outputs = lstm ? 3 : 2;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      const RnnParams p = rnn_params(n, in);
      std::vector<TensorType> out{{DType::f32, p.y_shape()}, {DType::f32, p.state_shape()}};
      if (p.kind == RnnKind::kLstm) out.push_back({DType::f32, p.state_shape()});
      return out;
    };
    s.flops = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return rnn_flops(rnn_params(n, in));
    };
    s.scratch_bytes = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return rnn_scratch_bytes(rnn_params(n, in));
    };
    r.add(std::move(s));
  }
  // A GEMM a step, then its gates' activations: the transcendental ones among them.
  set_math(r, MathClass::Transcendental, {"LSTM", "GRU", "RNN"}, recurrent_math);
  // X, W, R, B f32, sequence_lens i64, the initial states (and LSTM's peepholes P) f32.
  set_types(r, "FFFFIF", {"GRU", "RNN"});
  set_types(r, "FFFFIFFF", {"LSTM"});
  set_kind(r, OpKind::MatMul, {"LSTM", "GRU", "RNN"});
}

}  // namespace fusebox::ir
