// ONNX's own node tests (Debian libonnx-testdata), every one counted: each test whose model uses
// only ops we import is loaded, run on every executor (passes off and all on) and compared with
// the expected outputs at the ONNX backend-test tolerances (rtol 1e-3, atol 1e-7). Cases we
// deliberately do not support are listed, each with its reason, in unsupported.txt beside this
// file; everything else must pass. Tests of ops we lack are counted by the op they miss.
// Integer (and bool) inputs are shape arguments or indices in our IR, so they are bound as
// load-time constants, as are Resize's float roi and scales; other float inputs are fed at run
// time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "core/base/error.h"
#include "core/exec/session.h"
#include "core/models/onnx_import.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox {
namespace {

namespace fs = std::filesystem;
const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";
const char* kPytorchConverted = "/usr/share/libonnx-testdata/data/pytorch-converted";
const char* kPytorchOperator = "/usr/share/libonnx-testdata/data/pytorch-operator";

std::map<std::string, std::string> read_unsupported() {
  std::map<std::string, std::string> out;
  std::ifstream in(std::string(FUSEBOX_SOURCE_DIR) + "/tests/conformance/unsupported.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string name, reason;
    s >> name;
    std::getline(s, reason);
    out[name] = reason;
  }
  return out;
}

std::vector<ir::Tensor> read_pbs(const fs::path& dir, const char* prefix, std::vector<std::string>* names) {
  std::vector<ir::Tensor> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (std::string(prefix) + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    std::string name;
    out.push_back(models::read_onnx_tensor_file(p.string(), &name));
    if (names) names->push_back(name);
  }
  return out;
}

// Worst |a-b| / (atol + rtol |b|); <= 1 passes. Shapes must match exactly.
std::string compare(const ir::Tensor& got, const ir::Tensor& want) {
  if (got.shape() != want.shape())
    return "shape " + ir::shape_str(got.shape()) + " vs expected " + ir::shape_str(want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.dtype() == ir::DType::f32 ? got.data<float>()[i] : static_cast<double>(got.data<int64_t>()[i]);
    double b = want.dtype() == ir::DType::f32 ? want.data<float>()[i] : static_cast<double>(want.data<int64_t>()[i]);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (!(std::abs(a - b) <= 1e-7 + 1e-3 * std::abs(b)))
      return "element " + std::to_string(i) + ": " + std::to_string(a) + " vs expected " + std::to_string(b);
  }
  return "";
}

// "" when the case passes, else why not.
std::string run_case(const fs::path& dir, const exec::Backend& evaluator) {
  fs::path data = dir / "test_data_set_0";
  models::OnnxInspection info = models::inspect_onnx_file((dir / "model.onnx").string());
  std::vector<ir::Tensor> inputs = read_pbs(data, "input_", nullptr);
  std::vector<ir::Tensor> expected = read_pbs(data, "output_", nullptr);
  if (inputs.size() != info.inputs.size()) return "test data has " + std::to_string(inputs.size()) + " inputs";
  models::OnnxImportOptions opt;
  opt.evaluator = &evaluator;
  std::vector<ir::Tensor> fed;
  // Float inputs that Resize reads as its roi or scales (Upsample as its scales) are shape
  // arguments too: fusebox plans shapes at load time.
  std::set<std::string> shape_arguments;
  for (const auto& n : models::outline_onnx_file((dir / "model.onnx").string()).nodes)
    if (n.op == "Resize" || n.op == "Upsample")
      for (size_t i = 1; i < n.inputs.size(); ++i) shape_arguments.insert(n.inputs[i]);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (info.inputs[i].type == "FLOAT" && !shape_arguments.count(info.inputs[i].name)) continue;
    opt.constant_inputs[info.inputs[i].name] = inputs[i];
  }
  ir::Graph g = models::import_onnx_file((dir / "model.onnx").string(), opt);
  for (const auto& name : g.inputs)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (info.inputs[i].name == name) fed.push_back(inputs[i]);
  if (g.outputs.size() != expected.size()) return "model has " + std::to_string(g.outputs.size()) + " outputs";
  for (const char* executor : {"eager", "interpreted", "compiled"})
    for (const char* passes : {"none", "all"}) {
      exec::SessionOptions so;
      so.executor = executor;
      so.passes = passes;
      exec::Session session(g, so);
      std::vector<ir::Tensor> got = session.run(fed);
      for (size_t i = 0; i < got.size(); ++i) {
        std::string diff = compare(got[i], expected[i]);
        if (!diff.empty())
          return std::string(executor) + ", passes " + passes + ", output " + std::to_string(i) + ": " + diff;
      }
    }
  return "";
}

// One suite's count: passed, using an op we do not import (every missing op with the number of
// tests it keeps out), listed in unsupported.txt, or failed. Only the last fails the test.
struct SuiteCount {
  int total = 0, passed = 0, listed = 0, other_ops = 0;
  std::map<std::string, int> missing;  // op -> tests it keeps out
  std::vector<std::string> failures;
};

