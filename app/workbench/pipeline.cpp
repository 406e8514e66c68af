#include "app/workbench/pipeline.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "app/workbench/backends.h"
#include "app/workbench/memory_budget.h"
#include "app/workbench/model_source.h"
#include "app/workbench/noise.h"
#include "core/base/error.h"
#include "core/planner/plan_index.h"
#include "profiler/recorder.h"
#include "profiler/nvtx.h"

namespace fusebox::workbench {

namespace {

// What each stage reads from the settings; a cached result is reused when its key is equal.
struct LoadKey {
  std::string model;
  std::map<std::string, int64_t> dims;
  uint64_t seed = 0;
  std::map<std::string, std::string> inputs;
  std::map<std::string, std::string> consts;
  std::vector<int64_t> file_times;  // the model and input files' modification times
  bool operator==(const LoadKey&) const = default;
};
struct OptimizeKey {
  LoadKey load;
  std::set<std::string> passes_off, patterns_off;
  std::string backend;  // the target: passes create only ops it supports, the planner its rules
  bool operator==(const OptimizeKey&) const = default;
};
struct PlanKey {
  OptimizeKey optimize;
  std::string planner;
  bool operator==(const PlanKey&) const = default;
};
struct CompileKey {
  OptimizeKey optimize;
  std::string backend;
  std::string isa;  // kernels fix their instruction-set level (and weight packing) in prepare
  std::string precision;  // and their GEMM precision (cuBLAS compute type)
  std::string gemm;       // and their GEMM path (packed weights or a plain BLAS call)
  bool operator==(const CompileKey&) const = default;
};
struct BindKey {
  CompileKey compile;
  std::string planner, executor;
  bool capture = false;
  bool operator==(const BindKey&) const = default;
};

int64_t modification_time(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

LoadKey load_key(const Settings& s) {
  LoadKey k{s.model, s.dims, s.seed, s.inputs, s.consts, {}};
  if (is_model_file(s.model)) k.file_times.push_back(modification_time(s.model));
  for (const auto& [name, file] : s.inputs) k.file_times.push_back(modification_time(file));
  for (const auto& [name, value] : s.consts)
    if (value.ends_with(".npy")) k.file_times.push_back(modification_time(value));  // not a number
  return k;
}

// The last few results of one stage, most recent first: flipping a switch back and forth
// finds both sides cached.
template <typename Key, typename Value>
class StageCache {
 public:
  explicit StageCache(size_t capacity) : capacity_(capacity) {}
  Value* find(const Key& key) {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (!(entries_[i].first == key)) continue;
      std::rotate(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(i),
                  entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return &entries_.front().second;
    }
    return nullptr;
  }
  Value& put(Key key, Value value) {
    if (entries_.size() == capacity_) entries_.pop_back();
    entries_.insert(entries_.begin(), {std::move(key), std::move(value)});
    return entries_.front().second;
  }

 private:
  size_t capacity_;
  std::vector<std::pair<Key, Value>> entries_;
};

struct PlanEntry {
  std::shared_ptr<const planner::ExecutionPlan> plan;
  std::shared_ptr<const planner::PlanIndex> index;
};

double millis_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct Pipeline::Caches {
  StageCache<LoadKey, std::shared_ptr<const LoadedModel>> load{2};
  StageCache<LoadKey, std::shared_ptr<const std::vector<ir::Tensor>>> inputs{2};
  StageCache<OptimizeKey, std::shared_ptr<const exec::OptimizedGraph>> optimize{8};
  StageCache<PlanKey, PlanEntry> plan{8};
  StageCache<CompileKey, std::shared_ptr<const exec::Compiled>> compile{4};
  // An executor owns its arena and is run by one thread: keep the current one only.
  StageCache<BindKey, std::shared_ptr<exec::Bound>> bind{1};
};

const char* stage_name(Stage stage) {
  static const char* const kNames[kStageCount] = {"load", "optimize", "plan", "compile", "bind", "measure"};
  return kNames[static_cast<size_t>(stage)];
}

Pipeline::Pipeline(RooflineSource roofline) : caches_(std::make_unique<Caches>()), roofline_(std::move(roofline)) {
  if (!roofline_)
    roofline_ = [](const std::string& backend, const std::string& isa) {
      profiler::RooflineOptions o;
      o.backend = backend;
      o.isa = isa.empty() ? "auto" : isa;
      return profiler::machine_roofline(false, o);
    };
}

Pipeline::~Pipeline() = default;

std::array<int64_t, kStageCount> Pipeline::executions() const { return executions_; }

exec::Backend& Pipeline::backend(const std::string& name) {
  auto& b = backends_[name];
  if (!b) {
    try {
      register_backends();
      b = exec::BackendRegistry::instance().create(name);
    } catch (...) {
      backends_.erase(name);
      throw;
    }
  }
  return *b;
}

const profiler::Roofline& Pipeline::roofline(const std::string& backend, const std::string& isa) {
  auto it = rooflines_.find({backend, isa});
  if (it == rooflines_.end()) it = rooflines_.emplace(std::make_pair(backend, isa), roofline_(backend, isa)).first;
  return it->second;
}

// One call of run(): what it was asked, what it has made so far, and the stage helper the
// stages share.
struct Pipeline::Run {
  const Settings& s;
  const std::atomic<bool>* cancel;
  Progress* progress;
  Stage last;
  std::shared_ptr<RunResult> result;
  exec::Backend* be = nullptr;         // the target, from Optimize on
  std::shared_ptr<exec::Bound> bound;  // from Bind on

  void check() const {
    if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled{};
  }
  // Between measured calls: the cancel flag, then one more call done.
  void step() const {
    check();
    if (progress) progress->done.fetch_add(1, std::memory_order_relaxed);
  }
  // Runs a stage's `make` unless `cached` already holds its result; records which it was and
  // counts a real run in `executions`.
  template <typename T, typename Make>
  T& stage(Stage st, T* cached, std::array<int64_t, kStageCount>& executions, Make&& make) {
    check();
    if (progress) progress->stage.store(static_cast<int>(st));
    if (cached) {
      result->stages.push_back({st, 0, true});
      return *cached;
    }
    auto t0 = std::chrono::steady_clock::now();
    T& value = make();
    ++executions[static_cast<size_t>(st)];
    result->stages.push_back({st, millis_since(t0), false});
    return value;
  }
};

std::shared_ptr<const RunResult> Pipeline::run(const Settings& s, const std::atomic<bool>* cancel,
                                               Progress* progress, Stage last) {
  Run r{s, cancel, progress, last, std::make_shared<RunResult>(), nullptr, nullptr};
  r.result->settings = s;
  try {
    if (prepare(r)) measure(r);
  } catch (const Error& e) {
    // Every refusal names the model file, whichever stage made it (the import names it; a shape
    // past the limits found while planning or an index found while running would not).
    if (is_model_file(s.model) && std::string_view(e.what()).find(s.model) == std::string_view::npos)
      throw Error(s.model + ": " + e.what());
    throw;
  }
  r.result->sequence = ++sequence_;
  return r.result;
}

bool Pipeline::prepare(Run& r) {
  const Settings& s = r.s;
  RunResult& result = *r.result;
  // Load.
  const LoadKey lk = load_key(s);
  result.model = r.stage(Stage::Load, caches_->load.find(lk), executions_, [&]() -> auto& {
    auto m = std::make_shared<LoadedModel>();
    m->graph = load_model(s.model, s.seed, s.dims, s.inputs, s.consts);
    return caches_->load.put(lk, std::move(m));
  });
  if (r.last == Stage::Load) return false;

  // Optimize: constant folding evaluates on the CPU whatever the target; the passes ask the
  // target what it supports.
  exec::Backend& be = *(r.be = &backend(s.backend));
  // Refuses a level this machine cannot run, or tf32 on a backend without it (the CPU), before
  // any work; "auto" becomes the level it picks.
  const exec::CompileOptions compile_options = be.resolve(exec::CompileOptions{s.isa, s.precision, s.gemm});
  result.isa = compile_options.isa;
  const OptimizeKey ok{lk, s.passes_off, s.patterns_off, s.backend};
  result.optimized = r.stage(Stage::Optimize, caches_->optimize.find(ok), executions_, [&]() -> auto& {
    exec::OptimizeOptions o;
    o.passes = s.passes_on();
    o.disabled_patterns = s.patterns_off;
    o.evaluator = &backend("cpu");
    o.target = &be;
    return caches_->optimize.put(ok, exec::optimize(result.model->graph, o));
  });
  if (r.last == Stage::Optimize) return false;

  // Plan.
  const PlanKey pk{ok, s.planner};
  const PlanEntry& plan = r.stage(Stage::Plan, caches_->plan.find(pk), executions_, [&]() -> auto& {
    PlanEntry e;
    e.plan = exec::plan_memory(*result.optimized, s.planner, be);
    e.index = std::make_shared<const planner::PlanIndex>(planner::index_plan(result.optimized->graph, *e.plan));
    return caches_->plan.put(pk, std::move(e));
  });
  result.plan = plan.plan;
  result.plan_index = plan.index;
  // The budget is checked on the sizes the graph declares, before an input is made: a [50000, 50000]
  // input is refused here, not after 9 GB of it were filled.
  size_t input_bytes = 0;
  for (const std::string& name : result.model->graph.inputs) input_bytes += result.model->graph.tensor(name).nbytes();
  check_memory_budget(s.model, result.optimized->graph, *result.plan, input_bytes, memory_budget());
  if (const auto* made = caches_->inputs.find(lk)) {
    result.inputs = *made;
  } else {
    result.inputs = caches_->inputs.put(
        lk, std::make_shared<const std::vector<ir::Tensor>>(load_inputs(result.model->graph, s.seed, s.inputs)));
  }
  if (r.last == Stage::Plan) return false;

  // Compile.
  result.backend_description = be.description();
  const CompileKey ck{ok, s.backend, compile_options.isa, compile_options.precision, compile_options.gemm};
  std::shared_ptr<const exec::Compiled> compiled =
      r.stage(Stage::Compile, caches_->compile.find(ck), executions_, [&]() -> auto& {
        return caches_->compile.put(ck, exec::compile(result.optimized, be, compile_options));
      });
  if (r.last == Stage::Compile) return false;

  // Bind.
  const BindKey bk{ck, s.planner, s.executor, s.capture};
  result.capture_note = s.capture ? exec::capture_unavailable_reason(s.executor, be) : "";
  r.bound = r.stage(Stage::Bind, caches_->bind.find(bk), executions_, [&]() -> auto& {
    return caches_->bind.put(bk, std::shared_ptr<exec::Bound>(exec::bind_executor(
                                     compiled, result.plan, s.executor, exec::ExecutorOptions{s.capture})));
  });
  return r.last != Stage::Bind;
}

void Pipeline::measure(Run& r) {
  // Warm-up, `iters` timed calls without hooks, then `profile_runs` recorded calls.
  const Settings& s = r.s;
  RunResult& result = *r.result;
  r.check();
  auto t0 = std::chrono::steady_clock::now();
  if (r.progress) {
    r.progress->stage.store(static_cast<int>(Stage::Measure));
    r.progress->done.store(0);
    r.progress->total.store(s.warmup + s.iters + s.profile_runs);
  }
  const ir::Graph& g = result.optimized->graph;
  std::vector<const void*> in;
  for (const auto& t : *result.inputs) in.push_back(t.bytes());
  for (const auto& name : g.outputs) result.outputs.emplace_back(g.tensor(name).dtype, g.tensor(name).shape);
  std::vector<void*> out;
  for (auto& t : result.outputs) out.push_back(t.bytes());
  exec::Executor& executor = *r.bound->executor;
  r.be->bind_threads(s.threads);  // on this thread, for this run's kernels
  for (int i = 0; i < s.warmup; ++i) {
    r.step();
    executor.run(in.data(), out.data(), nullptr);
  }
  const CpuSample load_before = CpuSample::now();  // what else runs while this measures
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(s.iters));
  for (int i = 0; i < s.iters; ++i) {
    r.step();
    auto c0 = std::chrono::steady_clock::now();
    executor.run(in.data(), out.data(), nullptr);
    samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - c0).count());
  }
  result.latency = summarize(std::move(samples));
  if (s.profile_runs > 0) record(r, in.data(), out.data());
  result.load = machine_load(load_before, CpuSample::now());
  result.captured = executor.captured();
  for (size_t i = 0; i < result.outputs.size(); ++i)
    result.output_summaries.push_back(summarize_output(g.outputs[i], result.outputs[i]));
  ++executions_[static_cast<size_t>(Stage::Measure)];
  result.stages.push_back({Stage::Measure, millis_since(t0), false});
}

