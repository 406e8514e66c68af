#include <gtest/gtest.h>

#include "core/base/machine.h"
#include "core/ir/conv_params.h"
#include "core/models/builtin_models.h"
#include "profiler/analysis.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {

Roofline test_roof() {
  Roofline r;
  r.gemm_gflops = {{1, 100.0}, {2, 190.0}};
  r.bandwidth_gbs = 20.0;        // balance 5 FLOP/B at 1 thread
  r.dispatch_floor_ns = 50.0;
  r.hardware_threads = 2;
  return r;
}

// A synthetic recording: `runs` runs of the given ops (op type, flops, bytes, duration ns),
// with a gap of `gap` ns between ops and `edge` ns at each end of a run.
Recording synth(const std::vector<std::tuple<std::string, double, double, int64_t>>& ops, int runs, int64_t gap,
                int64_t edge, const std::string& name_prefix = "n") {
  Recording r;
  r.model = "synthetic";
  r.pid = 1;
  r.main_tid = 1;
  r.threads = 1;
  for (size_t i = 0; i < ops.size(); ++i) {
    NodeInfo n;
    n.name = name_prefix + std::to_string(i);
    n.op = std::get<0>(ops[i]);
    n.flops = std::get<1>(ops[i]);
    n.bytes = std::get<2>(ops[i]);
    n.output_shapes = {{1, 8}};
    r.nodes.push_back(n);
  }
  r.node_count = r.nodes.size();
  int64_t t = 1000;
  for (int run = 0; run < runs; ++run) {
    Span rs{.name = run_range_name(run),
            .start_ns = t,
            .end_ns = 0,
            .run = run,
            .tid = 1,
            .node = -1,
            .depth = 0,
            .kind = SpanKind::Run};
    size_t run_idx = r.spans.size();
    r.spans.push_back(rs);
    t += edge;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (i) t += gap;
      int64_t d = std::get<3>(ops[i]) + (run % 3);  // a little noise
      r.spans.push_back({.name = op_range_name(r.nodes[i].op, i, r.nodes[i].name),
                         .start_ns = t,
                         .end_ns = t + d,
                         .run = run,
                         .tid = 1,
                         .node = static_cast<int32_t>(i),
                         .depth = 1,
                         .kind = SpanKind::Op});
      t += d;
    }
    t += edge;
    r.spans[run_idx].end_ns = t;
    t += 100;
  }
  return r;
}

}  // namespace

TEST(Analysis, ClassifiesComputeMemoryAndOverhead) {
  // MatMul 64x784x512: 51 MFLOP over 1.9 MB (AI 26 > balance 5) in 1 ms: compute-bound.
  // Add over 64K floats: 64 KFLOP over 768 KB (AI 0.08) in 50 us: memory-bound.
  // Relu of 8 floats in 80 ns: within 4x of the 50 ns floor: overhead-bound.
  Recording r = synth({{"MatMul", 51.4e6, 1.97e6, 1000000}, {"Add", 65536, 786432, 50000}, {"Relu", 8, 64, 80}}, 10, 200, 500);
  Analysis a = analyze(r, test_roof());
  std::map<std::string, const OpRow*> by;
  for (const OpRow& row : a.by_type) by[row.op] = &row;
  ASSERT_EQ(by.size(), 3u);
  EXPECT_EQ(by["MatMul"]->bound, Bound::Compute) << by["MatMul"]->why;
  EXPECT_EQ(by["Add"]->bound, Bound::Memory) << by["Add"]->why;
  EXPECT_EQ(by["Relu"]->bound, Bound::Overhead) << by["Relu"]->why;
  EXPECT_NEAR(by["MatMul"]->gflops, 51.4, 0.1);
  EXPECT_NEAR(by["MatMul"]->efficiency, 0.514, 0.01);
  EXPECT_NE(by["MatMul"]->why.find("balance 5.00"), std::string::npos) << by["MatMul"]->why;
  EXPECT_NE(by["Relu"]->why.find("dispatch floor"), std::string::npos);
  // Stats over 10 runs.
  EXPECT_EQ(by["Add"]->stats.count, 10);
  EXPECT_EQ(by["Add"]->stats.min_ns, 50000);
  EXPECT_EQ(by["Add"]->stats.median_ns, 50001);
  EXPECT_EQ(a.by_node.size(), 3u);
  EXPECT_EQ(a.by_node.front().op, "MatMul");
  // Breakdown: 2 gaps of 200 ns and two 500 ns edges per run.
  EXPECT_EQ(a.breakdown.runs, 10);
  EXPECT_EQ(a.breakdown.gap_ns, 400);
  EXPECT_EQ(a.breakdown.edge_ns, 1000);
  EXPECT_NEAR(a.breakdown.kernel_fraction() + a.breakdown.gap_fraction() + a.breakdown.edge_fraction(), 1.0, 1e-9);
  std::string text = a.to_text();
  EXPECT_NE(text.find("compute-bound"), std::string::npos);
  EXPECT_NE(text.find("between kernels"), std::string::npos);
}

