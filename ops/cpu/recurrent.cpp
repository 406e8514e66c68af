// LSTM, GRU and RNN (core/ir/recurrent_params.h says the ops and their shapes). Per direction: the
// input projections of every step in one GEMM (X W^T), then per step one GEMM of the hidden states
// against R (two for a GRU that resets before R_h) and the gates elementwise, for every batch
// entry still inside its sequence. Steps past an entry's length leave its Y rows zero and its
// states as they were, as ONNX specifies.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/ir/recurrent_params.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/kernel_util.h"

namespace fusebox::cpu {

namespace {

using ir::RnnActivation;

float activate(const RnnActivation& a, float x) {
  switch (a.fn) {
    case RnnActivation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case RnnActivation::kTanh:
      return std::tanh(x);
    case RnnActivation::kRelu:
      return std::max(x, 0.0f);
    case RnnActivation::kAffine:
      return a.alpha * x + a.beta;
    case RnnActivation::kLeakyRelu:
      return x >= 0.0f ? x : a.alpha * x;
    case RnnActivation::kThresholdedRelu:
      return x > a.alpha ? x : 0.0f;
    case RnnActivation::kScaledTanh:
      return a.alpha * std::tanh(a.beta * x);
    case RnnActivation::kHardSigmoid:
      return std::clamp(a.alpha * x + a.beta, 0.0f, 1.0f);
    case RnnActivation::kElu:
      return x >= 0.0f ? x : a.alpha * std::expm1(x);
    case RnnActivation::kSoftsign:
      return x / (1.0f + std::fabs(x));
    case RnnActivation::kSoftplus:
      return x > 20.0f ? x : std::log1p(std::exp(x));
  }
  return x;
}

struct RnnState {
  ir::RnnParams p;
};

std::shared_ptr<const void> prepare_rnn(const exec::KernelContext& ctx) {
  RnnState st;
  st.p = or_fail(ctx, [&] { return ir::rnn_params(ctx.node, ctx.inputs); });
  if (ctx.scratch_bytes < ir::rnn_scratch_bytes(st.p))
    fail(ctx, "needs " + std::to_string(ir::rnn_scratch_bytes(st.p)) + " bytes of scratch, given " +
                  std::to_string(ctx.scratch_bytes));
  return exec::make_state(st);
}

// One direction's buffers in the scratch (ir::rnn_scratch_bytes).
struct Buffers {
  float* gx;  // [rows of X in stored order][gates * hidden]: X W^T
  float* gr;  // [batch][gates * hidden]: one step's H R^T
  float* h;   // [batch][hidden]
  float* c;   // [batch][hidden] (LSTM)
  float* rh;  // [batch][hidden]: GRU's r * H, before R_h
};

class Direction {
 public:
  Direction(const ir::RnnParams& p, const exec::KernelArgs& args, int64_t d)
      : p_(p), d_(d), H_(p.hidden), GH_(p.gates * p.hidden), rev_(p.reverse || d == 1) {
    const int64_t I = p.input;
    w_ = input_ptr<float>(args, 1) + d * GH_ * I;
    r_ = input_ptr<float>(args, 2) + d * GH_ * H_;
    wb_ = input_ptr<float>(args, 3) + d * 2 * GH_;
    rb_ = wb_ + GH_;
    lens_ = input_ptr<int64_t>(args, 4);
    if (p.kind == ir::RnnKind::kLstm) peep_ = input_ptr<float>(args, 7) + d * 3 * H_;
    act_ = &p.activations[static_cast<size_t>(d * p.activations_per_dir())];
    float* s = static_cast<float*>(args.scratch);
    b_.gx = s;
    b_.gr = b_.gx + p.seq * p.batch * GH_;
    b_.h = b_.gr + p.batch * GH_;
    b_.c = b_.h + p.batch * H_;
    b_.rh = b_.c + p.batch * H_;
  }

