// The CUDA element-wise, FusedElementwise and layout kernels against the CPU's: each case runs
// one node through both backends' kernels (prepare, then run on the CUDA backend's stream) and
// compares the outputs, exactly for integers and copies, within a few ulp-scale tolerance for
// float math (CUDA's expf/erff/tanhf/powf against the CPU's polynomials). Also what the CUDA
// prepare() refuses. Skipped where the plugin is not built or cannot make a backend (no driver,
// no GPU), failed there under FUSEBOX_REQUIRE_CUDA=1: these need a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend/plugin.h"
#include "tests/cuda_device/require_cuda.h"
#include "tests/ops/op_test_util.h"

using namespace fusebox;
using namespace fusebox::optest;

namespace {

// The CUDA backend (made once), or null with why there is none.
exec::Backend* cuda_backend(std::string& why) {
  static std::string reason;
  static std::unique_ptr<exec::Backend> backend = []() -> std::unique_ptr<exec::Backend> {
    const std::string path = exec::find_backend_plugin("cuda");
    if (path.empty()) {
      reason = "the CUDA plugin was not built";
      return nullptr;
    }
    const exec::PluginProbe p = exec::probe_backend_plugin(path);
    if (!p.available || !p.create) {
      reason = p.reason;
      return nullptr;
    }
    try {
      return p.create();
    } catch (const Error& e) {
      reason = e.what();
      return nullptr;
    }
  }();
  why = reason;
  return backend.get();
}

#define REQUIRE_GPU()                                \
  std::string why_no_gpu;                            \
  exec::Backend* gpu = cuda_backend(why_no_gpu);     \
  if (!gpu) FUSEBOX_SKIP_OR_FAIL("no CUDA backend here: " + why_no_gpu)

// Runs `op` through the CUDA backend: inputs copied to device memory, outputs filled with a
// marker first (0xFF bytes: NaN / -1) so unwritten elements show, then copied back.
std::vector<Tensor> run_cuda(exec::Backend& gpu, const std::string& op, const std::vector<Tensor>& inputs,
                             const ir::Attributes& attrs = {}, const exec::CompileOptions& options = {}) {
  ir::Node node = make_node(op, inputs.size(), 1, attrs);
  std::vector<ir::TensorType> in_types;
  for (const auto& t : inputs) in_types.push_back({t.dtype(), t.shape()});
  std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
  const exec::KernelDef* kernel = gpu.kernels().find(op);
  if (!kernel) throw Error("no CUDA kernel for " + op);
  const size_t scratch_bytes = gpu.scratch_bytes(exec::KernelContext{node, in_types, out_types});
  // The backend's context and the run's options, as in a real run: prepare() reads the device's
  // shared-memory limit from the one and the GEMM precision from the other.
  const exec::CompileOptions resolved = gpu.resolve(options);
  exec::KernelContext ctx{node, in_types, out_types, scratch_bytes, nullptr, gpu.context(), &resolved};
  std::shared_ptr<const void> state = kernel->prepare ? kernel->prepare(ctx) : nullptr;

  std::vector<std::shared_ptr<void>> keep;
  std::vector<const void*> in_ptrs;
  for (const auto& t : inputs) {
    keep.push_back(gpu.allocate(std::max<size_t>(t.nbytes(), 1)));
    if (t.nbytes()) gpu.copy_to_device(keep.back().get(), t.bytes(), t.nbytes());
    in_ptrs.push_back(keep.back().get());
  }
  std::vector<Tensor> outputs;
  std::vector<void*> out_ptrs;
  for (const auto& t : out_types) {
    outputs.emplace_back(t.dtype, t.shape);
    Tensor& o = outputs.back();
    std::memset(o.bytes(), 0xFF, o.nbytes());
    keep.push_back(gpu.allocate(std::max<size_t>(o.nbytes(), 1)));
    if (o.nbytes()) gpu.copy_to_device(keep.back().get(), o.bytes(), o.nbytes());
    out_ptrs.push_back(keep.back().get());
  }
  std::shared_ptr<void> scratch = scratch_bytes ? gpu.allocate(scratch_bytes) : nullptr;
  exec::KernelArgs args{in_ptrs.data(), out_ptrs.data(), scratch.get(), state.get(), gpu.context()};
  kernel->run(args);
  gpu.synchronize();
  for (size_t k = 0; k < outputs.size(); ++k)
    if (outputs[k].nbytes()) gpu.copy_to_host(outputs[k].bytes(), out_ptrs[k], outputs[k].nbytes());
  return outputs;
}

// CUDA vs CPU: same dtype and shape; i64 exact; f32 within atol + rtol * |cpu|, NaN where the
// CPU has NaN, infinities equal.
void expect_same(const Tensor& gpu, const Tensor& cpu, const std::string& what, float rtol = 2e-6f,
                 float atol = 1e-6f) {
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  int bad = 0;
  for (int64_t i = 0; i < cpu.numel() && bad < 5; ++i) {
    if (cpu.dtype() == DType::i64) {
      if (gpu.data<int64_t>()[i] != cpu.data<int64_t>()[i]) {
        ADD_FAILURE() << what << ": element " << i << " is " << gpu.data<int64_t>()[i] << ", the CPU has "
                      << cpu.data<int64_t>()[i];
        ++bad;
      }
      continue;
    }
    const float g = gpu.data<float>()[i], c = cpu.data<float>()[i];
    bool ok;
    if (std::isnan(c)) {
      ok = std::isnan(g);
    } else if (std::isinf(c)) {
      ok = g == c;
    } else {
      ok = std::abs(g - c) <= atol + rtol * std::abs(c);
    }
    if (!ok) {
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", the CPU has " << c;
      ++bad;
    }
  }
}

void compare(exec::Backend& gpu, const std::string& op, const std::vector<Tensor>& inputs,
             const ir::Attributes& attrs = {}, float rtol = 2e-6f, float atol = 1e-6f,
             const exec::CompileOptions& options = {}) {
  const std::string what = op + " " + attrs.to_string() + " on " + [&] {
    std::string s;
    for (const auto& t : inputs) s += ir::shape_str(t.shape()) + " ";
    return s;
  }();
  Tensor want = run1(op, inputs, attrs);
  Tensor got = run_cuda(gpu, op, inputs, attrs, options)[0];
  expect_same(got, want, what, rtol, atol);
}

void expect_refused(exec::Backend& gpu, const std::string& op, const std::vector<ir::TensorType>& in_types,
                    const ir::Attributes& attrs, const std::string& fragment) {
  ir::Node node = make_node(op, in_types.size(), 1, attrs);
  std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
  const exec::KernelDef* kernel = gpu.kernels().find(op);
  ASSERT_TRUE(kernel) << op;
  exec::KernelContext ctx{node, in_types, out_types, 0, nullptr, gpu.context()};
  try {
    kernel->prepare(ctx);
    ADD_FAILURE() << op << ": prepare() accepted what it should refuse (" << fragment << ")";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

Tensor f32_values(const Shape& shape, const std::vector<float>& v) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v[static_cast<size_t>(i) % v.size()];
  return t;
}

Tensor i64_values(const Shape& shape, const std::vector<int64_t>& v) {
  Tensor t(DType::i64, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = v[static_cast<size_t>(i) % v.size()];
  return t;
}

// ---- element-wise ----------------------------------------------------------------------------

TEST(CudaElementwise, BinaryOpsBroadcastLikeTheCpu) {
  REQUIRE_GPU();
  std::mt19937 rng(7);
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{1000}, {1000}},          {{64, 256}, {256}},   {{64, 1}, {1, 48}},  {{3, 1, 5, 1}, {1, 4, 1, 6}},
      {{2, 3, 4}, {}},           {{}, {7}},            {{0, 5}, {5}},       {{5, 1, 1, 7}, {1, 3, 2, 1}},
      {{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}}};
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (const auto& [a, b] : shapes) {
      compare(*gpu, op, {random_f32(a, rng), random_f32(b, rng, 0.5f, 2.0f)});
      compare(*gpu, op, {random_i64(a, rng, -1000, 1000), random_i64(b, rng, -5, 5)});
    }
  }
}

