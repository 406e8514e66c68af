// LSTM, GRU and RNN schemas (ONNX's, every optional input present: core/ir/recurrent_params.h).
#include "core/ir/ops/builtin_ops.h"
#include "core/ir/recurrent_params.h"

namespace fusebox::ir {

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
}

}  // namespace fusebox::ir