TEST(Analysis, MoreThreadsRaiseTheBalancePoint) {
  OpRow row;
  row.flops = 6e6;
  row.bytes = 1e6;  // AI 6
  classify(row, 100000, test_roof(), 1);
  EXPECT_EQ(row.bound, Bound::Compute);
  classify(row, 100000, test_roof(), 2);  // balance 9.5
  EXPECT_EQ(row.bound, Bound::Memory);
}

// At --threads 2 an op that forked no parallel region ran on one thread: its roofs are one
// thread's (issue 35: SkipLayerNorm was shown "DRAM-bound 83%" against two threads' DRAM).
// Worker spans on two threads for the MatMul, none for the Add.
TEST(Analysis, AnOpIsJudgedAtTheThreadsItsKernelRanOn) {
  Recording r = synth({{"MatMul", 6e6, 1e6, 65000}, {"Add", 6e6, 1e6, 65000}}, 4, 200, 500);
  r.threads = 2;
  EXPECT_TRUE(threads_by_node(r).empty()) << "no Worker spans: nothing says";
  EXPECT_EQ(analyze(r, test_roof()).by_node.front().threads, 2) << "then the run's thread count stands";
  const std::vector<Span> ops = r.spans;
  for (const Span& s : ops)
    if (s.kind == SpanKind::Op && s.node == 0)
      for (int32_t tid : {1, 2})
        r.spans.push_back({.name = "w",
                           .start_ns = s.start_ns,
                           .end_ns = s.end_ns,
                           .run = s.run,
                           .tid = tid,
                           .node = 0,
                           .depth = tid == 1 ? 2 : 0,
                           .kind = SpanKind::Worker});
  EXPECT_EQ(threads_by_node(r), (std::map<int32_t, int>{{0, 2}, {1, 1}}));
  const Analysis a = analyze(r, test_roof());
  std::map<std::string, const OpRow*> by;
  for (const OpRow& row : a.by_type) by[row.op] = &row;
  EXPECT_EQ(by["MatMul"]->threads, 2);
  EXPECT_EQ(by["Add"]->threads, 1);
  // The same op at the same time, at 1 and 2 threads' roofs (test_roof: balance 5 at one thread,
  // 9.5 at two): AI 6 at 92 GFLOP/s and 15 GB/s is compute-bound at one thread (92% of 100),
  // memory-bound at two (77% of 20 GB/s, 49% of 190 GFLOP/s).
  EXPECT_EQ(by["Add"]->bound, Bound::Compute) << by["Add"]->why;
  EXPECT_EQ(by["MatMul"]->bound, Bound::Memory) << by["MatMul"]->why;
  EXPECT_NE(by["Add"]->why.find("roofs at 1 thread: its kernel ran on 1 of the run's 2"), std::string::npos) << by["Add"]->why;
  EXPECT_EQ(by["MatMul"]->why.find("roofs at"), std::string::npos) << by["MatMul"]->why;
}

// An op's place against both roofs, and the below-roofs class (analysis.h). The test roof: 100
// GFLOP/s, 20 GB/s, balance 5 FLOP/B, dispatch floor 50 ns.
// The GEMM of MLP batch 64 (64x784x512: 51.4 MFLOP over 1.97 MB, AI 26): at 80% of the compute
// roof it is compute-bound and says so in both figures.
TEST(Classify, AGemmAt80PercentOfTheComputeRoofIsComputeBoundWithItsPercent) {
  OpRow row;
  row.op = "MatMul";
  row.flops = 51.4e6;
  row.bytes = 1.97e6;
  classify(row, 51.4e6 / 80.0, test_roof(), 1);  // 80 GFLOP/s
  EXPECT_EQ(row.bound, Bound::Compute) << row.why;
  EXPECT_EQ(row.reason, BelowReason::None);
  EXPECT_NEAR(row.compute_fraction, 0.80, 1e-9);
  EXPECT_NEAR(row.memory_fraction, 1.97e6 / (51.4e6 / 80.0) / 20.0, 1e-9);  // 3.07 GB/s: 15%
  EXPECT_NEAR(row.efficiency, 0.80, 1e-9);
  EXPECT_NE(row.why.find("80% of the compute roof"), std::string::npos) << row.why;
  EXPECT_NE(row.why.find("15% of the memory roof"), std::string::npos) << row.why;
  EXPECT_EQ(row.label(), "compute-bound");
}

