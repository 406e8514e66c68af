// Importer unit tests on small models built here with the protobuf classes: errors (not ONNX,
// unsupported ops listed at once, dynamic dims, types), Gemm lowering, Softmax opset 11
// coercion, load-time folding of PyTorch's shape arithmetic, external data checks.
#define ONNX_ML 1
#define ONNX_NAMESPACE onnx
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/base/error.h"
#include "core/models/onnx/context.h"
#include "core/models/onnx_import.h"
#include "tests/onnx/onnx_test_model.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/support/graph_eval.h"
#include "tests/support/temp_dir.h"

namespace fusebox {
namespace {

struct Builder {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  explicit Builder(int64_t opset = 17) {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name("test");
  }
  void input(const std::string& name, std::vector<int64_t> dims, int type = onnx::TensorProto::FLOAT,
             const std::string& param = "") {
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      else dim->set_dim_param(param);
    }
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  onnx::TensorProto* init(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return t;
  }
  void init_i64(const std::string& name, std::vector<int64_t> values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(g->node_size()));
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  std::string bytes() const { return m.SerializeAsString(); }
};

models::OnnxImportOptions options() { return test::cpu_import_options(); }

std::string error_of(const std::string& bytes, const models::OnnxImportOptions& opt = options()) {
  try {
    models::import_onnx_bytes(bytes, "m.onnx", opt);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}


// A uint64 initializer past int64's range is refused however its bytes are read: decoded, or
// viewed in place when protobuf's buffer happens to be aligned (that path read 2^64-1 as -1, the
// last row, until uint64 was left out of it; the fuzz corpus caught it only when the heap layout
// aligned the buffer). 64 protos, so some of their buffers are aligned.
TEST(OnnxImport, Uint64PastInt64IsRefusedWhereverItsBytesLie) {
  const std::shared_ptr<const void> owner = std::make_shared<int>(0);
  int aligned = 0;
  std::vector<onnx::TensorProto> protos(64);  // all alive: their buffers lie at different offsets
  for (int k = 0; k < 64; ++k) {
    onnx::TensorProto& t = protos[static_cast<size_t>(k)];
    t.set_data_type(onnx::TensorProto::UINT64);
    t.add_dims(64);
    std::string raw(64 * 8, '\0');
    for (int b = 0; b < 8; ++b) raw[8 * 63 + b] = '\xff';
    t.set_raw_data(raw);
    aligned += reinterpret_cast<uintptr_t>(t.raw_data().data()) % ir::kAlignment == 0;
    try {
      models::onnx_import::tensor_from_proto(t, owner, "", "initializer 'idx'");
      ADD_FAILURE() << "proto " << k << ": 2^64-1 was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("uint64 element 63 is 18446744073709551615"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_GT(aligned, 0) << "no buffer was aligned: the in-place path was not tried";
}

TEST(OnnxImport, RefusesNonOnnxAndTruncatedFiles) {
  EXPECT_NE(error_of("hello, this is not a model").find("not an ONNX model"), std::string::npos);
  EXPECT_NE(error_of("").find("not an ONNX model"), std::string::npos);
  Builder b;
  b.input("x", {2});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  std::string bytes = b.bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string e = error_of(bytes.substr(0, n));
    EXPECT_FALSE(e.empty()) << "truncated at " << n;
  }
  EXPECT_EQ(error_of(bytes), "");
}

// Model and tensor files go through fusebox::read_file: a FIFO (which would block), a device
// (/dev/zero never ends) or a directory is refused with a sentence naming the path.
TEST(OnnxImport, ReadsFilesOnlyThroughTheOneReader) {
  std::string fifo = test::process_temp_dir() + "/model_fifo.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto err = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string e = err([&] { models::import_onnx_file(fifo, options()); });
  EXPECT_NE(e.find("'" + fifo + "': not a regular file (a FIFO)"), std::string::npos) << e;
  e = err([&] { models::inspect_onnx_file("/dev/zero"); });
  EXPECT_NE(e.find("'/dev/zero': not a regular file (a device"), std::string::npos) << e;
  e = err([&] { models::read_onnx_tensor_file(fifo, nullptr); });
  EXPECT_NE(e.find("not a regular file (a FIFO)"), std::string::npos) << e;
  e = err([&] { models::import_onnx_file(test::process_temp_dir(), options()); });
  EXPECT_NE(e.find("not a regular file (a directory)"), std::string::npos) << e;
  std::filesystem::remove(fifo);
}

// Cast's `to` is an int64 attribute; one that is not an ONNX data type (2^32 + 7 truncates to
// INT64's 7) is an error naming the node and the value, not a cast to whatever it truncates to.
TEST(OnnxImport, CastToAnUnknownTypeIsRefused) {
  for (int64_t to : {(int64_t{1} << 32) + 7, int64_t{-1}, int64_t{0}, int64_t{99}}) {
    Builder b;
    b.input("x", {2});
    Builder::attr(b.node("Cast", {"x"}, {"y"}), "to", to);
    b.output("y");
    std::string e = error_of(b.bytes());
    EXPECT_NE(e.find("Cast_1"), std::string::npos) << e;
    EXPECT_NE(e.find("attribute 'to' is " + std::to_string(to) + ", not an ONNX data type"),
              std::string::npos)
        << e;
  }
  Builder ok;
  ok.input("x", {2});
  Builder::attr(ok.node("Cast", {"x"}, {"y"}), "to", int64_t{onnx::TensorProto::INT64});
  ok.output("y");
  EXPECT_EQ(error_of(ok.bytes()), "");
}

// A cast to BOOL at run time (torch's masked_fill exports one before Where) is ONNX's "non-zero is
// true", held as i64 0/1 like every boolean here: -0.0 and 0 are false, NaN and tiny values true.
TEST(OnnxImport, ACastToBoolAtRunTimeIsTrueWhereNonZero) {
  Builder b;
  b.input("x", {6});
  Builder::attr(b.node("Cast", {"x"}, {"y"}), "to", int64_t{onnx::TensorProto::BOOL});
  b.output("y");
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m", options());
  ir::Tensor x(ir::DType::f32, {6});
  const float v[6] = {0.0f, -0.0f, 1e-30f, -2.5f, std::nanf(""), 3.0f};
  std::copy(v, v + 6, x.data<float>());
  ir::Tensor y = testing::evaluate_graph(g, {x})[0];
  ASSERT_EQ(y.dtype(), ir::DType::i64);
  EXPECT_EQ(std::vector<int64_t>(y.data<int64_t>(), y.data<int64_t>() + 6),
            (std::vector<int64_t>{0, 0, 1, 1, 1, 1}));
}

TEST(OnnxImport, ListsEveryUnsupportedOpAtOnce) {
  Builder b(13);
  b.input("x", {2});
  b.node("Foo", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"b"});
  b.node("Bar", {"b"}, {"c"});
  b.node("Foo", {"c"}, {"d"});
  b.node("LayerNormalization", {"d", "d"}, {"y"});  // needs opset 17
  b.output("y");
  std::string e = error_of(b.bytes());
  EXPECT_NE(e.find("4 node(s)"), std::string::npos) << e;
  EXPECT_NE(e.find("opset 13"), std::string::npos) << e;
  EXPECT_NE(e.find("Foo"), std::string::npos) << e;
  EXPECT_NE(e.find("'Foo_1', 'Foo_4'"), std::string::npos) << e;
  EXPECT_NE(e.find("Bar"), std::string::npos) << e;
  EXPECT_NE(e.find("LayerNormalization (needs opset >= 17"), std::string::npos) << e;
}

TEST(OnnxImport, DynamicDimsNeedValues) {
  Builder b;
  b.input("x", {-1, 4}, onnx::TensorProto::FLOAT, "batch");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  std::string e = error_of(b.bytes());
  EXPECT_NE(e.find("--dim batch="), std::string::npos) << e;
  auto opt = options();
  opt.dims["batch"] = 3;
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m", opt);
  EXPECT_EQ(g.tensor("x").shape, (ir::Shape{3, 4}));
}

TEST(OnnxImport, RefusesTypesWeCannotCompute) {
  Builder b;
  b.input("x", {2}, onnx::TensorProto::DOUBLE);
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_NE(error_of(b.bytes()).find("DOUBLE"), std::string::npos);
}

TEST(OnnxImport, GemmBecomesMatMulWithFlagsAndScaledBias) {
  Builder b(13);
  b.input("a", {3, 2});  // transA: A is [K, M]
  b.init("w", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});  // transB: B is [N, K]
  b.init("c", {4}, {1, -1, 0.5f, 2});
  auto* n = b.node("Gemm", {"a", "w", "c"}, {"y"});
  Builder::attr(n, "transA", int64_t{1});
  Builder::attr(n, "transB", int64_t{1});
  Builder::attr(n, "alpha", 0.5f);
  Builder::attr(n, "beta", 2.0f);
  b.output("y");
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m", options());
  EXPECT_EQ(g.op_histogram(), (std::map<std::string, int>{{"Add", 1}, {"MatMul", 1}}));
  ir::Tensor a(ir::DType::f32, {3, 2});
  for (int i = 0; i < 6; ++i) a.data<float>()[i] = static_cast<float>(i) - 2.5f;
  ir::Tensor y = testing::evaluate_graph(g, {a})[0];
  ASSERT_EQ(y.shape(), (ir::Shape{2, 4}));
  const float w[4][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}}, c[4] = {1, -1, 0.5f, 2};
  for (int m = 0; m < 2; ++m)
    for (int j = 0; j < 4; ++j) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += static_cast<double>(a.data<float>()[k * 2 + m]) * w[j][k];
      EXPECT_NEAR(y.data<float>()[m * 4 + j], 0.5 * acc + 2.0 * c[j], 1e-5);
    }
}