TEST(CudaElementwise, I64ArithmeticWrapsAndDividesWithoutTrapping) {
  REQUIRE_GPU();
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  Tensor a = i64_values({6}, {lo, hi, 7, -7, 5, lo});
  Tensor b = i64_values({6}, {-1, 1, 0, 2, -2, 0});
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) compare(*gpu, op, {a, b});
  compare(*gpu, "Neg", {a});
}

TEST(CudaElementwise, PowWithConstantAndElementwiseExponents) {
  REQUIRE_GPU();
  std::mt19937 rng(3);
  Tensor x = random_f32({32, 33}, rng, 0.1f, 3.0f);
  for (float e : {2.0f, 3.0f, 0.5f, -1.5f}) compare(*gpu, "Pow", {x, f32_values({}, {e})}, {}, 4e-6f);
  compare(*gpu, "Pow", {x, f32_values({33}, {2.0f, 3.0f, 0.25f})}, {}, 4e-6f);
  compare(*gpu, "Pow", {f32_values({4}, {-2.0f, -8.0f, 0.0f, -0.0f}), f32_values({}, {3.0f})});
}

TEST(CudaElementwise, UnaryMathAndGeluForms) {
  REQUIRE_GPU();
  std::mt19937 rng(11);
  Tensor x = random_f32({4099}, rng, -6.0f, 6.0f);
  Tensor edges = f32_values({10}, {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                   -90.0f, 88.0f, 1e-30f, -1e30f, 20.0f});
  for (const char* op : {"Relu", "Neg", "Sqrt", "Exp", "Erf", "Sigmoid", "Tanh"}) {
    compare(*gpu, op, {x}, {}, 4e-6f);
    compare(*gpu, op, {edges}, {}, 4e-6f);
  }
  for (const char* mode : {"none", "tanh"}) {
    compare(*gpu, "Gelu", {x}, attrs_of({{"approximate", std::string(mode)}}), 4e-6f);
    compare(*gpu, "Gelu", {edges}, attrs_of({{"approximate", std::string(mode)}}), 4e-6f);
  }
  compare(*gpu, "Gelu", {x}, {}, 4e-6f);  // default: none
}

