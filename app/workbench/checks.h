#pragma once
// Scenario check kinds as data: each kind is one entry of check_kinds_registry() carrying its
// parameters (which are required, which optional), whether timing decides it, its own
// validation of the parsed parameters, its evaluation over a step's result and its description.
// Adding a kind is one entry in checks.cpp (and its line in scenarios/scenario.schema.json,
// which tests/workbench/scenario_test.cpp keeps in step with the registry's names).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/workbench/kernel_level.h"
#include "app/workbench/opened_trace.h"
#include "app/workbench/run_result.h"
#include "app/workbench/scenario.h"
#include "core/base/registry.h"
#include "core/ir/graph.h"

namespace fusebox::workbench {

// What one check's evaluation reads: the scenario (for errors naming its file), the check, the
// step's result and those of the steps before it (null where a step did not run). A trace check
// (CheckKind::trace) reads the trace scenario's opened trace instead: `result` is null there.
struct CheckInput {
  const Scenario& scenario;
  const Check& check;
  const RunResult* result;  // the step's; null for a trace check
  const std::vector<std::shared_ptr<const RunResult>>& results;
  size_t step = 0;
  const OpenedTrace* trace = nullptr;  // a trace scenario's; null for a model check
  const KernelLevel* kernels = nullptr;  // its "kernels" export, for the kernel_* checks
  // The result of an earlier step, or fusebox::Error "<path>: <pointer>: step N has no result".
  const RunResult& earlier(int s) const;
};

struct CheckKind {
  std::vector<std::string> required, optional;  // parameter keys besides "check"
  bool measured = false;                        // timing decides it (fails a run only when strict)
  std::string help;
  // The kind's own rule over the parsed parameters: "" or the error sentence.
  std::function<std::string(const Check& check, size_t step_index)> validate;
  std::function<CheckResult(const CheckInput& in)> evaluate;
  // The parameters after the kind's name: " at_most=12".
  std::function<std::string(const Check& check)> describe;
  bool trace = false;  // checks a trace scenario's GpuAnalysis, not a model run (see CheckInput)
};

// Every check kind, in the order the schema and the error messages list them.
const Registry<CheckKind>& check_kinds_registry();

bool has_node(const ir::Graph& g, const std::string& name);
// Throws fusebox::Error "<path>: <pointer>: no node 'x' in this step's graph (did you mean ...)".
[[noreturn]] void throw_no_node(const Scenario& sc, const std::string& pointer,
                                const std::string& node, const ir::Graph& g);

}  // namespace fusebox::workbench
