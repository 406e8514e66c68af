#include "app/workbench/pipeline.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "app/workbench/backends.h"
#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/planner/plan_index.h"
#include "profiler/nvtx.h"

namespace fusebox::workbench {

namespace {

// What each stage reads from the settings; a cached result is reused when its key is equal.
struct LoadKey {
  std::string model;
  std::map<std::string, int64_t> dims;
  uint64_t seed = 0;
  std::map<std::string, std::string> inputs;
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
  LoadKey k{s.model, s.dims, s.seed, s.inputs, {}};
  if (is_model_file(s.model)) k.file_times.push_back(modification_time(s.model));
  for (const auto& [name, file] : s.inputs) k.file_times.push_back(modification_time(file));
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

std::shared_ptr<const RunResult> Pipeline::run(const Settings& s, const std::atomic<bool>* cancel,
                                               Progress* progress, Stage last) {
  auto check = [&] {
    if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled{};
  };
  auto result = std::make_shared<RunResult>();
  result->settings = s;
  auto stop_after = [&](Stage st) {
    if (st != last) return false;
    result->sequence = ++sequence_;
    return true;
  };
  // Runs a stage's `make` unless `cached` already holds its result; records which it was.
  auto stage = [&](Stage st, auto* cached, auto&& make) -> decltype(auto) {
    check();
    if (progress) progress->stage.store(static_cast<int>(st));
    if (cached) {
      result->stages.push_back({st, 0, true});
      return *cached;
    }
    auto t0 = std::chrono::steady_clock::now();
    auto& value = make();
    ++executions_[static_cast<size_t>(st)];
    result->stages.push_back({st, millis_since(t0), false});
    return value;
  };

  // Load.
  const LoadKey lk = load_key(s);
  result->model = stage(Stage::Load, caches_->load.find(lk), [&]() -> auto& {
    auto m = std::make_shared<LoadedModel>();
    m->graph = load_model(s.model, s.seed, s.dims);
    m->inputs = load_inputs(m->graph, s.seed, s.inputs);
    return caches_->load.put(lk, std::move(m));
  });
  if (stop_after(Stage::Load)) return result;

  // Optimize: constant folding evaluates on the CPU whatever the target; the passes ask the
  // target what it supports.
  exec::Backend& be = backend(s.backend);
  be.select_isa(s.isa);  // refuses a level this machine cannot run, before any work
  result->isa = be.isa();
  const OptimizeKey ok{lk, s.passes_off, s.patterns_off, s.backend};
  result->optimized = stage(Stage::Optimize, caches_->optimize.find(ok), [&]() -> auto& {
    exec::OptimizeOptions o;
    o.passes = passes::parse_pass_list(s.passes_text());
    o.disabled_patterns = s.patterns_off;
    o.evaluator = &backend("cpu");
    o.target = &be;
    return caches_->optimize.put(ok, exec::optimize(result->model->graph, o));
  });
  if (stop_after(Stage::Optimize)) return result;

  // Plan.
  const PlanKey pk{ok, s.planner};
  const PlanEntry& plan = stage(Stage::Plan, caches_->plan.find(pk), [&]() -> auto& {
    PlanEntry e;
    e.plan = exec::plan_memory(*result->optimized, s.planner, be);
    e.index = std::make_shared<const planner::PlanIndex>(planner::index_plan(result->optimized->graph, *e.plan));
    return caches_->plan.put(pk, std::move(e));
  });
  result->plan = plan.plan;
  result->plan_index = plan.index;
  if (stop_after(Stage::Plan)) return result;

  // Compile.
  result->backend_description = be.description();
  const CompileKey ck{ok, s.backend, result->isa};
  std::shared_ptr<const exec::Compiled> compiled = stage(Stage::Compile, caches_->compile.find(ck), [&]() -> auto& {
    return caches_->compile.put(ck, exec::compile(result->optimized, be));
  });
  if (stop_after(Stage::Compile)) return result;

  // Bind.
  const BindKey bk{ck, s.planner, s.executor, s.capture};
  result->capture_note = s.capture ? exec::capture_unavailable_reason(s.executor, be) : "";
  std::shared_ptr<exec::Bound> bound = stage(Stage::Bind, caches_->bind.find(bk), [&]() -> auto& {
    return caches_->bind.put(bk, std::shared_ptr<exec::Bound>(exec::bind_executor(
                                     compiled, result->plan, s.executor, exec::ExecutorOptions{s.capture})));
  });
  if (stop_after(Stage::Bind)) return result;

  // Measure: warm-up, `iters` timed calls without hooks, then `profile_runs` recorded calls.
  check();
  auto t0 = std::chrono::steady_clock::now();
  if (progress) {
    progress->stage.store(static_cast<int>(Stage::Measure));
    progress->done.store(0);
    progress->total.store(s.warmup + s.iters + s.profile_runs);
  }
  const ir::Graph& g = result->optimized->graph;
  std::vector<const void*> in;
  for (const auto& t : result->model->inputs) in.push_back(t.bytes());
  for (const auto& name : g.outputs) result->outputs.emplace_back(g.tensor(name).dtype, g.tensor(name).shape);
  std::vector<void*> out;
  for (auto& t : result->outputs) out.push_back(t.bytes());
  exec::Executor& executor = *bound->executor;
  be.bind_threads(s.threads);  // on this thread, for this run's kernels
  auto step = [&] {
    check();
    if (progress) progress->done.fetch_add(1, std::memory_order_relaxed);
  };
  for (int i = 0; i < s.warmup; ++i) {
    step();
    executor.run(in.data(), out.data(), nullptr);
  }
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(s.iters));
  for (int i = 0; i < s.iters; ++i) {
    step();
    auto c0 = std::chrono::steady_clock::now();
    executor.run(in.data(), out.data(), nullptr);
    samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - c0).count());
  }
  result->latency = summarize(std::move(samples));
  if (s.profile_runs > 0) {
    const profiler::Roofline& roof = roofline(s.backend, result->isa);
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
    config.planner = result->plan->strategy;
    config.threads = s.threads;
    recorder.attach(g, *result->plan, config);
    be.take_activity();  // drop what the unrecorded calls produced
    for (int i = 0; i < s.profile_runs; ++i) {
      step();
      tee.on_run_begin(i);
      executor.run(in.data(), out.data(), &tee);
      tee.on_run_end(i);
    }
    result->recording = recorder.finish(be.take_activity());
    result->analysis = profiler::analyze(*result->recording, roof);
  }
  result->captured = executor.captured();
  for (size_t i = 0; i < result->outputs.size(); ++i)
    result->output_summaries.push_back(summarize_output(g.outputs[i], result->outputs[i]));
  ++executions_[static_cast<size_t>(Stage::Measure)];
  result->stages.push_back({Stage::Measure, millis_since(t0), false});
  result->sequence = ++sequence_;
  return result;
}

}  // namespace fusebox::workbench