TEST(CudaElementwise, CastSaturatesAndRounds) {
  REQUIRE_GPU();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor f = f32_values({9}, {1.9f, -1.9f, 0.5f, std::numeric_limits<float>::quiet_NaN(), inf, -inf, 1e19f, -1e19f,
                              9.2233715e18f});
  compare(*gpu, "Cast", {f}, attrs_of({{"to", std::string("i64")}}));
  compare(*gpu, "Cast", {f}, attrs_of({{"to", std::string("f32")}}));
  Tensor i = i64_values({4}, {(int64_t{1} << 53) + 1, -3, std::numeric_limits<int64_t>::max(), 16777217});
  compare(*gpu, "Cast", {i}, attrs_of({{"to", std::string("f32")}}));
  compare(*gpu, "Cast", {i}, attrs_of({{"to", std::string("i64")}}));
}

TEST(CudaElementwise, WhereBroadcastsThreeOperands) {
  REQUIRE_GPU();
  std::mt19937 rng(5);
  Tensor c = random_i64({4, 1, 6}, rng, 0, 1);
  compare(*gpu, "Where", {c, random_f32({5, 1}, rng), random_f32({4, 5, 6}, rng)});
  compare(*gpu, "Where", {c, random_i64({1}, rng, -9, 9), random_i64({6}, rng, -9, 9)});
  compare(*gpu, "Where", {random_i64({}, rng, 0, 1), random_f32({3}, rng), random_f32({2, 3}, rng)});
}

TEST(CudaElementwise, PrepareRefusesWhatItCannotRun) {
  REQUIRE_GPU();
  const Shape a = {2, 1, 2, 1, 2, 1, 2, 1, 2}, b = {1, 2, 1, 2, 1, 2, 1, 2, 1};
  expect_refused(*gpu, "Add", {{DType::f32, a}, {DType::f32, b}}, {}, "at most 8");
}

// ---- FusedElementwise ------------------------------------------------------------------------

ir::Attributes program(std::vector<std::string> p) { return attrs_of({{"program", std::move(p)}}); }

TEST(CudaFusedElementwise, ProgramsMatchTheCpu) {
  REQUIRE_GPU();
  std::mt19937 rng(13);
  // The exporters' erf-Gelu chain over a biased matmul output.
  Tensor x = random_f32({64, 256}, rng), bias = random_f32({256}, rng);
  compare(*gpu, "FusedElementwise", {x, bias, f32_values({}, {0.70710678f}), f32_values({}, {0.5f})},
          program({"Add i0 i1", "Mul r0 i2", "Erf r1", "Add r2 i3", "Add r3 i3", "Mul r0 r4", "Mul r5 i3"}), 4e-6f);
  // Short rows ([1000, 3] + [3]), every op, a scalar-only instruction and a reused result.
  Tensor s = random_f32({1000, 3}, rng, 0.1f, 2.0f), t = random_f32({3}, rng, 0.1f, 2.0f);
  Tensor u = f32_values({}, {1.5f});
  compare(*gpu, "FusedElementwise", {s, t, u},
          program({"Sub i0 i1", "Div r0 i2", "Pow i0 i2", "Relu r0", "Gelu r1", "GeluTanh r2", "Tanh r3", "Sigmoid r4",
                   "Exp i2", "Sqrt i0", "Neg r5", "Mul i2 i2", "Add r6 r7", "Add r12 r8", "Add r13 r9", "Add r14 r10",
                   "Add r15 r11"}),
          4e-6f);
}

TEST(CudaFusedElementwise, BroadcastsEveryInputAndRunsLongPrograms) {
  REQUIRE_GPU();
  std::mt19937 rng(17);
  std::vector<Tensor> in = {random_f32({4, 1, 8}, rng), random_f32({1, 5, 1}, rng), random_f32({8}, rng),
                            random_f32({4, 5, 8}, rng), random_f32({}, rng)};
  std::vector<std::string> p = {"Add i0 i1", "Mul r0 i2"};
  for (int k = 2; k < 64; ++k)
    p.push_back(std::string(k % 2 ? "Add r" : "Mul r") + std::to_string(k - 1) + (k % 3 ? " i3" : " i4"));
  compare(*gpu, "FusedElementwise", in, program(p), 1e-4f, 1e-4f);
}

TEST(CudaFusedElementwise, RefusesWhatTheCpuRefuses) {
  REQUIRE_GPU();
  // 17 results alive at once.
  std::vector<std::string> p;
  for (int k = 0; k < 17; ++k) p.push_back("Neg i0");
  std::string sum = "Add r0 r1";
  p.push_back(sum);
  for (int k = 2; k < 17; ++k) p.push_back("Add r" + std::to_string(16 + k - 1) + " r" + std::to_string(k));
  expect_refused(*gpu, "FusedElementwise", {{DType::f32, {8}}}, program(p), "intermediate results alive");
}

// ---- layout ----------------------------------------------------------------------------------