TEST(OnnxImport, SoftmaxBeforeOpset13CoercesTo2D) {
  Builder b(11);
  b.input("x", {2, 3, 4});
  auto* n = b.node("Softmax", {"x"}, {"y"});
  Builder::attr(n, "axis", int64_t{1});
  b.output("y");
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m", options());
  ir::Tensor x = testing::random_inputs(g, 7)[0];
  ir::Tensor y = testing::evaluate_graph(g, {x})[0];
  ASSERT_EQ(y.shape(), (ir::Shape{2, 3, 4}));
  for (int r = 0; r < 2; ++r) {  // normalized over the 12 elements of each row
    double z = 0;
    for (int i = 0; i < 12; ++i) z += std::exp(static_cast<double>(x.data<float>()[r * 12 + i]));
    for (int i = 0; i < 12; ++i)
      EXPECT_NEAR(y.data<float>()[r * 12 + i], std::exp(static_cast<double>(x.data<float>()[r * 12 + i])) / z, 1e-6);
  }
}

// Clip from opset 11 takes its bounds as inputs: constant ones become our Clip's attributes, a
// bound computed at run time a Max / Min against it; the attribute form is refused there.
TEST(OnnxImport, ClipBoundsConstantOrRunTime) {
  Builder b(13);
  b.input("x", {6});
  b.input("hi", {});
  b.init("lo", {}, {-0.5f});
  b.node("Clip", {"x", "lo", "hi"}, {"y"});
  b.output("y");
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m", options());
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Clip", "Min"}));
  ir::Tensor x(ir::DType::f32, {6}), hi(ir::DType::f32, {});
  const float xs[] = {-3.0f, -0.5f, 0.0f, 0.25f, 0.7f, 9.0f};
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = xs[i];
  hi.data<float>()[0] = 0.5f;
  ir::Tensor y = testing::evaluate_graph(g, {x, hi})[0];
  const float want[] = {-0.5f, -0.5f, 0.0f, 0.25f, 0.5f, 0.5f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<float>()[i], want[i]) << i;

  Builder old(13);
  old.input("x", {6});
  Builder::attr(old.node("Clip", {"x"}, {"y"}), "min", 0.0f);
  old.output("y");
  std::string e = error_of(old.bytes());
  EXPECT_NE(e.find("node 'Clip_1' (Clip): from opset 11 min and max are inputs"), std::string::npos) << e;
}

