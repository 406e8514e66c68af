// fusebox selftest: does a backend compute what the CPU computes? Every op the backend has a
// kernel for runs on a small graph, and every builtin model runs with all passes, on the target
// and on the reference (the CPU backend, eager executor, passes none); the outputs are compared
// element by element and the verdict is one row each.
//
// With the target "cpu" itself the target side is the compiled executor (and, for the models, the
// passes' fused kernels) against that same eager, unoptimized reference: the planner's arena
// (aliasing, scratch), the compiled dispatch and every fusion are checked against the plainest way
// of running the graph. An op of the target's kernel table without a case in kOpCases is a FAIL
// row ("no self-test case"), so adding a kernel without adding its case is caught here.
//
// Rows have a kind: "op", "model", "capture" (one run captured, e.g. into a CUDA graph, then
// replayed), "trace" (the backend's device activity: every kernel tied to the op that launched
// it; not applicable where the backend records none, as on the CPU) and "tf32" (the model with
// precision=tf32 against the same backend at fp32: what TF32 GEMMs cost in accuracy; not
// applicable where the backend has no TF32, as on the CPU). Model rows also time the model
// on the target and on the CPU (compiled executor, all passes, median of interleaved runs), so a
// GPU user sees CPU vs GPU latency per model.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/workbench/backends.h"
#include "app/workbench/model_source.h"
#include "core/backend/backend.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/exec/session.h"
#include "core/ir/graph.h"
#include "core/ir/op_schema.h"
#include "core/models/builtin_models.h"
#include "core/models/weights.h"

