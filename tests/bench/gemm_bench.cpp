// packed_sgemm (B packed once) against OpenBLAS on the model shapes and 512^3, C = A B^T with B
// an nn.Linear weight [N, K] (trans_b), at 1 and 2 threads. The contenders, registered
// interleaved (every contender of a shape runs before the next shape), so ratios come from one
// run under the same machine conditions:
//   Packed/<isa> packed_sgemm on each Isa this CPU runs (avx512, avx2: the micro-kernels;
//                portable: the plain copy through OpenBLAS), weight packed before timing
//   Blas       sgemm() from blas.h: cblas_sgemm called directly, OpenBLAS threading itself
//   BlasMany   sgemm_many(): how the MatMul kernel calls OpenBLAS (threads split by us)
// and, on the FFN's first layer, the fused epilogues of packed_sgemm at each Isa:
//   Epilogue/<isa>/<act>  bias + none | relu | gelu (erf) | gelu_tanh | tanh | sigmoid in the
//                         store, GFLOPs counting the GEMM's 2 M N K only, so a costly epilogue
//                         shows as fewer GFLOP/s than none's
// and K^T packing (attention, every call): PackKT/<isa> pack_b_into against PackKT/scalar, the
// element-by-element loop the AVX2 level ran before its 8 x 8 in-register transpose.
// OpenBLAS runs with whatever OPENBLAS_CORETYPE the environment sets (Haswell on our machines).
//
//   build/tests/bench/fusebox_bench_gemm --benchmark_min_time=0.5
//   build/tests/bench/fusebox_bench_gemm --benchmark_filter='/t:1$' (one thread only)
// Reports GFLOPs (2 M N K per iteration) per run.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <random>
#include <vector>

#include "ops/cpu/blas.h"
#include "ops/cpu/packed_gemm.h"