TEST(CudaLayout, TransposeEveryCopyKind) {
  REQUIRE_GPU();
  std::mt19937 rng(19);
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 4, 5}, {0, 1, 2, 3}},   // one contiguous run
      {{2, 7, 3, 16}, {0, 2, 1, 3}},  // head split: rows
      {{100, 70}, {1, 0}},            // matrix: tiles with partial edges
      {{3, 64, 33}, {0, 2, 1}},       // batched tiles
      {{4, 5, 6}, {2, 1, 0}},         // general gather
      {{1, 9, 1, 4}, {3, 1, 0, 2}},   // size-1 dims dropped
      {{2, 3}, {}},                   // default: reversed
      {{}, {}},                       // a scalar
      {{0, 4}, {1, 0}}};              // empty
  for (const auto& [shape, perm] : cases) {
    ir::Attributes attrs;
    if (!perm.empty()) attrs.set("perm", perm);
    compare(*gpu, "Transpose", {random_f32(shape, rng)}, attrs);
    compare(*gpu, "Transpose", {random_i64(shape, rng, -100, 100)}, attrs);
  }
}

TEST(CudaLayout, SliceWithStepsAndClamping) {
  REQUIRE_GPU();
  std::mt19937 rng(23);
  Tensor x = random_f32({6, 10, 8}, rng);
  const int64_t big = std::numeric_limits<int64_t>::max();
  compare(*gpu, "Slice", {x}, attrs_of({{"starts", std::vector<int64_t>{1}}, {"ends", std::vector<int64_t>{4}}}));
  compare(*gpu, "Slice", {x},
          attrs_of({{"starts", std::vector<int64_t>{-1, 2}}, {"ends", std::vector<int64_t>{-big, big}},
                    {"axes", std::vector<int64_t>{1, 2}}, {"steps", std::vector<int64_t>{-2, 3}}}));
  compare(*gpu, "Slice", {x},
          attrs_of({{"starts", std::vector<int64_t>{20}}, {"ends", std::vector<int64_t>{-20}},
                    {"axes", std::vector<int64_t>{-1}}, {"steps", std::vector<int64_t>{-1}}}));
  compare(*gpu, "Slice", {random_i64({5, 4}, rng, -9, 9)},
          attrs_of({{"starts", std::vector<int64_t>{3}}, {"ends", std::vector<int64_t>{3}}}));
}

TEST(CudaLayout, ConcatAcrossBatchesOfInputs) {
  REQUIRE_GPU();
  std::mt19937 rng(29);
  for (int64_t axis : {0, 1, 2, -1}) {
    std::vector<Tensor> in;
    for (int k = 0; k < 40; ++k) {
      Shape s = {3, 4, 5};
      s[static_cast<size_t>(axis < 0 ? 2 : axis)] = k % 7 == 3 ? 0 : 1 + k % 3;
      in.push_back(random_f32(s, rng));
    }
    compare(*gpu, "Concat", in, attrs_of({{"axis", axis}}));
  }
  compare(*gpu, "Concat", {random_i64({2, 3}, rng, -9, 9), random_i64({2, 5}, rng, -9, 9)},
          attrs_of({{"axis", int64_t{1}}}));
}

TEST(CudaLayout, GatherWithNegativeIndices) {
  REQUIRE_GPU();
  std::mt19937 rng(31);
  Tensor table = random_f32({10, 16}, rng);
  compare(*gpu, "Gather", {table, i64_values({2, 4}, {0, 9, -1, -10, 5, -6, 3, 3})});
  compare(*gpu, "Gather", {random_i64({3, 7, 2}, rng, -9, 9), i64_values({5}, {6, -7, 0, -1, 2})},
          attrs_of({{"axis", int64_t{1}}}));
  compare(*gpu, "Gather", {random_f32({4, 5}, rng), i64_values({}, {-2})}, attrs_of({{"axis", int64_t{-1}}}));
}

// An index out of range is an error on both backends, with the same sentence: the CPU throws in
// run(), the GPU's check kernel records it and the next synchronize raises it. The run after it
// is clean again.
TEST(CudaLayout, GatherOutOfRangeIndexIsTheCpusError) {
  REQUIRE_GPU();
  std::mt19937 rng(37);
  Tensor table = random_f32({10, 16}, rng);
  for (const auto& idx : {i64_values({2, 4}, {0, 9, -1, -10, 10, -11, 3, 3}), i64_values({3}, {-11, 2, 12})}) {
    std::string cpu_error, gpu_error;
    try {
      run1("Gather", {table, idx});
    } catch (const Error& e) {
      cpu_error = e.what();
    }
    try {
      run_cuda(*gpu, "Gather", {table, idx});
    } catch (const Error& e) {
      gpu_error = e.what();
    }
    ASSERT_FALSE(cpu_error.empty()) << "the CPU refuses the index";
    EXPECT_EQ(gpu_error, cpu_error);
  }
  compare(*gpu, "Gather", {table, i64_values({2}, {1, -1})});
}

// ---- MatMul family: the paths of matmul.cpp ---------------------------------------------------

