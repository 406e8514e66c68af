// All three executors agree with each other and with a node-by-node reference evaluation (no
// planner, no executor: tests/support/graph_eval.h) on every builtin model.
#include <gtest/gtest.h>

#include <cstring>

#include "core/base/error.h"
#include "core/exec/session.h"
#include "core/models/builtin_models.h"
#include "tests/support/graph_eval.h"

namespace fusebox {
namespace {

struct Case {
  const char* spec;
  const char* passes;
};

class ExecutorsAgree : public ::testing::TestWithParam<Case> {};

TEST_P(ExecutorsAgree, WithReferenceAndEachOther) {
  cpu::register_backend();
  const Case& c = GetParam();
  ir::Graph g = models::build_model(c.spec, 7);
  std::vector<ir::Tensor> inputs = testing::random_inputs(g, 11);
  std::vector<ir::Tensor> expected = testing::evaluate_graph(g, inputs);
  std::vector<std::vector<ir::Tensor>> results;
  for (const char* executor : {"eager", "interpreted", "compiled"}) {
    for (int threads : {1, 2}) {
      exec::SessionOptions opt;
      opt.executor = executor;
      opt.threads = threads;
      opt.passes = c.passes;
      exec::Session s(g, opt);
      std::vector<ir::Tensor> out = s.run(inputs);
      out = s.run(inputs);  // a second run reuses the arena: stale data must not leak in
      ASSERT_EQ(out.size(), expected.size());
      for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_LE(testing::tolerance_ratio(out[i], expected[i], 1e-4, 1e-4), 1.0)
            << c.spec << " " << executor << " threads=" << threads << " output " << i;
      }
      results.push_back(std::move(out));
    }
  }
  // Same kernels, same states: eager, interpreted and compiled are bit-identical at one thread.
  for (size_t r = 2; r < results.size(); r += 2)
    for (size_t i = 0; i < results[0].size(); ++i)
      EXPECT_EQ(0, std::memcmp(results[0][i].bytes(), results[r][i].bytes(), results[0][i].nbytes()))
          << c.spec << " run " << r << " differs bitwise from eager";
}

INSTANTIATE_TEST_SUITE_P(
    BuiltinModels, ExecutorsAgree,
    ::testing::Values(Case{"mlp", "none"}, Case{"mlp:batch=3", "none"}, Case{"transformer", "none"},
                      Case{"transformer:seq=17,d=48,heads=3,ffn=80,batch=2", "none"},
                      Case{"stack:layers=2,seq=32,d=64,heads=4,ffn=128", "none"}, Case{"mlp", "all"},
                      Case{"transformer", "all"}, Case{"stack", "all"}));

// A cache updated by scatter is written in place over its input (core/planner/lifetimes.h), so a
// planned executor given a null pointer for it reads what the last run left there: state kept in
// the arena between runs, as generate keeps a preallocated KV cache. The eager executor keeps
// nothing and says so.
TEST(Session, ANullInputKeepsWhatTheLastRunLeftInTheArena) {
  cpu::register_backend();
  ir::Graph g;
  g.add_input("past", ir::DType::f32, {4});
  g.add_input("pos", ir::DType::i64, {1});
  g.add_input("new", ir::DType::f32, {1});
  ir::Attributes axis;
  axis.set("axis", int64_t{0});
  const std::string present = g.add_node("ScatterElements", {"past", "pos", "new"}, axis);
  g.outputs = {present, g.add_node("Neg", {present})};
  for (const char* executor : {"interpreted", "compiled", "eager"}) {
    exec::SessionOptions opt;
    opt.executor = executor;
    opt.passes = "none";
    exec::Session s(g, opt);
    float past[4] = {0, 0, 0, 0}, value = 1, out[4], neg[4];
    int64_t pos = 0;
    const void* in[3] = {past, &pos, &value};
    void* outs[2] = {out, neg};
    s.run_raw(in, outs);
    EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{1, 0, 0, 0})) << executor;
    in[0] = nullptr;  // the cache stays where it is
    pos = 2, value = 3;
    if (std::string(executor) == "eager") {
      try {
        s.run_raw(in, outs);
        ADD_FAILURE() << "eager took a null input";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("input 'past': the eager executor allocates every tensor per run"),
                  std::string::npos)
            << e.what();
      }
      continue;
    }
    outs[0] = nullptr;  // and nothing is copied out of it
    std::fill(out, out + 4, -7.0f);
    s.run_raw(in, outs);
    EXPECT_EQ(std::vector<float>(neg, neg + 4), (std::vector<float>{-1, 0, -3, 0})) << executor;
    EXPECT_EQ(out[0], -7.0f) << executor << ": a null output is not written";
  }
}

TEST(Session, RejectsBadOptionsAndInputs) {
  cpu::register_backend();
  ir::Graph g = models::build_model("mlp:dims=8-4,batch=2", 1);
  auto make = [&](auto tweak) {
    exec::SessionOptions opt;
    tweak(opt);
    return exec::Session(g, opt);
  };
  EXPECT_THROW(make([](auto& o) { o.executor = "jit"; }), Error);
  EXPECT_THROW(make([](auto& o) { o.threads = 0; }), Error);
  EXPECT_THROW(make([](auto& o) { o.planner = "magic"; }), Error);
  EXPECT_THROW(make([](auto& o) { o.backend = "tpu"; }), Error);
  EXPECT_THROW(make([](auto& o) { o.passes = "fuse_everything"; }), Error);

  exec::SessionOptions opt;
  exec::Session s(g, opt);
  try {
    s.run({ir::Tensor(ir::DType::f32, {2, 9})});
    FAIL() << "wrong shape accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x': expected f32[2,8], got f32[2,9]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.run({}), Error);
  EXPECT_THROW(s.run({ir::Tensor(ir::DType::i64, {2, 8})}), Error);
}

TEST(Session, ArenaIsOneAlignedAllocationOutsideWeights) {
  cpu::register_backend();
  ir::Graph g = models::build_model("transformer:seq=16,d=32,heads=2,ffn=64", 3);
  exec::Session s(g, exec::SessionOptions{});
  const auto& plan = s.plan();
  EXPECT_GT(plan.arena_bytes, 0u);
  EXPECT_GE(plan.arena_bytes, plan.lower_bound_bytes);
  for (const auto& p : plan.placements) {
    EXPECT_EQ(p.offset % 64, 0u) << p.buffer.name;
    EXPECT_FALSE(s.graph().is_weight(p.buffer.name)) << "weights live outside the arena";
  }
}

}  // namespace
}  // namespace fusebox
