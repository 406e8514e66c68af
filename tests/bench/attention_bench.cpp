// The fused Attention kernel against the three kernels it replaces (MatMul Q K^T with the scale
// as alpha, Softmax, MatMul P V: what runs with fuse_patterns off), on the CPU backend, for the
// workbench's head shapes [heads, S, 64] at 1 and 2 threads.
//
//   build/tests/bench/fusebox_bench_attention --benchmark_min_time=0.5
// Reports GFLOPs (the Attention schema's FLOPs per call) per run.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/ir/op_schema.h"
#include "core/ir/tensor.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox::cpu {
namespace {

exec::Backend& backend() {
  static std::unique_ptr<exec::Backend> b = make_backend();
  return *b;
}

// One node prepared once, with its own outputs and scratch, run on demand.
class Prepared {
 public:
  Prepared(const std::string& op, std::vector<const ir::Tensor*> inputs, ir::Attributes attrs) {
    node_.name = op;
    node_.op = op;
    node_.attrs = std::move(attrs);
    std::vector<ir::TensorType> in_types;
    for (size_t i = 0; i < inputs.size(); ++i) {
      node_.inputs.push_back("in" + std::to_string(i));
      in_types.push_back({inputs[i]->dtype(), inputs[i]->shape()});
      in_.push_back(inputs[i]->bytes());
    }
    node_.outputs = {"out"};
    const std::vector<ir::TensorType> out_types = ir::infer_node(node_, in_types);
    out_ = ir::Tensor(out_types[0].dtype, out_types[0].shape);
    const size_t scratch = ir::node_scratch_bytes(node_, in_types, out_types);
    scratch_ = ir::Tensor(ir::DType::f32, {static_cast<int64_t>(scratch / 4 + 1)});
    kernel_ = backend().kernels().find(op);
    state_ = kernel_->prepare(exec::KernelContext{node_, in_types, out_types, scratch});
    out_ptr_ = out_.bytes();
    scratch_ptr_ = scratch_.bytes();
    flops_ = ir::node_cost(node_, in_types, out_types).flops;
  }
  void run() const {
    kernel_->run(exec::KernelArgs{in_.data(), &out_ptr_, scratch_ptr_, state_.get()});
  }
  const ir::Tensor& output() const { return out_; }
  double flops() const { return flops_; }

 private:
  ir::Node node_;
  std::vector<const void*> in_;
  ir::Tensor out_, scratch_;
  void* out_ptr_ = nullptr;
  void* scratch_ptr_ = nullptr;
  const exec::KernelDef* kernel_ = nullptr;
  std::shared_ptr<const void> state_;
  double flops_ = 0;
};

ir::Tensor random_tensor(const ir::Shape& shape, uint32_t seed) {
  ir::Tensor t(ir::DType::f32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

struct Heads {
  ir::Tensor q, k, v;
  explicit Heads(benchmark::State& state) {
    const ir::Shape s = {state.range(1), state.range(0), 64};
    q = random_tensor(s, 1);
    k = random_tensor(s, 2);
    v = random_tensor(s, 3);
    backend().bind_threads(static_cast<int>(state.range(2)));
  }
};

void report(benchmark::State& state, double flops) {
  state.counters["GFLOPs"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

// Args: S, heads, threads.
void BM_AttentionFused(benchmark::State& state) {
  Heads h(state);
  Prepared attn("Attention", {&h.q, &h.k, &h.v}, [] {
    ir::Attributes a;
    a.set("scale", 0.125);
    return a;
  }());
  for (auto _ : state) attn.run();
  report(state, attn.flops());
}

void BM_AttentionUnfused(benchmark::State& state) {
  Heads h(state);
  ir::Attributes qk;
  qk.set("transB", int64_t{1});
  qk.set("alpha", 0.125);
  Prepared scores("MatMul", {&h.q, &h.k}, qk);
  Prepared softmax("Softmax", {&scores.output()}, {});
  Prepared pv("MatMul", {&softmax.output(), &h.v}, {});
  Prepared fused("Attention", {&h.q, &h.k, &h.v}, {});  // for the FLOP count only
  for (auto _ : state) {
    scores.run();
    softmax.run();
    pv.run();
  }
  report(state, fused.flops());
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (int64_t s : {64, 128, 512}) b->Args({s, 4, threads});
  b->ArgNames({"S", "heads", "t"});
  b->UseRealTime();
}

BENCHMARK(BM_AttentionFused)->Apply(shapes);
BENCHMARK(BM_AttentionUnfused)->Apply(shapes);

}  // namespace
}  // namespace fusebox::cpu

BENCHMARK_MAIN();
