// Dispatch overhead per op, per executor: a chain of N tiny element-wise ops (16 floats each,
// passes off so nothing fuses), timed at N = 1 and N = 1000. The difference divided by 999 is
// what each extra op costs beyond its kernel's own work... plus that work, which for 16 floats
// is a few nanoseconds: the `kernel_ns` counter measures it by calling the kernel directly.
//
//   build/tests/bench/fusebox_bench_dispatch --benchmark_repetitions=5
// Reports ns_per_op (extra op cost including its tiny kernel) for eager, interpreted, compiled.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <vector>

#include "core/backend/evaluate.h"
#include "core/exec/session.h"
#include "core/ir/graph.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox {
namespace {

ir::Graph chain(int n) {
  ir::Graph g;
  g.name = "chain" + std::to_string(n);
  g.add_input("x", ir::DType::f32, {16});
  std::string t = "x";
  for (int i = 0; i < n; ++i) t = g.add_node(i % 2 ? "Relu" : "Neg", {t});
  g.outputs = {t};
  return g;
}

double seconds_per_call(exec::Session& s, int calls) {
  std::vector<float> in(16, 0.5f), out(16);
  const void* ip = in.data();
  void* op = out.data();
  for (int i = 0; i < 10; ++i) s.run_raw(&ip, &op);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) s.run_raw(&ip, &op);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count() / calls;
}

void BM_Dispatch(benchmark::State& state, const char* executor) {
  cpu::register_backend();
  exec::SessionOptions opt;
  opt.executor = executor;
  opt.passes = "none";
  exec::Session one(chain(1), opt);
  exec::Session many(chain(1000), opt);
  double per_op = 0;
  int rounds = 0;
  for (auto _ : state) {
    // Interleave the short and the long chain so drift hits both alike.
    double t1 = seconds_per_call(one, 200);
    double tn = seconds_per_call(many, 20);
    per_op += (tn - t1) / 999.0;
    ++rounds;
  }
  state.counters["ns_per_op"] = per_op / rounds * 1e9;
}

// The kernel's own work for one 16-float op, called directly (no executor at all).
void BM_KernelAlone(benchmark::State& state) {
  auto backend = cpu::make_backend();
  ir::Graph g = chain(1);
  const ir::Node& node = g.nodes[0];
  std::vector<ir::TensorType> types{{ir::DType::f32, {16}}};
  const exec::KernelDef* k = backend->kernels().find(node.op);
  exec::KernelContext ctx{node, types, types, 0};
  auto st = k->prepare ? k->prepare(ctx) : nullptr;
  std::vector<float> in(16, 0.5f), out(16);
  const void* ip = in.data();
  void* op = out.data();
  exec::KernelArgs args{&ip, &op, nullptr, st.get()};
  for (auto _ : state) {
    k->run(args);
    benchmark::DoNotOptimize(out.data());
  }
}

BENCHMARK_CAPTURE(BM_Dispatch, eager, "eager")->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(BM_Dispatch, interpreted, "interpreted")->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(BM_Dispatch, compiled, "compiled")->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_KernelAlone);

}  // namespace
}  // namespace fusebox

BENCHMARK_MAIN();
