// The planner's invariants: buffers alive at the same time never share bytes, the arena is never
// below the lower bound, and the strategies do what they say (greedy_by_size is tight on chains).
// Overlap is checked here with its own loop, not with planner::check_plan.
#include <gtest/gtest.h>

#include <random>

#include "core/base/error.h"
#include "core/backend/evaluate.h"
#include "core/exec/stages.h"
#include "core/models/builtin_models.h"
#include "core/passes/pass_manager.h"
#include "core/planner/plan.h"
#include "core/planner/strategies.h"
#include "ops/cpu/cpu_backend.h"

namespace fusebox {
namespace {

// The CPU backend's memory rules, as a session would plan with them.
const planner::MemoryRules& cpu_rules() {
  static const std::unique_ptr<exec::Backend> cpu = cpu::make_backend();
  static const planner::MemoryRules rules = exec::memory_rules(*cpu);
  return rules;
}

void expect_valid(const planner::ExecutionPlan& plan, const std::string& what) {
  const auto& p = plan.placements;
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_LE(p[i].offset + p[i].buffer.bytes, plan.arena_bytes) << what;
    for (size_t j = i + 1; j < p.size(); ++j) {
      const auto &a = p[i], &b = p[j];
      bool live_together = a.buffer.first <= b.buffer.last && b.buffer.first <= a.buffer.last;
      bool share_bytes = a.offset < b.offset + b.buffer.bytes && b.offset < a.offset + a.buffer.bytes;
      EXPECT_FALSE(live_together && share_bytes) << what << ": " << a.buffer.name << " and " << b.buffer.name;
    }
  }
  EXPECT_GE(plan.arena_bytes, plan.lower_bound_bytes) << what;
}

TEST(Planner, EveryStrategyOnEveryBuiltinModelAndPassSubset) {
  auto backend = cpu::make_backend();
  const auto& all = passes::PassRegistry::instance().names();
  for (const char* spec : {"mlp", "transformer:seq=16,d=32,heads=2,ffn=64", "stack:layers=2,seq=8,d=16,heads=2,ffn=32"}) {
    for (unsigned mask = 0; mask < (1u << all.size()); ++mask) {
      ir::Graph g = models::build_model(spec, 1);
      std::vector<std::string> enabled;
      for (size_t i = 0; i < all.size(); ++i)
        if (mask & (1u << i)) enabled.push_back(all[i]);
      passes::PassContext ctx;
      ctx.evaluator = backend.get();
      passes::run_pipeline(g, enabled, ctx);
      for (const auto& strategy : planner::strategies().names())
        expect_valid(planner::make_plan(g, strategy, cpu_rules()), std::string(spec) + " " + strategy + " mask " + std::to_string(mask));
    }
  }
}

TEST(Planner, LowerBoundIsTheMostBytesLiveAtOnce) {
  // Chain x -> a -> b -> c of 1 KiB f32 tensors: at most two live at once (input and output).
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {256});
  std::string t = "x";
  for (int i = 0; i < 6; ++i) t = g.add_node(i % 2 ? "Relu" : "Neg", {t});
  g.outputs = {t};
  planner::Lifetimes lt = planner::analyze_lifetimes(g, cpu_rules());
  EXPECT_EQ(lt.lower_bound, 2u * 1024);
  planner::ExecutionPlan naive = planner::make_plan(g, "naive", cpu_rules());
  EXPECT_EQ(naive.arena_bytes, 7u * 1024);
  planner::ExecutionPlan greedy = planner::make_plan(g, "greedy_by_size", cpu_rules());
  EXPECT_EQ(greedy.arena_bytes, greedy.lower_bound_bytes) << "greedy_by_size reaches the bound on a chain";
  EXPECT_EQ(planner::make_plan(g, "first_fit", cpu_rules()).arena_bytes, 2u * 1024);
}

