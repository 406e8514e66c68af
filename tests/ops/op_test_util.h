#pragma once
// Helpers for the CPU kernel tests: build a node, infer its output types through the op schema,
// run the CPU kernel's prepare() and run() on freshly allocated tensors, and compare the result
// with a double-precision reference that each test computes with its own loops.
//
// Outputs and scratch are filled with NaN (f32) or a marker value (i64) before run(), so a kernel
// that leaves an element unwritten or reads scratch before writing it fails the comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/backend/backend.h"
#include "core/ir/op_schema.h"
#include "core/ir/tensor.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/isa.h"

namespace fusebox::optest {

using ir::DType;
using ir::Shape;
using ir::Tensor;

inline constexpr int64_t kI64Marker = 0x5eadbeef5eadbeef;

// Kernels run on the test's thread at 1 thread unless a test binds more (run_op's `threads`).
inline exec::Backend& cpu_backend() {
  static std::unique_ptr<exec::Backend> backend = [] {
    auto b = cpu::make_backend();
    b->bind_threads(1);
    return b;
  }();
  return *backend;
}

inline ir::Node make_node(const std::string& op, size_t inputs, size_t outputs,
                          const ir::Attributes& attrs) {
  ir::Node node;
  node.name = "test_" + op;
  node.op = op;
  node.attrs = attrs;
  for (size_t i = 0; i < inputs; ++i) node.inputs.push_back("in" + std::to_string(i));
  for (size_t i = 0; i < outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  return node;
}

inline void fill_marker(Tensor& t) {
  if (t.dtype() == DType::f32) {
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  } else {
    for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = kI64Marker;
  }
}

// The Isa kernels are prepared with (ops/cpu/isa.h): by default none is given, so kernels take
// auto_isa() (the best this CPU runs, or FUSEBOX_ISA). A ScopedIsa makes run_op and prepare_only
// hand the kernels options with that level, as compile() does, for tests that loop over
// every path the CPU runs.
inline std::optional<cpu::Isa>& test_isa() {
  static std::optional<cpu::Isa> isa;
  return isa;
}
class ScopedIsa {
 public:
  explicit ScopedIsa(cpu::Isa isa) : saved_(test_isa()) { test_isa() = isa; }
  ~ScopedIsa() { test_isa() = saved_; }
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  std::optional<cpu::Isa> saved_;
};
// The levels this CPU runs, best first.
inline std::vector<cpu::Isa> runnable_isas() {
  std::vector<cpu::Isa> out;
  for (cpu::Isa isa : {cpu::Isa::kAvx512, cpu::Isa::kAvx2, cpu::Isa::kPortable})
    if (cpu::cpu_runs(isa)) out.push_back(isa);
  return out;
}
// Points ctx at options naming test_isa(), when one is set (the options must outlive it).
inline void apply_test_isa(exec::KernelContext& ctx, exec::CompileOptions& options) {
  if (!test_isa()) return;
  options.isa = cpu::isa_name(*test_isa());
  ctx.options = &options;
}

// Runs `op` on `inputs` with the CPU backend at `threads` threads and returns its outputs.
inline std::vector<Tensor> run_op(const std::string& op, const std::vector<Tensor>& inputs,
                                  const ir::Attributes& attrs = {}, int threads = 1,
                                  size_t num_outputs = 1) {
  ir::Node node = make_node(op, inputs.size(), num_outputs, attrs);
  std::vector<ir::TensorType> in_types;
  for (const auto& t : inputs) in_types.push_back({t.dtype(), t.shape()});
  std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
  const exec::KernelDef* kernel = cpu_backend().kernels().find(op);
  if (!kernel) throw Error("no CPU kernel for " + op);
  const size_t scratch_bytes = ir::node_scratch_bytes(node, in_types, out_types);
  exec::KernelContext ctx{node, in_types, out_types, scratch_bytes};
  exec::CompileOptions options;
  apply_test_isa(ctx, options);
  std::shared_ptr<const void> state = kernel->prepare ? kernel->prepare(ctx) : nullptr;

  std::vector<Tensor> outputs;
  for (const auto& t : out_types) {
    outputs.emplace_back(t.dtype, t.shape);
    fill_marker(outputs.back());
  }
  Tensor scratch(DType::f32, {static_cast<int64_t>((scratch_bytes + 3) / 4)});
  fill_marker(scratch);
  std::vector<const void*> in_ptrs;
  for (const auto& t : inputs) in_ptrs.push_back(t.bytes());
  std::vector<void*> out_ptrs;
  for (auto& t : outputs) out_ptrs.push_back(t.bytes());
  exec::KernelArgs args{in_ptrs.data(), out_ptrs.data(), scratch_bytes ? scratch.bytes() : nullptr,
                        state.get()};
  cpu_backend().bind_threads(threads);
  kernel->run(args);
  cpu_backend().bind_threads(1);
  return outputs;
}

inline Tensor run1(const std::string& op, const std::vector<Tensor>& inputs,
                   const ir::Attributes& attrs = {}, int threads = 1) {
  return run_op(op, inputs, attrs, threads, 1)[0];
}

// Calls only prepare(), with types given by the test (bypassing schema inference), so tests can
// check what the kernel itself rejects.
inline void prepare_only(const std::string& op, const std::vector<ir::TensorType>& in_types,
                         const std::vector<ir::TensorType>& out_types,
                         const ir::Attributes& attrs = {}, size_t scratch_bytes = 0) {
  ir::Node node = make_node(op, in_types.size(), out_types.size(), attrs);
  const exec::KernelDef* kernel = cpu_backend().kernels().find(op);
  if (!kernel) throw Error("no CPU kernel for " + op);
  exec::KernelContext ctx{node, in_types, out_types, scratch_bytes};
  exec::CompileOptions options;
  apply_test_isa(ctx, options);
  if (kernel->prepare) kernel->prepare(ctx);
}

inline ir::Attributes attrs_of(
    std::initializer_list<std::pair<const char*, ir::AttrValue>> values) {
  ir::Attributes a;
  for (const auto& [k, v] : values) a.set(k, v);
  return a;
}

inline Tensor random_f32(const Shape& shape, std::mt19937& rng, float lo = -2.0f, float hi = 2.0f) {
  Tensor t(DType::f32, shape);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

inline Tensor random_i64(const Shape& shape, std::mt19937& rng, int64_t lo, int64_t hi) {
  Tensor t(DType::i64, shape);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = dist(rng);
  return t;
}

inline Tensor f32_tensor(const Shape& shape, const std::vector<float>& values) {
  Tensor t(DType::f32, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i)
    t.data<float>()[i] = values[i];
  return t;
}

inline Tensor i64_tensor(const Shape& shape, const std::vector<int64_t>& values) {
  Tensor t(DType::i64, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i)
    t.data<int64_t>()[i] = values[i];
  return t;
}

inline double at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::f32 ? static_cast<double>(t.data<float>()[i])
                                 : static_cast<double>(t.data<int64_t>()[i]);
}

// Reference broadcasting (numpy): the flat index into a tensor of shape `in` that feeds output
// element `flat` of shape `out`.
inline int64_t bcast_index(const Shape& in, const Shape& out, int64_t flat) {
  int64_t index = 0, in_stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t od = out.size() - 1 - k;
    const int64_t coord = flat % out[od];
    flat /= out[od];
    if (k < in.size()) {
      const size_t id = in.size() - 1 - k;
      if (in[id] != 1) index += coord * in_stride;
      in_stride *= in[id];
    }
  }
  return index;
}

// Unravels a flat row-major index.
inline std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

inline int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}

// Element-wise comparison: |got - want| <= atol + rtol |want|, NaN matches NaN, infinities must
// match exactly. Reports the first few mismatches.
inline void expect_close(const Tensor& got, const Shape& shape, const std::vector<double>& want,
                         double atol, double rtol, const std::string& what = "") {
  ASSERT_EQ(got.shape(), shape) << what;
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  int bad = 0;
  std::ostringstream msg;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = at(got, i), w = want[static_cast<size_t>(i)];
    bool ok;
    if (std::isnan(w))
      ok = std::isnan(g);
    else if (std::isinf(w))
      ok = g == w;
    else
      ok = std::abs(g - w) <= atol + rtol * std::abs(w);
    if (!ok && bad++ < 5) msg << "\n  [" << i << "] got " << g << ", want " << w;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.numel() << " elements differ"
                    << msg.str();
}

// Exact comparison for integer outputs and pure data movement.
inline void expect_equal(const Tensor& got, const Shape& shape, const std::vector<double>& want,
                         const std::string& what = "") {
  expect_close(got, shape, want, 0.0, 0.0, what);
}

inline std::string shape_str(const Shape& s) {
  return ir::shape_str(s);
}

}  // namespace fusebox::optest