namespace fusebox::cpu {
namespace {

struct Operands {
  int64_t m, n, k;
  std::vector<float> a, b, c;
  Operands(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_), a(m * k), b(n * k), c(m * n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
  }
};

void set_counters(benchmark::State& state, const Operands& o) {
  state.counters["GFLOPs"] = benchmark::Counter(
      2.0 * static_cast<double>(o.m * o.n * o.k) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  state.SetLabel(std::to_string(o.m) + "x" + std::to_string(o.n) + "x" + std::to_string(o.k) +
                 " t" + std::to_string(omp_get_max_threads()));
}

// Args: m, n, k, threads; the Isa is bound at registration.
void BM_Packed(benchmark::State& state, Isa isa) {
  omp_set_num_threads(static_cast<int>(state.range(3)));
  Operands o(state.range(0), state.range(1), state.range(2));
  const PackedB packed = PackedB::pack(isa, o.b.data(), o.k, o.n, /*trans_b=*/true);
  for (auto _ : state) {
    packed_sgemm(o.m, 1.0f, o.a.data(), o.k, false, packed, 0.0f, o.c.data(), o.n);
    benchmark::DoNotOptimize(o.c.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, o);
}

// Args: m, n, k, threads; the Isa and the activation are bound at registration.
void BM_Epilogue(benchmark::State& state, Isa isa, GemmAct act) {
  omp_set_num_threads(static_cast<int>(state.range(3)));
  Operands o(state.range(0), state.range(1), state.range(2));
  const PackedB packed = PackedB::pack(isa, o.b.data(), o.k, o.n, /*trans_b=*/true);
  const std::vector<float> bias(static_cast<size_t>(o.n), 0.25f);
  GemmEpilogue ep;
  ep.bias = bias.data();
  ep.act = act;
  for (auto _ : state) {
    packed_sgemm(o.m, 1.0f, o.a.data(), o.k, false, packed, 0.0f, o.c.data(), o.n, ep);
    benchmark::DoNotOptimize(o.c.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, o);
}

void BM_Blas(benchmark::State& state) {
  omp_set_num_threads(static_cast<int>(state.range(3)));
  Operands o(state.range(0), state.range(1), state.range(2));
  for (auto _ : state) {
    sgemm(false, true, o.m, o.n, o.k, 1.0f, o.a.data(), o.k, o.b.data(), o.k, 0.0f, o.c.data(),
          o.n);
    benchmark::DoNotOptimize(o.c.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, o);
}

void BM_BlasMany(benchmark::State& state) {
  omp_set_num_threads(static_cast<int>(state.range(3)));
  Operands o(state.range(0), state.range(1), state.range(2));
  GemmShape g;
  g.trans_b = true;
  g.m = o.m;
  g.n = o.n;
  g.k = o.k;
  g.lda = o.k;
  g.ldb = o.k;
  g.ldc = o.n;
  for (auto _ : state) {
    sgemm_many(g, 1, 0.0f, [&](int64_t) { return o.a.data(); },
               [&](int64_t) { return o.b.data(); }, [&](int64_t) { return o.c.data(); });
    benchmark::DoNotOptimize(o.c.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, o);
}

// K^T packing as attention does it every call (pack_b_into with unit row stride: K [Skv, D] read
// transposed, rows heads * D = 256 floats apart as in a [S, heads * D] projection, D = 64),
// against the element-by-element loop every non-AVX-512 level ran before the AVX2 8 x 8
// in-register transpose (a copy of it; same layout: 32-column panels, zero padding).
void pack_kt_scalar(float* dst, const float* b, int64_t k, int64_t n, int64_t col_stride) {
  constexpr int64_t kNr = 32;
  for (int64_t j = 0; j < (n + kNr - 1) / kNr; ++j) {
    const int64_t col = j * kNr;
    const int64_t width = n - col > 16 ? kNr : 16;
    const int64_t valid = std::min(width, n - col);
    float* __restrict panel = dst + j * kNr * k;
    for (int64_t c = 0; c < valid; ++c) {
      const float* __restrict src = b + (col + c) * col_stride;
      for (int64_t p = 0; p < k; ++p) panel[p * width + c] = src[p];
    }
    for (int64_t p = 0; p < k; ++p)
      for (int64_t c = valid; c < width; ++c) panel[p * width + c] = 0.0f;
  }
}

// Args: Skv. isa kPortable here means "the old scalar loop into the panel layout".
void BM_PackKT(benchmark::State& state, Isa isa) {
  const int64_t d = 64, skv = state.range(0), cs = 256;
  std::vector<float> k(static_cast<size_t>(skv * cs));
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>(i % 1000) * 1e-3f;
  std::vector<float> dst(packed_b_floats(Isa::kAvx2, d, skv) + 16);
  for (auto _ : state) {
    if (isa == Isa::kPortable)
      pack_kt_scalar(dst.data(), k.data(), d, skv, cs);
    else
      pack_b_into(isa, dst.data(), k.data(), d, skv, 1, cs);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.counters["floats/s"] = benchmark::Counter(static_cast<double>(d * skv) *
                                                      static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}

void register_all() {
  // PackKT/<isa> (avx512, avx2: in-register transposes) and PackKT/scalar, interleaved per Skv.
  for (const int64_t skv : {64, 128, 512}) {
    for (Isa isa : {Isa::kAvx512, Isa::kAvx2})
      if (cpu_runs(isa))
        benchmark::RegisterBenchmark((std::string("BM_PackKT/") + isa_name(isa)).c_str(),
                                     BM_PackKT, isa)
            ->Arg(skv)
            ->ArgName("skv");
    benchmark::RegisterBenchmark("BM_PackKT/scalar", BM_PackKT, Isa::kPortable)
        ->Arg(skv)
        ->ArgName("skv");
  }
  const int64_t list[][3] = {
      {512, 512, 512},                                                    // square
      {1, 512, 784},   {1, 512, 512},   {1, 10, 512},   {1, 4096, 1024},  // MLP, batch 1; GEMV
      {64, 512, 784},  {64, 512, 512},  {64, 10, 512},                    // MLP, batch 64
      {64, 256, 256},  {64, 1024, 256}, {64, 256, 1024},                  // transformer, seq 64
      {128, 256, 256}, {128, 1024, 256}, {128, 256, 1024},                // transformer, seq 128
  };
  for (int threads : {1, 2}) {
    for (const auto& s : list) {
      std::vector<benchmark::internal::Benchmark*> runs;
      for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kPortable})
        if (cpu_runs(isa))
          runs.push_back(benchmark::RegisterBenchmark(
              (std::string("BM_Packed/") + isa_name(isa)).c_str(), BM_Packed, isa));
      runs.push_back(benchmark::RegisterBenchmark("BM_Blas", BM_Blas));
      runs.push_back(benchmark::RegisterBenchmark("BM_BlasMany", BM_BlasMany));
      for (auto* b : runs) {
        b->Args({s[0], s[1], s[2], threads});
        b->ArgNames({"m", "n", "k", "t"});
        if (threads > 1) b->UseRealTime();
      }
    }
    // The FFN's first layer (transformer, seq 64 and 128) with each epilogue, interleaved.
    for (const int64_t m : {64, 128}) {
      const struct {
        GemmAct act;
        const char* name;
      } acts[] = {{GemmAct::kNone, "none"},      {GemmAct::kRelu, "relu"},
                  {GemmAct::kGelu, "gelu"},      {GemmAct::kGeluTanh, "gelu_tanh"},
                  {GemmAct::kTanh, "tanh"},      {GemmAct::kSigmoid, "sigmoid"}};
      std::vector<benchmark::internal::Benchmark*> runs;
      for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kPortable})
        if (cpu_runs(isa))
          for (const auto& a : acts)
            runs.push_back(benchmark::RegisterBenchmark(
                (std::string("BM_Epilogue/") + isa_name(isa) + "/" + a.name).c_str(), BM_Epilogue,
                isa, a.act));
      for (auto* b : runs) {
        b->Args({m, 1024, 256, threads});
        b->ArgNames({"m", "n", "k", "t"});
        // Two threads: wall time (the other OpenMP thread's work is not in the main thread's CPU
        // time). One thread: its CPU time, which leaves out the time the thread spent preempted,
        // so figures taken while other processes load the machine still mean throughput.
        if (threads > 1) b->UseRealTime();
      }
    }
  }
}

}  // namespace
}  // namespace fusebox::cpu

int main(int argc, char** argv) {
  fusebox::cpu::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
