#include "core/exec/session.h"

#include <chrono>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/ir/verifier.h"

namespace fusebox::exec {

namespace {

// Times a stage and tells the observer about it.
template <typename Fn>
void stage(std::vector<StageTime>& stages, ExecutionObserver* observer, const std::string& name, Fn&& fn) {
  if (observer) observer->on_stage_begin(name);
  auto t0 = std::chrono::steady_clock::now();
  fn();
  auto t1 = std::chrono::steady_clock::now();
  if (observer) observer->on_stage_end(name);
  stages.push_back({name, std::chrono::duration<double, std::milli>(t1 - t0).count()});
}

}  // namespace

Session::Session(ir::Graph model, SessionOptions options)
    : options_(std::move(options)), original_(std::move(model)) {
  if (options_.threads < 1) throw Error("threads must be >= 1, got " + std::to_string(options_.threads));
  bool known_executor = false;
  for (const auto& n : executor_names()) known_executor |= n == options_.executor;
  if (!known_executor)
    throw Error("unknown executor '" + options_.executor + "' (valid: " + join(executor_names(), ", ") + ")");
  std::vector<std::string> enabled = passes::parse_pass_list(options_.passes);
  ExecutionObserver* obs = options_.observer;

  stage(stages_, obs, "verify", [&] { ir::verify(original_); });
  backend_ = BackendRegistry::instance().create(options_.backend);
  backend_->set_threads(options_.threads);
  graph_ = original_;
  stage(stages_, obs, "passes", [&] {
    passes::PassContext ctx;
    ctx.evaluator = backend_.get();
    ctx.observer = obs;
    pass_log_ = passes::run_pipeline(graph_, enabled, ctx);
  });
  stage(stages_, obs, "plan", [&] { plan_ = planner::make_plan(graph_, options_.planner); });
  stage(stages_, obs, "compile", [&] {
    program_ = build_program(graph_, plan_, *backend_);
    executor_ = make_executor(options_.executor, program_);
  });
}

Session::~Session() = default;

std::vector<ir::Tensor> Session::run(const std::vector<ir::Tensor>& inputs) {
  const ir::Graph& g = graph_;
  if (inputs.size() != g.inputs.size())
    throw Error("model '" + g.name + "' takes " + std::to_string(g.inputs.size()) + " input(s) (" +
                join(g.inputs, ", ") + "), got " + std::to_string(inputs.size()));
  std::vector<const void*> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorInfo& info = g.tensor(g.inputs[i]);
    if (inputs[i].dtype() != info.dtype || inputs[i].shape() != info.shape)
      throw Error("input '" + info.name + "': expected " + ir::dtype_name(info.dtype) + ir::shape_str(info.shape) +
                  ", got " + ir::dtype_name(inputs[i].dtype()) + ir::shape_str(inputs[i].shape()));
    in.push_back(inputs[i].bytes());
  }
  std::vector<ir::Tensor> outputs;
  std::vector<void*> out;
  for (const auto& name : g.outputs) {
    const ir::TensorInfo& info = g.tensor(name);
    outputs.emplace_back(info.dtype, info.shape);
    out.push_back(outputs.back().bytes());
  }
  run_raw(in.data(), out.data());
  return outputs;
}

void Session::run_raw(const void* const* inputs, void* const* outputs) {
  ExecutionObserver* obs = options_.observer;
  int64_t index = runs_++;
  if (obs) obs->on_run_begin(index);
  executor_->run(inputs, outputs, obs);
  if (obs) obs->on_run_end(index);
}

}  // namespace fusebox::exec