namespace fusebox::cli {

namespace {

using ir::DType;

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-4;
constexpr uint64_t kSeed = 7;
// The tf32 rows' bound: TF32 keeps 10 of fp32's 23 mantissa bits (about 5e-4 relative rounding
// of each GEMM input), so a model's outputs move by about 1e-3 relative; this is loose enough for
// that and still fails a broken TF32 path (garbage, NaN, a wrong layout). The figure is the point.
constexpr double kTf32Rtol = 5e-2;
constexpr double kTf32Atol = 5e-3;

// The table below is plain data, built by the compiler rather than by code: as vectors of
// vectors it took 30 of this file's 50 s to compile (-O3, GCC 12).
constexpr int kMaxRank = 6;
constexpr int kMaxOperands = 10;

// One operand of a case: its type, the range its seeded values are drawn from (uniform; integers
// for i64), and whether it is a weight (a constant the kernel may repack at compile time) or a
// graph input.
struct Operand {
  DType dtype = DType::f32;
  int rank = -1;  // -1: no operand (the unused end of OpCase::operands)
  int64_t dims[kMaxRank] = {};
  double lo = -2.0;
  double hi = 2.0;
  bool weight = false;
  ir::Shape shape() const { return ir::Shape(dims, dims + rank); }
};

// One self-test case of an op. `attrs` is JSON: numbers, strings, lists of integers or strings.
struct OpCase {
  const char* op;
  Operand operands[kMaxOperands];
  const char* attrs = "{}";
  double rtol = kRtol;
  double atol = kAtol;
  std::span<const Operand> inputs() const {
    size_t n = 0;
    while (n < kMaxOperands && operands[n].rank >= 0) ++n;
    return {operands, n};
  }
};

// A shape of more than kMaxRank dims does not compile (the throw is not a constant expression).
constexpr Operand operand(DType dtype, std::initializer_list<int64_t> shape, double lo, double hi, bool weight) {
  if (shape.size() > kMaxRank) throw "an operand of more than kMaxRank dims";
  Operand o{dtype, static_cast<int>(shape.size()), {}, lo, hi, weight};
  int i = 0;
  for (int64_t d : shape) o.dims[i++] = d;
  return o;
}
constexpr Operand f32(std::initializer_list<int64_t> s, double lo = -2.0, double hi = 2.0) {
  return operand(DType::f32, s, lo, hi, false);
}
constexpr Operand i64(std::initializer_list<int64_t> s, double lo, double hi) {
  return operand(DType::i64, s, lo, hi, false);
}
constexpr Operand weight(std::initializer_list<int64_t> s, double lo = -1.0, double hi = 1.0) {
  return operand(DType::f32, s, lo, hi, true);
}

// The table: op -> case(s). Shapes are small and odd-sized (tails of vector loops), with
// broadcasting where the op broadcasts. The looser tolerances are where a device's math may
// differ from the CPU's (GEMM accumulation order and TF32, transcendental approximations).
std::span<const OpCase> op_cases() {
  static constexpr OpCase cases[] = {
      {"Add", {f32({2, 3, 9}), f32({9})}},
      {"Sub", {f32({2, 3, 9}), f32({2, 1, 9})}},
      {"Mul", {f32({4, 17}), f32({4, 17})}},
      {"Div", {f32({4, 17}), f32({17}, 0.5, 2.0)}},
      {"Pow", {f32({4, 17}, 0.1, 2.0), f32({1}, 0.5, 3.0)}},
      {"Relu", {f32({3, 41})}},
      {"Tanh", {f32({3, 41})}},
      {"Sigmoid", {f32({3, 41})}},
      {"Exp", {f32({3, 41})}},
      {"Erf", {f32({3, 41})}},
      {"Sqrt", {f32({3, 41}, 0.0, 4.0)}},
      {"Neg", {f32({3, 41})}},
      {"Gelu", {f32({3, 41})}},
      {"Gelu", {f32({3, 41})}, R"({"approximate": "tanh"})"},
      {"Cast", {f32({4, 9}, -5.0, 5.0)}, R"({"to": "i64"})"},
      {"Cast", {i64({4, 9}, -50, 50)}, R"({"to": "f32"})"},
      {"Where", {i64({4, 9}, 0, 1), f32({4, 9}), f32({9})}},
      {"FusedElementwise",
       {f32({4, 17}), f32({17}), f32({4, 17})},
       R"({"program": ["Add i0 i1", "Relu r0", "Mul r1 i2"]})"},
      {"Reshape", {f32({2, 3, 4})}, R"({"shape": [6, -1]})"},
      {"Identity", {f32({2, 3})}},
      {"Flatten", {f32({2, 3, 4})}, R"({"axis": 1})"},
      {"Squeeze", {f32({2, 1, 4})}, R"({"axes": [1]})"},
      {"Unsqueeze", {f32({2, 4})}, R"({"axes": [1]})"},
      {"Transpose", {f32({2, 3, 5})}, R"({"perm": [2, 0, 1]})"},
      {"Slice",
       {f32({4, 10})},
       R"({"starts": [1, 2], "ends": [3, 9], "axes": [0, 1], "steps": [1, 2]})"},
      {"Concat", {f32({2, 3}), f32({2, 5})}, R"({"axis": 1})"},
      {"Gather", {weight({10, 8}), i64({2, 3}, 0, 9)}, R"({"axis": 0})"},
      {"MatMul", {f32({2, 5, 33}), weight({33, 12})}, "{}", kRtol, 1e-3},
      {"MatMul", {f32({4, 33}), f32({12, 33})}, R"({"transB": 1, "alpha": 0.5})", kRtol, 1e-3},
      {"MatMulAdd", {f32({3, 33}), weight({33, 8}), weight({8})}, "{}", kRtol, 1e-3},
      {"FusedBiasRelu", {f32({3, 33}), weight({33, 8}), weight({8})}, "{}", kRtol, 1e-3},
      {"FusedBiasGelu", {f32({3, 33}), weight({33, 8}), weight({8})}, "{}", kRtol, 1e-3},
      {"FusedBiasGelu",
       {f32({3, 33}), weight({33, 8}), weight({8})},
       R"({"approximate": "tanh"})",
       kRtol,
       1e-3},
      {"FusedBiasTanh", {f32({3, 33}), weight({33, 8}), weight({8})}, "{}", kRtol, 1e-3},
      {"FusedBiasSigmoid", {f32({3, 33}), weight({33, 8}), weight({8})}, "{}", kRtol, 1e-3},
      {"Attention",
       {f32({2, 3, 7, 8}), f32({2, 3, 7, 8}), f32({2, 3, 7, 8})},
       R"({"scale": 0.35})",
       kRtol,
       1e-3},
      {"Attention",
       {f32({2, 3, 7, 8}), f32({2, 3, 7, 8}), f32({2, 3, 7, 8})},
       R"({"scale": 0.35, "causal": 1})",
       kRtol,
       1e-3},
      {"Attention",
       {f32({2, 3, 7, 8}), f32({2, 3, 7, 8}), f32({2, 3, 7, 8}), f32({7, 7}, -4.0, 0.0)},
       R"({"scale": 0.35})",
       kRtol,
       1e-3},
      {"Softmax", {f32({3, 5, 7})}, R"({"axis": -1})"},
      {"LayerNorm",
       {f32({2, 5, 16}), weight({16}), weight({16})},
       R"({"axis": -1, "epsilon": 1e-5})"},
      {"SkipLayerNorm",
       {f32({2, 5, 16}), f32({2, 5, 16}), weight({16}), weight({16})},
       R"({"epsilon": 1e-5})"},
      {"ReduceMean", {f32({2, 5, 16})}, R"({"axes": [-1], "keepdims": 1})"},
      {"ReduceSum", {f32({2, 5, 16})}, R"({"axes": [1], "keepdims": 0})"},
      {"ReduceMax", {f32({2, 5, 16})}, R"({"axes": [-1], "keepdims": 1})"},
      {"ReduceMin", {f32({2, 5, 16})}, R"({"axes": [0, 2], "keepdims": 1})"},
      {"ArgMax", {f32({3, 5, 7})}, R"({"axis": 1, "keepdims": 0})"},
      {"CumSum", {f32({3, 5, 7})}, R"({"axis": 1})"},
      {"CumSum", {i64({4, 9}, -50, 50)}, R"({"axis": 1, "exclusive": 1, "reverse": 1})"},
      {"Abs", {f32({3, 41})}},
      {"HardSwish", {f32({3, 41}, -5.0, 5.0)}},
      {"LeakyRelu", {f32({3, 41})}, R"({"alpha": 0.1})"},
      {"Elu", {f32({3, 41})}, R"({"alpha": 1.0})"},
      {"HardSigmoid", {f32({3, 41}, -5.0, 5.0)}, R"({"alpha": 0.2, "beta": 0.5})"},
      {"Clip", {f32({3, 41})}, R"({"min": -0.5, "max": 1.5})"},
      {"PRelu", {f32({2, 3, 9}), weight({9})}},
      {"Max", {f32({2, 3, 9}), f32({9})}},
      {"Min", {f32({2, 3, 9}), f32({2, 1, 9})}},
      {"Equal", {i64({4, 9}, 0, 2), i64({9}, 0, 2)}},
      {"Less", {f32({4, 9}), f32({9})}},
      {"Greater", {f32({4, 9}), f32({4, 1})}},
      {"And", {i64({4, 9}, 0, 1), i64({9}, 0, 1)}},
      {"Or", {i64({4, 9}, 0, 1), i64({4, 9}, 0, 1)}},
      {"Not", {i64({4, 9}, 0, 1)}},
      {"Expand", {f32({3, 1})}, R"({"shape": [2, 3, 5]})"},
      {"Tile", {f32({2, 3})}, R"({"repeats": [2, 3]})"},
      {"Pad", {f32({3, 5})}, R"({"pads": [1, 2, 0, 1], "mode": "constant"})"},
      {"Pad", {f32({3, 5})}, R"({"pads": [2, 1, 1, 3], "mode": "reflect"})"},
      {"Pad", {f32({3, 5})}, R"({"pads": [1, 0, 2, 2], "mode": "edge"})"},
      // Ops added for the ONNX conformance count (issue 25).
      {"Reciprocal", {f32({3, 41}, 0.5, 2.0)}},
      {"Floor", {f32({3, 41}, -5.0, 5.0)}},
      {"Ceil", {f32({3, 41}, -5.0, 5.0)}},
      {"Round", {f32({3, 41}, -5.0, 5.0)}},
      {"Sign", {f32({3, 41})}},
      {"Log", {f32({3, 41}, 0.1, 5.0)}},
      {"Sin", {f32({3, 41})}},
      {"Cos", {f32({3, 41})}},
      {"Tan", {f32({3, 41}, -1.0, 1.0)}},
      {"Asin", {f32({3, 41}, -0.9, 0.9)}},
      {"Acos", {f32({3, 41}, -0.9, 0.9)}},
      {"Atan", {f32({3, 41})}},
      {"Sinh", {f32({3, 41})}},
      {"Cosh", {f32({3, 41})}},
      {"Asinh", {f32({3, 41})}},
      {"Acosh", {f32({3, 41}, 1.0, 4.0)}},
      {"Atanh", {f32({3, 41}, -0.9, 0.9)}},
      {"Softplus", {f32({3, 41})}},
      {"Softsign", {f32({3, 41})}},
      {"IsNaN", {f32({3, 41})}},
      {"IsInf", {f32({3, 41})}, R"({"detect_negative": 1, "detect_positive": 1})"},
      {"Selu", {f32({3, 41})}, R"({"alpha": 1.6732632, "gamma": 1.050701})"},
      {"Celu", {f32({3, 41})}, R"({"alpha": 1.5})"},
      {"ThresholdedRelu", {f32({3, 41})}, R"({"alpha": 0.5})"},
      {"Shrink", {f32({3, 41})}, R"({"bias": 0.25, "lambd": 0.5})"},
      {"Mod", {f32({4, 9}, -5.0, 5.0), f32({9}, 0.5, 2.0)}, R"({"fmod": 1})"},
      {"Mod", {i64({4, 9}, -50, 50), i64({9}, 1, 7)}, R"({"fmod": 0})"},
      {"GreaterOrEqual", {f32({4, 9}), f32({9})}},
      {"LessOrEqual", {i64({4, 9}, 0, 3), i64({4, 1}, 0, 3)}},
      {"Xor", {i64({4, 9}, 0, 1), i64({9}, 0, 1)}},
      {"BitShift", {i64({4, 9}, 0, 255), i64({9}, 0, 7)}, R"({"direction": "LEFT"})"},
      {"Hardmax", {f32({3, 5, 7})}, R"({"axis": 1})"},
      {"LogSoftmax", {f32({3, 5, 7})}, R"({"axis": 1})"},
      {"ReduceProd", {f32({2, 5, 16}, 0.5, 1.5)}, R"({"axes": [1], "keepdims": 1})"},
      {"ArgMin", {f32({3, 5, 7})}, R"({"axis": 2, "keepdims": 1})"},
      {"Trilu", {f32({2, 5, 7})}, R"({"upper": 0, "k": 1})"},
      {"GatherElements", {f32({4, 6}), i64({4, 3}, -6, 5)}, R"({"axis": 1})"},
      // Duplicate indices reduce in order; with "none" the winner would be the backend's choice.
      {"ScatterND", {f32({4, 5, 3}), i64({3, 2}, -4, 3), f32({3, 3})}, R"({"reduction": "add"})"},
      {"ScatterElements",
       {f32({4, 6}), i64({3, 6}, -4, 3), f32({3, 6})},
       R"({"axis": 0, "reduction": "max"})"},
      {"Conv",
       {f32({1, 3, 9, 11}), weight({5, 3, 3, 3}), weight({5})},
       R"({"pads": [1, 1, 1, 1]})",
       kRtol,
       1e-3},
      {"Conv",
       {f32({2, 6, 7, 9}), weight({6, 1, 3, 3}), weight({6})},
       R"({"group": 6, "strides": [2, 2], "pads": [1, 1, 1, 1], "activation": "hardswish"})",
       kRtol,
       1e-3},
      {"Conv",
       {f32({1, 8, 5, 5}), weight({4, 8, 1, 1})},
       R"({"activation": "clip", "activation_min": 0.0, "activation_max": 0.5})",
       kRtol,
       1e-3},
      {"ConvTranspose",
       {f32({1, 4, 5, 6}), weight({4, 3, 3, 3}), weight({3})},
       R"({"strides": [2, 2]})",
       kRtol,
       1e-3},
      {"BatchNorm",
       {f32({2, 3, 5, 7}), weight({3}), weight({3}), weight({3}), weight({3}, 0.5, 2.0)},
       R"({"epsilon": 1e-5})"},
      {"MaxPool",
       {f32({1, 3, 9, 11})},
       R"({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})"},
      {"AveragePool",
       {f32({1, 3, 9, 11})},
       R"({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 0})"},
      {"GlobalAveragePool", {f32({2, 5, 7, 9})}},
      {"GlobalMaxPool", {f32({2, 5, 7, 9})}},
      // The channels-last forms (the channels_last pass makes them): activations [N, H, W, C].
      {"NhwcConv",
       {f32({1, 9, 11, 3}), weight({5, 3, 3, 3}), weight({5})},
       R"({"pads": [1, 1, 1, 1]})",
       kRtol,
       1e-3},
      {"NhwcConv",
       {f32({2, 7, 9, 6}), weight({6, 1, 3, 3}), weight({6})},
       R"({"group": 6, "strides": [2, 2], "pads": [1, 1, 1, 1], "activation": "hardswish"})",
       kRtol,
       1e-3},
      {"NhwcConv",  // Winograd F(2x2, 3x3) (the winograd pass marks it): odd sizes, channel tails
       {f32({1, 9, 11, 12}), weight({10, 12, 3, 3}), weight({10})},
       R"({"pads": [1, 1, 1, 1], "winograd": 1, "activation": "relu"})",
       kRtol,
       1e-3},
      {"NhwcConv",
       {f32({1, 5, 5, 8}), weight({4, 8, 1, 1})},
       R"({"activation": "clip", "activation_min": 0.0, "activation_max": 0.5})",
       kRtol,
       1e-3},
      {"NhwcMaxPool",
       {f32({1, 9, 11, 3})},
       R"({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})"},
      {"NhwcAveragePool",
       {f32({1, 9, 11, 3})},
       R"({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1})"},
      {"NhwcGlobalAveragePool", {f32({2, 7, 9, 5})}},
      {"NhwcGlobalMaxPool", {f32({2, 7, 9, 5})}},
      // Sequence lengths from 1 to 5: entries stop early, and the outputs past them are zeros.
      {"LSTM",
       {f32({5, 3, 4}), weight({1, 24, 4}), weight({1, 24, 6}), weight({1, 48}), i64({3}, 1, 5),
        f32({1, 3, 6}), f32({1, 3, 6}), weight({1, 18})},
       R"({"hidden_size": 6})"},
      {"GRU",
       {f32({5, 3, 4}), weight({2, 18, 4}), weight({2, 18, 6}), weight({2, 36}), i64({3}, 1, 5),
        f32({2, 3, 6})},
       R"({"hidden_size": 6, "direction": "bidirectional", "linear_before_reset": 1})"},
      {"GRU",
       {f32({5, 3, 4}), weight({1, 18, 4}), weight({1, 18, 6}), weight({1, 36}), i64({3}, 1, 5),
        f32({1, 3, 6})},
       R"({"hidden_size": 6})"},
      {"RNN",
       {f32({3, 5, 4}), weight({1, 6, 4}), weight({1, 6, 6}), weight({1, 12}), i64({3}, 1, 5),
        f32({3, 1, 6})},
       R"({"hidden_size": 6, "layout": 1, "direction": "reverse"})"},
      {"Resize", {f32({1, 3, 7, 9})}, R"({"mode": "nearest", "sizes": [1, 3, 14, 18]})"},
      {"Resize",
       {f32({1, 3, 7, 9})},
       R"({"mode": "linear", "coordinate_transformation_mode": "align_corners", "sizes": [1, 3, 12, 5]})"},
      {"Resize", {f32({1, 2, 6, 8})}, R"({"mode": "cubic", "scales": [1.0, 1.0, 1.5, 0.75]})"},
  };
  return cases;
}

// Builtin models at sizes that run in well under a second eagerly; a builtin model not listed
// here runs at its default options.
const std::vector<std::pair<std::string, std::string>>& model_sizes() {
  static const std::vector<std::pair<std::string, std::string>> sizes = {
      {"mlp", "mlp:dims=64-48-10,batch=4"},
      {"transformer", "transformer:seq=16,d=64,heads=4,ffn=128,batch=2"},
      {"stack", "stack:layers=2,seq=16,d=64,heads=4,ffn=128,batch=1"},
  };
  return sizes;
}

struct Row {
  std::string kind;    // "op", "model", "capture" (later: "cupti")
  std::string name;    // the op or the model
  std::string label;   // the case: operand types and attributes, or the model spec
  std::string status;  // "pass", "FAIL", "n/a"
  bool compared =
      false;  // outputs of both sides were compared (max_abs and max_rel mean something)
  double max_abs = 0;
  double max_rel = 0;
  double rtol = kRtol;
  double atol = kAtol;
  std::string detail;     // why it failed or does not apply
  double target_us = -1;  // model rows: median latency on the target and on the CPU (-1: not timed)
  double cpu_us = -1;
};

Row make_row(const std::string& kind, const std::string& name, const std::string& label) {
  Row r;
  r.kind = kind;
  r.name = name;
  r.label = label;
  return r;
}

ir::Attributes attrs_from_json(const char* text) {
  ir::Attributes a;
  const nlohmann::json j = nlohmann::json::parse(text);
  for (const auto& [key, v] : j.items()) {
    if (v.is_number_integer()) {
      a.set(key, v.get<int64_t>());
    } else if (v.is_number()) {
      a.set(key, v.get<double>());
    } else if (v.is_string()) {
      a.set(key, v.get<std::string>());
    } else if (v.is_array() && !v.empty() && v[0].is_string()) {
      a.set(key, v.get<std::vector<std::string>>());
    } else if (v.is_array() && std::any_of(v.begin(), v.end(), [](const auto& e) { return e.is_number_float(); })) {
      a.set(key, v.get<std::vector<double>>());  // Resize's scales, roi
    } else if (v.is_array()) {
      a.set(key, v.get<std::vector<int64_t>>());
    } else {
      throw Error("self-test case attribute '" + key + "': unsupported JSON value " + v.dump());
    }
  }
  return a;
}

ir::Tensor seeded(const Operand& o, std::mt19937& rng) {
  ir::Tensor t(o.dtype, o.shape());
  if (o.dtype == DType::f32) {
    std::uniform_real_distribution<float> d(static_cast<float>(o.lo), static_cast<float>(o.hi));
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  } else {
    std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(o.lo),
                                             static_cast<int64_t>(o.hi));
    for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = d(rng);
  }
  return t;
}

std::string case_label(const OpCase& c) {
  std::string s;
  for (const Operand& o : c.inputs())
    s += (s.empty() ? "" : " ") + std::string(o.weight ? "w:" : "") + ir::dtype_name(o.dtype) +
         ir::shape_str(o.shape());
  const ir::Attributes attrs = attrs_from_json(c.attrs);
  if (!attrs.all().empty()) s += " " + attrs.to_string();
  return s;
}

// A one-node graph running the case, its graph inputs in order.
ir::Graph op_graph(const OpCase& c, std::vector<ir::Tensor>& inputs) {
  std::mt19937 rng(kSeed);
  ir::Graph g;
  g.name = std::string("selftest.") + c.op;
  std::vector<std::string> names;
  const std::span<const Operand> operands = c.inputs();
  for (size_t i = 0; i < operands.size(); ++i) {
    const Operand& o = operands[i];
    ir::Tensor value = seeded(o, rng);
    const std::string name = (o.weight ? "w" : "x") + std::to_string(i);
    if (o.weight) {
      g.add_weight(name, std::move(value));
    } else {
      g.add_input(name, o.dtype, o.shape());
      inputs.push_back(std::move(value));
    }
    names.push_back(name);
  }
  // Every output an op must have (an LSTM's Y, Y_h and Y_c), all compared.
  const int outputs = ir::OpRegistry::instance().get(c.op).min_outputs;
  g.add_node(c.op, names, attrs_from_json(c.attrs), std::string("selftest.") + c.op, outputs);
  g.outputs = g.nodes.back().outputs;
  return g;
}

// Compares `got` with `want` output by output: |got - want| <= atol + rtol |want| everywhere
// (NaN matches NaN, infinities must be equal; i64 outputs must be equal). Fills max_abs and
// max_rel (relative to |want| over elements with |want| >= atol) and, on a mismatch, the detail.
void compare(const std::vector<ir::Tensor>& got, const std::vector<ir::Tensor>& want, Row& row) {
  if (got.size() != want.size()) {
    row.status = "FAIL";
    row.detail =
        std::to_string(got.size()) + " outputs, the reference has " + std::to_string(want.size());
    return;
  }
  int64_t bad = 0, total = 0;
  std::string first;
  for (size_t o = 0; o < got.size(); ++o) {
    const ir::Tensor& g = got[o];
    const ir::Tensor& w = want[o];
    if (g.dtype() != w.dtype() || g.shape() != w.shape()) {
      row.status = "FAIL";
      row.detail = "output " + std::to_string(o) + " is " + ir::dtype_name(g.dtype()) +
                   ir::shape_str(g.shape()) + ", the reference's " + ir::dtype_name(w.dtype()) +
                   ir::shape_str(w.shape());
      return;
    }
    const bool exact = g.dtype() == DType::i64;
    for (int64_t i = 0; i < g.numel(); ++i) {
      const double a = exact ? static_cast<double>(g.data<int64_t>()[i]) : g.data<float>()[i];
      const double b = exact ? static_cast<double>(w.data<int64_t>()[i]) : w.data<float>()[i];
      ++total;
      bool ok;
      double err = 0;
      if (std::isnan(b) || std::isnan(a)) {
        ok = std::isnan(a) && std::isnan(b);
        err = ok ? 0 : INFINITY;
      } else if (std::isinf(b) || std::isinf(a)) {
        ok = a == b;
        err = ok ? 0 : INFINITY;
      } else {
        err = std::abs(a - b);
        ok = exact ? err == 0 : err <= row.atol + row.rtol * std::abs(b);
        if (std::abs(b) >= row.atol) row.max_rel = std::max(row.max_rel, err / std::abs(b));
      }
      row.max_abs = std::max(row.max_abs, err);
      if (!ok && bad++ == 0) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "output %zu element %lld: %.9g, the reference %.9g", o,
                      static_cast<long long>(i), a, b);
        first = buf;
      }
    }
  }
  row.compared = true;
  if (bad) {
    row.status = "FAIL";
    row.detail =
        std::to_string(bad) + " of " + std::to_string(total) + " elements differ; first: " + first;
  } else {
    row.status = "pass";
  }
}

