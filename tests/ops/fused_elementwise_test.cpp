// FusedElementwise against the composition of the primitive ops it replaces, evaluated per
// element in double by a tiny interpreter written here (its own parsing, std:: math), over
// broadcasting layouts that exercise both the in-place (segment) and gathered tile paths.
#include <cmath>
#include <sstream>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

double ref_op(const std::string& op, double a, double b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return a / b;
  if (op == "Pow") return std::pow(a, b);
  if (op == "Relu") return a < 0 ? 0.0 : a;
  if (op == "Gelu") return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
  if (op == "GeluTanh")
    return 0.5 * a * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)));
  if (op == "Tanh") return std::tanh(a);
  if (op == "Sigmoid") return 1.0 / (1.0 + std::exp(-a));
  if (op == "Exp") return std::exp(a);
  if (op == "Erf") return std::erf(a);
  if (op == "Sqrt") return std::sqrt(a);
  if (op == "Neg") return -a;
  ADD_FAILURE() << "unknown op " << op;
  return 0;
}

// Evaluates `program` per output element in double, each input broadcast to the output.
std::vector<double> ref_program(const std::vector<std::string>& program,
                                const std::vector<Tensor>& inputs, Shape* out_shape) {
  Shape out;
  for (const auto& t : inputs) out = ir::broadcast_shapes(out, t.shape());
  *out_shape = out;
  struct Line {
    std::string op, a, b;
  };
  std::vector<Line> lines;
  for (const auto& text : program) {
    std::istringstream in(text);
    Line l;
    in >> l.op >> l.a >> l.b;
    lines.push_back(l);
  }
  std::vector<double> result(static_cast<size_t>(ir::numel(out)));
  std::vector<double> regs;
  for (int64_t e = 0; e < static_cast<int64_t>(result.size()); ++e) {
    regs.clear();
    auto operand = [&](const std::string& s) {
      const int idx = std::stoi(s.substr(1));
      if (s[0] == 'r') return regs[idx];
      return at(inputs[idx], bcast_index(inputs[idx].shape(), out, e));
    };
    for (const auto& l : lines)
      regs.push_back(ref_op(l.op, operand(l.a), l.b.empty() ? 0.0 : operand(l.b)));
    result[e] = regs.back();
  }
  return result;
}

void check_program(const std::vector<std::string>& program, const std::vector<Tensor>& inputs,
                   const std::string& what, double atol = 1e-6, double rtol = 2e-6) {
  Shape out;
  std::vector<double> want = ref_program(program, inputs, &out);
  for (int threads : {1, 2}) {
    Tensor y = run1("FusedElementwise", inputs, attrs_of({{"program", program}}), threads);
    expect_close(y, out, want, atol, rtol, what + " threads " + std::to_string(threads));
  }
}

// The erf-Gelu chain ONNX exporters emit: x / sqrt2 -> Erf -> + 1 -> x * . -> * 0.5, with the
// constants as scalar inputs.
const std::vector<std::string> kGeluChain = {"Div i0 i1", "Erf r0", "Add r1 i2", "Mul i0 r2",
                                             "Mul r3 i3"};

TEST(FusedElementwise, ErfGeluChainWithScalarConstants) {
  std::mt19937 rng(11);
  for (const Shape& s : {Shape{}, Shape{1}, Shape{17}, Shape{3, 129}, Shape{4, 1000}, Shape{0, 8},
                         Shape{256, 1024}}) {
    std::vector<Tensor> in = {random_f32(s, rng, -6, 6), f32_tensor({}, {1.41421356f}),
                              f32_tensor({}, {1.0f}), f32_tensor({1}, {0.5f})};
    check_program(kGeluChain, in, "gelu chain " + shape_str(s));
  }
}

TEST(FusedElementwise, BiasBroadcastLayouts) {
  std::mt19937 rng(12);
  const std::vector<std::string> program = {"Add i0 i1", "Relu r0", "Mul r1 i2"};
  // {x, bias, scale}: trailing bias (segment mode), short rows (gather mode), column bias,
  // broadcast on both sides, rank mismatch, bias bigger than x in some dims.
  const std::vector<std::vector<Shape>> cases = {
      {{64, 256}, {256}, {}},
      {{100, 3}, {3}, {1}},
      {{4, 200}, {4, 1}, {200}},
      {{5, 1, 7}, {1, 6, 1}, {7}},
      {{2, 3, 4, 5}, {3, 1, 5}, {}},
      {{130, 1}, {1, 130}, {130, 1}},
      {{7}, {3, 1}, {1}},
      {{33, 17}, {17}, {33, 1}},
      {{300, 513}, {513}, {300, 1}},
      {{1000, 5}, {5}, {1000, 5}},
      {{0, 4}, {4}, {}},
  };
  for (const auto& s : cases) {
    std::vector<Tensor> in = {random_f32(s[0], rng), random_f32(s[1], rng), random_f32(s[2], rng)};
    check_program(program, in, "bias " + shape_str(s[0]) + shape_str(s[1]) + shape_str(s[2]));
  }
}

