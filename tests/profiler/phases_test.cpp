// Serving phases from the engines' annotations (profiler/phases.h), on recordings built here.
#include <gtest/gtest.h>

#include "profiler/phases.h"
#include "tests/profiler/device_records.h"

using namespace fusebox::profiler;
using fusebox::exec::ActivityKind;
using fusebox::exec::DeviceActivity;

namespace {

Span range(const std::string& name, int64_t s, int64_t e) {
  return ptest::span(SpanKind::Range, name, s, e);
}

// A launch call at t and its kernel [ks, ke).
void launch(Recording& r, uint32_t corr, int64_t t, const std::string& kernel, int64_t ks, int64_t ke) {
  r.device.push_back(ptest::call("cudaLaunchKernel", t, t + 5, corr));
  r.device.push_back(ptest::kernel(kernel, ks, ke, corr));
}

}  // namespace

TEST(Phases, VllmExecuteAnnotationsSplitPrefillDecodeAndMixed) {
  Recording r;
  r.spans.push_back(range("execute_512_context_4(sq512)_generation_0(sq0)", 0, 1000));
  r.spans.push_back(range("execute_8_context_0(sq0)_generation_8(sq8)", 2000, 2500));
  r.spans.push_back(range("execute_8_context_0(sq0)_generation_8(sq8)", 3000, 3500));
  r.spans.push_back(range("execute_100_context_1(sq92)_generation_8(sq8)", 4000, 5000));
  launch(r, 1, 10, "gemm", 100, 900);
  launch(r, 2, 20, "void vllm::reshape_and_cache_flash_kernel<half>(int)", 900, 950);
  launch(r, 3, 2010, "gemm", 2100, 2300);
  launch(r, 4, 3010, "gemm", 3100, 3900);  // runs past its step's range: the step ends at 3900
  launch(r, 5, 4010, "gemm", 4100, 4200);
  launch(r, 6, 6000, "gemm", 6100, 6200);  // launched outside every step
  const Phases p = analyze_phases(r);
  EXPECT_NE(p.rule.find("execute_"), std::string::npos);
  ASSERT_EQ(p.phases.size(), 3u);
  EXPECT_EQ(p.phases[0].name, "prefill");
  EXPECT_EQ(p.phases[0].steps, 1);
  EXPECT_EQ(p.phases[0].kernel_count, 2);
  EXPECT_EQ(p.phases[0].kernel_ns, 850);
  EXPECT_EQ(p.phases[0].kv_write_ns, 50);
  EXPECT_EQ(p.phases[0].tokens, 512);
  EXPECT_DOUBLE_EQ(p.phases[0].tokens_per_s, 512e9 / 1000);
  EXPECT_EQ(p.phases[1].name, "decode");
  EXPECT_EQ(p.phases[1].steps, 2);
  EXPECT_EQ(p.phases[1].kernel_ns, 1000);
  EXPECT_EQ(p.phases[1].host_ns, 1000);
  EXPECT_EQ(p.phases[1].step_ns, 500 + 900);
  EXPECT_EQ(p.phases[1].tokens, 16);
  EXPECT_EQ(p.phases[2].name, "mixed");
  EXPECT_EQ(p.phases[2].tokens, 100);
  EXPECT_EQ(p.phases[0].kernels.at(0).name, "gemm");
  for (const Phase& ph : p.phases) {  // a phase's op table adds up to the phase's figures
    int64_t count = 0, ns = 0;
    for (const PhaseKernel& k : ph.kernels) count += k.count, ns += k.total_ns;
    EXPECT_EQ(count, ph.kernel_count) << ph.name;
    EXPECT_EQ(ns, ph.kernel_ns) << ph.name;
  }
  EXPECT_NE(phases_json(p)["phases"][1]["name"].get<std::string>(), "");
  EXPECT_EQ(phases_json(p)["phases"][0]["kernels"].size(), p.phases[0].kernels.size());
}