TEST(OnnxImport, RangeFoldsAtLoadAndRefusesRunTimeInputs) {
  Builder b(13);
  b.input("x", {4});
  b.init("start", {}, {1.0f});
  b.init("limit", {}, {3.0f});
  b.init("delta", {}, {0.5f});
  b.node("Range", {"start", "limit", "delta"}, {"r"});
  b.node("Add", {"x", "r"}, {"y"});
  b.output("y");
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m", options());
  ir::Tensor x(ir::DType::f32, {4});
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = 0.0f;
  ir::Tensor y = testing::evaluate_graph(g, {x})[0];
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y.data<float>()[i], 1.0f + 0.5f * static_cast<float>(i));

  Builder run_time(13);
  run_time.input("limit", {});
  run_time.init("start", {}, {0.0f});
  run_time.init("delta", {}, {1.0f});
  run_time.node("Range", {"start", "limit", "delta"}, {"r"});
  run_time.output("r");
  std::string e = error_of(run_time.bytes());
  EXPECT_NE(e.find("node 'Range_1' (Range): limit 'limit' is computed at run time"), std::string::npos) << e;
}

TEST(OnnxImport, ActivationAttributesAreChecked) {
  Builder b(13);
  b.input("x", {3});
  Builder::attr(b.node("LeakyRelu", {"x"}, {"y"}), "alpha", std::nanf(""));
  b.output("y");
  std::string e = error_of(b.bytes());
  EXPECT_NE(e.find("node 'LeakyRelu_1' (LeakyRelu): attribute alpha is nan, not a finite number"),
            std::string::npos)
      << e;
}

