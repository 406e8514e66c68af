// The IR's guarantees: shape inference per schema, the verifier catching each kind of broken
// graph, .npy round trips and atomic file writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/ir/graph.h"
#include "core/ir/npy.h"
#include "core/ir/op_schema.h"
#include "core/ir/verifier.h"

namespace fusebox::ir {
namespace {

Attributes attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attributes a;
  for (const auto& [k, v] : kv) a.set(k, v);
  return a;
}

TEST(ShapeInference, MatMulBroadcastsBatchAndHonorsFlags) {
  Graph g;
  g.add_input("a", DType::f32, {2, 1, 5, 3});
  g.add_input("b", DType::f32, {4, 7, 3});
  std::string c = g.add_node("MatMul", {"a", "b"}, attrs({{"transB", int64_t{1}}}));
  EXPECT_EQ(g.tensor(c).shape, (Shape{2, 4, 5, 7}));
  g.add_input("v", DType::f32, {3});
  g.add_input("m", DType::f32, {3, 6});
  EXPECT_EQ(g.tensor(g.add_node("MatMul", {"v", "m"})).shape, (Shape{6}));
  EXPECT_THROW(g.add_node("MatMul", {"a", "m"}, attrs({{"transA", int64_t{1}}})), Error);
}

TEST(ShapeInference, ErrorsNameTheNodeAndShapes) {
  Graph g;
  g.add_input("a", DType::f32, {2, 3});
  g.add_input("b", DType::f32, {4});
  try {
    g.add_node("Add", {"a", "b"}, {}, "my_add");
    FAIL();
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("my_add"), std::string::npos) << m;
    EXPECT_NE(m.find("[2,3]"), std::string::npos) << m;
  }
  EXPECT_THROW(g.add_node("NoSuchOp", {"a"}), Error);
}

TEST(ShapeInference, LayoutOps) {
  Graph g;
  g.add_input("x", DType::f32, {2, 3, 4});
  EXPECT_EQ(g.tensor(g.add_node("Reshape", {"x"}, attrs({{"shape", std::vector<int64_t>{0, -1}}}))).shape, (Shape{2, 12}));
  EXPECT_EQ(g.tensor(g.add_node("Transpose", {"x"}, attrs({{"perm", std::vector<int64_t>{2, 0, 1}}}))).shape,
            (Shape{4, 2, 3}));
  EXPECT_EQ(g.tensor(g.add_node("Slice", {"x"}, attrs({{"starts", std::vector<int64_t>{-1}},
                                                        {"ends", std::vector<int64_t>{-100}},
                                                        {"axes", std::vector<int64_t>{2}},
                                                        {"steps", std::vector<int64_t>{-2}}})))
                .shape,
            (Shape{2, 3, 2}));
  EXPECT_EQ(g.tensor(g.add_node("Unsqueeze", {"x"}, attrs({{"axes", std::vector<int64_t>{0, -1}}}))).shape,
            (Shape{1, 2, 3, 4, 1}));
  EXPECT_THROW(g.add_node("Reshape", {"x"}, attrs({{"shape", std::vector<int64_t>{5, -1}}})), Error);
}

TEST(ShapeInference, SliceEdgesDoNotOverflow) {
  Graph g;
  g.add_input("x", DType::f32, {5, 0});
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  auto slice = [&](std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                   std::vector<int64_t> steps) {
    return g.tensor(g.add_node("Slice", {"x"}, attrs({{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}})))
        .shape;
  };
  EXPECT_EQ(slice({0}, {kMax}, {0}, {kMax}), (Shape{1, 0})) << "huge step: one element";
  EXPECT_EQ(slice({-1}, {kMin}, {0}, {kMin}), (Shape{1, 0})) << "huge negative step: one element";
  EXPECT_EQ(slice({kMax}, {kMin}, {0}, {-1}), (Shape{5, 0})) << "reverse the whole dim";
  EXPECT_EQ(slice({-1}, {kMin}, {1}, {-1}), (Shape{5, 0})) << "negative step on an empty dim";
  EXPECT_THROW(slice({0, 0}, {1, 1}, {0, 0}, {1, 1}), Error) << "repeated axis";
}

