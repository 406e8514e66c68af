#include "core/exec/session.h"

#include <chrono>

#include "core/base/error.h"
#include "core/base/strings.h"

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
  for (const auto& n : executors().names()) known_executor |= n == options_.executor;
  if (!known_executor)
    throw Error("unknown executor '" + options_.executor + "' (valid: " + join(executors().names(), ", ") + ")");
  ExecutionObserver* obs = options_.observer;
  backend_ = BackendRegistry::instance().create(options_.backend);
  // Refuses a level or precision the backend does not offer before any work.
  const CompileOptions compile_options = backend_->resolve(CompileOptions{options_.isa, options_.precision, options_.gemm});
  if (backend_->name() != "cpu") cpu_evaluator_ = BackendRegistry::instance().create("cpu");

  OptimizeOptions opt;
  opt.passes = passes::parse_pass_list(options_.passes);
  opt.disabled_patterns = options_.disabled_patterns;
  opt.evaluator = cpu_evaluator_ ? cpu_evaluator_.get() : backend_.get();
  opt.target = backend_.get();
  opt.observer = obs;
  std::shared_ptr<const Compiled> compiled;
  stage(stages_, obs, "optimize", [&] { optimized_ = optimize(original_, opt); });
  stage(stages_, obs, "plan", [&] { plan_ = plan_memory(*optimized_, options_.planner, *backend_); });
  stage(stages_, obs, "compile", [&] { compiled = compile(optimized_, *backend_, compile_options); });
  capture_note_ = options_.capture ? capture_unavailable_reason(options_.executor, *backend_) : "";
  stage(stages_, obs, "bind", [&] {
    bound_ = bind_executor(compiled, plan_, options_.executor, ExecutorOptions{options_.capture});
  });
}

Session::~Session() = default;

std::vector<ir::Tensor> Session::run(const std::vector<ir::Tensor>& inputs) {
  const ir::Graph& g = graph();
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

void Session::set_threads(int threads) {
  if (threads < 1) throw Error("threads must be >= 1, got " + std::to_string(threads));
  options_.threads = threads;
}

void Session::run_raw(const void* const* inputs, void* const* outputs) {
  ExecutionObserver* obs = options_.observer;
  int64_t index = runs_++;
  backend_->bind_threads(options_.threads);
  if (obs) obs->on_run_begin(index);
  bound_->executor->run(inputs, outputs, obs);
  if (obs) obs->on_run_end(index);
}

}  // namespace fusebox::exec