TEST(Planner, ViewsAliasAndExtendTheirSourcesLife) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4, 8});
  ir::Attributes shape;
  shape.set("shape", std::vector<int64_t>{32});
  std::string a = g.add_node("Relu", {"x"});
  std::string v = g.add_node("Reshape", {a}, shape);
  std::string b = g.add_node("Neg", {"x"});
  std::string c = g.add_node("Neg", {b});
  ir::Attributes shape2;
  shape2.set("shape", std::vector<int64_t>{4, 8});
  std::string v2 = g.add_node("Reshape", {v}, shape2);
  std::string d = g.add_node("Add", {v2, c});
  g.outputs = {d};
  planner::ExecutionPlan plan = planner::make_plan(g, "greedy_by_size", cpu_rules());
  EXPECT_EQ(plan.locations.at(v).root, a);
  EXPECT_EQ(plan.locations.at(v2).root, a);
  EXPECT_EQ(plan.locations.at(v2).offset, plan.locations.at(a).offset);
  for (const auto& p : plan.placements) {
    EXPECT_NE(p.buffer.name, v) << "views get no buffer";
    if (p.buffer.name == a) {
      EXPECT_EQ(p.buffer.last, 5) << "the view's use at step 5 keeps the source alive";
    }
  }
  expect_valid(plan, "views");
}

// ScatterElements (OpSchema::in_place) writes into its data's buffer when nothing reads the data
// after it; when something does (a later reader, a view read later, a graph output), or the data
// is a weight, or the updates share its bytes, it gets a buffer of its own.
TEST(Planner, AnInPlaceUpdateTakesItsDataBufferOnlyWhenNothingReadsItLater) {
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  ir::Attributes flat;
  flat.set("shape", std::vector<int64_t>{32});
  enum Reader { kNone, kLater, kViewReadLater, kOutput, kWeight, kSelfUpdate };
  for (Reader reader : {kNone, kLater, kViewReadLater, kOutput, kWeight, kSelfUpdate}) {
    ir::Graph g;
    std::string data = g.add_input("cache", ir::DType::f32, {4, 8});
    if (reader == kWeight) {
      ir::Tensor w(ir::DType::f32, {4, 8});
      data = "w";
      g.add_weight(data, std::move(w));
    }
    g.add_input("idx", ir::DType::i64, {4, 8});
    const std::string upd = reader == kSelfUpdate ? data : g.add_input("upd", ir::DType::f32, {4, 8});
    std::string view = g.add_node("Reshape", {data}, flat);
    std::string y = g.add_node("ScatterElements", {data, "idx", upd}, axis);
    std::string out = g.add_node("Relu", {y});
    g.outputs = {out};
    if (reader == kLater) g.outputs.push_back(g.add_node("Neg", {data}));
    if (reader == kViewReadLater) g.outputs.push_back(g.add_node("Neg", {view}));
    if (reader == kOutput) g.outputs.push_back(data);
    const planner::ExecutionPlan plan = planner::make_plan(g, "greedy_by_size", cpu_rules());
    const bool in_place = reader == kNone;
    EXPECT_EQ(plan.locations.at(y).root, in_place ? data : y) << reader;
    if (in_place) {
      EXPECT_EQ(plan.locations.at(y).offset, plan.locations.at(data).offset);
      for (const auto& p : plan.placements) EXPECT_NE(p.buffer.name, y) << "the update gets no buffer of its own";
    }
    expect_valid(plan, "in place " + std::to_string(reader));
  }
}

TEST(Planner, AttentionScratchLivesOneStep) {
  ir::Graph g;
  for (const char* n : {"q", "k", "v"}) g.add_input(n, ir::DType::f32, {2, 8, 4});
  ir::Attributes at;
  at.set("scale", 0.5);
  std::string o = g.add_node("Attention", {"q", "k", "v"}, at, "attn");
  g.outputs = {o};
  planner::ExecutionPlan plan = planner::make_plan(g, "first_fit", cpu_rules());
  ASSERT_EQ(plan.scratch_of_step.size(), 1u);
  ASSERT_GE(plan.scratch_of_step[0], 0);
  const auto& s = plan.placements[plan.scratch_of_step[0]];
  EXPECT_TRUE(s.buffer.scratch);
  EXPECT_EQ(s.buffer.first, 0);
  EXPECT_EQ(s.buffer.last, 0);
  // What the schema asks for: K^T and V of both heads as 32-column panels, 2 * (32*4 + 8*32)
  // floats.
  const std::vector<ir::TensorType> in(3, {ir::DType::f32, {2, 8, 4}});
  EXPECT_EQ(ir::node_scratch_bytes(g.nodes[0], in, {{ir::DType::f32, {2, 8, 4}}}), 2u * 384 * 4);
  EXPECT_EQ(s.buffer.bytes, 2u * 384 * 4);
}

