// The pass manager: registry order, pass lists, the log, snapshots, verification after each pass.
#include <gtest/gtest-spi.h>

#include <algorithm>
#include <set>

#include "core/base/error.h"
#include "core/models/builtin_models.h"
#include "core/passes/fusion_patterns.h"
#include "tests/support/small_graphs.h"
#include "tests/passes/pass_test_util.h"

namespace fusebox::passes::test {
namespace {

const std::vector<std::string> kBuiltin = {"absorb_matmul", "constant_fold",    "fuse_patterns", "channels_last",
                                           "winograd",      "absorb_layout",    "fuse_elementwise", "cse",
                                           "dce"};

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

using fusebox::testing::linear_relu;

TEST(PassRegistry, BuiltinPassesInPipelineOrder) {
  EXPECT_EQ(PassRegistry::instance().names(), kBuiltin);
  for (const auto& p : PassRegistry::instance().entries()) {
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
                   "channels_last, winograd, absorb_layout, fuse_elementwise, cse, dce"),
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
  ASSERT_EQ(absorb.rewrites.size(), 1u);
  EXPECT_EQ(absorb.rewrites[0].pattern, "transpose_to_flag");
  EXPECT_EQ(absorb.rewrites[0].removed, (std::vector<std::string>{"Transpose_0"}));
  EXPECT_EQ(absorb.rewrites[0].changed, (std::vector<std::string>{"MatMul_1"}));
  EXPECT_TRUE(absorb.rewrites[0].added.empty());
  const PassLogEntry& fuse = log.entries[2];
  EXPECT_TRUE(has_line(fuse.rewrites, "fused MatMul_1 + Add_2 + Relu_3 -> FusedBiasRelu_1"));
  ASSERT_EQ(fuse.rewrites.size(), 1u);
  EXPECT_EQ(fuse.rewrites[0].pattern, "bias_relu");
  EXPECT_EQ(fuse.rewrites[0].removed, (std::vector<std::string>{"MatMul_1", "Add_2", "Relu_3"}));
  EXPECT_EQ(fuse.rewrites[0].added, (std::vector<std::string>{"FusedBiasRelu_1"}));
  EXPECT_EQ(fuse.nodes_after, 1u);
  ASSERT_TRUE(fuse.snapshot);
  EXPECT_EQ(fuse.snapshot->nodes.size(), 1u);
  EXPECT_EQ(count_op(*absorb.snapshot, "MatMul"), 1);  // snapshots are the graph after each pass
  EXPECT_FALSE(log.entries[3].changed);  // channels_last: no Conv
  EXPECT_FALSE(log.entries[4].changed);  // winograd: no NhwcConv
  EXPECT_FALSE(log.entries[5].changed);  // absorb_layout: no attention, no size-1 transpose
  EXPECT_FALSE(log.entries[7].changed);
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
  EXPECT_EQ(log.entries[1].rewrites.at(0).pattern, "fold");
  EXPECT_EQ(log.entries[1].rewrites.at(0).removed, (std::vector<std::string>{"Transpose_0"}));
  const PassLogEntry& dce = log.entries[kBuiltin.size() - 1];
  ASSERT_EQ(dce.pass, "dce");
  EXPECT_TRUE(has_line(dce.rewrites, "removed unused weight 'W'"));
  EXPECT_EQ(dce.rewrites.at(0).pattern, "remove_weight");
  EXPECT_TRUE(dce.rewrites.at(0).removed.empty()) << "a weight is not a node";
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
                                  PassResult r;
                                  r.changed = true;
                                  r.rewrite("test", {}, {}, {}, "broke it");
                                  return r;
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

std::set<std::string> node_names(const ir::Graph& g) {
  std::set<std::string> out;
  for (const auto& n : g.nodes) out.insert(n.name);
  return out;
}

bool is_snake_case(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// What a front end highlights must be true of the graphs. Replayed in order on the node names,
// each rewrite removes nodes that are there, adds nodes that are not, and edits nodes that are;
// after a pass's last rewrite the names are exactly those of the graph after it. Over the whole
// pass (a node one pattern made may be fused again by a later one), every node removed and not
// re-added was in the graph before the pass and is not after it, every node added and not removed
// again is in the graph after it and was not before. Every near miss names a node the pass saw.
void expect_log_matches_graphs(const ir::Graph& model, const PassLog& log,
                               const std::string& what) {
  std::set<std::string> names = node_names(model);
  for (const PassLogEntry& e : log.entries) {
    if (!e.enabled) continue;
    const std::string pass = what + " " + e.pass;
    const std::set<std::string> before = names;
    const std::set<std::string> after = e.snapshot ? node_names(*e.snapshot) : before;
    std::set<std::string> seen = names, removed, added;
    for (const Rewrite& rw : e.rewrites) {
      const std::string where = pass + " (" + rw.text + "): ";
      EXPECT_TRUE(is_snake_case(rw.pattern)) << where << "pattern '" << rw.pattern << "'";
      for (const auto& n : rw.removed) {
        EXPECT_EQ(names.erase(n), 1u) << where << "removed " << n << " was not there";
        removed.insert(n);
      }
      for (const auto& n : rw.added) {
        EXPECT_TRUE(names.insert(n).second) << where << "added " << n << " was there";
        added.insert(n);
      }
      for (const auto& n : rw.changed)
        EXPECT_TRUE(names.count(n)) << where << "changed " << n << " is not there";
      seen.insert(names.begin(), names.end());
    }
    for (const auto& n : removed) {
      if (added.count(n)) continue;
      EXPECT_TRUE(before.count(n)) << pass << ": removed " << n << " was not there before";
      EXPECT_FALSE(after.count(n)) << pass << ": removed " << n << " is there after";
    }
    for (const auto& n : added) {
      if (removed.count(n)) continue;
      EXPECT_FALSE(before.count(n)) << pass << ": added " << n << " was there before";
      EXPECT_TRUE(after.count(n)) << pass << ": added " << n << " is not there after";
    }
    EXPECT_EQ(names, after) << pass << ": the rewrites do not account for the graph";
    EXPECT_TRUE(e.changed || e.rewrites.empty()) << pass;
    for (const NearMiss& m : e.near_misses) {
      EXPECT_TRUE(is_snake_case(m.pattern)) << pass << " " << m.text;
      EXPECT_TRUE(seen.count(m.node))
          << pass << ": near miss at unknown node '" << m.node << "': " << m.text;
    }
    names = after;
  }
}

TEST(RunPipeline, StructuredRewritesMatchTheGraphsOnWholeModels) {
  for (const char* spec : {"transformer", "stack:layers=2,seq=16", "mlp"}) {
    ir::Graph g = models::build_model(spec, models::kDefaultSeed);
    const ir::Graph model = g;
    PassLog log = run_pipeline(g, parse_pass_list("all"), cpu_context());
    expect_log_matches_graphs(model, log, spec);
  }
  ir::Graph exported = import_asset("transformer_opset17.onnx");
  const ir::Graph model = exported;
  PassLog log = run_pipeline(exported, parse_pass_list("all"), cpu_context());
  expect_log_matches_graphs(model, log, "opset17");
}

TEST(RunPipeline, TheReplayCatchesARewriteThatMisnamesItsNodes) {
  RegistryGuard guard;
  // Leaves the graph alone but claims MatMul_1 went and Ghost_9 came.
  PassRegistry::instance().add({"liar", "test only", [](ir::Graph&, const PassContext&) {
                                  PassResult r;
                                  r.changed = true;
                                  r.rewrite("liar", {"MatMul_1"}, {"Ghost_9"}, {}, "lied");
                                  return r;
                                }});
  ir::Graph g = linear_relu();
  const ir::Graph model = g;
  PassLog log = run_pipeline(g, {"liar"}, cpu_context());
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    expect_log_matches_graphs(model, log, "liar");
  }
  // MatMul_1 is still there, Ghost_9 is not, so the names do not match the graph either.
  EXPECT_EQ(failures.size(), 3);
}

// The fuse_patterns rewrites of a pipeline run, by pattern.
std::set<std::string> fused_patterns(const PassLog& log) {
  std::set<std::string> out;
  for (const PassLogEntry& e : log.entries)
    if (e.pass == "fuse_patterns")
      for (const Rewrite& rw : e.rewrites) out.insert(rw.pattern);
  return out;
}

TEST(RunPipeline, AFusionPatternSwitchedOffNeitherFiresNorNearlyMisses) {
  ir::Graph h = models::build_model("transformer", models::kDefaultSeed);
  const std::set<std::string> by_default =
      fused_patterns(run_pipeline(h, parse_pass_list("all"), cpu_context()));
  EXPECT_EQ(count_op(h, "Attention"), 1) << "on by default";
  ASSERT_TRUE(by_default.count("attention"));

  ir::Graph g = models::build_model("transformer", models::kDefaultSeed);
  PassContext ctx = cpu_context();
  ctx.disabled_patterns = {"attention"};
  PassLog log = run_pipeline(g, parse_pass_list("all"), ctx);
  EXPECT_EQ(count_op(g, "Attention"), 0);
  EXPECT_EQ(count_op(g, "Softmax"), 1) << "the attention's pieces stay";
  for (const PassLogEntry& e : log.entries) {
    for (const Rewrite& rw : e.rewrites) EXPECT_NE(rw.pattern, "attention") << rw.text;
    for (const NearMiss& m : e.near_misses) EXPECT_NE(m.pattern, "attention") << m.text;
  }
  // Every other pattern that fired still does.
  std::set<std::string> others = by_default;
  others.erase("attention");
  EXPECT_EQ(fused_patterns(log), others);
}

TEST(RunPipeline, AnUnknownFusionPatternIsAnErrorListingTheValidOnes) {
  ir::Graph g = linear_relu();
  PassContext ctx = cpu_context();
  ctx.disabled_patterns = {"atention"};
  std::string e = error_of([&] { run_pipeline(g, parse_pass_list("all"), ctx); });
  EXPECT_EQ(e,
            "unknown fusion pattern 'atention' (valid: gelu, layernorm, skip_layernorm, attention, "
            "bias_relu, bias_gelu, bias_tanh, bias_sigmoid, matmul_add, conv_batchnorm, conv_relu, conv_clip, conv_hardswish, "
            "conv_hardsigmoid, conv_sigmoid)");
  EXPECT_EQ(g.nodes.size(), linear_relu().nodes.size()) << "checked before any pass runs";
  const FusionRegistry& fusions = FusionRegistry::instance();
  EXPECT_EQ(fusions.names().size(), fusions.entries().size());
  ASSERT_TRUE(fusions.find("attention"));
  EXPECT_EQ(fusions.find("attention")->name, "attention");
  EXPECT_FALSE(fusions.find("atention"));
}

TEST(RunPipeline, NearMissesAreKeptOncePerSentence) {
  RegistryGuard guard;
  int calls = 0;
  // Meets the same near miss twice per run (once at another node), and runs twice.
  PassRegistry::instance().add({"repeats", "test only",
                                [&calls](ir::Graph&, const PassContext&) {
                                  PassResult r;
                                  r.near_miss("test", "MatMul_1", "same sentence");
                                  r.near_miss("test", "Add_2", "same sentence");
                                  r.near_miss("test", "Relu_3", "another");
                                  r.changed = ++calls < 2;
                                  return r;
                                },
                                true});
  ir::Graph g = linear_relu();
  PassLog log = run_pipeline(g, {"repeats"}, cpu_context());
  EXPECT_EQ(calls, 2);
  const auto& misses = log.entries.back().near_misses;
  ASSERT_EQ(misses.size(), 2u);
  EXPECT_EQ(misses[0].node, "MatMul_1") << "the first one met stays";
  EXPECT_EQ(misses[1].text, "another");
}

TEST(RunPipeline, FixedPointPassesRerunUntilNothingChanges) {
  RegistryGuard guard;
  int calls = 0;
  PassRegistry::instance().add({"countdown", "test only: changes the graph three times",
                                [&calls](ir::Graph&, const PassContext&) {
                                  ++calls;
                                  PassResult r;
                                  r.changed = calls <= 3;
                                  r.rewrite("test", {}, {}, {}, "step " + std::to_string(calls));
                                  return r;
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