// The FusedBiasGelu: the same GEMM with a tanh-GELU epilogue at 22 GFLOP/s. Its intensity
// is right of the balance point, so intensity alone called it compute-bound; at 22% of the compute
// roof and 4% of the memory roof it is below both, and its epilogue's tanh is the known reason.
TEST(Classify, ASlowGemmWithATanhEpilogueIsBelowBothRoofsForItsTranscendentalMath) {
  ir::Node n;
  n.op = "FusedBiasGelu";
  n.attrs.set("approximate", std::string("tanh"));
  OpRow row;
  row.op = n.op;
  row.flops = 51.4e6;
  row.bytes = 1.97e6;
  row.math = transcendental_math(n);
  ASSERT_EQ(row.math, std::vector<std::string>{"tanh"});
  classify(row, 51.4e6 / 22.0, test_roof(), 1);
  EXPECT_EQ(row.bound, Bound::BelowRoofs) << row.why;
  EXPECT_EQ(row.reason, BelowReason::Transcendental) << row.why;
  EXPECT_NEAR(row.compute_fraction, 0.22, 1e-9);
  EXPECT_LT(row.memory_fraction, 0.05);
  EXPECT_NE(row.why.find("22% of the compute roof"), std::string::npos) << row.why;
  EXPECT_NE(row.why.find("tanh"), std::string::npos) << row.why;
  EXPECT_EQ(row.label(), "below-roofs: transcendental (tanh)");
  // The same shortfall with a Relu epilogue: below both roofs, and no cause the op names.
  OpRow relu = row;
  relu.op = "FusedBiasRelu";
  relu.math = {};
  classify(relu, 51.4e6 / 22.0, test_roof(), 1);
  EXPECT_EQ(relu.bound, Bound::BelowRoofs);
  EXPECT_EQ(relu.reason, BelowReason::Unexplained) << relu.why;
  // Over half the roof is not below it.
  classify(relu, 51.4e6 / 55.0, test_roof(), 1);
  EXPECT_EQ(relu.bound, Bound::Compute) << relu.why;
}

// Element-wise Tanh over 64K floats (512 KB read + written) at 1 GB/s: 5% of the memory roof.
// Intensity alone called it memory-bound; it is below both roofs, for its tanh.
TEST(Classify, ASlowElementwiseTanhIsBelowBothRoofs) {
  ir::Node n;
  n.op = "Tanh";
  OpRow row;
  row.op = n.op;
  row.flops = 65536;
  row.bytes = 524288;
  row.math = transcendental_math(n);
  classify(row, 524288.0 / 1.0, test_roof(), 1);  // bytes / (1 byte per ns)
  EXPECT_EQ(row.bound, Bound::BelowRoofs) << row.why;
  EXPECT_EQ(row.reason, BelowReason::Transcendental);
  EXPECT_NEAR(row.memory_fraction, 0.05, 1e-9);
  EXPECT_NE(row.why.find("5% of the memory roof"), std::string::npos) << row.why;
  // At 15 GB/s (75%) the same op is memory-bound: the tanh is not a verdict by itself.
  classify(row, 524288.0 / 15.0, test_roof(), 1);
  EXPECT_EQ(row.bound, Bound::Memory) << row.why;
  EXPECT_EQ(row.reason, BelowReason::None);
}

// A small Add far below both roofs, 10x the dispatch floor: its reason is latency. Under 4x the
// floor it is overhead-bound as before.
TEST(Classify, ASmallSlowOpNearTheDispatchFloorIsBelowTheRoofsForLatency) {
  OpRow row;
  row.op = "Add";
  row.flops = 256;
  row.bytes = 3072;
  classify(row, 500, test_roof(), 1);  // 6 GB/s: 31% of the memory roof, 10x the floor
  EXPECT_EQ(row.bound, Bound::BelowRoofs) << row.why;
  EXPECT_EQ(row.reason, BelowReason::Latency) << row.why;
  EXPECT_EQ(row.label(), "below-roofs: latency");
  classify(row, 150, test_roof(), 1);
  EXPECT_EQ(row.bound, Bound::Overhead) << row.why;
  // On the portable ISA level the scalar kernels are a reason too.
  Roofline portable = test_roof();
  portable.isa = "portable";
  classify(row, 500, portable, 1);
  EXPECT_EQ(row.reasons, (std::vector<BelowReason>{BelowReason::Latency, BelowReason::Vectorisation}));
}