TEST(Planner, RandomGraphs) {
  std::mt19937 rng(123);
  for (int trial = 0; trial < 200; ++trial) {
    ir::Graph g;
    g.name = "random" + std::to_string(trial);
    std::vector<std::string> pool;
    int inputs = 1 + static_cast<int>(rng() % 3);
    int64_t width = 1 + static_cast<int64_t>(rng() % 300);
    for (int i = 0; i < inputs; ++i) pool.push_back(g.add_input("in" + std::to_string(i), ir::DType::f32, {width}));
    int nodes = 1 + static_cast<int>(rng() % 40);
    for (int n = 0; n < nodes; ++n) {
      const std::string& a = pool[rng() % pool.size()];
      const std::string& b = pool[rng() % pool.size()];
      switch (rng() % 4) {
        case 0: pool.push_back(g.tensor(a).shape == g.tensor(b).shape ? g.add_node("Add", {a, b}) : g.add_node("Neg", {a})); break;
        case 1: pool.push_back(g.add_node("Relu", {a})); break;
        case 2: pool.push_back(g.add_node("Concat", {a, b}, [] { ir::Attributes x; x.set("axis", int64_t{0}); return x; }())); break;
        default: {
          ir::Attributes s;
          s.set("shape", std::vector<int64_t>{-1});
          pool.push_back(g.add_node("Reshape", {a}, s));
        }
      }
    }
    g.outputs = {pool.back()};
    if (rng() % 2) g.outputs.push_back(pool[rng() % pool.size()]);
    for (const auto& strategy : planner::strategies().names())
      expect_valid(planner::make_plan(g, strategy, cpu_rules()), g.name + " " + strategy);
  }
}

// "best" plans with every strategy and keeps the smallest arena, the first in registry order on
// ties; it names the winner and lists every candidate's arena.
TEST(Planner, BestKeepsTheSmallestArena) {
  for (const char* spec : {"stack:layers=2,seq=16,d=32,heads=2,ffn=64", "mlp:dims=64-32-10,batch=4"}) {
    ir::Graph g = models::build_model(spec, 3);
    planner::ExecutionPlan best = planner::make_plan(g, planner::kBestPlanner, cpu_rules());
    ASSERT_EQ(best.tried.size(), planner::strategies().size()) << spec;
    std::string want;
    size_t smallest = SIZE_MAX;
    for (const auto& s : planner::strategies().entries()) {
      const size_t arena = planner::make_plan(g, s.name, cpu_rules()).arena_bytes;
      if (arena < smallest) {
        smallest = arena;
        want = s.name;
      }
    }
    EXPECT_EQ(best.strategy, want) << spec;
    EXPECT_EQ(best.arena_bytes, smallest) << spec;
    EXPECT_EQ(planner::check_plan(best), "") << spec;
  }
}