TEST(CudaMatMul, TransposesAndBroadcastBatches) {
  REQUIRE_GPU();
  std::mt19937 rng(41);
  const int64_t m = 7, k = 33, n = 20;
  struct Case {
    Shape a, b;
    int64_t ta, tb;
  };
  const std::vector<Case> cases = {
      {{m, k}, {k, n}, 0, 0},          {{k, m}, {k, n}, 1, 0},          {{m, k}, {n, k}, 0, 1},
      {{k, m}, {n, k}, 1, 1},          {{2, 3, m, k}, {3, k, n}, 0, 0}, {{2, 3, k, m}, {3, n, k}, 1, 1},
      {{m, k}, {4, k, n}, 0, 0},       {{k, m}, {4, n, k}, 1, 1},       {{2, 1, m, k}, {3, k, n}, 0, 0},
      {{5, m, k}, {k, n}, 0, 0},       {{5, k, m}, {n, k}, 1, 1}};
  for (const Case& c : cases) {
    ir::Attributes attrs = attrs_of({{"transA", c.ta}, {"transB", c.tb}});
    compare(*gpu, "MatMul", {random_f32(c.a, rng), random_f32(c.b, rng)}, attrs, 1e-4f, 1e-4f);
  }
  compare(*gpu, "MatMul", {random_f32({m, k}, rng), random_f32({k, n}, rng)}, attrs_of({{"alpha", 0.25}}), 1e-4f,
          1e-4f);
}

// Biases [N], [M, 1] and [B, 1, N]: a [N] bias on one GEMM goes through cuBLASLt's epilogue, the
// others (and [N] on a batch of GEMMs) through cuBLAS then our bias/activation pass.
TEST(CudaMatMul, BiasedOpsOnTheCublasLtAndPlainPaths) {
  REQUIRE_GPU();
  std::mt19937 rng(43);
  const int64_t b = 3, m = 12, k = 40, n = 24;
  struct Case {
    Shape a, w, bias;
    const char* path;
  };
  const std::vector<Case> cases = {
      {{m, k}, {k, n}, {n}, "cuBLASLt: one GEMM, a row bias"},
      {{b, m, k}, {k, n}, {n}, "cuBLASLt: the batch folds into one GEMM"},
      {{b, m, k}, {b, k, n}, {n}, "plain: a batch of GEMMs"},
      {{m, k}, {k, n}, {m, 1}, "plain: a column bias"},
      {{b, m, k}, {b, k, n}, {b, 1, n}, "plain: a per-batch row bias"},
      {{b, m, k}, {k, n}, {b, 1, n}, "plain: a per-batch row bias on a folded batch"}};
  for (const char* op : {"MatMulAdd", "FusedBiasRelu", "FusedBiasGelu", "FusedBiasTanh", "FusedBiasSigmoid"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(op) + ", " + c.path);
      compare(*gpu, op, {random_f32(c.a, rng), random_f32(c.w, rng), random_f32(c.bias, rng)}, {}, 1e-4f, 1e-4f);
    }
  }
  compare(*gpu, "FusedBiasGelu", {random_f32({m, k}, rng), random_f32({k, n}, rng), random_f32({n}, rng)},
          attrs_of({{"approximate", std::string("tanh")}}), 1e-4f, 1e-4f);
  compare(*gpu, "MatMulAdd", {random_f32({k, m}, rng), random_f32({n, k}, rng), random_f32({n}, rng)},
          attrs_of({{"transA", int64_t{1}}, {"transB", int64_t{1}}}), 1e-4f, 1e-4f);
}

// ---- Attention: key counts past one tile, causal, fully masked rows --------------------------

TEST(CudaAttention, LongKeysCausalAndFullyMaskedRows) {
  REQUIRE_GPU();
  std::mt19937 rng(47);
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t b = 2, h = 2, d = 32;
  for (const int64_t skv : {129, 300, 1000}) {
    for (const int64_t sq : {int64_t{1}, int64_t{17}, skv}) {
      if (sq > skv) continue;
      Tensor q = random_f32({b, h, sq, d}, rng, -2, 2), kk = random_f32({b, h, skv, d}, rng, -2, 2);
      Tensor v = random_f32({b, h, skv, d}, rng, -1, 1);
      const std::string what = " skv " + std::to_string(skv) + " sq " + std::to_string(sq);
      SCOPED_TRACE(what);
      compare(*gpu, "Attention", {q, kk, v}, attrs_of({{"scale", 0.2}}), 1e-4f, 1e-5f);
      if (sq == skv) compare(*gpu, "Attention", {q, kk, v}, attrs_of({{"scale", 0.2}, {"causal", int64_t{1}}}), 1e-4f,
                             1e-5f);
      // A mask that hides every key of some rows (whatever the CPU gives such a row, the GPU
      // must give too), and some keys of the others.
      Tensor mask = random_f32({b, h, sq, skv}, rng, -1, 1);
      for (int64_t r = 0; r < b * h * sq; ++r)
        for (int64_t j = 0; j < skv; ++j)
          if (r % 3 == 0 || (j * 7 + r) % 5 == 0) mask.data<float>()[r * skv + j] = -inf;
      compare(*gpu, "Attention", {q, kk, v, mask}, attrs_of({{"scale", 0.2}}), 1e-4f, 1e-5f);
    }
  }
}