void Pipeline::record(Run& r, const void* const* in, void* const* out) {
  // `profile_runs` calls through the recorder and NVTX ranges, then the analysis against the
  // backend's roofline.
  const Settings& s = r.s;
  RunResult& result = *r.result;
  exec::Backend& be = *r.be;
  const ir::Graph& g = result.optimized->graph;
  const profiler::Roofline& roof = roofline(s.backend, result.isa);
  be.bind_threads(s.threads);  // measuring the roofline may have bound others
  size_t events = static_cast<size_t>(s.profile_runs) * (2 * g.nodes.size() + 2) + 16;
  profiler::Recorder recorder(events);
  profiler::NvtxRanges nvtx;
  nvtx.attach(g);
  profiler::ObserverTee tee({&recorder, &nvtx});
  profiler::Recording config;
  config.model = s.model;
  config.label = s.label();
  config.backend = s.backend;
  config.executor = s.executor;
  config.passes = s.passes_text();
  config.planner = result.plan->strategy;
  config.threads = s.threads;
  recorder.attach(g, *result.plan, config);
  exec::Executor& executor = *r.bound->executor;
  // What the backend notes itself (device activity, each intra-op thread's busy spans), for the
  // recorded runs only: what the unrecorded calls left is dropped.
  exec::BackendRecording noted(be);
  for (int i = 0; i < s.profile_runs; ++i) {
    r.step();
    tee.on_run_begin(i);
    executor.run(in, out, &tee);
    tee.on_run_end(i);
  }
  result.recording = recorder.finish(noted.finish());
  result.analysis = profiler::analyze(*result.recording, roof);
}

}  // namespace fusebox::workbench
