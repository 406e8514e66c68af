#pragma once
// How LSTM, GRU and RNN read their attributes and inputs: one reading, shared by the schemas
// (core/ir/ops/recurrent.cpp) and every backend's kernel (ops/cpu/recurrent.cpp), which only maps
// it onto its own loops. The ops are ONNX's (opsets 7-22), with every optional input present: the
// importer (core/models/onnx/recurrent_handlers.cpp) fills an absent one with its default.
//
//   LSTM  X, W, R, B, sequence_lens, initial_h, initial_c, P  ->  Y, Y_h, Y_c
//   GRU   X, W, R, B, sequence_lens, initial_h                ->  Y, Y_h
//   RNN   X, W, R, B, sequence_lens, initial_h                ->  Y, Y_h
//
// Shapes (layout 0; layout 1 puts batch first in X, Y and the states):
//   X [seq, batch, input]   W [dirs, gates*hidden, input]   R [dirs, gates*hidden, hidden]
//   B [dirs, 2*gates*hidden] (W's biases, then R's)   sequence_lens [batch] (i64)
//   initial_h, initial_c, Y_h, Y_c [dirs, batch, hidden]   P [dirs, 3*hidden] (LSTM's peepholes)
//   Y [seq, dirs, batch, hidden]
// Gate order as ONNX stores them: LSTM i, o, f, c; GRU z, r, h; RNN one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/op_schema.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

// The activation functions ONNX's recurrent ops name, with their alpha and beta.
struct RnnActivation {
  enum Fn { kSigmoid, kTanh, kRelu, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
            kSoftsign, kSoftplus };
  Fn fn = kSigmoid;
  float alpha = 0, beta = 0;
};

enum class RnnKind { kRnn, kGru, kLstm };

struct RnnParams {
  RnnKind kind = RnnKind::kLstm;
  int64_t gates = 4;     // 4 (LSTM), 3 (GRU), 1 (RNN)
  int64_t dirs = 1;      // 2 when bidirectional
  bool reverse = false;  // direction "reverse": the one direction runs from the end
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int64_t layout = 0;
  // Per direction, in order: LSTM f, g, h; GRU f, g; RNN f (direction 0's, then direction 1's).
  std::vector<RnnActivation> activations;
  float clip = 0;  // 0: none; else each gate's input is clamped to [-clip, clip]
  bool input_forget = false;         // LSTM: the forget gate is 1 - the input gate
  bool linear_before_reset = false;  // GRU: apply R_h before the reset gate

  int64_t activations_per_dir() const { return kind == RnnKind::kLstm ? 3 : kind == RnnKind::kGru ? 2 : 1; }
  int64_t inputs() const { return kind == RnnKind::kLstm ? 8 : 6; }
  int64_t outputs() const { return kind == RnnKind::kLstm ? 3 : 2; }
  Shape y_shape() const;      // Y
  Shape state_shape() const;  // Y_h, Y_c, initial_h, initial_c
};

// Reads `node` (LSTM, GRU or RNN) against its input types. Throws fusebox::Error naming the
// attribute or input at fault.
RnnParams rnn_params(const Node& node, const std::vector<TensorType>& inputs);

// "Sigmoid", "tanh", ... (ONNX's names, any case) with the alpha and beta it takes from the
// attribute lists, in order (an activation that takes none consumes none); an unknown name throws.
RnnActivation rnn_activation(const std::string& name, const std::vector<double>& alphas, size_t* next_alpha,
                             const std::vector<double>& betas, size_t* next_beta);

// Multiply-adds of the input and recurrent GEMMs, times two.
double rnn_flops(const RnnParams& p);

// The CPU kernel's scratch, for one direction at a time: the input projections of every step
// (seq * batch * gates * hidden), one step's recurrent projection (batch * gates * hidden) and
// three state rows (h, c, and GRU's reset-gated h) of batch * hidden, in floats. Throws when it
// passes 2^63 bytes.
size_t rnn_scratch_bytes(const RnnParams& p);

}  // namespace fusebox::ir
