// Attention against the unfused composition it replaces, in double: S = scale * Q K^T (+ mask,
// causal: keys j > i hidden), row softmax, S V, per batch-head; with K given as is and
// pre-transposed (k_transposed = 1).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/packed_gemm.h"
#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The additive mask at (batch-head b, query i, key j).
using MaskFn = std::function<double(int64_t b, int64_t i, int64_t j)>;

// q [..., Sq, D], k [..., Skv, D] or [..., D, Skv], v [..., Skv, Dv].
std::vector<double> ref_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                                  bool kt, bool causal = false, const MaskFn& mask = {}) {
  const Shape& qs = q.shape();
  const size_t r = qs.size();
  const int64_t sq = qs[r - 2], d = qs[r - 1];
  const int64_t skv = kt ? k.shape()[r - 1] : k.shape()[r - 2], dv = v.shape()[r - 1];
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= qs[i];
  std::vector<double> out(static_cast<size_t>(batch * sq * dv), 0.0);
  std::vector<double> s(static_cast<size_t>(skv));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < sq; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < skv; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < d; ++p)
          acc += at(q, (b * sq + i) * d + p) * at(k, b * skv * d + (kt ? p * skv + j : j * d + p));
        s[j] = scale * acc;
        if (mask) s[j] += mask(b, i, j);
        if (causal && j > i) s[j] = -std::numeric_limits<double>::infinity();
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < skv; ++j) sum += (s[j] = std::exp(s[j] - mx));
      for (int64_t j = 0; j < skv; ++j)
        for (int64_t c = 0; c < dv; ++c)
          out[(b * sq + i) * dv + c] += s[j] / sum * at(v, (b * skv + j) * dv + c);
    }
  return out;
}

struct Case {
  Shape lead;  // batch / head dims
  int64_t sq, skv, d, dv;
  double scale;
};

TEST(Attention, MatchesMatMulSoftmaxMatMul) {
  std::mt19937 rng(51);
  const std::vector<Case> cases = {
      {{2, 3}, 5, 5, 8, 8, 0.35},
      {{2, 3}, 4, 9, 8, 6, 1.0},  // Sq != Skv, Dv != D
      {{1}, 7, 7, 16, 16, 0.25},  // one head: BLAS threads, split softmax rows
      {{}, 5, 3, 8, 4, 0.5},      // rank 2
      {{3}, 6, 1, 4, 4, 1.0},     // one key: all weight on it
      {{2, 4}, 64, 64, 32, 32, 0.17677669529},
      {{4}, 17, 129, 3, 5, 2.0},
      {{2}, 0, 4, 8, 8, 1.0},  // no queries
      {{2}, 3, 0, 8, 8, 1.0},  // no keys: zeros
  };
  for (const auto& c : cases) {
    for (bool kt : {false, true}) {
      auto with = [&](int64_t a, int64_t b) {
        Shape s = c.lead;
        s.push_back(a);
        s.push_back(b);
        return s;
      };
      Tensor q = random_f32(with(c.sq, c.d), rng, -1, 1);
      Tensor k = random_f32(kt ? with(c.d, c.skv) : with(c.skv, c.d), rng, -1, 1);
      Tensor v = random_f32(with(c.skv, c.dv), rng, -1, 1);
      ir::Attributes attrs = attrs_of({{"scale", c.scale}, {"k_transposed", int64_t{kt}}});
      for (int threads : {1, 2})
        expect_close(run1("Attention", {q, k, v}, attrs, threads), with(c.sq, c.dv),
                     ref_attention(q, k, v, c.scale, kt), 1e-5, 1e-5,
                     "Attention " + shape_str(q.shape()) + " k " + shape_str(k.shape()) +
                         (kt ? " kt" : "") + " threads " + std::to_string(threads));
    }
  }
}

TEST(Attention, DefaultScaleIsOne) {
  std::mt19937 rng(52);
  Tensor q = random_f32({2, 4, 8}, rng), k = random_f32({2, 6, 8}, rng),
         v = random_f32({2, 6, 3}, rng);
  expect_close(run1("Attention", {q, k, v}), {2, 4, 3}, ref_attention(q, k, v, 1.0, false), 1e-5,
               1e-5, "default");
}

