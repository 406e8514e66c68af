// The backend contract a device backend needs, checked with a test backend that runs the CPU's
// kernels but answers differently from the CPU (the way a GPU backend would): kernels get its
// execution context, every executor tells it where each op begins and ends, the compiled
// executor captures a run and replays it, the planner uses its alignment and scratch sizes, the
// passes create no op it does not support, and constant folding never evaluates on it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/backend/evaluate.h"
#include "core/exec/session.h"
#include "core/ir/op_schema.h"
#include "core/models/builtin_models.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/cpu/isa.h"
#include "tests/support/graph_eval.h"

namespace fusebox {
namespace {

struct TestConfig {
  std::string name = "contract";
  std::set<std::string> refused;  // ops supports() says no to
  size_t alignment = 256;
  size_t extra_scratch = 0;       // added to every MatMul-family kernel's scratch (a "workspace")
  bool op_events = true;
  bool capture = true;
  std::vector<std::string> isa_levels;          // BackendCaps::isa_levels (the CPU kernels run at auto)
  std::vector<std::string> precisions{"fp32"};  // BackendCaps::precisions
};

// What the test backend's "stream" saw: every kernel launch, whether it was recorded for a
// replay, and the op range open at the time (what CUPTI external correlation would tag).
struct TestStream {
  bool capturing = false;
  int64_t open_node = -1;
  struct Launch {
    exec::KernelFn fn;
    exec::KernelArgs args;
  };
  std::vector<Launch> recorded;          // while capturing
  std::vector<int64_t> launched_under;   // per direct launch: the open node (-1: none)
  std::vector<std::string> events;       // "begin 3", "end 3"
  int64_t direct = 0, replayed = 0;
  std::set<const exec::ExecContext*> contexts_seen;
  std::vector<std::string> prepared_with;  // per prepare(): its options' "isa/precision" ("-": none)
};

// A wrapped kernel's state: the CPU kernel and its own state.
struct Wrapped {
  exec::KernelFn run;
  std::shared_ptr<const void> state;
};

// Every kernel of the test backend: runs the CPU kernel, or records it while the stream captures.
void wrapped_run(const exec::KernelArgs& args) {
  auto* stream = static_cast<TestStream*>(args.context->stream);
  stream->contexts_seen.insert(args.context);
  const auto& w = *static_cast<const Wrapped*>(args.state);
  exec::KernelArgs inner = args;
  inner.state = w.state.get();
  if (stream->capturing) {
    stream->recorded.push_back({w.run, inner});
    return;
  }
  ++stream->direct;
  stream->launched_under.push_back(stream->open_node);
  w.run(inner);
}

class TestCapture final : public exec::CapturedRun {
 public:
  explicit TestCapture(TestStream& s) : stream_(s), launches_(std::move(s.recorded)) {}
  void replay() override {
    for (const auto& l : launches_) l.fn(l.args);
    stream_.replayed += static_cast<int64_t>(launches_.size());
  }
  std::string describe() const override { return std::to_string(launches_.size()) + " recorded launches"; }