  void run(const exec::KernelArgs& args) {
    const ir::RnnParams& p = p_;
    const float* x = input_ptr<float>(args, 0);
    sgemm(false, true, p.seq * p.batch, GH_, p.input, 1.0f, x, p.input, w_, p.input, 0.0f, b_.gx, GH_);
    load_states(args);
    std::fill(b_.rh, b_.rh + p.batch * H_, 0.0f);
    float* y = output_ptr<float>(args, 0);
    for (int64_t k = 0; k < p.seq; ++k) {
      step(k);
      for (int64_t b = 0; b < p.batch; ++b)
        if (const int64_t t = time_of(b, k); t >= 0)
          std::memcpy(y + y_row(t, b) * H_, b_.h + b * H_, static_cast<size_t>(H_) * sizeof(float));
    }
    store_states(args);
  }

 private:
  // The length of entry b's sequence, within [0, seq].
  int64_t length(int64_t b) const { return std::clamp<int64_t>(lens_[b], 0, p_.seq); }
  // The time step entry b computes at iteration k, or -1 once past its length.
  int64_t time_of(int64_t b, int64_t k) const {
    const int64_t len = length(b);
    if (k >= len) return -1;
    return rev_ ? len - 1 - k : k;
  }
  int64_t x_row(int64_t t, int64_t b) const { return p_.layout == 0 ? t * p_.batch + b : b * p_.seq + t; }
  int64_t y_row(int64_t t, int64_t b) const {
    return p_.layout == 0 ? (t * p_.dirs + d_) * p_.batch + b : (b * p_.seq + t) * p_.dirs + d_;
  }
  int64_t state_row(int64_t b) const { return p_.layout == 0 ? d_ * p_.batch + b : b * p_.dirs + d_; }
  float clip(float v) const { return p_.clip > 0.0f ? std::clamp(v, -p_.clip, p_.clip) : v; }

  void load_states(const exec::KernelArgs& args) {
    const float* h0 = input_ptr<float>(args, 5);
    const float* c0 = p_.kind == ir::RnnKind::kLstm ? input_ptr<float>(args, 6) : nullptr;
    for (int64_t b = 0; b < p_.batch; ++b) {
      std::memcpy(b_.h + b * H_, h0 + state_row(b) * H_, static_cast<size_t>(H_) * sizeof(float));
      if (c0) std::memcpy(b_.c + b * H_, c0 + state_row(b) * H_, static_cast<size_t>(H_) * sizeof(float));
    }
  }

  void store_states(const exec::KernelArgs& args) {
    float* yh = output_ptr<float>(args, 1);
    float* yc = p_.kind == ir::RnnKind::kLstm ? output_ptr<float>(args, 2) : nullptr;
    for (int64_t b = 0; b < p_.batch; ++b) {
      std::memcpy(yh + state_row(b) * H_, b_.h + b * H_, static_cast<size_t>(H_) * sizeof(float));
      if (yc) std::memcpy(yc + state_row(b) * H_, b_.c + b * H_, static_cast<size_t>(H_) * sizeof(float));
    }
  }

  void step(int64_t k) {
    const int64_t N = p_.batch;
    if (p_.kind == ir::RnnKind::kGru && !p_.linear_before_reset) {
      // z and r first (R's first 2H rows), then R_h over r * H.
      sgemm(false, true, N, 2 * H_, H_, 1.0f, b_.h, H_, r_, H_, 0.0f, b_.gr, GH_);
      for (int64_t b = 0; b < N; ++b)
        if (const int64_t t = time_of(b, k); t >= 0) gru_reset(b, b_.gx + x_row(t, b) * GH_);
      sgemm(false, true, N, H_, H_, 1.0f, b_.rh, H_, r_ + 2 * H_ * H_, H_, 0.0f, b_.gr + 2 * H_, GH_);
    } else {
      sgemm(false, true, N, GH_, H_, 1.0f, b_.h, H_, r_, H_, 0.0f, b_.gr, GH_);
    }
    for (int64_t b = 0; b < N; ++b) {
      const int64_t t = time_of(b, k);
      if (t < 0) continue;
      const float* gx = b_.gx + x_row(t, b) * GH_;
      switch (p_.kind) {
        case ir::RnnKind::kLstm:
          lstm_cell(b, gx);
          break;
        case ir::RnnKind::kGru:
          gru_cell(b, gx);
          break;
        case ir::RnnKind::kRnn:
          rnn_cell(b, gx);
          break;
      }
    }
  }