// The schema's scratch is what the panel paths (AVX-512, AVX2: one packing) need exactly: packed
// K^T and V per batch-head. The portable path packs plain rows, which take less, so there the
// kernel asks for its own, smaller need.
TEST(Attention, PrepareNeedsTheSchemasScratch) {
  const int64_t batch = 2, sq = 4, skv = 6, d = 8, dv = 3;
  const std::vector<ir::TensorType> in = {
      {DType::f32, {batch, sq, d}}, {DType::f32, {batch, skv, d}}, {DType::f32, {batch, skv, dv}}};
  const std::vector<ir::TensorType> out = {{DType::f32, {batch, sq, dv}}};
  const size_t schema = ir::node_scratch_bytes(make_node("Attention", 3, 1, {}), in, out);
  ASSERT_GT(schema, 0u);
  for (cpu::Isa isa : runnable_isas()) {
    SCOPED_TRACE(cpu::isa_name(isa));
    ScopedIsa scoped(isa);
    const size_t need = static_cast<size_t>(batch) *
                        (cpu::packed_b_floats(isa, d, skv) + cpu::packed_b_floats(isa, skv, dv)) *
                        sizeof(float);
    if (isa == cpu::Isa::kPortable)
      EXPECT_LE(need, schema);
    else
      EXPECT_EQ(need, schema);
    EXPECT_THROW(prepare_only("Attention", in, out, {}, need - 1), Error);
    EXPECT_NO_THROW(prepare_only("Attention", in, out, {}, need));
  }
}