// The flash kernel's tile edges (host/tile_geometry.h: attention_tiles): keys not a multiple of
// the tile and fewer than one tile, fewer query rows than a block takes and a partial last block,
// causal rows that end inside a tile, head dims from 1 to past the 48 KiB default (the kernel
// then opts in to the device's larger shared memory), Dv != D, and head dims no tile fits
// refused with the sentence naming them.
TEST(CudaAttention, TileEdgesAndHeadDims) {
  REQUIRE_GPU();
  std::mt19937 rng(59);
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    int64_t sq, skv, d, dv;
  };
  for (const Case c : {Case{1, 1, 1, 1}, Case{3, 5, 8, 8}, Case{5, 17, 64, 64}, Case{37, 37, 64, 64},
                       Case{33, 65, 16, 48}, Case{70, 100, 128, 128}, Case{20, 129, 200, 72},
                       Case{9, 31, 256, 256}, Case{16, 64, 32, 32}}) {
    const int64_t b = 1, h = 3;
    SCOPED_TRACE("sq " + std::to_string(c.sq) + " skv " + std::to_string(c.skv) + " d " + std::to_string(c.d) +
                 " dv " + std::to_string(c.dv));
    Tensor q = random_f32({b, h, c.sq, c.d}, rng, -2, 2), kk = random_f32({b, h, c.skv, c.d}, rng, -2, 2);
    Tensor v = random_f32({b, h, c.skv, c.dv}, rng, -1, 1);
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
    compare(*gpu, "Attention", {q, kk, v}, attrs_of({{"scale", scale}}), 1e-4f, 1e-5f);
    if (c.sq <= c.skv)
      compare(*gpu, "Attention", {q, kk, v}, attrs_of({{"scale", scale}, {"causal", int64_t{1}}}), 1e-4f, 1e-5f);
    // Masked keys at the tile seams and one fully masked row.
    Tensor mask = random_f32({b, h, c.sq, c.skv}, rng, -1, 1);
    for (int64_t r = 0; r < b * h * c.sq; ++r)
      for (int64_t j = 0; j < c.skv; ++j)
        if (r == 1 || j % 16 == 15 || j % 16 == 0) mask.data<float>()[r * c.skv + j] = -inf;
    compare(*gpu, "Attention", {q, kk, v, mask}, attrs_of({{"scale", scale}}), 1e-4f, 1e-5f);
  }
  // D = Dv = 16384: even 4 query rows x 16 keys need over 2 MiB of shared memory.
  expect_refused(*gpu, "Attention",
                 {{DType::f32, {1, 1, 4, 16384}}, {DType::f32, {1, 1, 4, 16384}}, {DType::f32, {1, 1, 4, 16384}}}, {},
                 "need");
}

// precision=tf32: MatMul and a cuBLASLt-epilogue FusedBiasRelu through TF32 tensor cores stay
// within TF32's rounding of the CPU (about 1e-3 relative for K = 256), and fp32 again afterwards
// is back within float rounding (each kernel takes the precision of the options it is prepared with).
TEST(CudaMatMul, Tf32PrecisionIsOptIn) {
  REQUIRE_GPU();
  std::mt19937 rng(61);
  const int64_t m = 64, k = 256, n = 96;
  Tensor a = random_f32({m, k}, rng, -1, 1), w = random_f32({k, n}, rng, -1, 1), bias = random_f32({n}, rng, -1, 1);
  const exec::CompileOptions tf32{"auto", "tf32"};
  EXPECT_EQ(gpu->resolve(tf32).precision, "tf32");
  compare(*gpu, "MatMul", {a, w}, {}, 1e-2f, 3e-2f, tf32);
  compare(*gpu, "FusedBiasRelu", {a, w, bias}, {}, 1e-2f, 3e-2f, tf32);
  compare(*gpu, "MatMul", {a, w}, {}, 1e-4f, 1e-4f);
  compare(*gpu, "FusedBiasRelu", {a, w, bias}, {}, 1e-4f, 1e-4f);
  EXPECT_THROW(gpu->resolve(exec::CompileOptions{"auto", "fp16"}), Error);
}

// ---- Softmax and ReduceMean away from the last axis ------------------------------------------

TEST(CudaNormalization, SoftmaxAndReduceMeanOnOtherAxes) {
  REQUIRE_GPU();
  std::mt19937 rng(53);
  Tensor x = random_f32({4, 300, 6}, rng, -5, 5);
  for (int64_t axis : {0, 1, -2}) compare(*gpu, "Softmax", {x}, attrs_of({{"axis", axis}}), 1e-5f, 1e-6f);
  Tensor y = random_f32({3, 257, 5, 2}, rng, -5, 5);
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{1}, {0}, {0, 2}, {1, 3}, {-3}}) {
    for (int64_t keep : {0, 1})
      compare(*gpu, "ReduceMean", {y}, attrs_of({{"axes", axes}, {"keepdims", keep}}), 1e-5f, 1e-6f);
  }
}

}  // namespace

// ---- the conv family (ops/cuda/conv.cpp): every path of Conv, BatchNorm, the pools -------------

