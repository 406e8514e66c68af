// Files the CLI writes: only a regular file is replaced (graph --out /dev/null is refused, and
// /dev/null stays a device), and outputs whose names map to one file name are all saved.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
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

// Every file in `dir` and its bytes.
std::map<std::string, std::string> contents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    files[e.path().filename().string()] = fusebox::read_file(e.path().string());
  return files;
}

// Names in `dir` that a write left behind (temporary files or folders).
size_t leftovers(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    n += e.path().filename().string().rfind(".fusebox-", 0) == 0;
  return n;
}

const char* kProfile = "profile mlp:dims=4-3 --iters 2 --warmup 0 --profile-runs 2 --out ";

// The run's children may write files of at most `bytes` (as a full disk would stop them).
fusebox::test::CliResult run_cli_with_file_size_limit(const std::string& args, rlim_t bytes) {
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = bytes;
  ::setrlimit(RLIMIT_FSIZE, &small);
  auto r = run_cli(args);
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  return r;
}

TEST(CliOutputFiles, ProfileOutOnAFullDiskKeepsTheOldSetWhole) {
  const std::string parent = fusebox::test::process_temp_dir() + "/full";
  std::filesystem::remove_all(parent);
  std::filesystem::create_directories(parent);
  const std::string dir = parent + "/prof";
  auto first = run_cli(kProfile + dir);
  ASSERT_EQ(first.code, 0) << first.out;
  const auto old = contents(dir);
  ASSERT_EQ(old.size(), 5u);
  // A limit past the first file written (profile.json) but short of the SQLite trace: the old
  // way, a run wrote the first files new and left the old trace.sqlite beside them.
  const size_t limit = old.at("profile.json").size() + 1024;
  ASSERT_LT(limit, old.at("trace.sqlite").size());
  auto full = run_cli_with_file_size_limit(kProfile + dir, limit);
  EXPECT_EQ(full.code, 2) << full.out;
  EXPECT_NE(full.out.find("'" + dir + "'"), std::string::npos) << full.out;
  EXPECT_EQ(contents(dir), old) << "the old set, whole";
  EXPECT_EQ(leftovers(parent), 0u);
  // With room, the new set replaces the old one whole, files the new run does not write included.
  auto chrome_only = run_cli(kProfile + dir + " --format chrome");
  ASSERT_EQ(chrome_only.code, 0) << chrome_only.out;
  const auto now = contents(dir);
  EXPECT_EQ(now.size(), 3u);
  EXPECT_EQ(now.count("trace.sqlite"), 0u);
  EXPECT_NE(now.at("profile.json"), old.at("profile.json"));
  EXPECT_EQ(leftovers(parent), 0u);
}

TEST(CliOutputFiles, AnOutputDirectoryOfOtherFilesOrAFileIsRefused) {
  const std::string parent = fusebox::test::process_temp_dir() + "/refuse";
  std::filesystem::remove_all(parent);
  std::filesystem::create_directories(parent + "/mine");
  fusebox::write_file_atomically(parent + "/mine/notes.txt", std::string("keep me"));
  auto r = run_cli(kProfile + parent + "/mine");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("notes.txt"), std::string::npos) << r.out;
  EXPECT_EQ(fusebox::read_file(parent + "/mine/notes.txt"), "keep me");
  auto saved = run_cli("run mlp:dims=4-3 --iters 1 --warmup 0 --save-outputs " + parent + "/mine");
  EXPECT_EQ(saved.code, 2) << saved.out;
  EXPECT_EQ(contents(parent + "/mine").size(), 1u);
  fusebox::write_file_atomically(parent + "/file", std::string("a file"));
  auto file = run_cli(kProfile + parent + "/file");
  EXPECT_EQ(file.code, 2) << file.out;
  EXPECT_NE(file.out.find("not a directory"), std::string::npos) << file.out;
  EXPECT_EQ(fusebox::read_file(parent + "/file"), "a file");
  EXPECT_EQ(leftovers(parent), 0u);
}

TEST(CliOutputFiles, SaveOutputsReplacesTheOldSetWhole) {
  const std::string parent = fusebox::test::process_temp_dir() + "/replace";
  std::filesystem::remove_all(parent);
  std::filesystem::create_directories(parent);
  const std::string out = parent + "/out";
  auto mlp = run_cli("run mlp:dims=4-3 --iters 1 --warmup 0 --save-outputs " + out);
  ASSERT_EQ(mlp.code, 0) << mlp.out;
  ASSERT_EQ(contents(out).size(), 1u);
  ASSERT_EQ(contents(out).count("logits.npy"), 1u);
  const std::string model = parent + "/collide.onnx";
  fusebox::write_file_atomically(model, two_outputs_one_file_name_model());
  auto r = run_cli("run " + model + " --iters 1 --warmup 0 --save-outputs " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto now = contents(out);
  EXPECT_EQ(now.size(), 2u) << "this run's outputs alone";
  EXPECT_EQ(now.count("y_0.npy") + now.count("y_0_2.npy"), 2u);
  EXPECT_EQ(leftovers(parent), 0u);
}

}  // namespace
