// The pass manager: registry order, pass lists, the log, snapshots, verification after each pass.
#include "core/base/error.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

const std::vector<std::string> kBuiltin = {"absorb_matmul", "constant_fold",    "fuse_patterns",
                                           "absorb_layout", "fuse_elementwise", "dce"};

// Restores the pass registry when a test has added passes to it.
struct RegistryGuard {
  PassRegistry saved = PassRegistry::instance();
  ~RegistryGuard() { PassRegistry::instance() = saved; }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// x -> Transpose(W) MatMul -> Add(b) -> Relu: one nn.Linear + ReLU as the exporter writes it.
ir::Graph linear_relu() {
  ir::Graph g;
  g.name = "linear_relu";
  g.add_input("x", ir::DType::f32, {2, 8});
  g.add_weight("W", random_tensor({4, 8}, 1));
  g.add_weight("b", random_tensor({4}, 2));
  ir::Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  std::string wt = g.add_node("Transpose", {"W"}, perm, "Transpose_0");
  std::string mm = g.add_node("MatMul", {"x", wt}, {}, "MatMul_1");
  std::string a = g.add_node("Add", {mm, "b"}, {}, "Add_2");
  g.outputs = {g.add_node("Relu", {a}, {}, "Relu_3")};
  return g;
}

TEST(PassRegistry, BuiltinPassesInPipelineOrder) {
  EXPECT_EQ(PassRegistry::instance().names(), kBuiltin);
  for (const auto& p : PassRegistry::instance().passes()) {
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_TRUE(p.run) << p.name;
  }
  EXPECT_NE(PassRegistry::instance().find("dce"), nullptr);
  EXPECT_EQ(PassRegistry::instance().find("nope"), nullptr);
}

TEST(ParsePassList, AllNoneAndLists) {
  EXPECT_EQ(parse_pass_list("all"), kBuiltin);
  EXPECT_EQ(parse_pass_list(" none "), std::vector<std::string>{});
  EXPECT_EQ(parse_pass_list("dce,absorb_matmul"),
            (std::vector<std::string>{"absorb_matmul", "dce"}));
  EXPECT_EQ(parse_pass_list(" fuse_patterns , constant_fold,dce,dce"),
            (std::vector<std::string>{"constant_fold", "fuse_patterns", "dce"}));
}

TEST(ParsePassList, BadEntriesNameTheValidOnes) {
  std::string e = error_of([] { parse_pass_list("absorb_matmul,fuse"); });
  EXPECT_NE(e.find("unknown pass 'fuse' (valid: absorb_matmul, constant_fold, fuse_patterns, "
                   "absorb_layout, fuse_elementwise, dce"),
            std::string::npos)
      << e;
  EXPECT_NE(error_of([] { parse_pass_list("dce,,absorb_matmul"); }).find("unknown pass ''"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_pass_list(""); }).find("unknown pass ''"), std::string::npos);
  EXPECT_NE(error_of([] { parse_pass_list("all,dce"); }).find("unknown pass 'all'"),
            std::string::npos);
}

