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

// Every node test is counted: passed, using an op we do not import (with the ops most often
// missing), listed in unsupported.txt, or failed. Only the last fails the test. The summary goes
// to stdout and to conformance_summary.txt in the build dir, where the README quotes it from.
TEST(OnnxConformance, NodeTests) {
  if (!fs::exists(kNodeTests)) GTEST_SKIP() << kNodeTests << " missing: apt-get install libonnx-testdata";
  cpu::register_backend();
  auto evaluator = cpu::make_backend();
  std::map<std::string, std::string> unsupported = read_unsupported();
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kNodeTests))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int passed = 0, listed = 0, other_ops = 0;
  std::map<std::string, int> missing;  // op -> tests it keeps out
  std::vector<std::string> failures;
  for (const auto& dir : dirs) {
    std::string name = dir.filename().string();
    models::OnnxInspection info;
    try {
      info = models::inspect_onnx_file((dir / "model.onnx").string());
    } catch (const Error& e) {
      failures.push_back(name + ": " + e.what());
      continue;
    }
    // Unsupported attributes are ours to handle (the test runs and must fail clearly or be
    // listed), and so is an If on a run-time input (the test binds its bool inputs at load
    // time); a missing op or opset puts the test in the "unsupported op" column.
    std::vector<std::string> ops;
    for (const auto& u : info.unsupported)
      if (u.reason.find("attribute") == std::string::npos && u.reason.find("run-time input") == std::string::npos)
        ops.push_back(u.op);
    if (!ops.empty()) {
      ++other_ops;
      for (const auto& op : ops) ++missing[op];
      continue;
    }
    if (unsupported.count(name)) {
      ++listed;
      continue;
    }
    std::string why;
    try {
      why = run_case(dir, *evaluator);
    } catch (const Error& e) {
      why = e.what();
    }
    if (why.empty()) ++passed;
    else failures.push_back(name + ": " + why);
  }
  std::vector<std::pair<int, std::string>> top;
  for (const auto& [op, n] : missing) top.push_back({-n, op});
  std::sort(top.begin(), top.end());
  std::string top_ops;
  for (size_t i = 0; i < top.size() && i < 10; ++i)
    top_ops += (i ? ", " : "") + top[i].second + " " + std::to_string(-top[i].first);
  const std::string summary =
      "ONNX node tests: " + std::to_string(passed) + " passed, " + std::to_string(other_ops) +
      " use an op fusebox does not import (most often: " + top_ops + "), " + std::to_string(listed) +
      " listed as won't-do in unsupported.txt, " + std::to_string(failures.size()) + " failed, out of " +
      std::to_string(dirs.size()) + "\n";
  std::printf("%s", summary.c_str());
  std::ofstream(std::string(FUSEBOX_BINARY_DIR) + "/conformance_summary.txt") << summary;
  EXPECT_EQ(passed + other_ops + listed + static_cast<int>(failures.size()), static_cast<int>(dirs.size()));
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GT(passed, 100);
}

}  // namespace
}  // namespace fusebox