 private:
  TestStream& stream_;
  std::vector<TestStream::Launch> launches_;
};

bool matmul_family(const std::string& op) {
  return op == "MatMul" || op == "MatMulAdd" || op == "FusedBiasRelu";
}

class TestBackend final : public exec::Backend {
 public:
  explicit TestBackend(TestConfig c) : config_(std::move(c)), cpu_(cpu::make_backend()) {
    for (const auto& op : cpu_->kernels().names()) {
      const exec::KernelDef inner = *cpu_->kernels().find(op);
      exec::KernelDef def;
      def.prepare = [inner, stream = &stream_](const exec::KernelContext& ctx) -> std::shared_ptr<const void> {
        stream->prepared_with.push_back(ctx.options ? ctx.options->isa + "/" + ctx.options->precision : "-");
        exec::KernelContext cpu_ctx = ctx;
        cpu_ctx.options = nullptr;  // the CPU kernels at their default level: this backend's are not theirs
        return exec::make_state(Wrapped{inner.run, inner.prepare ? inner.prepare(cpu_ctx) : nullptr});
      };
      def.run = wrapped_run;
      table_.add(op, def);
    }
    context_.stream = &stream_;
    context_.blas = &blas_handle_;
    caps_.op_events = config_.op_events;
    caps_.capture = config_.capture;
    caps_.isa_levels = config_.isa_levels;
    caps_.precisions = config_.precisions;
    // caps_.host_memory stays false: a device backend's memory is not the host's (even though this
    // one's happens to be), so evaluate_node must refuse it.
  }
  std::string name() const override { return config_.name; }
  std::string description() const override { return "CPU kernels behind the device contract"; }
  const exec::KernelTable& kernels() const override { return table_; }
  bool supports(const std::string& op, const std::vector<ir::TensorType>& in) const override {
    return !config_.refused.count(op) && cpu_->supports(op, in);
  }
  size_t alignment() const override { return config_.alignment; }
  size_t scratch_bytes(const exec::KernelContext& ctx) const override {
    return cpu_->scratch_bytes(ctx) + (matmul_family(ctx.node.op) ? config_.extra_scratch : 0);
  }
  void on_op_begin(size_t node) override {
    stream_.events.push_back("begin " + std::to_string(node));
    stream_.open_node = static_cast<int64_t>(node);
  }
  void on_op_end(size_t node) override {
    stream_.events.push_back("end " + std::to_string(node));
    stream_.open_node = -1;
  }
  void begin_capture() override {
    if (!config_.capture) exec::Backend::begin_capture();
    stream_.capturing = true;
    stream_.recorded.clear();
  }
  std::unique_ptr<exec::CapturedRun> end_capture() override {
    stream_.capturing = false;
    return std::make_unique<TestCapture>(stream_);
  }
  void bind_threads(int threads) const override { cpu_->bind_threads(threads); }
  std::shared_ptr<void> allocate(size_t bytes) override {
    auto p = cpu_->allocate(bytes + config_.alignment);  // over-allocate, then align
    auto addr = reinterpret_cast<uintptr_t>(p.get());
    addr = (addr + config_.alignment - 1) / config_.alignment * config_.alignment;
    return std::shared_ptr<void>(p, reinterpret_cast<void*>(addr));
  }
  std::shared_ptr<const void> upload(const ir::Tensor& w) override { return cpu_->upload(w); }
  void copy_to_device(void* d, const void* s, size_t n) override { cpu_->copy_to_device(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n) override { cpu_->copy_to_host(d, s, n); }

  TestStream& stream() { return stream_; }

 private:
  TestConfig config_;
  std::unique_ptr<exec::Backend> cpu_;
  exec::KernelTable table_;
  TestStream stream_;
  int blas_handle_ = 0;
};

// Registers a test backend under config.name (the session creates its own from the registry).
void register_test_backend(const TestConfig& config) {
  cpu::register_backend();  // a session on another backend folds constants on the CPU
  exec::BackendRegistry::instance().add(config.name, [config] { return std::make_unique<TestBackend>(config); });
}

TestBackend& test_backend(exec::Session& s) { return dynamic_cast<TestBackend&>(s.backend()); }

std::vector<ir::Tensor> cpu_outputs(const ir::Graph& g, const std::vector<ir::Tensor>& inputs,
                                    const std::string& passes = "all") {
  cpu::register_backend();
  exec::SessionOptions o;
  o.passes = passes;
  exec::Session s(g, o);
  return s.run(inputs);
}

void expect_close(const std::vector<ir::Tensor>& got, const std::vector<ir::Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(testing::tolerance_ratio(got[i], want[i], 1e-4, 1e-4), 1.0) << what << " output " << i;
}

constexpr const char* kTransformer = "transformer:seq=8,d=16,heads=2,ffn=32";

TEST(BackendContract, EveryKernelGetsTheBackendsContextAndEveryExecutorSendsOpEvents) {
  TestConfig config;
  config.name = "contract_events";
  config.capture = false;
  register_test_backend(config);
  ir::Graph g = models::build_model(kTransformer, 3);
  std::vector<ir::Tensor> inputs = testing::random_inputs(g, 5);
  const std::vector<ir::Tensor> want = cpu_outputs(g, inputs);
  std::vector<std::string> first_events;
  for (const char* executor : {"eager", "interpreted", "compiled"}) {
    exec::SessionOptions o;
    o.backend = config.name;
    o.executor = executor;
    exec::Session s(g, o);
    TestBackend& b = test_backend(s);
    expect_close(s.run(inputs), want, executor);
    TestStream& st = b.stream();
    EXPECT_EQ(st.contexts_seen, (std::set<const exec::ExecContext*>{b.context()})) << executor;
    EXPECT_NE(b.context()->blas, nullptr) << "the library handle the backend put in its context";
    // One begin/end pair per node that has a kernel, in execution order, each kernel inside
    // its own node's range.
    std::vector<std::string> want_events;
    std::vector<int64_t> want_under;
    for (size_t i = 0; i < s.graph().nodes.size(); ++i) {
      if (ir::OpRegistry::instance().get(s.graph().nodes[i].op).view) continue;
      want_events.push_back("begin " + std::to_string(i));
      want_events.push_back("end " + std::to_string(i));
      want_under.push_back(static_cast<int64_t>(i));
    }
    ASSERT_FALSE(want_under.empty());
    EXPECT_EQ(st.events, want_events) << executor;
    EXPECT_EQ(st.launched_under, want_under) << executor;
    if (first_events.empty()) first_events = st.events;
    EXPECT_EQ(st.events, first_events) << executor << " tells of other nodes than eager";
  }
}

TEST(BackendContract, NoOpEventsToABackendThatWantsNone) {
  TestConfig config;
  config.name = "contract_quiet";
  config.op_events = false;
  config.capture = false;
  register_test_backend(config);
  ir::Graph g = models::build_model("mlp", 3);
  std::vector<ir::Tensor> inputs = testing::random_inputs(g, 5);
  for (const char* executor : {"eager", "interpreted", "compiled"}) {
    exec::SessionOptions o;
    o.backend = config.name;
    o.executor = executor;
    exec::Session s(g, o);
    s.run(inputs);
    EXPECT_TRUE(test_backend(s).stream().events.empty()) << executor;
    EXPECT_GT(test_backend(s).stream().direct, 0) << executor;
  }
  EXPECT_FALSE(cpu::make_backend()->caps().op_events);
}

TEST(BackendContract, CompiledExecutorCapturesOneRunAndReplaysIt) {
  TestConfig config;
  config.name = "contract_capture";
  register_test_backend(config);
  ir::Graph g = models::build_model(kTransformer, 3);
  exec::SessionOptions o;
  o.backend = config.name;
  o.capture = true;
  exec::Session s(g, o);
  EXPECT_TRUE(s.executor().captures());
  EXPECT_EQ(s.capture_note(), "");
  EXPECT_EQ(s.executor().captured(), "") << "nothing is captured before the first run";
  TestStream& st = test_backend(s).stream();
  size_t kernels = 0;
  for (const auto& n : s.graph().nodes) kernels += !ir::OpRegistry::instance().get(n.op).view;
  for (uint64_t seed : {5u, 6u, 7u}) {
    std::vector<ir::Tensor> inputs = testing::random_inputs(g, seed);
    expect_close(s.run(inputs), cpu_outputs(g, inputs), "run with inputs " + std::to_string(seed));
  }
  // The first run ran once eagerly (a warm-up: libraries initialize outside the capture), then was
  // recorded, then every run replayed it.
  EXPECT_EQ(st.direct, static_cast<int64_t>(kernels));
  EXPECT_EQ(st.replayed, static_cast<int64_t>(3 * kernels));
  // Op events were sent on the warm-up and while capturing (a GPU backend tags the captured
  // launches), not on replays.
  EXPECT_EQ(st.events.size(), 4 * kernels);
  // What was captured is the backend's to say (the report shows it).
  EXPECT_EQ(s.executor().captured(), std::to_string(kernels) + " recorded launches");
}

TEST(BackendContract, CaptureIsReportedNotApplicableWhereItCannotBe) {
  cpu::register_backend();
  ir::Graph g = models::build_model("mlp", 3);
  exec::SessionOptions o;
  o.capture = true;
  exec::Session cpu_session(g, o);
  EXPECT_FALSE(cpu_session.executor().captures());
  EXPECT_EQ(cpu_session.capture_note(), "backend 'cpu' cannot capture a run (it has no graph capture)");
  std::vector<ir::Tensor> inputs = testing::random_inputs(g, 5);
  expect_close(cpu_session.run(inputs), cpu_outputs(g, inputs), "cpu, capture asked");

  TestConfig config;
  config.name = "contract_capture_eager";
  register_test_backend(config);
  o.backend = config.name;
  o.executor = "eager";
  exec::Session eager(g, o);
  EXPECT_FALSE(eager.executor().captures());
  EXPECT_EQ(eager.capture_note(),
            "the eager executor does not capture (only the compiled executor replays a captured run)");
  o.capture = false;
  o.executor = "compiled";
  exec::Session off(g, o);
  EXPECT_FALSE(off.executor().captures());
  EXPECT_EQ(off.capture_note(), "");
  // Asking the executor directly for what the backend cannot do is an error, not a no-op.
  auto cpu = cpu::make_backend();
  exec::Program p = exec::build_program(cpu_session.graph(), *cpu);
  EXPECT_THROW(exec::make_compiled_executor(p, cpu_session.plan(), /*capture=*/true), Error);
  EXPECT_THROW(cpu->begin_capture(), Error);
}

TEST(BackendContract, PlannerTakesAlignmentAndScratchFromTheBackend) {
  TestConfig config;
  config.name = "contract_memory";
  config.alignment = 512;
  config.extra_scratch = 1000;
  config.capture = false;
  register_test_backend(config);
  ir::Graph g = models::build_model("mlp", 3);
  exec::SessionOptions o;
  o.backend = config.name;
  exec::Session s(g, o);
  const planner::ExecutionPlan& plan = s.plan();
  EXPECT_EQ(plan.alignment, 512u);
  size_t matmuls = 0;
  for (const auto& pl : plan.placements) {
    EXPECT_EQ(pl.offset % 512, 0u) << pl.buffer.name;
    EXPECT_EQ(pl.buffer.bytes % 512, 0u) << pl.buffer.name;
  }
  for (size_t i = 0; i < s.graph().nodes.size(); ++i) {
    if (!matmul_family(s.graph().nodes[i].op)) continue;
    ++matmuls;
    ASSERT_GE(plan.scratch_of_step[i], 0) << s.graph().nodes[i].name << " got no workspace";
    EXPECT_EQ(plan.placements[static_cast<size_t>(plan.scratch_of_step[i])].buffer.bytes, 1024u);
  }
  EXPECT_GT(matmuls, 0u);
  std::vector<ir::Tensor> inputs = testing::random_inputs(g, 5);
  expect_close(s.run(inputs), cpu_outputs(g, inputs), "512-byte plan");

  // A plan made with another backend's rules does not bind: its scratch is too small.
  auto cpu = cpu::make_backend();
  auto cpu_plan = exec::plan_memory(exec::OptimizedGraph{s.graph(), {}}, "greedy_by_size", *cpu);
  TestBackend other(config);
  exec::Program p = exec::build_program(s.graph(), other);
  try {
    exec::make_executor("compiled", p, *cpu_plan);
    FAIL() << "a plan without the backend's workspace bound";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs 1000"), std::string::npos) << e.what();
  }
}

// A target without the channels-last kernels keeps a conv net channels-first, and says so.
TEST(BackendContract, AConvStaysChannelsFirstOnATargetWithoutNhwcConv) {
  TestConfig config;
  config.name = "contract_no_nhwc";
  config.refused = {"NhwcConv"};
  config.capture = false;
  register_test_backend(config);
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {1, 2, 6, 6});
  ir::Tensor w(ir::DType::f32, {3, 2, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = 0.01f * static_cast<float>(i);
  g.add_weight("w", std::move(w));
  g.outputs = {g.add_node("Conv", {"x", "w"}, {}, "conv")};
  exec::SessionOptions o;
  o.backend = config.name;
  exec::Session s(g, o);
  const auto count = [](const ir::Graph& graph, const std::string& op) {
    return std::count_if(graph.nodes.begin(), graph.nodes.end(), [&](const ir::Node& n) { return n.op == op; });
  };
  EXPECT_EQ(count(s.graph(), "Conv"), 1);
  EXPECT_EQ(count(s.graph(), "NhwcConv"), 0);
  EXPECT_EQ(count(s.graph(), "Transpose"), 0);
  const std::string explain = s.pass_log().to_text();
  EXPECT_NE(explain.find("conv stays channels-first: backend 'contract_no_nhwc' does not support NhwcConv on "
                         "f32[1,2,6,6], f32[3,2,3,3]"),
            std::string::npos)
      << explain;
  exec::Session on_cpu(g, exec::SessionOptions{});
  EXPECT_EQ(count(on_cpu.graph(), "NhwcConv"), 1) << "the CPU does run it channels-last";
}

TEST(BackendContract, PassesCreateNoOpTheTargetDoesNotSupport) {
  TestConfig config;
  config.name = "contract_no_attention";
  config.refused = {"Attention", "FusedElementwise"};
  config.capture = false;
  register_test_backend(config);
  ir::Graph g = models::build_model(kTransformer, 3);
  exec::SessionOptions o;
  o.backend = config.name;
  exec::Session s(g, o);
  const auto count = [](const ir::Graph& graph, const std::string& op) {
    return std::count_if(graph.nodes.begin(), graph.nodes.end(), [&](const ir::Node& n) { return n.op == op; });
  };
  EXPECT_EQ(count(s.graph(), "Attention"), 0);
  EXPECT_GT(count(s.graph(), "Softmax"), 0) << "the attention subgraph stays as it was";
  // The same model on the CPU does fuse it, so the near miss is the backend's doing.
  exec::Session on_cpu(g, exec::SessionOptions{});
  EXPECT_GT(count(on_cpu.graph(), "Attention"), 0);
  // --explain says why, naming the backend, the op and its input types.
  const std::string explain = s.pass_log().to_text();
  EXPECT_NE(explain.find("attention at attn.context.MatMul: backend 'contract_no_attention' does not support "
                         "Attention on f32[1,2,8,8], f32[1,2,8,8], f32[1,2,8,8]"),
            std::string::npos)
      << explain;
  bool structured = false;
  for (const auto& e : s.pass_log().entries)
    for (const auto& m : e.near_misses)
      structured |= m.pattern == "attention" && m.node == "attn.context.MatMul" &&
                    m.text.find("does not support Attention") != std::string::npos;
  EXPECT_TRUE(structured) << "a NearMiss of the attention pattern at its anchor node";

  // An element-wise chain stays unfused on a backend without FusedElementwise.
  ir::Graph chain;
  chain.add_input("x", ir::DType::f32, {4, 8});
  std::string t = chain.add_node("Neg", {"x"}, {}, "Neg_0");
  t = chain.add_node("Relu", {t}, {}, "Relu_1");
  chain.outputs = {chain.add_node("Exp", {t}, {}, "Exp_2")};
  exec::Session fused_on_cpu(chain, exec::SessionOptions{});
  EXPECT_EQ(count(fused_on_cpu.graph(), "FusedElementwise"), 1);
  exec::Session unfused(chain, o);
  EXPECT_EQ(count(unfused.graph(), "FusedElementwise"), 0);
  EXPECT_NE(unfused.pass_log().to_text().find(
                "Neg_0 + Relu_1 + Exp_2 not fused: backend 'contract_no_attention' does not support FusedElementwise "
                "on f32[4,8]"),
            std::string::npos)
      << unfused.pass_log().to_text();
  std::vector<ir::Tensor> chain_in = testing::random_inputs(chain, 5);
  expect_close(unfused.run(chain_in), cpu_outputs(chain, chain_in), "unfused chain");
  std::vector<ir::Tensor> inputs = testing::random_inputs(g, 5);
  expect_close(s.run(inputs), cpu_outputs(g, inputs), "unfused transformer");
}

TEST(BackendContract, ConstantFoldingEvaluatesOnTheCpuWhateverTheBackend) {
  TestConfig config;
  config.name = "contract_fold";
  config.capture = false;
  register_test_backend(config);
  cpu::register_backend();
  // A transposed weight: constant_fold evaluates the Transpose at load time.
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {2, 3});
  ir::Tensor w(ir::DType::f32, {2, 3});
  for (int i = 0; i < 6; ++i) w.data<float>()[i] = static_cast<float>(i + 1);
  g.add_weight("W", w);
  ir::Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  std::string wt = g.add_node("Transpose", {"W"}, perm, "Transpose_0");
  g.outputs = {g.add_node("MatMul", {"x", wt}, {}, "MatMul_1")};
  exec::SessionOptions o;
  o.backend = config.name;
  o.passes = "constant_fold";
  exec::Session s(g, o);
  ASSERT_EQ(s.graph().nodes.size(), 1u);
  EXPECT_TRUE(s.graph().is_weight(wt));
  // It was not the session's backend that evaluated it: that one refuses.
  TestBackend device(config);
  try {
    exec::evaluate_node(device, g.nodes[0], {w});
    FAIL() << "evaluate_node ran on a backend whose memory is not the host's";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("constant folding evaluates on the CPU backend"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(device.stream().direct, 0);
  std::vector<ir::Tensor> inputs = testing::random_inputs(g, 5);
  expect_close(s.run(inputs), cpu_outputs(g, inputs, "none"), "folded");
}

// Configuration is an argument: compile() hands every kernel's prepare() the options the backend
// resolved, and sets nothing on the backend, so two programs compiled on one backend with
// different settings each keep their own, and the eager executor, which prepares again at every
// run, uses its program's.
TEST(BackendContract, EachProgramIsPreparedWithItsOwnOptions) {
  TestConfig config;
  config.name = "contract_options";
  config.isa_levels = {"wide", "narrow"};
  config.precisions = {"fp32", "tf32"};
  TestBackend b(config);
  cpu::register_backend();
  const ir::Graph g = models::build_model("mlp", 3);
  exec::Session cpu_session(g, exec::SessionOptions{});
  auto optimized = std::make_shared<const exec::OptimizedGraph>(exec::OptimizedGraph{cpu_session.graph(), {}});
  size_t kernels = 0;
  for (const auto& node : optimized->graph.nodes) kernels += ir::OpRegistry::instance().get(node.op).view ? 0 : 1;
  ASSERT_GT(kernels, 0u);

  auto wide = exec::compile(optimized, b, exec::CompileOptions{"auto", "fp32"});
  auto narrow = exec::compile(optimized, b, exec::CompileOptions{"narrow", "tf32"});
  EXPECT_EQ(wide->program.options.isa, "wide") << "auto: the backend's best level, its first";
  EXPECT_EQ(narrow->program.options.isa, "narrow");
  EXPECT_EQ(narrow->program.options.precision, "tf32");
  std::vector<std::string> want(kernels, "wide/fp32");
  want.insert(want.end(), kernels, "narrow/tf32");
  EXPECT_EQ(b.stream().prepared_with, want);

  auto plan = exec::plan_memory(*optimized, "greedy_by_size", b);
  auto eager = exec::bind_executor(wide, plan, "eager");
  const std::vector<ir::Tensor> inputs = testing::random_inputs(g, 7);
  std::vector<const void*> in;
  for (const auto& t : inputs) in.push_back(t.bytes());
  std::vector<ir::Tensor> outputs;
  std::vector<void*> out;
  for (const auto& name : g.outputs) outputs.emplace_back(g.tensor(name).dtype, g.tensor(name).shape);
  for (auto& t : outputs) out.push_back(t.bytes());
  b.stream().prepared_with.clear();
  eager->executor->run(in.data(), out.data(), nullptr);
  EXPECT_EQ(b.stream().prepared_with, std::vector<std::string>(kernels, "wide/fp32"))
      << "the eager executor prepares with its program's options, whatever was compiled since";
  expect_close(outputs, cpu_outputs(g, inputs), "eager on the wide program");
}

// resolve() checks the options against the backend's caps, naming what it offers instead.
TEST(BackendContract, ResolveRefusesWhatTheCapsDoNotOffer) {
  auto message = [](const exec::Backend& b, const exec::CompileOptions& o) -> std::string {
    try {
      b.resolve(o);
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  TestConfig levels;
  levels.name = "contract_levels";
  levels.isa_levels = {"wide", "narrow"};
  levels.precisions = {"fp32", "tf32"};
  TestBackend two(levels);
  EXPECT_EQ(message(two, {"avx2", "fp32"}), "isa 'avx2': backend 'contract_levels' runs wide | narrow here");
  EXPECT_EQ(message(two, {"auto", "fp16"}),
            "precision must be fp32 or tf32 on backend 'contract_levels', got 'fp16'");
  EXPECT_EQ(two.resolve({"narrow", "tf32"}).isa, "narrow");

  TestConfig plain;
  plain.name = "contract_plain";
  TestBackend one(plain);
  EXPECT_EQ(one.resolve({}).isa, "") << "a backend with one level resolves auto to none";
  EXPECT_EQ(message(one, {"wide", "fp32"}),
            "backend 'contract_plain' has one instruction-set level: isa must be auto, got 'wide'");
  EXPECT_NE(message(one, {"auto", "tf32"}).find("has no TF32 math"), std::string::npos);
  EXPECT_EQ(message(one, {"auto", "fp32", "blas"}),
            "gemm 'blas': backend 'contract_plain' has one GEMM path (its own kernels), so gemm must be auto");

  // The CPU's auto is auto_isa(): the best level it runs, or FUSEBOX_ISA's.
  auto cpu = cpu::make_backend();
  EXPECT_EQ(cpu->resolve({}).isa, cpu::isa_name(cpu::auto_isa()));
  EXPECT_EQ(cpu->resolve({"portable"}).isa, "portable");
  EXPECT_EQ(cpu->resolve({"auto", "fp32", "blas"}).gemm, "blas") << "the CPU has OpenBLAS as its second path";
  EXPECT_EQ(message(*cpu, {"auto", "fp32", "mkl"}), "gemm must be auto or blas, got 'mkl'");
}

}  // namespace
}  // namespace fusebox

namespace fusebox::exec {
namespace {

DeviceActivity kernel(const std::string& name, int32_t node) {
  DeviceActivity a;
  a.kind = ActivityKind::Kernel;
  a.name = name;
  a.node_index = node;
  return a;
}

// The self-test's check that a GPU trace ties every kernel to the op that launched it.
TEST(KernelCorrelationCheck, EveryKernelMustNameANodeOfTheGraph) {
  DeviceActivity copy;
  copy.kind = ActivityKind::Memcpy;  // copies and launches are not kernels: not counted
  const std::vector<DeviceActivity> good = {copy, kernel("gemm", 0), kernel("bias", 0), kernel("softmax", 2)};
  KernelCorrelation c = check_kernel_correlation(good, 3);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.summary(), "3 kernels, all tied to 2 ops");

  const std::vector<DeviceActivity> bad = {kernel("gemm", 0), kernel("stray", -1), kernel("past_the_end", 3)};
  c = check_kernel_correlation(bad, 3);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.summary(), "2 of 3 kernels are tied to no op of the graph (stray, past_the_end)");

  c = check_kernel_correlation({copy}, 3);
  EXPECT_FALSE(c.ok()) << "a GPU trace without kernels shows nothing was recorded";
  EXPECT_EQ(c.summary(), "no kernel records");
}

}  // namespace
}  // namespace fusebox::exec
