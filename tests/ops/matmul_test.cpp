// MatMul, MatMulAdd, FusedBiasRelu and FusedBiasGelu against a double-precision triple loop with numpy batch
// broadcasting, ONNX 1-D rules, transA/transB and alpha; the fused ops against that loop
// followed by the broadcast add (and relu) they replace.
#include <algorithm>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

struct MatMulRef {
  Shape out;
  std::vector<double> values;
};

MatMulRef ref_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb, double alpha) {
  Shape as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t ar = as[as.size() - 2], ac = as.back(), br = bs[bs.size() - 2], bc = bs.back();
  const int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const Shape batch = ir::broadcast_shapes(a_batch, b_batch);
  MatMulRef r;
  r.out = batch;
  if (!a_vec) r.out.push_back(m);
  if (!b_vec) r.out.push_back(n);
  const int64_t count = ir::numel(batch);
  r.values.assign(static_cast<size_t>(count * m * n), 0.0);
  for (int64_t bi = 0; bi < count; ++bi) {
    const int64_t ab = bcast_index(a_batch, batch, bi), bb = bcast_index(b_batch, batch, bi);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double va = at(a, ab * ar * ac + (ta ? p * ac + i : i * ac + p));
          const double vb = at(b, bb * br * bc + (tb ? j * bc + p : p * bc + j));
          s += va * vb;
        }
        r.values[static_cast<size_t>((bi * m + i) * n + j)] = alpha * s;
      }
  }
  return r;
}

struct Case {
  Shape a, b;
  bool ta = false, tb = false;
  double alpha = 1.0;
};

const std::vector<Case> kCases = {
    {{3, 4}, {4, 5}},
    {{1, 1}, {1, 1}},
    {{17, 129}, {129, 3}},
    {{4}, {4, 5}},
    {{3, 4}, {4}},
    {{6}, {6}},
    {{2, 3, 4}, {4, 5}},        // batch folded into M
    {{2, 3, 4}, {2, 4, 5}},     // real batches
    {{2, 1, 3, 4}, {3, 4, 5}},  // both broadcast
    {{1, 3, 4}, {2, 4, 5}},     // A broadcast
    {{2, 3, 4}, {1, 4, 5}},     // B batch of size 1: folded
    {{4}, {2, 3, 4, 5}},        // 1-D A against a batch
    {{2, 3, 4}, {4}},           // batch against 1-D B
    {{4, 3}, {4, 5}, true, false},
    {{3, 4}, {5, 4}, false, true},
    {{4, 3}, {5, 4}, true, true, 0.5},
    {{2, 4, 3}, {4, 5}, true, false},  // transA with batch: not folded
    {{2, 3, 4}, {2, 5, 4}, false, true, -2.0},
    {{3, 1, 4, 3}, {2, 5, 4}, true, true, 0.125},
    {{3, 0}, {0, 4}},            // K = 0: zeros
    {{0, 4}, {4, 5}},            // M = 0
    {{0, 3, 4}, {4, 5}},         // empty batch
    {{3, 4}, {4, 0}},            // N = 0
    {{4, 64, 256}, {256, 128}},  // big enough for BLAS threads
    {{8, 32, 64}, {8, 64, 32}},  // batches in parallel
    {{12, 17, 33}, {12, 33, 9}, false, false, 0.3},
};

// Sums over K terms of magnitude <= 1: allow K float roundings.
double tol_for(const Case& c) {
  const int64_t k = c.ta ? c.a[c.a.size() - 2] : c.a.back();
  return 1e-6 * static_cast<double>(std::max<int64_t>(k, 1)) + 1e-6;
}

ir::Attributes matmul_attrs(const Case& c) {
  return attrs_of({{"transA", int64_t{c.ta}}, {"transB", int64_t{c.tb}}, {"alpha", c.alpha}});
}

std::string name_of(const std::string& op, const Case& c) {
  return op + " " + shape_str(c.a) + " x " + shape_str(c.b) + (c.ta ? " tA" : "") +
         (c.tb ? " tB" : "") + " alpha " + std::to_string(c.alpha);
}

TEST(MatMul, MatchesReference) {
  std::mt19937 rng(21);
  for (const auto& c : kCases) {
    Tensor a = random_f32(c.a, rng, -1, 1), b = random_f32(c.b, rng, -1, 1);
    MatMulRef r = ref_matmul(a, b, c.ta, c.tb, c.alpha);
    for (int threads : {1, 2})
      expect_close(run1("MatMul", {a, b}, matmul_attrs(c), threads), r.out, r.values, tol_for(c),
                   1e-5, name_of("MatMul", c) + " threads " + std::to_string(threads));
  }
}