TEST(Phases, SglangStepsAndTheOutermostAnnotationWins) {
  Recording r;
  r.spans.push_back(range("step[EXTEND bs=2 toks=300]", 0, 100));
  r.spans.push_back(range("step[DECODE bs=2 toks=2]", 200, 300));
  r.spans.push_back(range("step[DECODE bs=2 toks=2]", 210, 250));  // inside the one above
  const Phases p = analyze_phases(r);
  ASSERT_EQ(p.phases.size(), 2u);
  EXPECT_EQ(p.phases[0].name, "prefill");
  EXPECT_EQ(p.phases[0].tokens, 300);
  EXPECT_EQ(p.phases[1].steps, 1);
}

TEST(Phases, HuggingFaceGenerateFirstForwardIsThePromptEachCall) {
  Recording r;
  for (int call = 0; call < 2; ++call) {
    const int64_t t0 = call * 10000;
    r.spans.push_back(range("transformers/generation/utils.py(1990): generate", t0, t0 + 5000));
    for (int f = 0; f < 4; ++f)
      r.spans.push_back(range("nn.Module: Qwen2ForCausalLM_0", t0 + 100 + f * 1000, t0 + 900 + f * 1000));
  }
  // A forward outside generate (a warm-up) is no step.
  r.spans.push_back(range("nn.Module: Qwen2ForCausalLM_0", 50000, 51000));
  const Phases p = analyze_phases(r);
  EXPECT_NE(p.rule.find("generate"), std::string::npos);
  ASSERT_EQ(p.phases.size(), 2u);
  EXPECT_EQ(p.phases[0].name, "prefill");
  EXPECT_EQ(p.phases[0].steps, 2);
  EXPECT_EQ(p.phases[0].tokens, -1);
  EXPECT_EQ(p.phases[1].name, "decode");
  EXPECT_EQ(p.phases[1].steps, 6);
  EXPECT_EQ(p.phases[1].tokens, 6);
}

TEST(Phases, NoAnnotationNoPhasesAndTheReportSaysSo) {
  Recording r;
  r.spans.push_back(range("ProfilerStep#3", 0, 100));
  launch(r, 1, 10, "flash_fwd_kernel", 20, 30);
  const Phases p = analyze_phases(r);
  EXPECT_EQ(p.rule, "none");
  EXPECT_TRUE(p.phases.empty());
  EXPECT_NE(phases_text(p).find("phases: none"), std::string::npos);
}

// On the CPU the KV-cache writes are the ops whose node fusebox generate marked; a recording
// that marks none does not tell them apart, and says so ("-"), rather than reporting 0.
TEST(Phases, CpuKvWritesAreTheMarkedNodesOps) {
  for (const bool marked : {false, true}) {
    Recording r;
    r.nodes.resize(2);
    r.nodes[1].kv_cache_write = marked;
    r.spans.push_back(range("decode toks=1", 0, 1000));
    Span matmul = ptest::span(SpanKind::Op, "MatMul.0(mm)", 10, 600);
    matmul.node = 0;
    Span concat = ptest::span(SpanKind::Op, "Concat.1(cat)", 600, 680);
    concat.node = 1;
    r.spans.push_back(matmul);
    r.spans.push_back(concat);
    const Phases p = analyze_phases(r);
    EXPECT_EQ(p.work, "cpu");
    EXPECT_EQ(p.kv_writes_told, marked);
    ASSERT_EQ(p.phases.size(), 1u);
    EXPECT_EQ(p.phases[0].kernel_count, 2);
    EXPECT_EQ(p.phases[0].kv_write_count, marked ? 1 : 0);
    EXPECT_EQ(p.phases[0].kv_write_ns, marked ? 80 : 0);
    const std::string text = phases_text(p);
    const std::string row = text.substr(text.find("\ndecode"));
    EXPECT_NE(row.find(marked ? "80 ns" : " - "), std::string::npos) << text;
    EXPECT_EQ(phases_json(p)["kv_writes_told"], marked);
  }
}