namespace {

using Ints = std::vector<int64_t>;

// Conv of x [N, C_in, spatial] with a weight [C_out, C_in / group, kernel] and a bias, on both
// backends; GEMM sums in a different order than the CPU's packed GEMM, hence the 1e-4 tolerances.
void compare_conv(exec::Backend& gpu, std::mt19937& rng, const Shape& x, const Shape& w, ir::Attributes attrs,
                  bool bias = true) {
  std::vector<Tensor> in = {random_f32(x, rng), random_f32(w, rng, -0.5f, 0.5f)};
  if (bias) in.push_back(random_f32({w[0]}, rng));
  compare(gpu, "Conv", in, attrs, 1e-4f, 1e-4f);
}

}  // namespace

TEST(CudaConv, EveryPathAgainstTheCpu) {
  REQUIRE_GPU();
  std::mt19937 rng(61);
  struct Case {
    const char* what;
    Shape x, w;
    ir::Attributes attrs;
  };
  const std::vector<Case> cases = {
      {"im2col 2-D, pads 1", {2, 3, 9, 11}, {5, 3, 3, 3}, attrs_of({{"pads", Ints{1, 1, 1, 1}}})},
      {"im2col 1-D", {2, 4, 17}, {6, 4, 5}, attrs_of({{"pads", Ints{2, 2}}})},
      {"stride 2", {1, 8, 16, 16}, {12, 8, 3, 3}, attrs_of({{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}})},
      {"dilation 2", {1, 4, 12, 12}, {6, 4, 3, 3}, attrs_of({{"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}})},
      {"asymmetric pads", {2, 3, 7, 8}, {4, 3, 2, 3}, attrs_of({{"pads", Ints{0, 2, 1, 0}}})},
      {"3 groups", {2, 6, 8, 8}, {9, 2, 3, 3}, attrs_of({{"group", int64_t{3}}, {"pads", Ints{1, 1, 1, 1}}})},
      {"pointwise, one group, 3 images", {3, 16, 7, 5}, {24, 16, 1, 1}, {}},
      {"pointwise, 2 groups", {2, 8, 6, 6}, {10, 4, 1, 1}, attrs_of({{"group", int64_t{2}}})},
      {"depthwise 3x3", {2, 8, 10, 10}, {8, 1, 3, 3}, attrs_of({{"group", int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}})},
      {"depthwise 5x5 stride 2", {1, 16, 15, 15}, {16, 1, 5, 5},
       attrs_of({{"group", int64_t{16}}, {"strides", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}})},
      {"depthwise, multiplier 2", {1, 4, 9, 9}, {8, 1, 3, 3}, attrs_of({{"group", int64_t{4}}})},
      {"3-D", {1, 2, 5, 6, 6}, {3, 2, 3, 3, 3}, attrs_of({{"pads", Ints{1, 1, 1, 1, 1, 1}}})},
      {"SAME_UPPER", {1, 3, 7, 7}, {4, 3, 4, 4}, attrs_of({{"auto_pad", std::string("SAME_UPPER")}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    compare_conv(*gpu, rng, c.x, c.w, c.attrs);
  }
  SCOPED_TRACE("no bias");
  compare_conv(*gpu, rng, {2, 3, 9, 11}, {5, 3, 3, 3}, {}, false);
  compare_conv(*gpu, rng, {2, 8, 10, 10}, {8, 1, 3, 3}, attrs_of({{"group", int64_t{8}}}), false);
}

TEST(CudaConv, EachFusedActivationOnEachPath) {
  REQUIRE_GPU();
  std::mt19937 rng(67);
  const std::vector<std::pair<const char*, ir::Attributes>> acts = {
      {"relu", attrs_of({{"activation", std::string("relu")}})},
      {"sigmoid", attrs_of({{"activation", std::string("sigmoid")}})},
      {"clip", attrs_of({{"activation", std::string("clip")}, {"activation_min", 0.0}, {"activation_max", 6.0}})},
      {"hardsigmoid", attrs_of({{"activation", std::string("hardsigmoid")}, {"activation_alpha", 0.2},
                                {"activation_beta", 0.5}})},
      {"hardswish", attrs_of({{"activation", std::string("hardswish")}})},
  };
  for (const auto& [name, act] : acts) {
    SCOPED_TRACE(name);
    ir::Attributes im2col = act, depthwise = act;
    im2col.set("pads", Ints{1, 1, 1, 1});
    depthwise.set("group", int64_t{6});
    compare_conv(*gpu, rng, {2, 3, 9, 9}, {6, 3, 3, 3}, im2col);
    compare_conv(*gpu, rng, {2, 6, 9, 9}, {6, 1, 3, 3}, depthwise);
    compare_conv(*gpu, rng, {2, 6, 5, 5}, {4, 6, 1, 1}, act);
  }
}

TEST(CudaConv, ConvTransposeGemmThenCol2im) {
  REQUIRE_GPU();
  std::mt19937 rng(69);
  struct Case {
    const char* what;
    Shape x, w;
    ir::Attributes attrs;
  };
  const std::vector<Case> cases = {
      {"stride 2", {1, 4, 5, 6}, {4, 3, 3, 3}, attrs_of({{"strides", Ints{2, 2}}})},
      {"pads, output_padding", {2, 3, 4, 4}, {3, 2, 3, 3},
       attrs_of({{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}})},
      {"1-D, dilation 2, stride 3", {2, 2, 7}, {2, 3, 3}, attrs_of({{"dilations", Ints{2}}, {"strides", Ints{3}}})},
      {"2 groups", {1, 4, 5, 5}, {4, 3, 2, 2}, attrs_of({{"group", int64_t{2}}, {"strides", Ints{2, 2}}})},
      {"3-D", {1, 2, 3, 4, 4}, {2, 2, 2, 3, 3}, attrs_of({{"strides", Ints{1, 2, 2}}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Shape bias{c.w[1] * c.attrs.get_int("group", 1)};  // C_out
    compare(*gpu, "ConvTranspose", {random_f32(c.x, rng), random_f32(c.w, rng, -0.5f, 0.5f), random_f32(bias, rng)},
            c.attrs, 1e-4f, 1e-4f);
    compare(*gpu, "ConvTranspose", {random_f32(c.x, rng), random_f32(c.w, rng, -0.5f, 0.5f)}, c.attrs, 1e-4f, 1e-4f);
  }
}

TEST(CudaPool, PrepareRefusesMoreThanThreeSpatialDims) {
  REQUIRE_GPU();
  expect_refused(*gpu, "MaxPool", {{DType::f32, {1, 1, 2, 2, 2, 2}}}, attrs_of({{"kernel_shape", Ints{1, 1, 1, 1}}}),
                 "spatial dims");
}

// precision=tf32 reaches Conv's GEMMs as it does the MatMul family's (read when prepared): within
// TF32's rounding of the CPU, and back to fp32's tolerance once switched back.
TEST(CudaConv, Tf32PrecisionIsOptIn) {
  REQUIRE_GPU();
  std::mt19937 rng(83);
  const Tensor x = random_f32({1, 32, 12, 12}, rng, -1, 1), w = random_f32({48, 32, 3, 3}, rng, -1, 1);
  const Tensor pw = random_f32({48, 32, 1, 1}, rng, -1, 1), bias = random_f32({48}, rng, -1, 1);
  const ir::Attributes pads = attrs_of({{"pads", Ints{1, 1, 1, 1}}});
  const exec::CompileOptions tf32{"auto", "tf32"};
  compare(*gpu, "Conv", {x, w, bias}, pads, 1e-2f, 3e-2f, tf32);
  compare(*gpu, "Conv", {x, pw, bias}, {}, 1e-2f, 3e-2f, tf32);
  compare(*gpu, "Conv", {x, w, bias}, pads, 1e-4f, 1e-4f);
  compare(*gpu, "Conv", {x, pw, bias}, {}, 1e-4f, 1e-4f);
}

TEST(CudaBatchNorm, PerChannelAffineLikeTheCpu) {
  REQUIRE_GPU();
  std::mt19937 rng(71);
  for (const Shape& x : {Shape{2, 5, 7, 9}, Shape{3, 4}, Shape{1, 6, 11}}) {
    const Shape c{x[1]};
    compare(*gpu, "BatchNorm",
            {random_f32(x, rng), random_f32(c, rng), random_f32(c, rng), random_f32(c, rng),
             random_f32(c, rng, 0.1f, 2.0f)},
            attrs_of({{"epsilon", 1e-3}}), 1e-5f, 1e-5f);
  }
}

TEST(CudaPool, WindowsWithCeilModeAndCountIncludePad) {
  REQUIRE_GPU();
  std::mt19937 rng(73);
  const Tensor x = random_f32({2, 3, 9, 11}, rng);
  const std::vector<ir::Attributes> windows = {
      attrs_of({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
      attrs_of({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}),
      attrs_of({{"kernel_shape", Ints{2, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 1, 1, 0}},
                {"ceil_mode", int64_t{1}}}),
      attrs_of({{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}),
  };
  for (const ir::Attributes& w : windows) {
    compare(*gpu, "MaxPool", {x}, w);
    compare(*gpu, "AveragePool", {x}, w, 1e-6f, 1e-6f);
    ir::Attributes include = w;
    include.set("count_include_pad", int64_t{1});
    compare(*gpu, "AveragePool", {x}, include, 1e-6f, 1e-6f);
  }
  const Tensor x1 = random_f32({2, 4, 13}, rng);
  compare(*gpu, "MaxPool", {x1},
          attrs_of({{"kernel_shape", Ints{3}}, {"strides", Ints{2}}, {"ceil_mode", int64_t{1}}}));
  compare(*gpu, "AveragePool", {x1}, attrs_of({{"kernel_shape", Ints{4}}, {"pads", Ints{2, 1}}}), 1e-6f, 1e-6f);
}

TEST(CudaPool, GlobalPoolsOverSmallAndLargePlanes) {
  REQUIRE_GPU();
  std::mt19937 rng(79);
  for (const Shape& x : {Shape{2, 5, 7, 9}, Shape{1, 3, 56, 56}, Shape{1, 2, 3000}, Shape{4, 1, 1, 1}}) {
    const Tensor t = random_f32(x, rng);
    compare(*gpu, "GlobalMaxPool", {t});
    compare(*gpu, "GlobalAveragePool", {t}, {}, 1e-6f, 1e-6f);
  }
}