// Bias shapes that broadcast to `out`: full, per-column, per-row, scalar, leading 1s.
std::vector<Shape> bias_shapes(const Shape& out) {
  std::vector<Shape> s = {out, Shape{}};
  if (!out.empty()) s.push_back(Shape{1});
  if (!out.empty()) s.push_back(Shape{out.back()});
  if (out.size() >= 2) {
    Shape col(out.size(), 1);
    col[out.size() - 2] = out[out.size() - 2];
    s.push_back(col);
    s.push_back(Shape{1, out.back()});
  }
  if (out.size() >= 3) {
    Shape lead_and_last(out.size(), 1);
    lead_and_last.front() = out.front();
    lead_and_last.back() = out.back();
    s.push_back(lead_and_last);
  }
  return s;
}

double activation(const std::string& op, double v) {
  if (op == "FusedBiasRelu") return std::max(v, 0.0);
  if (op == "FusedBiasGelu") return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  return v;
}

void check_fused(const std::string& op) {
  std::mt19937 rng(22);
  for (const auto& c : kCases) {
    Tensor a = random_f32(c.a, rng, -1, 1), b = random_f32(c.b, rng, -1, 1);
    MatMulRef r = ref_matmul(a, b, c.ta, c.tb, c.alpha);
    for (const Shape& bs : bias_shapes(r.out)) {
      Tensor bias = random_f32(bs, rng, -1, 1);
      std::vector<double> want(r.values.size());
      for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
        want[i] = activation(op, r.values[i] + at(bias, bcast_index(bs, r.out, i)));
      }
      for (int threads : {1, 2})
        expect_close(
            run1(op, {a, b, bias}, matmul_attrs(c), threads), r.out, want, tol_for(c), 1e-5,
            name_of(op, c) + " bias " + shape_str(bs) + " threads " + std::to_string(threads));
    }
  }
}

TEST(MatMulAdd, MatchesMatMulThenAdd) {
  check_fused("MatMulAdd");
}
TEST(FusedBiasRelu, MatchesMatMulAddRelu) {
  check_fused("FusedBiasRelu");
}
TEST(FusedBiasGelu, MatchesMatMulAddGelu) {
  check_fused("FusedBiasGelu");
}

// With B a weight known at prepare time, B is packed for the AVX-512 GEMM and a bias row becomes
// the GEMM's epilogue (added, then the activation, in registers before the store). Shapes cover
// row and column splits over threads, partial panels, K blocking (K > 512) and biases that are
// not a row (full C, a column): those take the other path.
TEST(MatMulAdd, PackedWeightWithBiasInTheEpilogue) {
  std::mt19937 rng(24);
  struct PackedCase {
    Shape a, b, bias;
    bool tb;
  };
  const std::vector<PackedCase> cases = {
      {{1, 128, 256}, {768, 256}, {768}, true},   // the in_proj of the stack export
      {{64, 784}, {784, 512}, {512}, false},      // MLP batch 64
      {{1, 784}, {784, 10}, {1, 10}, false},      // batch 1: column split; a 10-wide panel
      {{3, 37}, {37, 45}, {3, 45}, false},        // C a full tensor: not a bias row
      {{70, 600}, {600, 40}, {70, 1}, false},     // K blocking; a column bias
  };
  for (const std::string op : {"MatMulAdd", "FusedBiasRelu", "FusedBiasGelu"}) {
    for (const auto& c : cases) {
      Tensor a = random_f32(c.a, rng, -1, 1), b = random_f32(c.b, rng, -1, 1);
      Tensor bias = random_f32(c.bias, rng, -1, 1);
      MatMulRef r = ref_matmul(a, b, false, c.tb, 1.0);
      std::vector<double> want(r.values.size());
      for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i)
        want[i] = activation(op, r.values[i] + at(bias, bcast_index(c.bias, r.out, i)));
      ir::Attributes attrs;
      if (c.tb) attrs.set("transB", int64_t{1});
      ir::Node node = make_node(op, 3, 1, attrs);
      std::vector<ir::TensorType> in_types = {
          {DType::f32, a.shape()}, {DType::f32, b.shape()}, {DType::f32, bias.shape()}};
      std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
      const exec::KernelDef* k = cpu_backend().kernels().find(op);
      ASSERT_NE(k, nullptr);
      const std::vector<const Tensor*> constants = {nullptr, &b, nullptr};
      auto state = k->prepare(exec::KernelContext{node, in_types, out_types, 0, &constants});
      for (int threads : {1, 2}) {
        Tensor out(DType::f32, r.out);
        fill_marker(out);
        const void* ins[] = {a.bytes(), b.bytes(), bias.bytes()};
        void* outs[] = {out.bytes()};
        cpu_backend().bind_threads(threads);
        k->run(exec::KernelArgs{ins, outs, nullptr, state.get()});
        cpu_backend().bind_threads(1);
        expect_close(out, r.out, want, 1e-4, 1e-5,
                     op + " packed " + shape_str(c.a) + " x " + shape_str(c.b) + " bias " +
                         shape_str(c.bias) + " threads " + std::to_string(threads));
      }
    }
  }
}

