// The CUDA FusedElementwise interpreter, run on the host: parameters built by the same functions
// prepare() uses (ops/cuda/fused_params.h: parse, registers by liveness, byte encoding, broadcast
// walk), then every output element evaluated by the interpreter's own body
// (ops/cuda/fused_eval.cuh) with the C library's expf/erff/tanhf in place of CUDA's. The result
// must match the CPU kernel within float-math tolerance, and both must accept and refuse the same
// programs. Launches and the device's own math are for cuda_kernels_test.cpp (needs a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/cuda/fused_eval.cuh"
#include "ops/cuda/fused_params.h"
#include "tests/ops/op_test_util.h"

using namespace fusebox;
using namespace fusebox::cuda;
using namespace fusebox::optest;

namespace {

template <typename I>
std::vector<float> interpret_on_host(const std::vector<std::string>& text, const std::vector<Tensor>& in,
                                     const Shape& out) {
  std::vector<Shape> shapes;
  std::vector<const float*> ptrs;
  for (const auto& t : in) {
    shapes.push_back(t.shape());
    ptrs.push_back(t.data<float>());
  }
  const FusedParams p =
      make_fused_params(parse_fused_program(text, static_cast<int>(in.size())), shapes, out);
  std::vector<float> y(static_cast<size_t>(p.numel));
  FusedRegisters regs;
  for (I i = 0; i < static_cast<I>(p.numel); ++i) {
    I idx[kFusedMaxDims];
    decompose_index<kFusedMaxDims>(i, p.rank, p.dims, idx);
    y[static_cast<size_t>(i)] = fused_eval(p, ptrs.data(), i, idx, regs);
  }
  return y;
}

void check_program(const std::vector<std::string>& text, const std::vector<Tensor>& in, float rtol = 4e-6f,
                   float atol = 1e-6f) {
  Tensor want = run1("FusedElementwise", in, attrs_of({{"program", text}}));
  for (int bits : {32, 64}) {
    const std::vector<float> got = bits == 32 ? interpret_on_host<int32_t>(text, in, want.shape())
                                              : interpret_on_host<int64_t>(text, in, want.shape());
    ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel());
    int bad = 0;
    for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
      const float g = got[static_cast<size_t>(i)], c = want.data<float>()[i];
      const bool ok = std::isnan(c)   ? std::isnan(g)
                      : std::isinf(c) ? g == c
                                      : std::abs(g - c) <= atol + rtol * std::abs(c);
      if (!ok) {
        ADD_FAILURE() << text.size() << "-instruction program, " << bits << "-bit: element " << i << " is " << g
                      << ", the CPU has " << c;
        ++bad;
      }
    }
  }
}

Tensor scalar(float v) {
  Tensor t(DType::f32, {});
  t.data<float>()[0] = v;
  return t;
}

TEST(FusedProgram, GeluChainOverABias) {
  std::mt19937 rng(61);
  check_program({"Add i0 i1", "Mul r0 i2", "Erf r1", "Add r2 i3", "Add r3 i3", "Mul r0 r4", "Mul r5 i3"},
                {random_f32({64, 256}, rng), random_f32({256}, rng), scalar(0.70710678f), scalar(0.5f)});
}

TEST(FusedProgram, EveryOpShortRowsAndScalarInstructions) {
  std::mt19937 rng(67);
  check_program({"Sub i0 i1", "Div r0 i2", "Pow i0 i2", "Relu r0", "Gelu r1", "GeluTanh r2", "Tanh r3", "Sigmoid r4",
                 "Exp i2", "Sqrt i0", "Neg r5", "Mul i2 i2", "Add r6 r7", "Add r12 r8", "Add r13 r9", "Add r14 r10",
                 "Add r15 r11"},
                {random_f32({1000, 3}, rng, 0.1f, 2.0f), random_f32({3}, rng, 0.1f, 2.0f), scalar(1.5f)});
}

TEST(FusedProgram, BroadcastsEveryInputAndRunsLongPrograms) {
  std::mt19937 rng(71);
  std::vector<std::string> p = {"Add i0 i1", "Mul r0 i2"};
  for (int k = 2; k < 64; ++k)
    p.push_back(std::string(k % 2 ? "Add r" : "Mul r") + std::to_string(k - 1) + (k % 3 ? " i3" : " i4"));
  check_program(p, {random_f32({4, 1, 8}, rng), random_f32({1, 5, 1}, rng), random_f32({8}, rng),
                    random_f32({4, 5, 8}, rng), random_f32({}, rng)},
                1e-4f, 1e-4f);
}

TEST(FusedProgram, SixteenRegistersReused) {
  // 15 results alive, and the first sum takes a 16th register before its operands' are freed
  // (the most a program may use); the sums then reuse the freed ones.
  std::mt19937 rng(73);
  std::vector<std::string> p;
  for (int k = 0; k < 15; ++k) p.push_back(k % 2 ? "Neg i0" : "Exp i1");
  p.push_back("Add r0 r1");
  for (int k = 2; k < 15; ++k) p.push_back("Add r" + std::to_string(15 + k - 2) + " r" + std::to_string(k));
  check_program(p, {random_f32({7, 9}, rng), random_f32({9}, rng)});
  const std::vector<int> reg = assign_fused_registers(parse_fused_program(p, 2));
  EXPECT_EQ(*std::max_element(reg.begin(), reg.end()), kFusedMaxRegisters - 1);
}

TEST(FusedProgram, RefusesWhatTheCpuRefuses) {
  std::vector<std::string> p;
  for (int k = 0; k < 17; ++k) p.push_back("Neg i0");
  p.push_back("Add r0 r1");
  for (int k = 2; k < 17; ++k) p.push_back("Add r" + std::to_string(16 + k - 1) + " r" + std::to_string(k));
  const std::vector<ir::TensorType> in = {{DType::f32, {8}}};
  EXPECT_THROW(prepare_only("FusedElementwise", in, in, attrs_of({{"program", p}})), Error);
  try {
    assign_fused_registers(parse_fused_program(p, 1));
    ADD_FAILURE() << "17 live results were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("intermediate results alive at once (at instruction 16)"), std::string::npos)
        << e.what();
  }
  std::vector<std::string> too_long(65, "Neg i0");
  EXPECT_THROW(parse_fused_program(too_long, 1), Error);
  EXPECT_THROW(parse_fused_program({"Add i0 i2"}, 2), Error);
}

}  // namespace