TEST(FusedElementwise, EveryOp) {
  std::mt19937 rng(13);
  // i0 in [0.1, 3] keeps Sqrt, Pow and Div defined; i1 a row bias.
  const std::vector<std::vector<std::string>> programs = {
      {"Sub i0 i1", "Tanh r0", "Sigmoid r1", "Exp r2", "Neg r3"},
      {"Pow i0 i1", "Sqrt r0", "Div r1 i0", "Erf r2"},
      {"Gelu i1", "GeluTanh i0", "Sub r0 r1", "Relu r2"},
      {"Mul i1 i1", "Div i0 r0", "Add r1 i0"},
      {"Neg i0", "Exp r0", "Add r1 r0", "Mul r2 r1", "Sqrt i0", "Sub r3 r4"},  // results reused
      {"Exp i1", "Neg i0"},                                                    // dead result r0
      {"Sqrt i0"},
  };
  for (const auto& p : programs) {
    for (const auto& shapes : {std::vector<Shape>{{37, 300}, {300}},
                               std::vector<Shape>{{50, 9}, {9}}, std::vector<Shape>{{2000}, {}}}) {
      std::vector<Tensor> in = {random_f32(shapes[0], rng, 0.1f, 3.0f),
                                random_f32(shapes[1], rng, -2, 2)};
      check_program(p, in, p.front() + " .. " + shape_str(shapes[0]) + shape_str(shapes[1]), 1e-6,
                    4e-6);
    }
  }
}

TEST(FusedElementwise, AllScalarInputs) {
  // Every operand is one value: the result is computed once and filled.
  check_program({"Add i0 i1", "Exp r0"}, {f32_tensor({}, {0.25f}), f32_tensor({1}, {0.5f})},
                "scalar");
  check_program({"Mul i0 i1", "Neg r0"}, {f32_tensor({1, 1}, {3.0f}), f32_tensor({}, {2.0f})},
                "scalar 2-D");
  std::mt19937 rng(14);
  // Scalars first, then a vector operand late in the program.
  check_program({"Add i0 i1", "Tanh r0", "Mul r1 i2"},
                {f32_tensor({}, {0.25f}), f32_tensor({}, {0.5f}), random_f32({3, 600}, rng)},
                "scalar then vector");
}

TEST(FusedElementwise, ManyInputsAndLongPrograms) {
  std::mt19937 rng(15);
  // 64 instructions summing 20 inputs of mixed shapes.
  std::vector<Tensor> in;
  for (int i = 0; i < 20; ++i)
    in.push_back(random_f32(i % 3 == 0 ? Shape{8, 70} : i % 3 == 1 ? Shape{70} : Shape{8, 1}, rng));
  std::vector<std::string> program = {"Add i0 i1"};
  for (int k = 1; static_cast<int>(program.size()) < 64; ++k)
    program.push_back("Add r" + std::to_string(program.size() - 1) + " i" +
                      std::to_string((k + 1) % 20));
  check_program(program, in, "64 instructions", 1e-5, 1e-5);
}

TEST(FusedElementwise, SixteenRegistersFit) {
  // 15 results alive at once plus the one being computed: all 16 registers, then summed.
  std::vector<std::string> program;
  for (int i = 0; i < 15; ++i) program.push_back(i % 2 ? "Neg i0" : "Exp i0");
  program.push_back("Add r0 r1");
  for (int i = 2; i < 15; ++i)
    program.push_back("Add r" + std::to_string(program.size() - 1) + " r" + std::to_string(i));
  std::mt19937 rng(16);
  check_program(program, {random_f32({3, 1000}, rng, -1, 1)}, "16 registers", 1e-5, 1e-5);
}

TEST(FusedElementwisePrepare, RejectsBadPrograms) {
  const std::vector<ir::TensorType> two = {{DType::f32, {4}}, {DType::f32, {4}}};
  const std::vector<ir::TensorType> out = {{DType::f32, {4}}};
  auto program = [](std::vector<std::string> p) { return attrs_of({{"program", p}}); };
  // Too long.
  std::vector<std::string> long_program = {"Add i0 i1"};
  while (long_program.size() < 65)
    long_program.push_back("Add r" + std::to_string(long_program.size() - 1) + " i0");
  EXPECT_THROW(prepare_only("FusedElementwise", two, out, program(long_program)), Error);
  // Missing input, result used before it exists, unknown op, empty program.
  EXPECT_THROW(prepare_only("FusedElementwise", two, out, program({"Add i0 i5"})), Error);
  EXPECT_THROW(prepare_only("FusedElementwise", two, out, program({"Add i0 r0"})), Error);
  EXPECT_THROW(prepare_only("FusedElementwise", two, out, program({"Frobnicate i0"})), Error);
  EXPECT_THROW(prepare_only("FusedElementwise", two, out, program({})), Error);
  // 17 results alive at once.
  std::vector<std::string> wide;
  for (int i = 0; i < 17; ++i) wide.push_back("Exp i0");
  for (int i = 1; i < 17; ++i)
    wide.push_back("Add r" + std::to_string(i == 1 ? 0 : 16 + i - 1) + " r" + std::to_string(i));
  EXPECT_THROW(prepare_only("FusedElementwise", two, out, program(wide)), Error);
  // i64 input.
  EXPECT_THROW(prepare_only("FusedElementwise", {{DType::i64, {4}}}, {{DType::f32, {4}}},
                            program({"Neg i0"})),
               Error);
  // The message names the node and the limit.
  try {
    prepare_only("FusedElementwise", two, out, program(long_program));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test_FusedElementwise"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("64"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusebox::optest
