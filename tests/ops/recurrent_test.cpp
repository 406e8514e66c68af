// LSTM, GRU and RNN against a double-precision reference written from ONNX's equations (one batch
// entry at a time, each sequence to its own length), over directions, layouts, sequence lengths,
// peepholes, clip, input_forget, linear_before_reset and activations with alpha and beta.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

struct Case {
  std::string op{};  // LSTM, GRU, RNN
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t seq = 5, batch = 3, input = 4, hidden = 6;
  std::vector<int64_t> lens{};  // empty: every entry the whole sequence
  float clip = 0;
  bool input_forget = false, linear_before_reset = false;
  std::vector<std::string> activations{};  // empty: the op's defaults
  std::vector<double> alphas{}, betas{};
};

double act(const std::string& name, double a, double b, double x) {
  std::string n = name;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (n == "tanh") return std::tanh(x);
  if (n == "relu") return x > 0 ? x : 0;
  if (n == "affine") return a * x + b;
  if (n == "leakyrelu") return x >= 0 ? x : a * x;
  if (n == "hardsigmoid") return std::min(1.0, std::max(0.0, a * x + b));
  if (n == "softsign") return x / (1 + std::fabs(x));
  if (n == "elu") return x >= 0 ? x : a * (std::exp(x) - 1);
  ADD_FAILURE() << "reference has no " << name;
  return 0;
}

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

// ONNX's activation list with alpha and beta consumed in order by the functions that take them.
std::vector<Act> activations_of(const Case& c, int64_t dirs) {
  std::vector<std::string> names = c.activations;
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d) {
      if (c.op == "LSTM") names.insert(names.end(), {"Sigmoid", "Tanh", "Tanh"});
      if (c.op == "GRU") names.insert(names.end(), {"Sigmoid", "Tanh"});
      if (c.op == "RNN") names.push_back("Tanh");
    }
  std::vector<Act> out;
  size_t ia = 0, ib = 0;
  for (const auto& n : names) {
    Act a{n};
    if (n == "LeakyRelu") a.alpha = ia < c.alphas.size() ? c.alphas[ia++] : 0.01;
    if (n == "HardSigmoid") {
      a.alpha = ia < c.alphas.size() ? c.alphas[ia++] : 0.2;
      a.beta = ib < c.betas.size() ? c.betas[ib++] : 0.5;
    }
    if (n == "Affine") {
      a.alpha = ia < c.alphas.size() ? c.alphas[ia++] : 1.0;
      a.beta = ib < c.betas.size() ? c.betas[ib++] : 0.0;
    }
    if (n == "Elu") a.alpha = ia < c.alphas.size() ? c.alphas[ia++] : 1.0;
    out.push_back(a);
  }
  return out;
}

struct Inputs {
  Tensor x, w, r, b, lens, h0, c0, p;
};

struct Reference {
  std::vector<double> y, yh, yc;
};

