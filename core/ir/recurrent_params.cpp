#include "core/ir/recurrent_params.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "core/base/checked.h"
#include "core/base/error.h"

namespace fusebox::ir {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void expect_shape(const TensorType& t, const Shape& want, const char* name) {
  if (t.dtype != DType::f32 && std::string(name) != "sequence_lens")
    throw Error(std::string(name) + " must be f32, got " + dtype_name(t.dtype));
  if (t.shape != want)
    throw Error(std::string(name) + " is " + shape_str(t.shape) + ", expected " + shape_str(want));
}

}  // namespace

RnnActivation rnn_activation(const std::string& name, const std::vector<double>& alphas, size_t* next_alpha,
                             const std::vector<double>& betas, size_t* next_beta) {
  struct Known {
    const char* name;
    RnnActivation::Fn fn;
    bool alpha, beta;
    float default_alpha, default_beta;
  };
  // Defaults as the ONNX operators of the same name have them (Affine and ScaledTanh: 1 and 0, 1
  // and 1, as ONNX Runtime takes them).
  static const Known known[] = {
      {"sigmoid", RnnActivation::kSigmoid, false, false, 0, 0},
      {"tanh", RnnActivation::kTanh, false, false, 0, 0},
      {"relu", RnnActivation::kRelu, false, false, 0, 0},
      {"affine", RnnActivation::kAffine, true, true, 1.0f, 0.0f},
      {"leakyrelu", RnnActivation::kLeakyRelu, true, false, 0.01f, 0},
      {"thresholdedrelu", RnnActivation::kThresholdedRelu, true, false, 1.0f, 0},
      {"scaledtanh", RnnActivation::kScaledTanh, true, true, 1.0f, 1.0f},
      {"hardsigmoid", RnnActivation::kHardSigmoid, true, true, 0.2f, 0.5f},
      {"elu", RnnActivation::kElu, true, false, 1.0f, 0},
      {"softsign", RnnActivation::kSoftsign, false, false, 0, 0},
      {"softplus", RnnActivation::kSoftplus, false, false, 0, 0},
  };
  const std::string key = lower(name);
  for (const Known& k : known) {
    if (key != k.name) continue;
    RnnActivation a{k.fn, k.default_alpha, k.default_beta};
    if (k.alpha && *next_alpha < alphas.size()) a.alpha = static_cast<float>(alphas[(*next_alpha)++]);
    if (k.beta && *next_beta < betas.size()) a.beta = static_cast<float>(betas[(*next_beta)++]);
    return a;
  }
  throw Error("activations: unknown function '" + name +
              "' (ONNX's: Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, "
              "Softsign, Softplus)");
}

Shape RnnParams::y_shape() const {
  return layout == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden};
}

Shape RnnParams::state_shape() const {
  return layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
}