TEST(RunPipeline, LogsEveryPassWithCountsRewritesAndSnapshots) {
  ir::Graph g = linear_relu();
  ir::Graph before = g;
  PassLog log = run_pipeline(g, parse_pass_list("all"), cpu_context());
  ASSERT_EQ(log.entries.size(), kBuiltin.size());
  for (size_t i = 0; i < kBuiltin.size(); ++i) {
    EXPECT_EQ(log.entries[i].pass, kBuiltin[i]);
    EXPECT_TRUE(log.entries[i].enabled);
    EXPECT_EQ(log.entries[i].snapshot.has_value(), log.entries[i].changed) << kBuiltin[i];
    EXPECT_GE(log.entries[i].millis, 0.0);
  }
  const PassLogEntry& absorb = log.entries[0];
  EXPECT_TRUE(absorb.changed);
  EXPECT_EQ(absorb.nodes_before, 4u);
  EXPECT_EQ(absorb.nodes_after, 3u);
  EXPECT_TRUE(has_line(absorb.rewrites, "absorbed Transpose_0 into MatMul_1 as transB"));
  const PassLogEntry& fuse = log.entries[2];
  EXPECT_TRUE(has_line(fuse.rewrites, "fused MatMul_1 + Add_2 + Relu_3 -> FusedBiasRelu_1"));
  EXPECT_EQ(fuse.nodes_after, 1u);
  ASSERT_TRUE(fuse.snapshot);
  EXPECT_EQ(fuse.snapshot->nodes.size(), 1u);
  EXPECT_EQ(count_op(*absorb.snapshot, "MatMul"), 1);  // snapshots are the graph after each pass
  EXPECT_FALSE(log.entries[3].changed);  // absorb_layout: no attention, no size-1 transpose
  EXPECT_FALSE(log.entries[5].changed);
  expect_same_outputs(before, g);

  std::string text = log.to_text();
  EXPECT_NE(text.find("absorb_matmul"), std::string::npos) << text;
  EXPECT_NE(text.find("4 -> 3 nodes"), std::string::npos) << text;
  EXPECT_NE(text.find("+ fused MatMul_1 + Add_2 + Relu_3 -> FusedBiasRelu_1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("total: 4 -> 1 nodes"), std::string::npos) << text;
}

TEST(RunPipeline, DisabledPassesAreLoggedButNotRun) {
  ir::Graph g = linear_relu();
  PassLog log = run_pipeline(g, parse_pass_list("constant_fold,dce"), cpu_context());
  ASSERT_EQ(log.entries.size(), kBuiltin.size());
  EXPECT_FALSE(log.entries[0].enabled);
  EXPECT_FALSE(log.entries[0].snapshot);
  EXPECT_TRUE(log.entries[1].enabled);
  EXPECT_TRUE(has_line(log.entries[1].rewrites, "folded Transpose_0 (Transpose) into weight"));
  EXPECT_TRUE(has_line(log.entries[5].rewrites, "removed unused weight 'W'"));
  EXPECT_EQ(g.nodes.size(), 3u);
  EXPECT_NE(log.to_text().find("fuse_patterns      off"), std::string::npos) << log.to_text();
}

TEST(RunPipeline, UnknownEnabledNameThrows) {
  ir::Graph g = linear_relu();
  EXPECT_NE(error_of([&] {
              run_pipeline(g, {"dce", "bogus"}, cpu_context());
            }).find("unknown pass 'bogus'"),
            std::string::npos);
}

TEST(RunPipeline, AnInvalidGraphAfterAPassIsAnInternalErrorNamingThePass) {
  RegistryGuard guard;
  PassRegistry::instance().add({"break_graph", "test only: reads a tensor that does not exist",
                                [](ir::Graph& g, const PassContext&) {
                                  g.nodes[0].inputs[0] = "missing";
                                  return PassResult{true, {"broke it"}, {}};
                                }});
  PassRegistry::instance().add(
      {"throws", "test only: fails",
       [](ir::Graph&, const PassContext&) -> PassResult { throw Error("no good"); }});
  ir::Graph g = linear_relu();
  std::string e = error_of([&] { run_pipeline(g, {"break_graph"}, cpu_context()); });
  EXPECT_NE(e.find("internal error: pass 'break_graph' left an invalid graph"), std::string::npos)
      << e;
  EXPECT_NE(e.find("missing"), std::string::npos) << e;
  ir::Graph h = linear_relu();
  EXPECT_NE(error_of([&] {
              run_pipeline(h, {"throws"}, cpu_context());
            }).find("pass 'throws' failed: no good"),
            std::string::npos);
}

TEST(RunPipeline, FixedPointPassesRerunUntilNothingChanges) {
  RegistryGuard guard;
  int calls = 0;
  PassRegistry::instance().add(
      {"countdown", "test only: changes the graph three times",
       [&calls](ir::Graph&, const PassContext&) {
         ++calls;
         return PassResult{calls <= 3, {"step " + std::to_string(calls)}, {}};
       },
       true});
  ir::Graph g = linear_relu();
  PassLog log = run_pipeline(g, {"countdown"}, cpu_context());
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(log.entries.back().rewrites.size(), 4u);
  EXPECT_TRUE(log.entries.back().changed);
}

}  // namespace
}  // namespace fusebox::passes::test