// gemm=blas (CompileOptions::gemm) takes the weight as stored, through OpenBLAS, at every level;
// auto packs it in prepare. So the two agree with the double-precision product, and only the blas
// kernel sees a weight changed after prepare (the packed one multiplies its copy).
TEST(MatMulAdd, GemmBlasMultipliesTheWeightAsStored) {
  std::mt19937 rng(25);
  for (const std::string op : {"MatMulAdd", "FusedBiasGelu"}) {
    Tensor a = random_f32({5, 96}, rng, -1, 1), b = random_f32({96, 40}, rng, -1, 1);
    Tensor bias = random_f32({40}, rng, -1, 1);
    ir::Node node = make_node(op, 3, 1, {});
    std::vector<ir::TensorType> in_types = {
        {DType::f32, a.shape()}, {DType::f32, b.shape()}, {DType::f32, bias.shape()}};
    std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
    const exec::KernelDef* k = cpu_backend().kernels().find(op);
    ASSERT_NE(k, nullptr);
    for (cpu::Isa isa : runnable_isas()) {
      for (const std::string gemm : {"auto", "blas"}) {
        Tensor w = b.clone();
        exec::CompileOptions options;
        options.isa = cpu::isa_name(isa);
        options.gemm = gemm;
        const std::vector<const Tensor*> constants = {nullptr, &w, nullptr};
        auto state = k->prepare(exec::KernelContext{node, in_types, out_types, 0, &constants, nullptr, &options});
        const std::string what = op + " " + options.isa + " gemm=" + gemm;
        for (int pass = 0; pass < 2; ++pass) {
          // The second pass doubles the weight's bytes after prepare.
          const bool sees_new = pass == 1 && (gemm == "blas" || isa == cpu::Isa::kPortable);
          MatMulRef r = ref_matmul(a, b, false, false, sees_new ? 2.0 : 1.0);
          std::vector<double> want(r.values.size());
          for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i)
            want[i] = activation(op, r.values[i] + at(bias, bcast_index(bias.shape(), r.out, i)));
          Tensor out(DType::f32, r.out);
          fill_marker(out);
          const void* ins[] = {a.bytes(), w.bytes(), bias.bytes()};
          void* outs[] = {out.bytes()};
          k->run(exec::KernelArgs{ins, outs, nullptr, state.get()});
          expect_close(out, r.out, want, 1e-4, 1e-5, what + (pass ? " after the weight changed" : ""));
          for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = 2 * b.data<float>()[i];
        }
      }
    }
  }
}

// A planner may run a residual add in place: C and the output share a buffer.
TEST(MatMulAdd, BiasAliasingOutput) {
  std::mt19937 rng(23);
  for (const std::string op : {"MatMulAdd", "FusedBiasRelu", "FusedBiasGelu"}) {
    Tensor a = random_f32({2, 5, 7}, rng, -1, 1), b = random_f32({7, 6}, rng, -1, 1);
    Tensor c = random_f32({2, 5, 6}, rng, -1, 1);
    MatMulRef r = ref_matmul(a, b, false, false, 1.0);
    std::vector<double> want(r.values.size());
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] = activation(op, r.values[i] + at(c, static_cast<int64_t>(i)));
    }
    ir::Node node = make_node(op, 3, 1, {});
    std::vector<ir::TensorType> in_types = {
        {DType::f32, a.shape()}, {DType::f32, b.shape()}, {DType::f32, c.shape()}};
    std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
    const exec::KernelDef* k = cpu_backend().kernels().find(op);
    ASSERT_NE(k, nullptr);
    exec::KernelContext ctx{node, in_types, out_types, 0};
    auto state = k->prepare(ctx);
    Tensor io = c.clone();
    const void* ins[] = {a.bytes(), b.bytes(), io.bytes()};
    void* outs[] = {io.bytes()};
    k->run(exec::KernelArgs{ins, outs, nullptr, state.get()});
    expect_close(io, r.out, want, 1e-5, 1e-5, op + " in place");
  }
}

TEST(MatMulPrepare, RejectsBadInputs) {
  EXPECT_THROW(
      prepare_only("MatMul", {{DType::i64, {2, 2}}, {DType::f32, {2, 2}}}, {{DType::f32, {2, 2}}}),
      Error);
  EXPECT_THROW(
      prepare_only("MatMul", {{DType::f32, {2, 3}}, {DType::f32, {2, 2}}}, {{DType::f32, {2, 2}}}),
      Error);
  EXPECT_THROW(
      prepare_only("MatMulAdd", {{DType::f32, {2, 2}}, {DType::f32, {2, 2}}, {DType::f32, {3}}},
                   {{DType::f32, {2, 2}}}),
      Error);
}

}  // namespace
}  // namespace fusebox::optest
