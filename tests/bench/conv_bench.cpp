// The CPU convolution kernels on ResNet and MobileNet layers, batch 1, each channels-first (Conv:
// im2col tiles into the packed GEMM, then a transpose into NCHW) and channels-last (NhwcConv, what
// the channels_last pass makes: the packed GEMM writing the output directly; a depthwise conv over
// contiguous channels): 3x3, 1x1 and depthwise at 56x56, ResNet-18's stem and deeper 3x3 layers,
// MobileNetV3-Small's stem, three of its depthwise layers (strides 1 and 2, 3x3 and 5x5) and a
// pointwise expansion. Each 3x3 stride-1 layer also as Winograd F(2x2, 3x3) ("wino", the winograd
// pass's mark). Then the dense GEMMs of two of them, A streamed row-major. Prints each one's
// GFLOP/s (the schema's FLOPs: a Winograd row counts the arithmetic it does, 2.25x fewer
// multiplies, so compare the layers' times) as the median of interleaved rounds, so a load that comes and
// goes hits them all alike. Compare with the FMA peak `fusebox machine` reports for the same ISA
// and thread count.
//
//   build/tests/bench/fusebox_bench_conv [--rounds 30] [--threads 1] [--isa avx2]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/ir/conv_params.h"
#include "core/ir/op_schema.h"
#include "core/ir/tensor.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/isa.h"
#include "ops/cpu/packed_gemm.h"
#include "ops/cpu/parallel.h"

namespace fusebox::cpu {
namespace {

// One Conv node prepared once (weight as a constant, as in a compiled plan), run on demand.
struct Layer {
  std::string name;
  ir::Node node;
  std::vector<ir::Tensor> inputs;
  std::vector<const void*> in_ptrs;
  ir::Tensor out, scratch;
  void* out_ptr = nullptr;
  std::shared_ptr<const void> state;
  const exec::KernelDef* kernel = nullptr;
  double flops = 0;
  std::vector<double> seconds;

