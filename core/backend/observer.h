#pragma once
// Observer hooks: how the profiler (or a test) sees a session work without core knowing it.
// Executors call these around each run and each op; the session around its stages (passes,
// planning, compiling). With no observer attached the compiled executor runs a loop that has
// no hook calls in it at all.
#include <cstddef>
#include <cstdint>
#include <string>

namespace fusebox::exec {

class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  virtual void on_stage_begin(const std::string& /*stage*/) {}  // "pass absorb_matmul", "plan", ...
  virtual void on_stage_end(const std::string& /*stage*/) {}
  virtual void on_run_begin(int64_t /*run_index*/) {}
  virtual void on_run_end(int64_t /*run_index*/) {}
  virtual void on_op_begin(size_t /*node_index*/) {}
  virtual void on_op_end(size_t /*node_index*/) {}
};

}  // namespace fusebox::exec
