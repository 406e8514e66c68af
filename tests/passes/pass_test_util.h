#pragma once
// Helpers for the pass tests: small constants, running one pass through the pipeline (which also
// verifies the graph), and comparing a graph's outputs before and after.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/models/onnx_import.h"
#include "core/passes/pass_manager.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/support/graph_eval.h"

namespace fusebox::passes::test {

inline const exec::Backend& cpu() {
  static auto backend = cpu::make_backend();
  return *backend;
}

inline PassContext cpu_context() {
  PassContext ctx;
  ctx.evaluator = &cpu();
  return ctx;
}

// The committed model files (assets/models), and one of them imported with the CPU backend
// folding its shape arithmetic.
inline std::string asset_path(const std::string& file) {
  return std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/" + file;
}
inline ir::Graph import_asset(const std::string& file) {
  models::OnnxImportOptions opt;
  opt.evaluator = &cpu();
  return models::import_onnx_file(asset_path(file), opt);
}

inline ir::Tensor scalar(float v, ir::Shape shape = {}) {
  ir::Tensor t(ir::DType::f32, std::move(shape));
  t.data<float>()[0] = v;
  return t;
}

inline ir::Tensor random_tensor(ir::Shape shape, uint64_t seed) {
  ir::Tensor t(ir::DType::f32, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

inline ir::Tensor i64_tensor(ir::Shape shape, std::vector<int64_t> values) {
  ir::Tensor t(ir::DType::i64, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

// Runs pass `name` alone through run_pipeline and returns its log entry.
inline PassLogEntry run_pass(ir::Graph& g, const std::string& name,
                             const PassContext& ctx = cpu_context()) {
  PassLog log = run_pipeline(g, {name}, ctx);
  for (auto& e : log.entries)
    if (e.pass == name) return e;
  ADD_FAILURE() << "no log entry for " << name;
  return {};
}

inline int count_op(const ir::Graph& g, const std::string& op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.op == op; }));
}

inline const ir::Node* find_op(const ir::Graph& g, const std::string& op) {
  for (const auto& n : g.nodes)
    if (n.op == op) return &n;
  return nullptr;
}

// The sentences of a pass log's rewrites or near misses.
template <typename Entry>
std::vector<std::string> texts(const std::vector<Entry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.text);
  return out;
}

// The first rewrite or near miss whose sentence contains `needle`; null (and a failure listing
// the sentences) when none does.
template <typename Entry>
const Entry* find_line(const std::vector<Entry>& entries, const std::string& needle) {
  for (const auto& e : entries)
    if (e.text.find(needle) != std::string::npos) return &e;
  std::string all;
  for (const auto& e : entries) all += "\n  " + e.text;
  ADD_FAILURE() << "no line contains '" << needle << "' in:" << all;
  return nullptr;
}

using Names = std::vector<std::string>;

// Whether some line contains `needle`; prints the lines when not.

inline ::testing::AssertionResult has_line(const std::vector<std::string>& lines,
                                           const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  std::string all;
  for (const auto& l : lines) all += "\n  " + l;
  return ::testing::AssertionFailure() << "no line contains '" << needle << "' in:" << all;
}
inline ::testing::AssertionResult has_line(const std::vector<Rewrite>& rewrites,
                                           const std::string& needle) {
  return has_line(texts(rewrites), needle);
}
inline ::testing::AssertionResult has_line(const std::vector<NearMiss>& misses,
                                           const std::string& needle) {
  return has_line(texts(misses), needle);
}

// The two graphs compute the same outputs (same names, values within atol/rtol) on random inputs.
inline void expect_same_outputs(const ir::Graph& before, const ir::Graph& after, uint64_t seed = 7,
                                double tol = 1e-4) {
  ASSERT_EQ(before.outputs, after.outputs);
  auto inputs = fusebox::testing::random_inputs(before, seed);
  auto want = fusebox::testing::evaluate_graph(before, inputs);
  auto got = fusebox::testing::evaluate_graph(after, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_LE(fusebox::testing::tolerance_ratio(got[i], want[i], tol, tol), 1.0)
        << "output " << before.outputs[i];
}

}  // namespace fusebox::passes::test