  // Gate g's input before its activation: X W^T + H R^T + both biases.
  float pre(const float* gx, const float* gr, int64_t g, int64_t j) const {
    const int64_t at = g * H_ + j;
    return gx[at] + wb_[at] + gr[at] + rb_[at];
  }

  // i, o, f, c; peepholes i, o, f.
  void lstm_cell(int64_t b, const float* gx) {
    const float* gr = b_.gr + b * GH_;
    float* h = b_.h + b * H_;
    float* c = b_.c + b * H_;
    for (int64_t j = 0; j < H_; ++j) {
      const float it = activate(act_[0], clip(pre(gx, gr, 0, j) + peep_[j] * c[j]));
      const float ft = p_.input_forget ? 1.0f - it : activate(act_[0], clip(pre(gx, gr, 2, j) + peep_[2 * H_ + j] * c[j]));
      const float ct = activate(act_[1], clip(pre(gx, gr, 3, j)));
      c[j] = ft * c[j] + it * ct;
      const float ot = activate(act_[0], clip(pre(gx, gr, 1, j) + peep_[H_ + j] * c[j]));
      h[j] = ot * activate(act_[2], c[j]);
    }
  }

  // GRU without linear_before_reset: r * H, for R_h.
  void gru_reset(int64_t b, const float* gx) {
    const float* gr = b_.gr + b * GH_;
    const float* h = b_.h + b * H_;
    float* rh = b_.rh + b * H_;
    for (int64_t j = 0; j < H_; ++j) rh[j] = activate(act_[0], clip(pre(gx, gr, 1, j))) * h[j];
  }

  // z, r, h.
  void gru_cell(int64_t b, const float* gx) {
    const float* gr = b_.gr + b * GH_;
    float* h = b_.h + b * H_;
    for (int64_t j = 0; j < H_; ++j) {
      const float zt = activate(act_[0], clip(pre(gx, gr, 0, j)));
      float ht;
      if (p_.linear_before_reset) {
        const float rt = activate(act_[0], clip(pre(gx, gr, 1, j)));
        const int64_t at = 2 * H_ + j;
        ht = activate(act_[1], clip(gx[at] + wb_[at] + rt * (gr[at] + rb_[at])));
      } else {
        ht = activate(act_[1], clip(pre(gx, gr, 2, j)));  // gr's h part is (r * H) R_h^T
      }
      h[j] = (1.0f - zt) * ht + zt * h[j];
    }
  }

  void rnn_cell(int64_t b, const float* gx) {
    const float* gr = b_.gr + b * GH_;
    float* h = b_.h + b * H_;
    for (int64_t j = 0; j < H_; ++j) h[j] = activate(act_[0], clip(pre(gx, gr, 0, j)));
  }

  const ir::RnnParams& p_;
  const int64_t d_, H_, GH_;
  const bool rev_;
  const float *w_ = nullptr, *r_ = nullptr, *wb_ = nullptr, *rb_ = nullptr, *peep_ = nullptr;
  const int64_t* lens_ = nullptr;
  const RnnActivation* act_ = nullptr;
  Buffers b_{};
};

void run_rnn(const exec::KernelArgs& args) {
  const ir::RnnParams& p = state_of<RnnState>(args).p;
  float* y = output_ptr<float>(args, 0);
  std::fill(y, y + p.seq * p.dirs * p.batch * p.hidden, 0.0f);  // steps past a sequence's length
  for (int64_t d = 0; d < p.dirs; ++d) Direction(p, args, d).run(args);
}

}  // namespace

void add_recurrent_kernels(exec::KernelTable& table) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) table.add(op, {prepare_rnn, run_rnn});
}

}  // namespace fusebox::cpu
