#include "app/workbench/memory_budget.h"

#include <gtest/gtest.h>

#include "core/base/error.h"

namespace fusebox::workbench {
namespace {

// A 4 MiB input, a 4 MiB weight, an 8 MiB arena: 16 MiB in all.
struct Model {
  ir::Graph graph;
  planner::ExecutionPlan plan;
  Model() {
    graph.add_input("x", ir::DType::f32, {1024, 1024});
    graph.add_weight("w", ir::Tensor(ir::DType::f32, {1024, 1024}));
    graph.outputs = {graph.add_node("Add", {"x", "w"}, {}, "add")};
    plan.arena_bytes = size_t{8} << 20;
  }
};

TEST(MemoryBudget, AModelWithinTheBudgetPasses) {
  Model m;
  EXPECT_NO_THROW(check_memory_budget("m.onnx", m.graph, m.plan, size_t{4} << 20, MemoryBudget{size_t{16} << 20, "a test's"}));
}

TEST(MemoryBudget, AModelOverItIsRefusedNamingWhatItNeedsAndItsLargestTensor) {
  Model m;
  try {
    check_memory_budget("m.onnx", m.graph, m.plan, size_t{4} << 20, MemoryBudget{size_t{10} << 20, "a test's"});
    FAIL() << "16 MiB fit a 10 MiB budget";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("m.onnx: needs 16.00 MiB of memory (arena 8.00 MiB, weights 4.00 MiB, inputs 4.00 MiB)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("largest tensor is '"), std::string::npos) << what;
    EXPECT_NE(what.find("[1024,1024]"), std::string::npos) << what;
  }
}

// A node's scratch larger than every tensor (a MaxPool of a 2^32 window over a 2x2 input asked
// 64 GiB) is what the message names, not a 16-byte tensor.
TEST(MemoryBudget, AScratchLargerThanEveryTensorIsNamedByItsNode) {
  Model m;
  planner::Placement p;
  p.buffer.name = "add:scratch";
  p.buffer.scratch = true;
  p.buffer.bytes = size_t{64} << 30;
  m.plan.placements.push_back(p);
  m.plan.arena_bytes = size_t{64} << 30;
  try {
    check_memory_budget("m.onnx", m.graph, m.plan, size_t{4} << 20,
                        MemoryBudget{size_t{10} << 20, "a test's"});
    FAIL() << "64 GiB fit a 10 MiB budget";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("its largest buffer is the scratch space of node 'add' (64.00 GiB)"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find("largest tensor"), std::string::npos) << what;
  }
}

TEST(MemoryBudget, TheBudgetIsAPartOfThisMachinesMemory) {
  const size_t budget = memory_budget().bytes;
  EXPECT_GT(budget, size_t{1} << 30) << "a machine that runs the tests has more than 1.25 GiB";
  EXPECT_LT(budget, SIZE_MAX);
}

}  // namespace
}  // namespace fusebox::workbench