TEST(OnnxImport, VariadicMaxIsAChainOfBinaryMax) {
  Builder b(13);
  b.input("a", {2, 1});
  b.input("b", {3});
  b.input("c", {});
  b.node("Max", {"a", "b", "c"}, {"y"});
  b.output("y");
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m", options());
  ASSERT_EQ(g.nodes.size(), 2u);
  ir::Tensor a(ir::DType::f32, {2, 1}), bb(ir::DType::f32, {3}), c(ir::DType::f32, {});
  a.data<float>()[0] = -1.0f;
  a.data<float>()[1] = 5.0f;
  for (int i = 0; i < 3; ++i) bb.data<float>()[i] = static_cast<float>(i) - 1.0f;  // -1 0 1
  c.data<float>()[0] = 0.5f;
  ir::Tensor y = testing::evaluate_graph(g, {a, bb, c})[0];
  ASSERT_EQ(y.shape(), (ir::Shape{2, 3}));
  const float want[] = {0.5f, 0.5f, 1.0f, 5.0f, 5.0f, 5.0f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<float>()[i], want[i]) << i;
}

TEST(OnnxImport, FoldsPyTorchShapeArithmetic) {
  // x [2, 3, 4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) == [2, 12]
  Builder b(13);
  b.input("x", {2, 3, 4});
  b.init_i64("zero", {0});
  b.init_i64("axes0", {0});
  b.init_i64("minus1", {-1});
  b.node("Shape", {"x"}, {"s"});
  auto* gather = b.node("Gather", {"s", "zero"}, {"d0"});
  Builder::attr(gather, "axis", int64_t{0});
  b.node("Squeeze", {"d0", "axes0"}, {"d0s"});
  b.node("Unsqueeze", {"d0s", "axes0"}, {"d0u"});
  auto* concat = b.node("Concat", {"d0u", "minus1"}, {"shape"});
  Builder::attr(concat, "axis", int64_t{0});
  b.node("Reshape", {"x", "shape"}, {"r"});
  b.node("Relu", {"r"}, {"y"});
  b.output("y");
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m", options());
  EXPECT_EQ(g.op_histogram(), (std::map<std::string, int>{{"Relu", 1}, {"Reshape", 1}}));
  EXPECT_EQ(g.tensor("y").shape, (ir::Shape{2, 12}));
}