Reference reference(const Case& c, const Inputs& in) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  const int64_t G = c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1, H = c.hidden, I = c.input, S = c.seq, N = c.batch;
  const std::vector<Act> acts = activations_of(c, dirs);
  const int64_t per = c.op == "LSTM" ? 3 : c.op == "GRU" ? 2 : 1;
  Reference out;
  out.y.assign(static_cast<size_t>(S * dirs * N * H), 0.0);
  out.yh.assign(static_cast<size_t>(dirs * N * H), 0.0);
  out.yc = out.yh;
  auto xat = [&](int64_t t, int64_t b, int64_t i) {
    return at(in.x, c.layout == 0 ? (t * N + b) * I + i : (b * S + t) * I + i);
  };
  auto state_at = [&](int64_t d, int64_t b) { return c.layout == 0 ? (d * N + b) * H : (b * dirs + d) * H; };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return c.layout == 0 ? ((t * dirs + d) * N + b) * H : ((b * S + t) * dirs + d) * H;
  };
  auto clip = [&](double v) { return c.clip > 0 ? std::min<double>(c.clip, std::max<double>(-c.clip, v)) : v; };
  for (int64_t d = 0; d < dirs; ++d) {
    const bool rev = c.direction == "reverse" || d == 1;
    const Act* a = &acts[static_cast<size_t>(d * per)];
    auto f = [&](int k, double v) { return act(a[k].name, a[k].alpha, a[k].beta, v); };
    // Row q of W (or R) of direction d times a vector.
    auto w_dot = [&](int64_t q, const std::vector<double>& v) {
      double s = 0;
      for (int64_t i = 0; i < I; ++i) s += at(in.w, (d * G * H + q) * I + i) * v[static_cast<size_t>(i)];
      return s;
    };
    auto r_dot = [&](int64_t q, const std::vector<double>& v) {
      double s = 0;
      for (int64_t m = 0; m < H; ++m) s += at(in.r, (d * G * H + q) * H + m) * v[static_cast<size_t>(m)];
      return s;
    };
    auto wb = [&](int64_t q) { return at(in.b, d * 2 * G * H + q); };
    auto rb = [&](int64_t q) { return at(in.b, d * 2 * G * H + G * H + q); };
    for (int64_t b = 0; b < N; ++b) {
      std::vector<double> h(static_cast<size_t>(H)), cc(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        h[static_cast<size_t>(j)] = at(in.h0, state_at(d, b) + j);
        if (c.op == "LSTM") cc[static_cast<size_t>(j)] = at(in.c0, state_at(d, b) + j);
      }
      const int64_t len = c.lens.empty() ? S : c.lens[static_cast<size_t>(b)];
      for (int64_t k = 0; k < len; ++k) {
        const int64_t t = rev ? len - 1 - k : k;
        std::vector<double> x(static_cast<size_t>(I));
        for (int64_t i = 0; i < I; ++i) x[static_cast<size_t>(i)] = xat(t, b, i);
        std::vector<double> nh(static_cast<size_t>(H)), nc(static_cast<size_t>(H));
        if (c.op == "LSTM") {
          for (int64_t j = 0; j < H; ++j) {
            auto gate = [&](int64_t g) { return w_dot(g * H + j, x) + r_dot(g * H + j, h) + wb(g * H + j) + rb(g * H + j); };
            const double pi = at(in.p, d * 3 * H + j), po = at(in.p, d * 3 * H + H + j), pf = at(in.p, d * 3 * H + 2 * H + j);
            const double c_prev = cc[static_cast<size_t>(j)];
            const double it = f(0, clip(gate(0) + pi * c_prev));
            const double ft = c.input_forget ? 1 - it : f(0, clip(gate(2) + pf * c_prev));
            const double ct = f(1, clip(gate(3)));
            nc[static_cast<size_t>(j)] = ft * c_prev + it * ct;
            const double ot = f(0, clip(gate(1) + po * nc[static_cast<size_t>(j)]));
            nh[static_cast<size_t>(j)] = ot * f(2, nc[static_cast<size_t>(j)]);
          }
          cc = nc;
        } else if (c.op == "GRU") {
          std::vector<double> r(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            r[static_cast<size_t>(j)] = f(0, clip(w_dot(H + j, x) + r_dot(H + j, h) + wb(H + j) + rb(H + j)));
            rh[static_cast<size_t>(j)] = r[static_cast<size_t>(j)] * h[static_cast<size_t>(j)];
          }
          for (int64_t j = 0; j < H; ++j) {
            const double z = f(0, clip(w_dot(j, x) + r_dot(j, h) + wb(j) + rb(j)));
            const int64_t q = 2 * H + j;
            const double hh =
                c.linear_before_reset
                    ? f(1, clip(w_dot(q, x) + wb(q) + r[static_cast<size_t>(j)] * (r_dot(q, h) + rb(q))))
                    : f(1, clip(w_dot(q, x) + wb(q) + r_dot(q, rh) + rb(q)));
            nh[static_cast<size_t>(j)] = (1 - z) * hh + z * h[static_cast<size_t>(j)];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) nh[static_cast<size_t>(j)] = f(0, clip(w_dot(j, x) + r_dot(j, h) + wb(j) + rb(j)));
        }
        h = nh;
        for (int64_t j = 0; j < H; ++j) out.y[static_cast<size_t>(y_at(t, d, b) + j)] = h[static_cast<size_t>(j)];
      }
      for (int64_t j = 0; j < H; ++j) {
        out.yh[static_cast<size_t>(state_at(d, b) + j)] = h[static_cast<size_t>(j)];
        out.yc[static_cast<size_t>(state_at(d, b) + j)] = cc[static_cast<size_t>(j)];
      }
    }
  }
  return out;
}