// Shape products from attributes or huge-but-empty inputs are checked: an Error naming the node,
// never signed overflow (UBSan) or a wrapped-around shape.
TEST(ShapeInference, ShapeProductsThatOverflowAreErrorsNamingTheNode) {
  Graph g;
  g.add_input("x", DType::f32, {2, 3});
  g.add_input("empty", DType::f32, {0, int64_t{1} << 62, 4});
  g.add_input("tall", DType::f32, {int64_t{1} << 62, 0});
  auto error_of = [&](const std::string& op, std::vector<std::string> inputs, Attributes a) {
    try {
      g.add_node(op, std::move(inputs), a, "the_" + op);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string reshape =
      error_of("Reshape", {"x"}, attrs({{"shape", std::vector<int64_t>{int64_t{1} << 62, 0}}}));
  EXPECT_NE(reshape.find("node 'the_Reshape'"), std::string::npos) << reshape;
  EXPECT_NE(reshape.find("too many elements"), std::string::npos) << reshape;
  std::string infer =
      error_of("Reshape", {"x"},
               attrs({{"shape", std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40, -1}}}));
  EXPECT_NE(infer.find("too many elements"), std::string::npos) << infer;
  std::string flatten = error_of("Flatten", {"empty"}, attrs({{"axis", int64_t{1}}}));
  EXPECT_NE(flatten.find("node 'the_Flatten'"), std::string::npos) << flatten;
  EXPECT_NE(flatten.find("overflows"), std::string::npos) << flatten;
  std::string concat = error_of("Concat", {"tall", "tall"}, attrs({{"axis", int64_t{0}}}));
  EXPECT_NE(concat.find("node 'the_Concat'"), std::string::npos) << concat;
  EXPECT_NE(concat.find("overflows"), std::string::npos) << concat;
}

Graph small_graph() {
  Graph g;
  g.name = "small";
  g.add_input("x", DType::f32, {4});
  Tensor w(DType::f32, {4});
  g.add_weight("w", w);
  std::string a = g.add_node("Add", {"x", "w"}, {}, "add");
  g.outputs = {g.add_node("Relu", {a}, {}, "relu")};
  return g;
}

TEST(Verifier, AcceptsAWellFormedGraph) { EXPECT_NO_THROW(verify(small_graph())); }

TEST(Verifier, CatchesEachViolation) {
  auto expect_fail = [](Graph g, const char* says) {
    try {
      verify(g);
      ADD_FAILURE() << "verifier accepted a graph that should fail with '" << says << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  Graph order = small_graph();
  std::swap(order.nodes[0], order.nodes[1]);
  expect_fail(order, "before it is produced");

  Graph twice = small_graph();
  twice.nodes[1].outputs[0] = twice.nodes[0].outputs[0];
  expect_fail(twice, "already has a producer");

  Graph shape = small_graph();
  shape.tensor(shape.nodes[0].outputs[0]).shape = {5};
  expect_fail(shape, "inference gives");

  Graph missing = small_graph();
  missing.nodes[0].inputs[1] = "nope";
  expect_fail(missing, "does not exist");

  Graph names = small_graph();
  names.nodes[1].name = "add";
  expect_fail(names, "node name used twice");

  Graph unknown = small_graph();
  unknown.nodes[1].op = "Frobnicate";
  expect_fail(unknown, "unknown op");

  Graph no_out = small_graph();
  no_out.outputs = {"ghost"};
  expect_fail(no_out, "never produced");
}

TEST(Npy, RoundTripsF32AndI64) {
  std::string dir = std::filesystem::temp_directory_path() / "fusebox_npy_test";
  std::filesystem::create_directories(dir);
  Tensor f(DType::f32, {2, 3});
  for (int i = 0; i < 6; ++i) f.data<float>()[i] = 0.5f * i - 1;
  write_npy(dir + "/f.npy", f);
  Tensor f2 = read_npy(dir + "/f.npy");
  EXPECT_EQ(f2.shape(), f.shape());
  EXPECT_EQ(0, std::memcmp(f.bytes(), f2.bytes(), f.nbytes()));
  Tensor i(DType::i64, {5});
  for (int k = 0; k < 5; ++k) i.data<int64_t>()[k] = k * 1000000007LL;
  write_npy(dir + "/i.npy", i);
  Tensor i2 = read_npy(dir + "/i.npy");
  EXPECT_EQ(i2.dtype(), DType::i64);
  EXPECT_EQ(0, std::memcmp(i.bytes(), i2.bytes(), i.nbytes()));
  Tensor s(DType::f32, {});
  write_npy(dir + "/s.npy", s);
  EXPECT_EQ(read_npy(dir + "/s.npy").shape(), Shape{});
  std::ofstream(dir + "/bad.npy") << "not numpy";
  EXPECT_THROW(read_npy(dir + "/bad.npy"), Error);
  EXPECT_THROW(read_npy(dir + "/absent.npy"), Error);
  std::filesystem::remove_all(dir);
}

TEST(AtomicFile, ExistingFileReplacedOnlyOnSuccess) {
  std::string dir = std::filesystem::temp_directory_path() / "fusebox_atomic_test";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/out.txt";
  write_file_atomically(path, std::string("first"));
  EXPECT_THROW(write_file_atomically(path, [](std::ostream& o) {
                 o << "partial";
                 throw Error("writer failed");
               }),
               Error);
  EXPECT_EQ(read_file(path), "first");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u) << "no temporary file left behind";
  EXPECT_THROW(write_file_atomically("/proc/fusebox/nope.txt", std::string("x")), Error);
  std::filesystem::remove_all(dir);
}

TEST(Tensor, RefusesAbsurdSizes) {
  EXPECT_THROW(Tensor(DType::f32, {int64_t{1} << 40, int64_t{1} << 30}), Error);
  EXPECT_THROW(Tensor(DType::f32, {-1}), Error);
}

// An output whose element count fits int64 but whose bytes do not (2^61 floats): refused naming
// the node, not planned as the wrapped, tiny size (a Resize to [1,1,2^31,2^31] ran forever so).
TEST(ShapeInference, OutputBytesPast2To63AreAnErrorNamingTheNode) {
  EXPECT_EQ(nbytes_of({2, 3}, 4), 24u);
  EXPECT_EQ(nbytes_of({int64_t{1} << 60}, 4), size_t{1} << 62);
  EXPECT_THROW(nbytes_of({int64_t{1} << 62}, 4), Error);
  EXPECT_THROW(nbytes_of({int64_t{1} << 31, int64_t{1} << 31, 2}, 8), Error);
  Graph g;
  EXPECT_THROW(g.add_input("past", DType::f32, {int64_t{1} << 61}), Error);
  g.add_input("big", DType::f32, {int64_t{1} << 60});  // 2^62 bytes: fits
  try {
    g.add_node("Concat", {"big", "big"}, attrs({{"axis", int64_t{0}}}), "twice");
    ADD_FAILURE() << "2^61 floats were accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("node 'twice'"), std::string::npos) << m;
    EXPECT_NE(m.find("past 2^63 bytes"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace fusebox::ir