exec::SessionOptions reference_options() {
  exec::SessionOptions o;
  o.backend = "cpu";
  o.executor = "eager";
  o.passes = "none";
  return o;
}

// Runs `graph` on the reference and on the target and compares; an exception on either side is
// the row's failure, named by side.
void run_and_compare(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                     const exec::SessionOptions& target, Row& row, bool replay = false) {
  std::vector<ir::Tensor> want, got;
  try {
    exec::Session ref(graph, reference_options());
    want = ref.run(inputs);
  } catch (const std::exception& e) {
    row.status = "FAIL";
    row.detail = std::string("the reference failed: ") + e.what();
    return;
  }
  try {
    exec::Session s(graph, target);
    if (target.capture && !s.capture_note().empty()) {
      row.status = "n/a";
      row.detail = "not applicable: " + s.capture_note();
      return;
    }
    got = s.run(inputs);
    if (replay) {
      got = s.run(inputs);  // the first run captured; this one replays
      row.detail = "replayed " + s.executor().captured();
    }
  } catch (const std::exception& e) {
    row.status = "FAIL";
    row.detail = "backend '" + target.backend + "' failed: " + e.what();
    return;
  }
  compare(got, want, row);
}

// Median latency of `graph` on the target and on the CPU (same executor, passes and threads),
// timed in interleaved rounds so that drift on the machine hits both sides alike.
void time_model(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                const exec::SessionOptions& target, Row& row) {
  constexpr int kRounds = 15;
  exec::SessionOptions cpu = target;
  cpu.backend = "cpu";
  exec::Session on_target(graph, target), on_cpu(graph, cpu);
  on_target.run(inputs);  // warm-up: first-touch, lazy library set-up
  on_cpu.run(inputs);
  std::vector<double> t_target, t_cpu;
  for (int i = 0; i < kRounds; ++i) {
    for (auto [s, out] : {std::pair{&on_target, &t_target}, std::pair{&on_cpu, &t_cpu}}) {
      const auto t0 = std::chrono::steady_clock::now();
      s->run(inputs);  // returns host tensors: the device work is finished
      out->push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  for (auto* v : {&t_target, &t_cpu}) std::sort(v->begin(), v->end());
  row.target_us = t_target[kRounds / 2];
  row.cpu_us = t_cpu[kRounds / 2];
}

// One run's device activity (after a warm-up run, whose activity is dropped): every kernel must be
// tied to an op of the graph the session ran.
void check_trace(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                 const exec::SessionOptions& target, Row& row) {
  try {
    exec::Session s(graph, target);
    s.run(inputs);
    exec::BackendRecording recording(s.backend());
    s.run(inputs);
    const std::vector<exec::DeviceActivity> activity = recording.finish().device;
    if (activity.empty()) {
      row.status = "n/a";
      row.detail = "not applicable: backend '" + target.backend +
                   "' recorded no device activity (" + s.backend().description() + ")";
      return;
    }
    const exec::KernelCorrelation c =
        exec::check_kernel_correlation(activity, s.graph().nodes.size());
    row.status = c.ok() ? "pass" : "FAIL";
    row.detail = c.summary();
  } catch (const std::exception& e) {
    row.status = "FAIL";
    row.detail = "backend '" + target.backend + "' failed: " + e.what();
  }
}

// The model at precision=tf32 against the same backend at fp32 (both compiled, all passes).
void compare_tf32(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                  const exec::SessionOptions& target, const exec::Backend& backend, Row& row) {
  const std::vector<std::string> offered = backend.caps().precisions;
  if (std::find(offered.begin(), offered.end(), "tf32") == offered.end()) {
    row.status = "n/a";
    row.detail = "not applicable: backend '" + target.backend + "' has no TF32 math (it computes in fp32)";
    return;
  }
  std::vector<ir::Tensor> fp32, tf32;
  try {
    exec::SessionOptions t = target;
    t.precision = "fp32";
    fp32 = exec::Session(graph, t).run(inputs);
    t.precision = "tf32";
    tf32 = exec::Session(graph, t).run(inputs);
  } catch (const std::exception& e) {
    row.status = "FAIL";
    row.detail = "backend '" + target.backend + "' failed: " + e.what();
    return;
  }
  compare(tf32, fp32, row);
  if (row.status == "pass") row.detail = "against fp32 on '" + target.backend + "'";
}

struct SelftestArgs {
  std::string backend = "cpu";
  bool json = false;
  std::vector<std::string> without_case;  // hidden: pretend these ops have no case (for tests)
  double rtol = -1;                       // >= 0: every row's, instead of the table's
  double atol = -1;
};

// The cases of `op` in the table (empty: no self-test case), minus those `without` names.
std::vector<const OpCase*> selftest_cases_for(const std::string& op,
                                              const std::set<std::string>& without) {
  std::vector<const OpCase*> out;
  if (without.count(op)) return out;
  for (const OpCase& c : op_cases())
    if (op == c.op) out.push_back(&c);
  return out;
}

std::vector<Row> run_selftest(const SelftestArgs& args, exec::Backend& backend) {
  std::vector<Row> rows;
  const std::set<std::string> without(args.without_case.begin(), args.without_case.end());
  std::vector<std::string> ops = backend.kernels().names();
  std::sort(ops.begin(), ops.end());
  exec::SessionOptions op_target;
  op_target.backend = args.backend;
  op_target.executor = "compiled";
  op_target.passes = "none";  // the op itself, not what a pass would make of it
  for (const std::string& op : ops) {
    const std::vector<const OpCase*> cases = selftest_cases_for(op, without);
    if (cases.empty()) {
      Row row = make_row("op", op, "");
      row.status = "FAIL";
      row.detail = "no self-test case: add one for " + op + " to app/cli/selftest_command.cpp";
      rows.push_back(row);
      continue;
    }
    for (const OpCase* c : cases) {
      Row row = make_row("op", op, "");
      row.rtol = args.rtol >= 0 ? args.rtol : c->rtol;
      row.atol = args.atol >= 0 ? args.atol : c->atol;
      try {
        row.label = case_label(*c);
        std::vector<ir::Tensor> inputs;
        const ir::Graph g = op_graph(*c, inputs);
        run_and_compare(g, inputs, op_target, row);
      } catch (const std::exception& e) {
        row.status = "FAIL";
        row.detail = std::string("the case is invalid: ") + e.what();
      }
      rows.push_back(row);
    }
  }

  exec::SessionOptions model_target;
  model_target.backend = args.backend;
  model_target.executor = "compiled";
  model_target.passes = "all";
  for (const std::string& name : models::builtin_model_names()) {
    std::string spec = name;
    for (const auto& [model, sized] : model_sizes())
      if (model == name) spec = sized;
    Row row = make_row("model", name, spec);
    Row capture = make_row("capture", name, spec);
    Row trace = make_row("trace", name, spec);
    Row tf32 = make_row("tf32", name, spec);
    tf32.rtol = kTf32Rtol;
    tf32.atol = kTf32Atol;
    if (args.rtol >= 0) row.rtol = capture.rtol = trace.rtol = tf32.rtol = args.rtol;
    if (args.atol >= 0) row.atol = capture.atol = trace.atol = tf32.atol = args.atol;
    try {
      const ir::Graph g = models::build_model(spec, models::kDefaultSeed);
      const std::vector<ir::Tensor> inputs = workbench::random_inputs(g, kSeed);
      run_and_compare(g, inputs, model_target, row);
      exec::SessionOptions captured = model_target;
      captured.capture = true;
      run_and_compare(g, inputs, captured, capture, /*replay=*/true);
      if (row.status == "pass") time_model(g, inputs, model_target, row);
      check_trace(g, inputs, model_target, trace);
      compare_tf32(g, inputs, model_target, backend, tf32);
    } catch (const std::exception& e) {
      row.status = capture.status = trace.status = tf32.status = "FAIL";
      row.detail = capture.detail = trace.detail = tf32.detail =
          std::string("the model could not be built: ") + e.what();
    }
    rows.push_back(row);
    rows.push_back(capture);
    rows.push_back(trace);
    rows.push_back(tf32);
  }
  return rows;
}

std::string fmt_err(const Row& r, double value) {
  if (!r.compared) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", value);
  return buf;
}

void print_text(const std::vector<Row>& rows, const std::string& target,
                const std::string& description) {
  size_t wn = 4, wl = 4;
  for (const Row& r : rows) {
    wn = std::max(wn, r.name.size());
    wl = std::max(wl, std::min<size_t>(r.label.size(), 60));
  }
  std::printf(
      "selftest: backend '%s' (%s), compiled executor, against cpu, eager executor, passes none\n",
      target.c_str(), description.c_str());
  std::printf("%-8s %-*s %-*s %-6s %-9s %-9s %s\n", "kind", static_cast<int>(wn), "name",
              static_cast<int>(wl), "case", "result", "max abs", "max rel", "detail");
  int pass = 0, fail = 0, na = 0;
  for (const Row& r : rows) {
    std::string label = r.label.size() > 60 ? r.label.substr(0, 57) + "..." : r.label;
    std::string detail = r.detail;
    if (r.target_us >= 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%.1f us here, %.1f us on cpu", r.target_us, r.cpu_us);
      detail = detail.empty() ? buf : detail + "; " + buf;
    }
    std::printf("%-8s %-*s %-*s %-6s %-9s %-9s %s\n", r.kind.c_str(), static_cast<int>(wn),
                r.name.c_str(), static_cast<int>(wl), label.c_str(), r.status.c_str(),
                fmt_err(r, r.max_abs).c_str(), fmt_err(r, r.max_rel).c_str(), detail.c_str());
    (r.status == "pass" ? pass : r.status == "n/a" ? na : fail)++;
  }
  std::printf("%d passed, %d failed, %d not applicable\n", pass, fail, na);
}

nlohmann::json to_json(const std::vector<Row>& rows, const std::string& target,
                       const std::string& description) {
  nlohmann::json j;
  j["backend"] = target;
  j["description"] = description;
  j["target"] = "compiled executor; ops with passes none, models with all passes";
  j["reference"] = "cpu, eager executor, passes none";
  j["rows"] = nlohmann::json::array();
  int pass = 0, fail = 0, na = 0;
  for (const Row& r : rows) {
    nlohmann::json x = {{"kind", r.kind},     {"name", r.name}, {"case", r.label},
                        {"status", r.status}, {"rtol", r.rtol}, {"atol", r.atol},
                        {"detail", r.detail}};
    // null where nothing was compared, and for an infinite error (a NaN or infinity on one side
    // only: the detail names the element), which JSON cannot write.
    x["max_abs"] =
        r.compared && std::isfinite(r.max_abs) ? nlohmann::json(r.max_abs) : nlohmann::json();
    x["max_rel"] =
        r.compared && std::isfinite(r.max_rel) ? nlohmann::json(r.max_rel) : nlohmann::json();
    if (r.target_us >= 0) {
      x["latency_us"] = r.target_us;
      x["cpu_latency_us"] = r.cpu_us;
    }
    j["rows"].push_back(x);
    (r.status == "pass" ? pass : r.status == "n/a" ? na : fail)++;
  }
  j["passed"] = pass;
  j["failed"] = fail;
  j["not_applicable"] = na;
  return j;
}

void run_selftest(const SelftestArgs& a) {
  workbench::register_backends();
  exec::BackendRegistry& registry = exec::BackendRegistry::instance();
  // The backend field's names (the settings table's); the message keeps selftest's wording,
  // "(did you mean 'cpu'?)" without the list, which tests/cli/selftest_test.cpp pins.
  const std::vector<std::string> known = workbench::setting_field("backend").choices;
  if (std::find(known.begin(), known.end(), a.backend) == known.end())
    throw Error("--backend: unknown backend '" + a.backend + "' (" + suggest(a.backend, known) +
                ")");
  // Throws the backend's own sentence when it cannot run here (main exits 2 with it).
  std::unique_ptr<exec::Backend> backend = registry.create(a.backend);
  const std::vector<Row> rows = run_selftest(a, *backend);
  if (a.json)
    std::cout << to_json(rows, a.backend, backend->description())
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  else
    print_text(rows, a.backend, backend->description());
  std::cout.flush();
  std::fflush(stdout);
  for (const Row& r : rows)
    if (r.status == "FAIL") throw CommandFailed{1};
}

void selftest_options(CLI::App& cmd, SelftestArgs& a) {
  cmd.add_option("--backend", a.backend, "backend to test")->capture_default_str();
  cmd.add_flag("--json", a.json, "print the table as JSON");
  const CLI::Validator non_negative(
      [](std::string& text) -> std::string {
        double v = -1;
        try {
          v = std::stod(text);
        } catch (const std::exception&) {
        }
        return v >= 0 && std::isfinite(v) ? "" : "expected a number >= 0, got \"" + text + "\"";
      },
      "NUMBER >= 0");
  cmd.add_option("--rtol", a.rtol,
                 "relative tolerance for every row (default: each op's, 1e-3 for most)")
      ->check(non_negative);
  cmd.add_option("--atol", a.atol,
                 "absolute tolerance for every row (default: each op's, 1e-4 for most)")
      ->check(non_negative);
  cmd.add_option("--without-case", a.without_case, "treat OP as having no self-test case (tests)")
      ->group("");
}

}  // namespace

Command selftest_command() {
  return make_command<SelftestArgs>(
      "selftest",
      "Run every op the backend has a kernel for and every builtin model on it and on the CPU\n"
      "(eager executor, passes none), and print whether their outputs agree (exit 1 if any does "
      "not).\n"
      "Example: fusebox selftest --backend cuda",
      selftest_options, run_selftest);
}

}  // namespace fusebox::cli