RnnParams rnn_params(const Node& node, const std::vector<TensorType>& in) {
  RnnParams p;
  p.kind = node.op == "LSTM" ? RnnKind::kLstm : node.op == "GRU" ? RnnKind::kGru : RnnKind::kRnn;
  p.gates = p.kind == RnnKind::kLstm ? 4 : p.kind == RnnKind::kGru ? 3 : 1;
  if (static_cast<int64_t>(in.size()) != p.inputs())
    throw Error("expects " + std::to_string(p.inputs()) + " inputs (absent optional ones filled), got " +
                std::to_string(in.size()));
  const std::string direction = node.attrs.get_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    throw Error("direction '" + direction + "': expected forward, reverse or bidirectional");
  p.dirs = direction == "bidirectional" ? 2 : 1;
  p.reverse = direction == "reverse";
  p.layout = node.attrs.get_int("layout", 0);
  if (p.layout != 0 && p.layout != 1) throw Error("layout " + std::to_string(p.layout) + ": expected 0 or 1");

  const Shape& x = in[0].shape;
  if (in[0].dtype != DType::f32) throw Error("X must be f32");
  if (x.size() != 3) throw Error("X is " + shape_str(x) + ", expected rank 3");
  p.seq = p.layout == 0 ? x[0] : x[1];
  p.batch = p.layout == 0 ? x[1] : x[0];
  p.input = x[2];
  const Shape& r = in[2].shape;
  if (r.size() != 3) throw Error("R is " + shape_str(r) + ", expected rank 3");
  p.hidden = node.attrs.get_int("hidden_size", r[2]);
  if (p.hidden <= 0) throw Error("hidden_size " + std::to_string(p.hidden) + ": expected > 0");
  const auto gh = checked_mul(p.gates, p.hidden);
  const auto gh2 = gh ? checked_mul(*gh, int64_t{2}) : std::nullopt;
  if (!gh2) throw Error("hidden_size " + std::to_string(p.hidden) + " passes 2^63 with its gates");
  expect_shape(in[1], {p.dirs, *gh, p.input}, "W");
  expect_shape(in[2], {p.dirs, *gh, p.hidden}, "R");
  expect_shape(in[3], {p.dirs, *gh2}, "B");
  if (in[4].dtype != DType::i64) throw Error("sequence_lens must be integers");
  expect_shape(in[4], {p.batch}, "sequence_lens");
  expect_shape(in[5], p.state_shape(), "initial_h");
  if (p.kind == RnnKind::kLstm) {
    expect_shape(in[6], p.state_shape(), "initial_c");
    expect_shape(in[7], {p.dirs, 3 * p.hidden}, "P");
  }

  const double clip = node.attrs.get_float("clip", 0.0);
  if (!(clip >= 0.0) || !std::isfinite(clip)) throw Error("clip " + std::to_string(clip) + ": expected a finite value >= 0");
  p.clip = static_cast<float>(clip);
  p.input_forget = node.attrs.get_int("input_forget", 0) != 0;
  if (p.input_forget && p.kind != RnnKind::kLstm) throw Error("input_forget is LSTM's");
  p.linear_before_reset = node.attrs.get_int("linear_before_reset", 0) != 0;
  if (p.linear_before_reset && p.kind != RnnKind::kGru) throw Error("linear_before_reset is GRU's");

  std::vector<std::string> names = node.attrs.get_strings("activations", {});
  const int64_t per = p.activations_per_dir();
  if (names.empty()) {
    const std::vector<std::string> defaults = p.kind == RnnKind::kLstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                              : p.kind == RnnKind::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                        : std::vector<std::string>{"Tanh"};
    for (int64_t d = 0; d < p.dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (static_cast<int64_t>(names.size()) != per * p.dirs)
    throw Error("activations: " + std::to_string(names.size()) + " given, " + node.op + " takes " +
                std::to_string(per) + " per direction (" + std::to_string(per * p.dirs) + " here)");
  const std::vector<double> alphas = node.attrs.get_floats("activation_alpha", {});
  const std::vector<double> betas = node.attrs.get_floats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  for (const auto& n : names) p.activations.push_back(rnn_activation(n, alphas, &next_alpha, betas, &next_beta));

  // Every size the kernel computes with must fit: the outputs and the scratch.
  if (!checked_product(p.y_shape()) || !checked_mul(*gh, std::max<int64_t>(p.input, p.hidden)))
    throw Error("its outputs pass 2^63 elements");
  rnn_scratch_bytes(p);
  return p;
}

double rnn_flops(const RnnParams& p) {
  const double steps = static_cast<double>(p.seq) * static_cast<double>(p.batch) * static_cast<double>(p.dirs);
  return 2.0 * steps * static_cast<double>(p.gates * p.hidden) * static_cast<double>(p.input + p.hidden);
}

size_t rnn_scratch_bytes(const RnnParams& p) {
  // gh = gates * hidden; floats = seq * batch * gh + batch * (gh + 3 * hidden), all checked.
  std::optional<int64_t> gh = checked_mul(p.gates, p.hidden), floats, row;
  if (gh) floats = checked_mul(p.seq, p.batch);
  if (floats) floats = checked_mul(*floats, *gh);
  if (floats) row = checked_mul(p.hidden, int64_t{3});
  if (row) row = checked_add(*row, *gh);
  if (row) row = checked_mul(*row, p.batch);
  if (row) floats = checked_add(*floats, *row);
  if (row && floats) floats = checked_mul(*floats, int64_t{4});
  if (!row || !floats) throw Error("its scratch passes 2^63 bytes");
  return static_cast<size_t>(*floats);
}

}  // namespace fusebox::ir