TEST(OnnxImport, ShapeArgumentsComputedAtRunTimeAreRefused) {
  Builder b(13);
  b.input("x", {2, 3});
  b.input("shape", {2}, onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  std::string e = error_of(b.bytes());
  EXPECT_NE(e.find("must be known at load time"), std::string::npos) << e;
}

TEST(OnnxImport, ExternalDataIsCheckedAndConfinedToTheModelDirectory) {
  auto dir = std::filesystem::temp_directory_path() / "fusebox_onnx_external";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "w.bin", std::ios::binary);
    float v[4] = {1, 2, 3, 4};
    f.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  auto make = [&](const std::string& location, const std::string& offset, const std::string& length) {
    Builder b;
    b.input("x", {4});
    auto* t = b.g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : {std::pair{"location", location}, {"offset", offset}, {"length", length}}) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    b.node("Add", {"x", "w"}, {"y"});
    b.output("y");
    std::ofstream(dir / "m.onnx", std::ios::binary) << b.bytes();
    return (dir / "m.onnx").string();
  };
  auto err = [&](const std::string& path) {
    try {
      models::import_onnx_file(path, options());
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(err(make("w.bin", "0", "16")), "");
  EXPECT_NE(err(make("w.bin", "4", "16")).find("beyond the end"), std::string::npos);
  EXPECT_NE(err(make("w.bin", "0", "12")).find("does not match"), std::string::npos);
  EXPECT_NE(err(make("../w.bin", "0", "16")).find("leaves the model's directory"), std::string::npos);
  EXPECT_NE(err(make("/etc/passwd", "0", "16")).find("relative"), std::string::npos);
  EXPECT_NE(err(make("missing.bin", "0", "16")).find("cannot read"), std::string::npos);
  EXPECT_NE(err(make("w.bin", "-4", "16")).find("offset"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A model whose one initializer `w` of `dims` is stored externally at `location`, written to
// `dir`/m.onnx; returns the model's path.
std::string external_model(const std::filesystem::path& dir, const std::string& location,
                           std::vector<int64_t> dims) {
  Builder b;
  b.input("x", {dims.back()});
  auto* t = b.g->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value(location);
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y");
  std::ofstream(dir / "m.onnx", std::ios::binary) << b.bytes();
  return (dir / "m.onnx").string();
}

std::string import_error(const std::string& path) {
  try {
    models::import_onnx_file(path, options());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

long peak_rss_kib() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// External data is confined to the model's folder after symlinks are resolved, and must be a
// regular file: a link beside the model to a file elsewhere (think /etc/passwd) is refused.
TEST(OnnxImport, ExternalDataSymlinksMustStayInTheModelDirectory) {
  std::filesystem::path root = test::process_temp_dir() + "/symlinks";
  std::filesystem::create_directories(root / "model" / "sub");
  float v[4] = {1, 2, 3, 4};
  for (auto path : {root / "outside.bin", root / "model" / "sub" / "w.bin"})
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(v), sizeof v);
  std::filesystem::create_symlink(root / "outside.bin", root / "model" / "evil.bin");
  std::filesystem::create_symlink("sub/w.bin", root / "model" / "inside.bin");
  ASSERT_EQ(::mkfifo((root / "model" / "fifo.bin").c_str(), 0600), 0);
  std::string e = import_error(external_model(root / "model", "evil.bin", {4}));
  EXPECT_NE(e.find("resolves to '" + (root / "outside.bin").string() +
                   "', outside the model's directory"),
            std::string::npos)
      << e;
  e = import_error(external_model(root / "model", "fifo.bin", {4}));
  EXPECT_NE(e.find("is not a regular file"), std::string::npos) << e;
  EXPECT_EQ(import_error(external_model(root / "model", "inside.bin", {4})), "");
  EXPECT_EQ(import_error(external_model(root / "model", "sub/w.bin", {4})), "");
}

// Sizes are compared with what the file holds before anything is allocated: a [2^30, 3] tensor
// (12 GiB) over a 16-byte file, or an empty [2^31] initializer, are errors that allocate nothing.
TEST(OnnxImport, InitializerSizesAreCheckedBeforeAllocating) {
  std::filesystem::path dir = test::process_temp_dir() + "/sizes";
  std::filesystem::create_directories(dir);
  float v[4] = {1, 2, 3, 4};
  std::ofstream(dir / "w.bin", std::ios::binary).write(reinterpret_cast<const char*>(v), sizeof v);
  std::string e = import_error(external_model(dir, "w.bin", {int64_t{1} << 30, 3}));
  EXPECT_NE(e.find("lies beyond the end"), std::string::npos) << e;
  Builder b;
  b.input("x", {int64_t{1} << 31});
  b.init("w", {int64_t{1} << 31}, {});
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y");
  e = error_of(b.bytes());
  EXPECT_NE(e.find("has 0 values, expected 2147483648"), std::string::npos) << e;
  EXPECT_LT(peak_rss_kib(), 1L << 20) << "more than 1 GiB held while refusing the initializers";
}

// Load-time folding has a budget: five constant Adds of 62.5 MiB each from 32 KiB of
// initializers fold until 256 MiB (+ the initializers) are made; the fifth is left as a graph node
// for run time. A ConstantOfShape too large to hold is an error, not gigabytes allocated.
TEST(OnnxImport, LoadTimeFoldingHasABudget) {
  Builder b;
  b.input("x", {4096, 4000});
  b.init("col", {4096, 1}, std::vector<float>(4096, 1.0f));
  b.init("row", {1, 4000}, std::vector<float>(4000, 2.0f));
  std::string sum = "x";
  for (int k = 0; k < 5; ++k) {
    std::string a = "a" + std::to_string(k), s = "s" + std::to_string(k);
    b.node("Add", {"col", "row"}, {a});
    b.node("Add", {sum, a}, {s});
    sum = s;
  }
  b.output(sum);
  ir::Graph g = models::import_onnx_bytes(b.bytes(), "m.onnx", options());
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(g.is_weight("a" + std::to_string(k))) << k;
  EXPECT_FALSE(g.is_weight("a4"));
  EXPECT_EQ(g.nodes.size(), 6u);

  Builder huge;
  huge.input("x", {1});
  huge.init_i64("shape", {int64_t{1} << 28});
  huge.node("ConstantOfShape", {"shape"}, {"zeros"});
  huge.node("Add", {"x", "zeros"}, {"y"});
  huge.output("y");
  std::string e = error_of(huge.bytes());
  EXPECT_NE(e.find("ConstantOfShape_1' (ConstantOfShape): shape [268435456] is too large to fold "
                   "at load time "
                   "(1.00 GiB, more than the 64.00 MiB one folded result may take)"),
            std::string::npos)
      << e;
  EXPECT_LT(peak_rss_kib(), 1L << 20) << "more than 1 GiB held while importing";
}

TEST(OnnxImport, InspectListsOpsInputsAndUnsupported) {
  Builder b(13);
  b.input("x", {-1, 4}, onnx::TensorProto::FLOAT, "batch");
  b.node("Relu", {"x"}, {"a"});
  b.node("Loop", {"a"}, {"y"});
  b.output("y");
  models::OnnxInspection r = models::inspect_onnx_bytes(b.bytes(), "m.onnx");
  EXPECT_EQ(r.opset, 13);
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(r.inputs[0].dims, (std::vector<std::string>{"batch", "4"}));
  EXPECT_EQ(r.op_histogram["Relu"], 1);
  ASSERT_EQ(r.unsupported.size(), 1u);
  EXPECT_EQ(r.unsupported[0].op, "Loop");
  EXPECT_NE(r.to_text().find("Loop"), std::string::npos);
}

// The outline a refused model is drawn from: every node in file order with its edges, the one op
// without a handler flagged (the importer's registry decides: the same ops its error names), the
// initializer a weight and not an input, attributes as text; malformed files refused with the
// importer's own sentence.
TEST(OnnxOutline, ListsEveryNodeOfARefusedModelAndFlagsTheUnsupportedOnes) {
  Builder b(17);
  b.input("x", {-1, 4}, onnx::TensorProto::FLOAT, "batch");
  b.init("w", {4, 4}, std::vector<float>(16, 0.5f));
  b.node("Relu", {"x"}, {"a"});
  b.node("MatMul", {"a", "w"}, {"m"});
  auto* einsum = b.node("Einsum", {"m", "a"}, {"e"});
  auto* eq = einsum->add_attribute();
  eq->set_name("equation");
  eq->set_type(onnx::AttributeProto::STRING);
  eq->set_s("ij,ij->ij");
  auto* ms = b.node("FusedGemm", {"e", "w"}, {"y"});
  ms->set_domain("com.microsoft");
  b.node("Add", {"y", "", "a"}, {"z"})->set_name("");  // unnamed, an empty optional input
  b.output("z");

  const std::string refusal = error_of(b.bytes());
  ASSERT_NE(refusal.find("cannot import"), std::string::npos) << refusal;

  const models::OnnxOutline o = models::outline_onnx_bytes(b.bytes(), "m.onnx");
  EXPECT_EQ(o.opset, 17);
  ASSERT_EQ(o.nodes.size(), 5u);
  const std::vector<std::string> names{"Relu_1", "MatMul_2", "Einsum_3", "FusedGemm_4", "Add_4"};
  const std::vector<std::string> ops{"Relu", "MatMul", "Einsum", "com.microsoft.FusedGemm", "Add"};
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(o.nodes[i].name, names[i]);
    EXPECT_EQ(o.nodes[i].op, ops[i]);
  }
  EXPECT_EQ(o.nodes[3].domain, "com.microsoft");
  EXPECT_EQ(o.nodes[2].inputs, (std::vector<std::string>{"m", "a"}));
  EXPECT_EQ(o.nodes[2].outputs, (std::vector<std::string>{"e"}));
  EXPECT_EQ(o.nodes[4].inputs, (std::vector<std::string>{"y", "", "a"}));
  EXPECT_EQ(o.nodes[2].attributes, (std::vector<std::string>{"equation='ij,ij->ij'"}));
  // Flagged: exactly the ops the importer's refusal names, and no others.
  for (size_t i = 0; i < o.nodes.size(); ++i) {
    const bool flagged = !o.nodes[i].unsupported.empty();
    EXPECT_EQ(flagged, i == 2 || i == 3) << o.nodes[i].name << ": " << o.nodes[i].unsupported;
    EXPECT_EQ(refusal.find(o.nodes[i].name) != std::string::npos, flagged) << refusal;
  }
  EXPECT_EQ(o.nodes[2].unsupported, "no handler for this op");
  EXPECT_EQ(o.unsupported_nodes(), 2u);
  EXPECT_EQ(o.refusal_summary(), "2 ops fusebox does not import (Einsum, com.microsoft.FusedGemm)");
  ASSERT_EQ(o.inputs.size(), 1u);
  EXPECT_EQ(o.inputs[0].name, "x");
  EXPECT_EQ(o.inputs[0].dims, (std::vector<std::string>{"batch", "4"}));
  ASSERT_EQ(o.initializers.size(), 1u);
  EXPECT_EQ(o.initializers[0].name, "w");
  EXPECT_EQ(o.initializers[0].dims, (std::vector<std::string>{"4", "4"}));
  ASSERT_EQ(o.outputs.size(), 1u);
  EXPECT_EQ(o.outputs[0].name, "z");

  // A model that imports outlines with nothing flagged.
  Builder ok;
  ok.input("x", {2});
  ok.node("Relu", {"x"}, {"y"});
  ok.output("y");
  const models::OnnxOutline fine = models::outline_onnx_bytes(ok.bytes(), "ok.onnx");
  ASSERT_EQ(fine.nodes.size(), 1u);
  EXPECT_EQ(fine.nodes[0].unsupported, "");
  EXPECT_EQ(fine.unsupported_nodes(), 0u);
}

TEST(OnnxOutline, RefusesMalformedFilesWithTheImportersSentence) {
  auto outline_error = [](const std::string& bytes) {
    try {
      models::outline_onnx_bytes(bytes, "m.onnx");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Builder b;
  b.input("x", {2});
  b.node("Loop", {"x"}, {"y"});
  b.output("y");
  const std::string whole = b.bytes();
  for (const std::string& bad : {std::string("hello, this is not a model"), std::string(),
                                 whole.substr(0, whole.size() / 2)}) {
    const std::string want = error_of(bad);
    ASSERT_NE(want, "");
    EXPECT_EQ(outline_error(bad), want);
  }
  Builder no_default;
  no_default.m.mutable_opset_import(0)->set_domain("com.microsoft");
  no_default.input("x", {2});
  no_default.node("Relu", {"x"}, {"y"});
  no_default.output("y");
  EXPECT_EQ(outline_error(no_default.bytes()), error_of(no_default.bytes()));
}

TEST(OnnxImport, AModelImportedAgainWithOtherDimsSharesTheWeightsItDecoded) {
  // fusebox generate imports its export once a step, each with that step's cache length: the
  // weights are decoded (copied out of protobuf's unaligned buffer) on the first import only.
  const std::string path = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/gpt_small_opset17.onnx";
  const models::OnnxModel model(path);
  auto with_past = [&](int64_t past) {
    auto opt = options();
    opt.dims = {{"batch", 1}, {"seq", past == 0 ? 6 : 1}, {"past", past}};
    return model.import(opt);
  };
  const ir::Graph prefill = with_past(0), decode = with_past(6);
  EXPECT_EQ(decode.tensor("past_key_values.0.key").shape, (ir::Shape{1, 2, 6, 16}));
  int shared = 0;
  onnx::ModelProto file;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(file.ParseFromIstream(&in));
  for (const onnx::TensorProto& init : file.graph().initializer()) {
    const std::string& name = init.name();
    if (!prefill.has_tensor(name) || !decode.has_tensor(name)) continue;  // folded into a constant
    ASSERT_TRUE(prefill.tensor(name).value && decode.tensor(name).value) << name;
    EXPECT_EQ(prefill.tensor(name).value->bytes(), decode.tensor(name).value->bytes()) << name;
    ++shared;
  }
  EXPECT_GE(shared, 10) << "wte, wpe, and each block's layer norms, projections and MLP";
}

}  // namespace
}  // namespace fusebox