TEST(Planner, UnknownStrategyListsValidOnes) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {4});
  g.outputs = {g.add_node("Relu", {"x"})};
  try {
    planner::make_plan(g, "best_effort", cpu_rules());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("greedy_by_size"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(", best)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusebox

namespace fusebox {
namespace {

// The planner places what the rules (the target backend) say: their alignment and their scratch.
TEST(Planner, AlignmentAndScratchComeFromTheRules) {
  ir::Graph g;
  g.add_input("x", ir::DType::f32, {10});  // 40 bytes
  std::string a = g.add_node("Relu", {"x"});
  g.outputs = {g.add_node("Neg", {a})};
  planner::MemoryRules rules;
  rules.alignment = 128;
  rules.scratch = [](const ir::Node& n, const std::vector<ir::TensorType>&, const std::vector<ir::TensorType>&) {
    return n.op == "Relu" ? size_t{300} : size_t{0};
  };
  for (const auto& strategy : planner::strategies().names()) {
    planner::ExecutionPlan plan = planner::make_plan(g, strategy, rules);
    EXPECT_EQ(plan.alignment, 128u);
    for (const auto& p : plan.placements) {
      EXPECT_EQ(p.offset % 128, 0u) << strategy << " " << p.buffer.name;
      EXPECT_EQ(p.buffer.bytes, p.buffer.scratch ? 384u : 128u) << strategy << " " << p.buffer.name;
    }
    ASSERT_GE(plan.scratch_of_step[0], 0);
    EXPECT_EQ(plan.scratch_of_step[1], -1);
    EXPECT_EQ(planner::check_plan(plan), "");
    plan.alignment = 256;  // what another backend would need
    bool misaligned = false;
    for (const auto& p : plan.placements) misaligned |= p.offset % 256 != 0;
    if (misaligned) {
      EXPECT_NE(planner::check_plan(plan).find("is not 256-byte aligned"), std::string::npos);
    }
  }
  rules.alignment = 48;
  EXPECT_THROW(planner::make_plan(g, "naive", rules), Error);
  rules.alignment = 64;
  rules.scratch = nullptr;
  EXPECT_THROW(planner::make_plan(g, "naive", rules), Error);
}

}  // namespace
}  // namespace fusebox

namespace fusebox {
namespace {

// check_plan's sweep (n log n, so a 100,000-buffer plan is checked in well under a second)
// against the pairwise rule it replaced, on random plans dense with clashes and with none:
// zero-byte buffers, shared offsets, steps that touch at one end.
bool pairwise_clash(const planner::ExecutionPlan& plan) {
  const auto& p = plan.placements;
  for (size_t i = 0; i < p.size(); ++i)
    for (size_t j = i + 1; j < p.size(); ++j) {
      const planner::Buffer &a = p[i].buffer, &b = p[j].buffer;
      if (a.first <= b.last && b.first <= a.last && p[i].offset < p[j].offset + b.bytes &&
          p[j].offset < p[i].offset + a.bytes)
        return true;
    }
  return false;
}

TEST(CheckPlan, TheSweepFindsAClashExactlyWhenThePairwiseRuleDoes) {
  std::mt19937 rng(7);
  size_t clashes = 0, clean = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    planner::ExecutionPlan plan;
    plan.alignment = 16;
    const int n = 1 + static_cast<int>(rng() % 12), steps = 1 + static_cast<int>(rng() % 8);
    const size_t slots = 1 + rng() % 10;
    for (int i = 0; i < n; ++i) {
      planner::Placement pl;
      pl.buffer.name = "b" + std::to_string(i);
      pl.buffer.bytes = 16 * (rng() % 4);  // 0 to 48: zero-byte buffers too
      pl.buffer.first = static_cast<int>(rng() % static_cast<unsigned>(steps));
      pl.buffer.last = pl.buffer.first + static_cast<int>(rng() % 3);
      pl.offset = 16 * (rng() % slots);
      plan.arena_bytes = std::max(plan.arena_bytes, pl.offset + pl.buffer.bytes);
      plan.placements.push_back(pl);
    }
    const bool want = pairwise_clash(plan);
    const std::string got = planner::check_plan(plan);
    EXPECT_EQ(!got.empty(), want) << "trial " << trial << ": " << got;
    (want ? clashes : clean) += 1;
  }
  EXPECT_GT(clashes, 500u);
  EXPECT_GT(clean, 500u);
  planner::ExecutionPlan wide;  // 100,000 buffers side by side, all live at once
  wide.alignment = 64;
  for (size_t i = 0; i < 100000; ++i)
    wide.placements.push_back({{"t" + std::to_string(i), 64, 0, 1}, 64 * i});
  wide.arena_bytes = 64 * 100000;
  EXPECT_EQ(planner::check_plan(wide), "");
  wide.placements.back().offset = 64 * 500;
  EXPECT_NE(planner::check_plan(wide).find("t500 [32000+64, steps 0..1] overlaps t99999"),
            std::string::npos)
      << planner::check_plan(wide);
}

}  // namespace
}  // namespace fusebox