SuiteCount run_suite(const fs::path& root, const std::map<std::string, std::string>& unsupported) {
  cpu::register_backend();
  auto evaluator = cpu::make_backend();
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  SuiteCount c;
  c.total = static_cast<int>(dirs.size());
  for (const auto& dir : dirs) {
    std::string name = dir.filename().string();
    models::OnnxInspection info;
    try {
      info = models::inspect_onnx_file((dir / "model.onnx").string());
    } catch (const Error& e) {
      c.failures.push_back(name + ": " + e.what());
      continue;
    }
    // Unsupported attributes are ours to handle (the test runs and must fail clearly or be
    // listed), and so is an If on a run-time input (the test binds its bool inputs at load
    // time); a missing op or opset puts the test in the "unsupported op" column.
    std::set<std::string> ops;
    for (const auto& u : info.unsupported)
      if (u.reason.find("attribute") == std::string::npos && u.reason.find("run-time input") == std::string::npos)
        ops.insert(u.op);
    if (!ops.empty()) {
      ++c.other_ops;
      for (const auto& op : ops) ++c.missing[op];
      continue;
    }
    if (unsupported.count(name)) {
      ++c.listed;
      continue;
    }
    std::string why;
    try {
      why = run_case(dir, *evaluator);
    } catch (const Error& e) {
      why = e.what();
    }
    if (why.empty()) ++c.passed;
    else c.failures.push_back(name + ": " + why);
  }
  return c;
}

// Missing ops, most tests kept out first; `limit` < 0 lists them all.
std::string missing_ops(const SuiteCount& c, int limit) {
  std::vector<std::pair<int, std::string>> top;
  for (const auto& [op, n] : c.missing) top.push_back({-n, op});
  std::sort(top.begin(), top.end());
  std::string out;
  for (size_t i = 0; i < top.size() && (limit < 0 || static_cast<int>(i) < limit); ++i)
    out += (i ? ", " : "") + top[i].second + " " + std::to_string(-top[i].first);
  return out.empty() ? "none" : out;
}

// The summary goes to stdout and to conformance_summary.txt in the build dir, where the README
// quotes it from: one count line per suite, then every missing op with its count. Each suite
// writes its own file and the summary is rebuilt from all of them, so running one suite alone
// (--gtest_filter) keeps the others' last lines.
void report(const char* suite, const char* label, const SuiteCount& c) {
  const std::string line =
      std::string(label) + ": " + std::to_string(c.passed) + " passed, " + std::to_string(c.other_ops) +
      " use an op fusebox does not import (most often: " + missing_ops(c, 10) + "), " +
      std::to_string(c.listed) + " listed as won't-do in unsupported.txt, " + std::to_string(c.failures.size()) +
      " failed, out of " + std::to_string(c.total) + "\n";
  const std::string table = std::string(label) + ", every missing op (tests it keeps out): " + missing_ops(c, -1) + "\n";
  std::printf("%s", line.c_str());
  if (std::getenv("FUSEBOX_CONFORMANCE_VERBOSE")) std::printf("%s", table.c_str());
  const std::string dir = FUSEBOX_BINARY_DIR;
  std::ofstream(dir + "/conformance_" + suite + ".txt") << line << table;
  std::string lines, tables;
  for (const char* s : {"node", "pytorch_converted", "pytorch_operator"}) {
    std::ifstream in(dir + "/conformance_" + s + ".txt");
    std::string l, t;
    if (std::getline(in, l) && std::getline(in, t)) {
      lines += l + "\n";
      tables += t + "\n";
    }
  }
  std::ofstream(dir + "/conformance_summary.txt") << lines << tables;
}

void check(const SuiteCount& c, int at_least) {
  EXPECT_EQ(c.passed + c.other_ops + c.listed + static_cast<int>(c.failures.size()), c.total);
  for (const auto& f : c.failures) ADD_FAILURE() << f;
  EXPECT_GE(c.passed, at_least);
}

TEST(OnnxConformance, NodeTests) {
  if (!fs::exists(kNodeTests)) GTEST_SKIP() << kNodeTests << " missing: apt-get install libonnx-testdata";
  SuiteCount c = run_suite(kNodeTests, read_unsupported());
  report("node", "ONNX node tests", c);
  check(c, 100);
}

// PyTorch's exported modules (nn.Conv2d, nn.LSTM, ...) and functional operators, laid out like
// the node tests; counted the same way, with their own lines.
TEST(OnnxConformance, PytorchConvertedTests) {
  if (!fs::exists(kPytorchConverted)) GTEST_SKIP() << kPytorchConverted << " missing: apt-get install libonnx-testdata";
  SuiteCount c = run_suite(kPytorchConverted, read_unsupported());
  report("pytorch_converted", "ONNX pytorch-converted tests", c);
  check(c, 1);
}

TEST(OnnxConformance, PytorchOperatorTests) {
  if (!fs::exists(kPytorchOperator)) GTEST_SKIP() << kPytorchOperator << " missing: apt-get install libonnx-testdata";
  SuiteCount c = run_suite(kPytorchOperator, read_unsupported());
  report("pytorch_operator", "ONNX pytorch-operator tests", c);
  check(c, 1);
}

}  // namespace
}  // namespace fusebox