  // op "NhwcConv": the same layer channels-last (x given channels-first, stored [N, H, W, C]);
  // winograd: with the winograd pass's mark (Winograd F(2x2, 3x3)).
  Layer(exec::Backend& backend, const exec::CompileOptions& options, const std::string& op, std::string n, ir::Shape x,
        ir::Shape w, int64_t group, int64_t pad, int64_t stride = 1, bool winograd = false)
      : name(std::move(n)) {
    if (op == "NhwcConv") x = ir::channels_last(x);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (const ir::Shape& s : {x, w, ir::Shape{w[0]}}) {
      inputs.emplace_back(ir::DType::f32, s);
      for (int64_t i = 0; i < inputs.back().numel(); ++i) inputs.back().data<float>()[i] = dist(rng);
    }
    node.name = node.op = op;
    node.inputs = {"x", "w", "b"};
    node.outputs = {"y"};
    node.attrs.set("group", group);
    node.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
    node.attrs.set("strides", std::vector<int64_t>{stride, stride});
    if (winograd) node.attrs.set("winograd", int64_t{1});
    std::vector<ir::TensorType> in_types;
    for (const auto& t : inputs) {
      in_types.push_back({t.dtype(), t.shape()});
      in_ptrs.push_back(t.bytes());
    }
    const auto out_types = ir::infer_node(node, in_types);
    out = ir::Tensor(ir::DType::f32, out_types[0].shape);
    out_ptr = out.bytes();
    std::vector<const ir::Tensor*> constants{nullptr, &inputs[1], &inputs[2]};
    const size_t scratch_bytes = backend.scratch_bytes(exec::KernelContext{node, in_types, out_types, 0, &constants});
    scratch = ir::Tensor(ir::DType::f32, {static_cast<int64_t>(scratch_bytes / 4 + 16)});
    kernel = backend.kernels().find(op);
    state = kernel->prepare(
        exec::KernelContext{node, in_types, out_types, scratch_bytes, &constants, backend.context(), &options});
    flops = ir::node_cost(node, in_types, out_types).flops;
  }
  void run() {
    const auto t0 = std::chrono::steady_clock::now();
    kernel->run(exec::KernelArgs{in_ptrs.data(), &out_ptr, scratch.bytes(), state.get()});
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
};

// The GEMM a conv amounts to (M = output positions, K = C_in * kernel, N = C_out) on packed_sgemm
// with a dense row-major A: the conv's ceiling without im2col and the transpose into NCHW.
struct Gemm {
  std::string name;
  int64_t m, k, n;
  std::vector<float> a, c;
  PackedB b;
  std::vector<double> seconds;
  Gemm(Isa isa, std::string nm, int64_t m_, int64_t k_, int64_t n_) : name(std::move(nm)), m(m_), k(k_), n(n_) {
    std::mt19937 rng(2);
    std::uniform_real_distribution<float> dist(-1, 1);
    a.resize(static_cast<size_t>(m * k));
    for (auto& v : a) v = dist(rng);
    std::vector<float> w(static_cast<size_t>(k * n));
    for (auto& v : w) v = dist(rng);
    c.resize(static_cast<size_t>(m * n));
    b = PackedB::pack(isa, w.data(), k, n, false);
  }
  double flops() const { return 2.0 * static_cast<double>(m * k * n); }
  void run() {
    const auto t0 = std::chrono::steady_clock::now();
    packed_sgemm(m, 1.0f, a.data(), k, false, b, 0.0f, c.data(), n);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
};

int main_(int argc, char** argv) {
  int rounds = 30, threads = 1;
  std::string isa = "auto";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--isa")) isa = argv[i + 1];
  }
  auto backend = make_backend();
  const exec::CompileOptions options = backend->resolve(exec::CompileOptions{isa});
  backend->bind_threads(threads);
  // Each layer channels-first (Conv) and channels-last (NhwcConv, the channels_last pass's), in turn.
  struct Spec {
    const char* name;
    ir::Shape x, w;
    int64_t group, pad, stride;
  };
  const Spec specs[] = {
      {"3x3 64->64 56x56", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1},
      {"1x1 64->64 56x56", {1, 64, 56, 56}, {64, 64, 1, 1}, 1, 0, 1},
      {"3x3 depthwise 64 56x56", {1, 64, 56, 56}, {64, 1, 3, 3}, 64, 1, 1},
      // ResNet-18's stem and its deeper 3x3 layers.
      {"stem 7x7/2 3->64 224", {1, 3, 224, 224}, {64, 3, 7, 7}, 1, 3, 2},
      {"3x3 128->128 28x28", {1, 128, 28, 28}, {128, 128, 3, 3}, 1, 1, 1},
      {"3x3 256->256 14x14", {1, 256, 14, 14}, {256, 256, 3, 3}, 1, 1, 1},
      {"3x3 512->512 7x7", {1, 512, 7, 7}, {512, 512, 3, 3}, 1, 1, 1},
      // MobileNetV3-Small's: the stem, a stride-2 3x3 and 5x5 depthwise, a 5x5 one at 14x14, a
      // pointwise expansion.
      {"stem 3x3/2 3->16 224", {1, 3, 224, 224}, {16, 3, 3, 3}, 1, 1, 2},
      {"dw 3x3/2 16 112", {1, 16, 112, 112}, {16, 1, 3, 3}, 16, 1, 2},
      {"dw 5x5/2 96 28", {1, 96, 28, 28}, {96, 1, 5, 5}, 96, 2, 2},
      {"dw 5x5 240 14", {1, 240, 14, 14}, {240, 1, 5, 5}, 240, 2, 1},
      {"1x1 40->240 14x14", {1, 40, 14, 14}, {240, 40, 1, 1}, 1, 0, 1},
  };
  std::vector<Layer> layers;
  for (const Spec& sp : specs) {
    for (const char* op : {"Conv", "NhwcConv"})
      layers.emplace_back(*backend, options, op, std::string(sp.name) + (op[0] == 'N' ? " nhwc" : " nchw"), sp.x, sp.w,
                          sp.group, sp.pad, sp.stride);
    if (sp.group == 1 && sp.stride == 1 && sp.w[2] == 3)  // what the winograd pass marks
      layers.emplace_back(*backend, options, "NhwcConv", std::string(sp.name) + " wino", sp.x, sp.w, sp.group, sp.pad,
                          sp.stride, true);
  }
  const Isa level = parse_isa(options.isa);
  std::vector<Gemm> gemms;
  gemms.emplace_back(level, "GEMM 3136x576x64 (3x3)", 3136, 576, 64);
  gemms.emplace_back(level, "GEMM 3136x64x64 (1x1)", 3136, 64, 64);
  for (auto& l : layers) l.run();  // warm-up: caches, thread pool
  for (auto& g : gemms) g.run();
  for (auto& l : layers) l.seconds.clear();
  for (auto& g : gemms) g.seconds.clear();
  for (int r = 0; r < rounds; ++r) {
    for (auto& l : layers)
      for (int rep = 0; rep < 5; ++rep) l.run();
    for (auto& g : gemms)
      for (int rep = 0; rep < 5; ++rep) g.run();
  }
  std::printf("Conv on %s, %d thread(s), %d interleaved rounds of 5 runs each (median):\n", options.isa.c_str(),
              threads, rounds);
  for (auto& l : layers) {
    std::sort(l.seconds.begin(), l.seconds.end());
    const double s = l.seconds[l.seconds.size() / 2];
    std::printf("  %-29s %8.1f us  %7.1f GFLOP/s\n", l.name.c_str(), s * 1e6, l.flops / s * 1e-9);
  }
  for (auto& g : gemms) {
    std::sort(g.seconds.begin(), g.seconds.end());
    const double s = g.seconds[g.seconds.size() / 2];
    std::printf("  %-29s %8.1f us  %7.1f GFLOP/s\n", g.name.c_str(), s * 1e6, g.flops() / s * 1e-9);
  }
  // Teams that stepped down to one thread (parallel.h's contention detection) ran these rounds
  // on one core: say so, or a 2-thread figure reads as a scaling failure.
  const ContentionStats cs = contention_stats();
  std::printf("contention windows %lld, step-downs %lld\n", static_cast<long long>(cs.windows),
              static_cast<long long>(cs.step_downs));
  return 0;
}

}  // namespace
}  // namespace fusebox::cpu

int main(int argc, char** argv) { return fusebox::cpu::main_(argc, argv); }