void check(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  const int64_t G = c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1, H = c.hidden;
  const Shape state = c.layout == 0 ? Shape{dirs, c.batch, H} : Shape{c.batch, dirs, H};
  Inputs in;
  in.x = random_f32(c.layout == 0 ? Shape{c.seq, c.batch, c.input} : Shape{c.batch, c.seq, c.input}, rng, -1, 1);
  in.w = random_f32({dirs, G * H, c.input}, rng, -0.6f, 0.6f);
  in.r = random_f32({dirs, G * H, H}, rng, -0.6f, 0.6f);
  in.b = random_f32({dirs, 2 * G * H}, rng, -0.5f, 0.5f);
  std::vector<int64_t> lens = c.lens;
  if (lens.empty()) lens.assign(static_cast<size_t>(c.batch), c.seq);
  in.lens = i64_tensor({c.batch}, lens);
  in.h0 = random_f32(state, rng, -0.5f, 0.5f);
  in.c0 = random_f32(state, rng, -0.5f, 0.5f);
  in.p = random_f32({dirs, 3 * H}, rng, -0.5f, 0.5f);
  ir::Attributes a;
  a.set("direction", c.direction);
  a.set("hidden_size", H);
  a.set("layout", c.layout);
  if (c.clip > 0) a.set("clip", static_cast<double>(c.clip));
  if (c.input_forget) a.set("input_forget", int64_t{1});
  if (c.linear_before_reset) a.set("linear_before_reset", int64_t{1});
  if (!c.activations.empty()) a.set("activations", c.activations);
  if (!c.alphas.empty()) a.set("activation_alpha", c.alphas);
  if (!c.betas.empty()) a.set("activation_beta", c.betas);
  std::vector<Tensor> inputs{in.x, in.w, in.r, in.b, in.lens, in.h0};
  if (c.op == "LSTM") inputs.insert(inputs.end(), {in.c0, in.p});
  const Reference want = reference(c, in);
  const std::string what = c.op + " " + c.direction + " layout " + std::to_string(c.layout);
  for (int threads : {1, 2}) {
    const std::vector<Tensor> got = run_op(c.op, inputs, a, threads, c.op == "LSTM" ? 3 : 2);
    const Shape y = c.layout == 0 ? Shape{c.seq, dirs, c.batch, H} : Shape{c.batch, c.seq, dirs, H};
    expect_close(got[0], y, want.y, 1e-5, 1e-5, what + " Y");
    expect_close(got[1], state, want.yh, 1e-5, 1e-5, what + " Y_h");
    if (c.op == "LSTM") expect_close(got[2], state, want.yc, 1e-5, 1e-5, what + " Y_c");
  }
}

TEST(Recurrent, LstmMatchesDoubleReference) {
  check({.op = "LSTM"}, 1);
  check({.op = "LSTM", .direction = "reverse", .lens = {5, 2, 4}}, 2);
  check({.op = "LSTM", .direction = "bidirectional", .layout = 1, .lens = {3, 5, 1}, .clip = 0.8f}, 3);
  check({.op = "LSTM", .seq = 4, .batch = 2, .input = 3, .hidden = 5, .input_forget = true}, 4);
  check({.op = "LSTM",
         .direction = "bidirectional",
         .activations = {"HardSigmoid", "Tanh", "Softsign", "Sigmoid", "Affine", "Tanh"},
         .alphas = {0.3, 0.7},
         .betas = {0.4, 0.1}},
        5);
  check({.op = "LSTM", .seq = 1, .batch = 1, .input = 64, .hidden = 64}, 6);  // one decode step
}

TEST(Recurrent, GruMatchesDoubleReference) {
  check({.op = "GRU"}, 11);
  check({.op = "GRU", .linear_before_reset = true}, 12);
  check({.op = "GRU", .direction = "bidirectional", .lens = {5, 1, 3}}, 13);
  check({.op = "GRU", .direction = "reverse", .layout = 1, .lens = {2, 5, 4}, .clip = 0.5f, .linear_before_reset = true},
        14);
  check({.op = "GRU", .activations = {"Sigmoid", "LeakyRelu"}, .alphas = {0.2}}, 15);
}

TEST(Recurrent, RnnMatchesDoubleReference) {
  check({.op = "RNN"}, 21);
  check({.op = "RNN", .direction = "bidirectional", .layout = 1, .lens = {4, 5, 2}}, 22);
  check({.op = "RNN", .direction = "reverse", .activations = {"Relu"}}, 23);
  check({.op = "RNN", .clip = 0.3f, .activations = {"Elu"}, .alphas = {0.5}}, 24);
}

// The schema names what does not fit.
TEST(Recurrent, BadShapesAndAttributesAreRefused) {
  auto refuse = [](const std::string& op, std::vector<ir::TensorType> in, ir::Attributes a, const std::string& what) {
    ir::Node node = make_node(op, in.size(), op == "LSTM" ? 3 : 2, a);
    try {
      ir::infer_node(node, in);
      ADD_FAILURE() << op << " accepted; expected " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  const ir::TensorType x{DType::f32, {5, 2, 4}}, w{DType::f32, {1, 18, 4}}, r{DType::f32, {1, 18, 6}},
      b{DType::f32, {1, 36}}, lens{DType::i64, {2}}, h{DType::f32, {1, 2, 6}};
  EXPECT_NO_THROW(ir::infer_node(make_node("GRU", 6, 2, {}), {x, w, r, b, lens, h}));  // the others change one thing
  ir::Attributes bad_dir;
  bad_dir.set("direction", std::string("sideways"));
  refuse("GRU", {x, w, r, b, lens, h}, bad_dir, "direction 'sideways'");
  refuse("GRU", {x, {DType::f32, {1, 12, 4}}, r, b, lens, h}, {}, "W is [1,12,4], expected [1,18,4]");
  ir::Attributes acts;
  acts.set("activations", std::vector<std::string>{"Sigmoid", "Swish"});
  refuse("GRU", {x, w, r, b, lens, h}, acts, "unknown function 'Swish'");
  ir::Attributes three;
  three.set("activations", std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"});
  refuse("GRU", {x, w, r, b, lens, h}, three, "3 given, GRU takes 2 per direction");
}

}  // namespace
}  // namespace fusebox::optest