// Causal and additive masks, alone and together, against the reference with the mask in its
// loop: Sq == Skv and Sq != Skv, sequences shorter than a 32-key panel and longer than a
// 256-key softmax chunk (the causal kernel stops at the diagonal's panel), masks broadcast
// from [Sq, Skv], [B, 1, 1, Skv] (padding-style) and full [B, H, Sq, Skv], with -inf entries.
void check_masks() {
  std::mt19937 rng(55);
  struct MaskCase {
    int64_t b, h, sq, skv, d;
    bool causal;
    int mask;  // 0: none, 1: [Sq, Skv], 2: [B, 1, 1, Skv] with -inf, 3: [B, H, Sq, Skv] with -inf
  };
  const std::vector<MaskCase> cases = {
      {1, 4, 32, 32, 32, true, 0},  {2, 3, 13, 13, 8, true, 0},   {1, 2, 5, 40, 8, true, 0},
      {1, 2, 300, 300, 16, true, 0}, {1, 1, 70, 600, 8, true, 0}, {2, 3, 9, 9, 8, false, 1},
      {2, 2, 7, 20, 8, false, 2},   {2, 2, 6, 6, 4, false, 3},    {1, 2, 300, 300, 8, true, 1},
      {2, 2, 20, 20, 8, true, 2},   {1, 1, 40, 520, 8, false, 2},
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (const auto& c : cases) {
    Tensor q = random_f32({c.b, c.h, c.sq, c.d}, rng, -2, 2);
    Tensor k = random_f32({c.b, c.h, c.skv, c.d}, rng, -2, 2);
    Tensor v = random_f32({c.b, c.h, c.skv, c.d}, rng, -1, 1);
    std::vector<Tensor> in = {q, k, v};
    MaskFn fn;
    if (c.mask == 1) {
      Tensor m = random_f32({c.sq, c.skv}, rng, -3, 3);
      in.push_back(m);
      fn = [m, c](int64_t, int64_t i, int64_t j) { return at(m, i * c.skv + j); };
    } else if (c.mask == 2) {  // hide the last keys of batch 1 (the first key stays visible)
      Tensor m = random_f32({c.b, 1, 1, c.skv}, rng, -1, 1);
      for (int64_t j = c.skv / 2; j < c.skv; ++j) m.data<float>()[(c.b - 1) * c.skv + j] = -inf;
      in.push_back(m);
      fn = [m, c](int64_t bh, int64_t, int64_t j) { return at(m, bh / c.h * c.skv + j); };
    } else if (c.mask == 3) {  // -inf at random places, never a whole row
      Tensor m = random_f32({c.b, c.h, c.sq, c.skv}, rng, -1, 1);
      for (int64_t e = 0; e < m.numel(); ++e)
        if (e % c.skv != 0 && rng() % 3 == 0) m.data<float>()[e] = -inf;
      in.push_back(m);
      fn = [m, c](int64_t bh, int64_t i, int64_t j) { return at(m, (bh * c.sq + i) * c.skv + j); };
    }
    ir::Attributes attrs = attrs_of({{"scale", 0.3}});
    if (c.causal) attrs.set("causal", int64_t{1});
    const std::vector<double> want = ref_attention(q, k, v, 0.3, false, c.causal, fn);
    for (int threads : {1, 2})
      expect_close(run1("Attention", in, attrs, threads), {c.b, c.h, c.sq, c.d}, want, 1e-5, 1e-5,
                   "masked sq " + std::to_string(c.sq) + " skv " + std::to_string(c.skv) +
                       (c.causal ? " causal" : "") + " mask " + std::to_string(c.mask) +
                       " threads " + std::to_string(threads));
  }
}

TEST(Attention, CausalAndAdditiveMasksMatchTheReference) {
  check_masks();
}

// The causal kernel computes the triangle only: its FLOP count says so, and a mask that does
// not broadcast to the scores, or is not f32, is refused naming both shapes.
TEST(Attention, MaskSchema) {
  const std::vector<ir::TensorType> qkv = {
      {DType::f32, {2, 8, 4}}, {DType::f32, {2, 8, 4}}, {DType::f32, {2, 8, 4}}};
  const std::vector<ir::TensorType> out = {{DType::f32, {2, 8, 4}}};
  const ir::OpSchema& s = *ir::OpRegistry::instance().find("Attention");
  ir::Node full = make_node("Attention", 3, 1, {});
  ir::Node causal = make_node("Attention", 3, 1, attrs_of({{"causal", int64_t{1}}}));
  EXPECT_DOUBLE_EQ(s.flops(causal, qkv, out) / s.flops(full, qkv, out), 36.0 / 64.0);
  auto with_mask = [&](ir::TensorType m) {
    std::vector<ir::TensorType> in = qkv;
    in.push_back(m);
    return in;
  };
  ir::Node masked = make_node("Attention", 4, 1, {});
  EXPECT_NO_THROW(s.infer(masked, with_mask({DType::f32, {8, 8}})));
  EXPECT_NO_THROW(s.infer(masked, with_mask({DType::f32, {2, 1, 8}})));
  EXPECT_EQ(error_of([&] { s.infer(masked, with_mask({DType::f32, {8, 9}})); }),
            "Attention mask (input 3) [8,9] does not broadcast to the scores [2,8,8]");
  EXPECT_EQ(error_of([&] { s.infer(masked, with_mask({DType::i64, {8, 8}})); }),
            "Attention mask (input 3) must be f32");
  ir::Node bad = make_node("Attention", 3, 1, attrs_of({{"causal", int64_t{2}}}));
  EXPECT_EQ(error_of([&] { s.infer(bad, qkv); }), "Attention causal=2: expected 0 or 1");
}

// More keys than one softmax chunk: the running max and sum are carried across chunks and the
// rows already accumulated are rescaled. Large scores make the max move between chunks.
void check_long_sequences() {
  std::mt19937 rng(53);
  const std::vector<Case> cases = {
      {{3}, 5, 300, 16, 8, 3.0},
      {{1}, 20, 600, 8, 40, 4.0},  // one head: (head, row block) tasks; Dv across two panels
      {{2}, 3, 513, 4, 3, 2.5},    // a last chunk of one key
  };
  for (const auto& c : cases) {
    Shape qs = c.lead, ks = c.lead, vs = c.lead;
    qs.insert(qs.end(), {c.sq, c.d});
    ks.insert(ks.end(), {c.skv, c.d});
    vs.insert(vs.end(), {c.skv, c.dv});
    Tensor q = random_f32(qs, rng, -2, 2), k = random_f32(ks, rng, -2, 2),
           v = random_f32(vs, rng, -1, 1);
    Shape os = c.lead;
    os.insert(os.end(), {c.sq, c.dv});
    for (int threads : {1, 2})
      expect_close(run1("Attention", {q, k, v}, attrs_of({{"scale", c.scale}}), threads), os,
                   ref_attention(q, k, v, c.scale, false), 1e-5, 1e-5,
                   "skv " + std::to_string(c.skv) + " threads " + std::to_string(threads));
  }
}

// nn.MultiheadAttention's layout, read and written in place: X [S, B, 3 * H * Dh] holds Q, K
// and V side by side, head h of batch b at columns h * Dh; the output goes to Y [S, B, H * Dh].
// Q is the view [B, H, S, Dh]; K is given as K^T [B, H, Dh, S] (k_transposed = 1); the output
// view writes [B, H, S, Dh] into Y. The reference gathers and scatters with its own loops.
void check_strided_views() {
  std::mt19937 rng(54);
  const int64_t S = 10, B = 2, H = 3, Dh = 8, D = H * Dh;
  Tensor x = random_f32({S, B, 3 * D}, rng, -1, 1);
  auto xat = [&](int64_t s, int64_t b, int64_t col) { return at(x, (s * B + b) * 3 * D + col); };
  Tensor q(DType::f32, {B * H, S, Dh}), k(DType::f32, {B * H, S, Dh}),
      v(DType::f32, {B * H, S, Dh});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t e = 0; e < Dh; ++e) {
          const int64_t i = ((b * H + h) * S + s) * Dh + e;
          q.data<float>()[i] = static_cast<float>(xat(s, b, h * Dh + e));
          k.data<float>()[i] = static_cast<float>(xat(s, b, D + h * Dh + e));
          v.data<float>()[i] = static_cast<float>(xat(s, b, 2 * D + h * Dh + e));
        }
  const std::vector<double> heads = ref_attention(q, k, v, 0.3, false);  // [B*H, S, Dh]
  std::vector<double> want(static_cast<size_t>(S * B * D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t e = 0; e < Dh; ++e)
          want[(s * B + b) * D + h * Dh + e] = heads[((b * H + h) * S + s) * Dh + e];

  const std::vector<int64_t> lead_strides = {3 * D, Dh};
  ir::Attributes attrs = attrs_of({{"scale", 0.3}, {"k_transposed", int64_t{1}}});
  attrs.set("q_shape", std::vector<int64_t>{B, H, S, Dh});
  attrs.set("q_strides", std::vector<int64_t>{3 * D, Dh, B * 3 * D, 1});
  attrs.set("k_shape", std::vector<int64_t>{B, H, Dh, S});
  attrs.set("k_strides", std::vector<int64_t>{3 * D, Dh, 1, B * 3 * D});
  attrs.set("k_offset", D);
  attrs.set("v_shape", std::vector<int64_t>{B, H, S, Dh});
  attrs.set("v_strides", std::vector<int64_t>{3 * D, Dh, B * 3 * D, 1});
  attrs.set("v_offset", 2 * D);
  attrs.set("out_shape", std::vector<int64_t>{S, B, D});
  attrs.set("out_strides", std::vector<int64_t>{D, Dh, B * D, 1});
  for (int threads : {1, 2})
    expect_close(run1("Attention", {x, x, x}, attrs, threads), {S, B, D}, want, 1e-5, 1e-5,
                 "strided, threads " + std::to_string(threads));

  // A view reaching past its tensor is refused before anything runs.
  attrs.set("v_offset", 2 * D + 1);
  EXPECT_THROW(run1("Attention", {x, x, x}, attrs), Error);
}

TEST(Attention, LongSequencesAcrossSoftmaxChunks) {
  check_long_sequences();
}
TEST(Attention, ReadsAndWritesThroughStridedViews) {
  check_strided_views();
}

// The same on every path this CPU runs (AVX-512 and AVX2: K and V packed into panels; portable:
// plain rows and OpenBLAS), whichever the default is.
TEST(Attention, EveryIsaAgrees) {
  for (cpu::Isa isa : runnable_isas()) {
    SCOPED_TRACE(cpu::isa_name(isa));
    ScopedIsa scoped(isa);
    check_long_sequences();
    check_strided_views();
    check_masks();
  }
}

// Every op with a schema has a CPU kernel (the CPU backend is the reference backend).
TEST(CpuKernels, EveryRegisteredOpHasAKernel) {
  for (const auto& op : ir::OpRegistry::instance().names())
    EXPECT_NE(cpu_backend().kernels().find(op), nullptr) << "no CPU kernel for " << op;
}

}  // namespace
}  // namespace fusebox::optest