// Which ops compute transcendental functions, from the op type and its attributes.
TEST(Classify, TranscendentalMathComesFromTheOpTypeAndItsEpilogueAttributes) {
  auto math = [](const std::string& op, std::vector<std::pair<std::string, ir::AttrValue>> attrs = {},
                 std::vector<std::string> inputs = {"x"}) {
    ir::Node n;
    n.op = op;
    n.inputs = std::move(inputs);
    for (auto& [k, v] : attrs) n.attrs.set(k, v);
    return transcendental_math(n);
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(math("FusedBiasGelu"), V{"erf"});
  EXPECT_EQ(math("FusedBiasGelu", {{"approximate", std::string("tanh")}}), V{"tanh"});
  EXPECT_EQ(math("Gelu", {{"approximate", std::string("none")}}), V{"erf"});
  EXPECT_EQ(math("FusedBiasSigmoid"), V{"sigmoid"});
  EXPECT_EQ(math("Softmax"), V{"exp"});
  EXPECT_EQ(math("Attention"), V{"exp"});
  EXPECT_EQ(math("MatMul"), V{});
  EXPECT_EQ(math("FusedBiasRelu"), V{});
  EXPECT_EQ(math("Add"), V{});
  EXPECT_EQ(math("FusedElementwise",
                 {{"program", std::vector<std::string>{"Div i0 i1", "Erf r0", "Add r1 i2", "Tanh r2",
                                                       "Exp r3", "Erf r4"}}},
                 {"a", "b", "c"}),
            (V{"erf", "tanh", "exp"}));
  EXPECT_EQ(math("FusedElementwise", {{"program", std::vector<std::string>{"Add i0 i1", "Relu r0"}}},
                 {"a", "b"}),
            V{});
  EXPECT_EQ(math("FusedElementwise", {{"program", std::vector<std::string>{"Bogus i0"}}}), V{});
  // What a math table kept beside the schemas had left out (the ops' own records say it now).
  EXPECT_EQ(math("LogSoftmax"), (V{"exp", "log"}));
  EXPECT_EQ(math("Softplus"), (V{"exp", "log"}));
  EXPECT_EQ(math("Elu"), V{"exp"});
  EXPECT_EQ(math("Log"), V{"log"});
  EXPECT_EQ(math("Cos"), V{"cos"});
  EXPECT_EQ(math("Conv", {{"activation", std::string("sigmoid")}}), V{"sigmoid"});
  EXPECT_EQ(math(ir::channels_last_op("Conv"), {{"activation", std::string("sigmoid")}}), V{"sigmoid"});
  EXPECT_EQ(math("Conv", {{"activation", std::string("relu")}}), V{});
  EXPECT_EQ(math("Conv"), V{});
  EXPECT_EQ(math("LSTM"), (V{"sigmoid", "tanh"}));
  EXPECT_EQ(math("NoSuchOp"), V{});
}

// Through a real recording: the transformer's FFN GELU (erf) carries its math into the analysis,
// and every row has both fractions consistent with its rates, in the text and the JSON.
TEST(Analysis, ARecordedModelCarriesItsMathAndBothRoofFractions) {
  Recording r = ptest::record("transformer:seq=16,d=32,heads=2,ffn=64", "all", 3);
  bool gelu = false;
  for (const NodeInfo& n : r.nodes) {
    if (n.op == "FusedBiasGelu") {
      gelu = true;
      EXPECT_EQ(n.math, std::vector<std::string>{"erf"}) << n.name;
    }
    if (n.op == "MatMul" || n.op == "MatMulAdd") {
      EXPECT_TRUE(n.math.empty()) << n.name;
    }
  }
  ASSERT_TRUE(gelu) << "the transformer's FFN fuses into FusedBiasGelu";
  const Recording back = Recording::from_json(r.to_json());  // saved recordings keep it
  ASSERT_EQ(back.nodes.size(), r.nodes.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) EXPECT_EQ(back.nodes[i].math, r.nodes[i].math);
  const Analysis a = analyze(r, test_roof());
  for (const OpRow& row : a.by_node) {
    // test_roof has no FMA peak and no levels: the GEMM roof and the one "memory" level, or none.
    if (row.gflops <= 100.0) {
      EXPECT_EQ(row.compute_roof, "GEMM") << row.key;
      EXPECT_NEAR(row.compute_fraction, row.gflops / 100.0, 1e-9) << row.key;
    } else {
      EXPECT_EQ(row.compute_roof, "") << row.key;
      EXPECT_EQ(row.compute_fraction, 0) << row.key;
    }
    if (row.gbs <= 20.0) {
      EXPECT_EQ(row.memory_level, "memory") << row.key;
      EXPECT_NEAR(row.memory_fraction, row.gbs / 20.0, 1e-9) << row.key;
    } else {
      EXPECT_EQ(row.memory_level, "") << row.key;
      EXPECT_EQ(row.memory_fraction, 0) << row.key;
      EXPECT_EQ(row.bound, Bound::Memory) << row.key << ": faster than every roof its bytes allow";
    }
    if (row.bound == Bound::BelowRoofs) {
      EXPECT_LT(row.efficiency, 0.5) << row.key;
      EXPECT_NE(row.reason, BelowReason::None) << row.key;
    }
    // At or over half the roof at its intensity, where both roofs fit (analysis.h).
    if ((row.bound == Bound::Compute || row.bound == Bound::Memory) && !row.compute_roof.empty() &&
        !row.memory_level.empty()) {
      EXPECT_GE(row.efficiency, 0.5) << row.key;
    }
  }
  const nlohmann::json j = a.to_json();
  ASSERT_FALSE(j.at("by_node").empty());
  EXPECT_TRUE(j.at("by_node")[0].contains("compute_fraction"));
  EXPECT_TRUE(j.at("by_node")[0].contains("memory_fraction"));
  EXPECT_TRUE(j.at("by_node")[0].contains("reason"));
  EXPECT_NE(a.to_text().find("%comp"), std::string::npos);
}

TEST(Analysis, ComparesTwoRecordings) {
  Recording a = synth({{"MatMul", 1e6, 1e5, 10000}, {"Add", 1e3, 1e4, 2000}, {"Relu", 1e3, 1e4, 2000}}, 5, 100, 100);
  Recording b = synth({{"MatMul", 1e6, 1e5, 10000}, {"FusedElementwise", 2e3, 1e4, 2500}}, 5, 100, 100);
  b.nodes[1].name = "fused0";
  b.arena_bytes = 100;
  a.arena_bytes = 300;
  a.label = "passes=none";
  b.label = "passes=all";
  Comparison c = compare(a, b);
  EXPECT_EQ(c.nodes_a, 3u);
  EXPECT_EQ(c.nodes_b, 2u);
  EXPECT_EQ(c.arena_a, 300u);
  EXPECT_EQ(c.new_ops, (std::vector<std::string>{"FusedElementwise.1(fused0)"}));
  EXPECT_EQ(c.vanished_ops, (std::vector<std::string>{"Add.1(n1)", "Relu.2(n2)"}));
  EXPECT_TRUE(c.changed_ops.empty());
  EXPECT_LT(c.run_ns_b, c.run_ns_a);
  std::map<std::string, OpTypeDiff> t;
  for (const auto& d : c.op_types) t[d.op] = d;
  EXPECT_EQ(t["Add"].nodes_a, 1);
  EXPECT_EQ(t["Add"].nodes_b, 0);
  EXPECT_NEAR(t["FusedElementwise"].ns_per_run_b, 2501, 1.5);
  // A changed op: same name, different shapes.
  Recording b2 = a;
  b2.nodes[0].output_shapes = {{2, 8}};
  Comparison c2 = compare(a, b2);
  ASSERT_EQ(c2.changed_ops.size(), 1u);
  EXPECT_EQ(c2.changed_ops[0].name, "n0");
  EXPECT_NE(c.to_text().find("vanished ops"), std::string::npos);
}

TEST(Analysis, RealModelPassesOffVsOn) {
  Recording off = ptest::record("transformer:seq=16,d=32,heads=2,ffn=64", "none", 3);
  Recording on = ptest::record("transformer:seq=16,d=32,heads=2,ffn=64", "all", 3);
  Comparison c = compare(off, on);
  EXPECT_GT(c.nodes_a, c.nodes_b);
  EXPECT_FALSE(c.vanished_ops.empty());
  Analysis a = analyze(off, test_roof());
  EXPECT_FALSE(a.by_type.empty());
  EXPECT_GT(a.breakdown.kernel_ns, 0);
}

// On a GPU the op span only measures launching: the op's time is its kernels' GPU time. A kernel
// belongs to the op span its launch call (the runtime record with its correlation id) was made in.
TEST(Analysis, AnOpOnAGpuIsTimedByItsKernelsNotItsLaunchSpan) {
  Recording r = synth({{"MatMul", 1e6, 1e5, 3000}, {"Add", 1e3, 1e4, 2000}}, 2, 100, 100);
  uint32_t correlation = 1;
  for (const Span& s : r.spans) {
    if (s.kind != SpanKind::Op) continue;
    // Two kernels for MatMul (7 us + 1 us of GPU time), none for Add (it stays span-timed).
    if (s.node != 0) continue;
    for (const int64_t gpu_ns : {7000, 1000}) {
      exec::DeviceActivity launch;
      launch.kind = exec::ActivityKind::Runtime;
      launch.name = "cudaLaunchKernel";
      launch.start_ns = s.start_ns + 10;
      launch.end_ns = s.start_ns + 20;
      launch.correlation_id = correlation;
      exec::DeviceActivity kernel;
      kernel.kind = exec::ActivityKind::Kernel;
      kernel.name = "gemm";
      kernel.start_ns = s.end_ns + 50000;  // the GPU runs it later, for longer than the launch took
      kernel.end_ns = kernel.start_ns + gpu_ns;
      kernel.correlation_id = correlation++;
      kernel.node_index = 0;
      r.device.push_back(launch);
      r.device.push_back(kernel);
    }
  }
  // A kernel whose launch is outside every span of its node (e.g. copied in before the run) and
  // one naming no node change nothing.
  exec::DeviceActivity stray;
  stray.kind = exec::ActivityKind::Kernel;
  stray.start_ns = 0;
  stray.end_ns = 999999;
  stray.node_index = -1;
  r.device.push_back(stray);

  const Analysis a = analyze(r, test_roof());
  std::map<std::string, const OpRow*> by;
  for (const OpRow& row : a.by_type) by[row.op] = &row;
  EXPECT_EQ(by["MatMul"]->stats.median_ns, 8000) << "the two kernels' GPU time, not the 3 us span";
  EXPECT_EQ(by["MatMul"]->stats.count, 2);
  EXPECT_GE(by["Add"]->stats.median_ns, 2000);
  EXPECT_LE(by["Add"]->stats.median_ns, 2001);
  EXPECT_EQ(a.by_type.front().op, "MatMul");

  // The same recording with its device activity dropped is timed by spans again.
  r.device.clear();
  const Analysis spans = analyze(r, test_roof());
  for (const OpRow& row : spans.by_type)
    if (row.op == "MatMul") {
      EXPECT_LE(row.stats.median_ns, 3001);
    }
}

namespace {

// Makes op `op` of run `run` (by position among the runs) `extra_ns` longer, moving everything
// after it, as a run interrupted by another process would look.
void stretch(Recording& r, int run, size_t op, int64_t extra_ns) {
  const Span* target = nullptr;
  size_t seen = 0;
  for (const Span& s : r.spans)
    if (s.kind == SpanKind::Op && s.run == run && seen++ == op) target = &s;
  ASSERT_NE(target, nullptr);
  const int64_t end = target->end_ns;
  for (Span& s : r.spans) {
    if (s.start_ns >= end) s.start_ns += extra_ns;
    if (s.end_ns >= end) s.end_ns += extra_ns;
  }
}

}  // namespace

TEST(Analysis, OpFiguresArePerRunSoAnOutlierRunCannotReorderThem) {
  // MatMul 1 ms then Add 0.8 ms, ten runs; in one run Add is held up for 80 ms. Summed over the
  // runs Add would be 87 ms against MatMul's 10 ms; per run its median stays 0.8 ms.
  Recording r =
      synth({{"MatMul", 51.4e6, 1.97e6, 1000000}, {"Add", 65536, 786432, 800000}}, 10, 200, 500);
  stretch(r, 4, 1, 80000000);
  const Analysis a = analyze(r, test_roof());
  ASSERT_EQ(a.by_type.size(), 2u);
  EXPECT_EQ(a.by_type[0].op, "MatMul");
  EXPECT_EQ(a.by_node[0].op, "MatMul");
  const OpRow& add = a.by_type[1];
  EXPECT_GT(add.stats.total_ns, a.by_type[0].stats.total_ns) << "the sum the table used to sort by";
  EXPECT_NEAR(add.run_median_ns, 800001, 1);  // the noise synth adds: 0, 1 or 2 ns
  EXPECT_LE(add.run_p10_ns, add.run_median_ns);
  EXPECT_GT(add.run_p90_ns, add.run_median_ns) << "the outlier shows in the spread, not the median";
  EXPECT_EQ(add.calls_per_run, 1);
  EXPECT_NEAR(add.run_share, add.run_median_ns / a.breakdown.run_ns, 1e-12);
  EXPECT_LT(add.run_share, 0.5);
}

TEST(Analysis, CountIsCallsPerRunInBothGroupings) {
  const Recording r = synth(
      {{"Add", 1000, 1000, 5000}, {"Relu", 10, 10, 3000}, {"Add", 1000, 1000, 7000}}, 6, 100, 100);
  const Analysis a = analyze(r, test_roof());
  for (const OpRow& row : a.by_node) EXPECT_EQ(row.calls_per_run, 1) << row.key;
  const OpRow& add = a.by_type[0];
  ASSERT_EQ(add.op, "Add");
  EXPECT_EQ(add.calls_per_run, 2);
  EXPECT_EQ(add.stats.count, 12) << "calls over all runs, per call figures";
  EXPECT_NEAR(add.run_median_ns, 12002, 2);  // both nodes' time in one run
  EXPECT_NE(a.to_text().find("calls/run"), std::string::npos);
  EXPECT_EQ(a.to_json()["by_type"][0]["calls_per_run"], 2);
}

namespace {

// test_roof with an FMA peak and the four levels (1 and 2 threads) of a Zen 4 core, roughly.
Roofline hierarchy_roof() {
  Roofline r = test_roof();
  r.fma_gflops = {{1, 150.0}, {2, 290.0}};
  auto level = [](const char* name, double capacity, double one, double two) {
    MemoryLevel m;
    m.name = name;
    m.capacity_bytes = capacity;
    m.gbs = {{1, one}, {2, two}};
    return m;
  };
  r.levels = {level("L1", 48 << 10, 400, 800), level("L2", 1 << 20, 200, 400), level("L3", 32 << 20, 100, 180),
              level("DRAM", 0, 30, 40)};
  return r;
}

OpRow placed(double flops, double bytes, double ns, const Roofline& roof, int threads = 1) {
  OpRow row;
  row.op = "Op";
  row.flops = flops;
  row.bytes = bytes;
  classify(row, ns, roof, threads);
  return row;
}

}  // namespace

// The hierarchical roofline's rule (analysis.h): the slowest level the working set and the
// achieved rate both allow; none, and no percentage, when the op beat the fastest it fits in.
TEST(Analysis, AnOpIsPlacedUnderTheSlowestLevelItsBytesCanComeFrom) {
  const Roofline roof = hierarchy_roof();
  // 100 KB (past L1, inside L2) at 150 GB/s: faster than L3 and DRAM, so at least L2's.
  OpRow l2 = placed(1e4, 100e3, 100e3 / 150.0, roof);
  EXPECT_EQ(l2.memory_level, "L2") << l2.why;
  EXPECT_NEAR(l2.memory_fraction, 0.75, 1e-9);
  EXPECT_EQ(l2.bound, Bound::Memory);
  EXPECT_EQ(l2.label(), "L2-bound");
  EXPECT_NE(l2.why.find("75% of the memory roof (L2, 150.0 of 200.0 GB/s)"), std::string::npos) << l2.why;
  // The same bytes at 60 GB/s: L3 would do (100 GB/s), so L3's roof, at 60%.
  OpRow l3 = placed(1e4, 100e3, 100e3 / 60.0, roof);
  EXPECT_EQ(l3.memory_level, "L3") << l3.why;
  EXPECT_NEAR(l3.memory_fraction, 0.6, 1e-9);
  // 10 MB at 25 GB/s: DRAM's roof.
  OpRow dram = placed(1e5, 10e6, 10e6 / 25.0, roof);
  EXPECT_EQ(dram.memory_level, "DRAM");
  EXPECT_EQ(dram.label(), "DRAM-bound");
  // 10 MB at 150 GB/s: it fits no level faster than L3 (100 GB/s), so it read less than its
  // byte count says: no level, no percentage, still memory-bound, never past 100%.
  OpRow over = placed(1e5, 10e6, 10e6 / 150.0, roof);
  EXPECT_EQ(over.memory_level, "");
  EXPECT_EQ(over.memory_fraction, 0);
  EXPECT_EQ(over.bound, Bound::Memory);
  EXPECT_NE(over.why.find("reads less than its byte count"), std::string::npos) << over.why;
  // At 2 threads each core brings its own L1 and L2: 1.5 MB is 750 KB a thread, inside L2.
  OpRow two = placed(1e4, 1.5e6, 1.5e6 / 300.0, roof, 2);
  EXPECT_EQ(two.memory_level, "L2") << two.why;
  EXPECT_NEAR(two.memory_fraction, 300.0 / 400.0, 1e-9);
  // Compute: past the GEMM (100) but under the FMA peak (150) -> the FMA peak; past both -> none.
  OpRow fma = placed(120e6, 1e6, 1e6, roof);
  EXPECT_EQ(fma.compute_roof, "FMA peak");
  EXPECT_NEAR(fma.compute_fraction, 0.8, 1e-9);
  EXPECT_EQ(fma.bound, Bound::Compute) << fma.why;
  OpRow beyond = placed(200e6, 1e6, 1e6, roof);
  EXPECT_EQ(beyond.compute_roof, "");
  EXPECT_EQ(beyond.compute_fraction, 0);
  EXPECT_NE(beyond.why.find("above the FMA peak"), std::string::npos) << beyond.why;
  // Between the measured thread counts: one thread's figure times the threads, capped.
  Roofline three = roof;
  three.levels[3].gbs = {{1, 30}, {4, 100}};
  EXPECT_DOUBLE_EQ(three.level_gbs(3, 2), 60.0);
  EXPECT_DOUBLE_EQ(three.level_gbs(3, 3), 90.0);
  three.levels[3].gbs = {{1, 30}, {4, 50}};
  EXPECT_DOUBLE_EQ(three.level_gbs(3, 3), 50.0);
}

// Issue 35's acceptance: no op of any builtin model, at any ISA level and thread count, is shown
// above 100% of a roof, against the roofline measured here and against ones far too low (every
// op beats them) and far too high.
TEST(Analysis, NoBuiltinModelsOpIsShownAboveItsRoof) {
  ptest::register_cpu();
  std::vector<std::string> isas = {"auto", "portable"};
  if (cpu_has_avx512() && cpu_has_avx2_fma()) isas.push_back("avx2");
  Roofline low = hierarchy_roof(), high = hierarchy_roof();
  // A byte or FLOP a second: every op that moves a byte beats these.
  low.gemm_gflops = {{1, 1e-9}, {2, 2e-9}};
  low.fma_gflops = {{1, 2e-9}, {2, 4e-9}};
  low.bandwidth_gbs = 1e-9;
  for (MemoryLevel& m : low.levels) m.gbs = {{1, 1e-9}, {2, 2e-9}};
  for (auto& [t, g] : high.gemm_gflops) g *= 1e4;
  for (auto& [t, g] : high.fma_gflops) g *= 1e4;
  for (MemoryLevel& m : high.levels)
    for (auto& [t, g] : m.gbs) g *= 1e4;
  int rows = 0;
  for (const std::string& isa : isas) {
    const Roofline measured = measure_roofline(ptest::quick_roofline_options(2, isa));
    for (const std::string& model : models::builtin_model_names())
      for (int threads : {1, 2}) {
        const Recording r = ptest::record_at(model, 3, isa, threads);
        for (const Roofline* roof : std::vector<const Roofline*>{&measured, &low, &high}) {
          const Analysis a = analyze(r, *roof);
          for (const auto* table : {&a.by_type, &a.by_node})
            for (const OpRow& row : *table) {
              const std::string where = model + " isa=" + isa + " threads=" + std::to_string(threads) + " " + row.key;
              EXPECT_LE(row.compute_fraction, 1.0) << where << ": " << row.why;
              EXPECT_LE(row.memory_fraction, 1.0) << where << ": " << row.why;
              EXPECT_LE(row.efficiency, 1.0) << where << ": " << row.why;
              if (row.memory_level.empty()) {
                EXPECT_EQ(row.memory_fraction, 0) << where;
              }
              if (row.compute_roof.empty()) {
                EXPECT_EQ(row.compute_fraction, 0) << where;
              }
              ++rows;
            }
          if (roof == &low) {  // every op beat these roofs: each says so instead of a percentage
            for (const OpRow& row : a.by_node) {
              if (row.bytes > 0) {
                EXPECT_EQ(row.memory_level, "") << model << " " << row.key;
              }
            }
          }
        }
      }
  }
  EXPECT_GT(rows, 50);
}
