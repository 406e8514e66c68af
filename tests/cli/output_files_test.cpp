// Files the CLI writes: only a regular file is replaced (graph --out /dev/null is refused, and
// /dev/null stays a device), and outputs whose names map to one file name are all saved.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/atomic_file.h"
#include "core/ir/npy.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace {

using fusebox::test::run_cli;

TEST(CliOutputFiles, GraphOutToADeviceIsRefused) {
  auto r = run_cli("graph mlp:dims=4-3 --out /dev/null");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/dev/null"), std::string::npos) << r.out;
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is still a character device";
}

TEST(CliOutputFiles, GraphOutTakesANameAsLongAsTheFileSystemAllows) {
  const std::string dir = fusebox::test::process_temp_dir() + "/long";
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/" + std::string(251, 'g') + ".svg";
  auto r = run_cli("graph mlp:dims=4-3 --out " + file);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::is_regular_file(file));
}

// A hand-encoded ONNX model (protobuf wire format): y/0 = Relu(x), y_0 = Neg(x), x: float[3].
std::string varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s += static_cast<char>((v & 0x7f) | 0x80);
  return s + static_cast<char>(v);
}
std::string field(int number, const std::string& bytes) {
  return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(bytes.size()) + bytes;
}
std::string field(int number, uint64_t value) {
  return varint(static_cast<uint64_t>(number) << 3) + varint(value);
}

std::string node(const std::string& op, const std::string& in, const std::string& out) {
  return field(1, in) + field(2, out) + field(3, op + "_node") + field(4, op);
}

std::string two_outputs_one_file_name_model() {
  const std::string shape =
      field(2, field(1, field(1, uint64_t{3})));  // TensorShapeProto {dim {3}}
  const std::string x = field(1, "x") + field(2, field(1, field(1, uint64_t{1}) + shape));  // float
  const std::string graph = field(1, node("Relu", "x", "y/0")) + field(1, node("Neg", "x", "y_0")) +
                            field(2, "collide") + field(11, x) + field(12, field(1, "y/0")) +
                            field(12, field(1, "y_0"));
  return field(1, uint64_t{8}) + field(8, field(1, "") + field(2, uint64_t{17})) + field(7, graph);
}

TEST(CliOutputFiles, OutputsWhoseNamesMapToOneFileAreAllSaved) {
  const std::string dir = fusebox::test::process_temp_dir() + "/collide";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string model = dir + "/collide.onnx";
  fusebox::write_file_atomically(model, two_outputs_one_file_name_model());
  const std::string out = dir + "/out";
  auto r = run_cli("run " + model + " --iters 1 --warmup 0 --save-outputs " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("'y/0' and 'y_0'"), std::string::npos) << r.out;
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(out)) ++files;
  EXPECT_EQ(files, 2u) << r.out;
  // Relu and Neg of one input: one output is >= 0 everywhere, the other <= 0; both are there.
  fusebox::ir::Tensor relu = fusebox::ir::read_npy(out + "/y_0.npy");
  fusebox::ir::Tensor neg = fusebox::ir::read_npy(out + "/y_0_2.npy");
  ASSERT_EQ(relu.numel(), 3);
  ASSERT_EQ(neg.numel(), 3);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_GE(relu.data<float>()[i], 0.0f);
    EXPECT_FLOAT_EQ(relu.data<float>()[i], std::max(0.0f, -neg.data<float>()[i]));
  }
}

}  // namespace
