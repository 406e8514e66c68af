#include "profiler/recorder.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/exec/executor.h"
#include "core/ir/op_schema.h"
#include "profiler/analysis.h"

namespace fusebox::profiler {

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int32_t current_tid() {
  thread_local int32_t tid = static_cast<int32_t>(syscall(SYS_gettid));
  return tid;
}


// ---- Recorder ---------------------------------------------------------------------------------

Recorder::Recorder(size_t reserve_events) {
  events_.reserve(reserve_events);
  origin_ns_ = now_ns();
  origin_utc_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
}

void Recorder::on_stage_begin(const std::string& stage) {
  // Stages are rare (session build): a name lookup here costs nothing that matters.
  int64_t id = -1;
  for (size_t i = 0; i < stage_names_.size(); ++i)
    if (stage_names_[i] == stage) id = static_cast<int64_t>(i);
  if (id < 0) {
    id = static_cast<int64_t>(stage_names_.size());
    stage_names_.push_back(stage);
  }
  events_.push_back({now_ns(), id, current_tid(), static_cast<uint8_t>(SpanKind::Stage), 1});
}

void Recorder::on_stage_end(const std::string& stage) {
  int64_t t = now_ns();
  int64_t id = -1;
  for (size_t i = 0; i < stage_names_.size(); ++i)
    if (stage_names_[i] == stage) id = static_cast<int64_t>(i);
  events_.push_back({t, id, current_tid(), static_cast<uint8_t>(SpanKind::Stage), 0});
}

void Recorder::on_run_begin(int64_t run_index) {
  events_.push_back({now_ns(), run_index, current_tid(), static_cast<uint8_t>(SpanKind::Run), 1});
}
void Recorder::on_run_end(int64_t run_index) {
  events_.push_back({now_ns(), run_index, current_tid(), static_cast<uint8_t>(SpanKind::Run), 0});
}
void Recorder::on_op_begin(size_t node_index) {
  events_.push_back({now_ns(), static_cast<int64_t>(node_index), current_tid(), static_cast<uint8_t>(SpanKind::Op), 1});
}
void Recorder::on_op_end(size_t node_index) {
  events_.push_back({now_ns(), static_cast<int64_t>(node_index), current_tid(), static_cast<uint8_t>(SpanKind::Op), 0});
}

void Recorder::clear() { events_.clear(); }

void Recorder::attach(exec::Session& session, const std::string& model) {
  const ir::Graph& g = session.graph();
  const exec::SessionOptions& o = session.options();
  Recording config;
  config.model = model.empty() ? g.name : model;
  config.backend = o.backend;
  config.executor = o.executor;
  config.passes = o.passes;
  config.planner = o.planner;
  config.threads = o.threads;
  config.label = "passes=" + o.passes + " executor=" + o.executor + " planner=" + o.planner +
                 " threads=" + std::to_string(o.threads) + " backend=" + o.backend;
  attach(g, session.plan(), config);
}

namespace {

// Whether the executor ran `n` over its input's bytes: the plan gave output 0 input 0's buffer
// (core/planner/lifetimes.h), and the executor keeps to the plan (eager allocates its own).
bool written_in_place(const ir::Node& n, const planner::ExecutionPlan& plan, const std::string& executor) {
  if (!exec::keeps_to_plan(executor) || n.inputs.empty() || n.outputs.empty() || !ir::OpRegistry::instance().get(n.op).in_place)
    return false;
  const auto data = plan.locations.find(n.inputs[0]), out = plan.locations.find(n.outputs[0]);
  return data != plan.locations.end() && out != plan.locations.end() &&
         data->second.storage == planner::Storage::Arena && out->second.storage == planner::Storage::Arena &&
         data->second.root == out->second.root;
}

}  // namespace

void Recorder::attach(const ir::Graph& g, const planner::ExecutionPlan& plan, const Recording& config) {
  base_.model = config.model.empty() ? g.name : config.model;
  base_.backend = config.backend;
  base_.executor = config.executor;
  base_.passes = config.passes;
  base_.planner = config.planner;
  base_.threads = config.threads;
  base_.label = config.label;
  base_.arena_bytes = plan.arena_bytes;
  base_.node_count = g.nodes.size();
  base_.nodes.clear();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    NodeInfo info;
    info.name = n.name;
    info.op = n.op;
    info.inputs = n.inputs;
    info.outputs = n.outputs;
    std::vector<ir::TensorType> in, out;
    for (const auto& t : n.inputs) {
      const ir::TensorInfo& ti = g.tensor(t);
      in.push_back({ti.dtype, ti.shape});
      info.input_shapes.push_back(ti.shape);
    }
    for (const auto& t : n.outputs) {
      const ir::TensorInfo& ti = g.tensor(t);
      out.push_back({ti.dtype, ti.shape});
      info.output_shapes.push_back(ti.shape);
      auto it = plan.locations.find(t);
      info.output_offsets.push_back(it != plan.locations.end() && it->second.storage == planner::Storage::Arena
                                        ? static_cast<int64_t>(it->second.offset)
                                        : -1);
    }
    ir::OpCost cost = ir::node_cost(n, in, out, written_in_place(n, plan, config.executor));
    info.flops = cost.flops;
    info.bytes = cost.bytes;
    info.live_bytes = i < plan.live_bytes.size() ? plan.live_bytes[i] : 0;
    info.math = transcendental_math(n);
    base_.nodes.push_back(std::move(info));
  }
}

namespace {

// Ties each worker span to the op span around its start on the thread that forked its region,
// appends them as Worker spans and names the pool threads. Returns the names to add.
std::map<int32_t, std::string> add_worker_spans(Recording& r,
                                                const std::vector<exec::WorkerSpan>& workers) {
  std::map<int32_t, std::string> names;
  if (workers.empty()) return names;
  std::map<int32_t, std::vector<size_t>> ops_of_tid;  // op spans per thread, by start time
  for (size_t i = 0; i < r.spans.size(); ++i)
    if (r.spans[i].kind == SpanKind::Op) ops_of_tid[r.spans[i].tid].push_back(i);
  std::map<int32_t, int32_t> index_of_tid;
  std::vector<Span> added;
  for (const exec::WorkerSpan& w : workers) {
    auto ops = ops_of_tid.find(w.caller_tid);
    if (ops == ops_of_tid.end() || w.end_ns < w.start_ns) continue;
    const std::vector<size_t>& v = ops->second;
    auto it = std::upper_bound(v.begin(), v.end(), w.start_ns,
                               [&](int64_t t, size_t i) { return t < r.spans[i].start_ns; });
    if (it == v.begin()) continue;
    const Span& op = r.spans[*std::prev(it)];
    if (w.end_ns > op.end_ns) continue;  // not inside that op: not one of its regions
    Span s;
    s.kind = SpanKind::Worker;
    s.name = op.name;
    s.start_ns = w.start_ns;
    s.end_ns = w.end_ns;
    s.tid = w.tid;
    s.run = op.run;
    s.node = op.node;
    s.depth = w.tid == w.caller_tid ? op.depth + 1 : 0;
    added.push_back(std::move(s));
    if (w.tid != w.caller_tid) {
      auto [pos, fresh] = index_of_tid.try_emplace(w.tid, w.worker);
      if (!fresh) pos->second = std::min(pos->second, w.worker);
    }
  }
  if (added.empty()) return names;
  r.spans.insert(r.spans.end(), std::make_move_iterator(added.begin()),
                 std::make_move_iterator(added.end()));
  // By start, the longer (a parent) first: the order import_kineto rebuilds, so a round trip
  // through trace.json keeps it.
  std::stable_sort(r.spans.begin(), r.spans.end(), [](const Span& a, const Span& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  for (const auto& [tid, k] : index_of_tid) names[tid] = "fusebox worker " + std::to_string(k);
  return names;
}

}  // namespace

Recording Recorder::finish(exec::BackendActivity activity) const {
  const std::vector<exec::WorkerSpan>& workers = activity.workers;
  Recording r = base_;
  r.pid = static_cast<int32_t>(getpid());
  r.main_tid = r.pid;
  r.origin_ns = origin_ns_;
  r.origin_utc_ns = origin_utc_ns_;
  r.device = std::move(activity.device);
  r.counter_tracks = {{kArenaCounter, true}};  // track 0
  struct Open {
    size_t span;
  };
  std::map<int32_t, std::vector<size_t>> stacks;  // tid -> open span indices
  std::map<int32_t, bool> seen_threads;
  for (const Event& e : events_) {
    seen_threads[e.tid] = true;
    auto& stack = stacks[e.tid];
    SpanKind kind = static_cast<SpanKind>(e.kind);
    if (e.begin) {
      Span s;
      s.kind = kind;
      s.start_ns = s.end_ns = e.t;
      s.tid = e.tid;
      s.depth = static_cast<int32_t>(stack.size());
      if (kind == SpanKind::Stage) {
        s.name = e.id >= 0 ? stage_names_[static_cast<size_t>(e.id)] : "stage";
      } else if (kind == SpanKind::Run) {
        s.name = run_range_name(e.id);
        s.run = e.id;
      } else {
        s.node = static_cast<int32_t>(e.id);
        const size_t idx = static_cast<size_t>(e.id);
        s.name = idx < r.nodes.size() ? op_range_name(r.nodes[idx].op, idx, r.nodes[idx].name)
                                      : "op." + std::to_string(e.id);
        for (auto it = stack.rbegin(); it != stack.rend(); ++it)
          if (r.spans[*it].kind == SpanKind::Run) {
            s.run = r.spans[*it].run;
            break;
          }
        if (idx < r.nodes.size())
          r.counters.push_back({e.t, e.tid, 0, static_cast<double>(r.nodes[idx].live_bytes)});
      }
      stack.push_back(r.spans.size());
      r.spans.push_back(std::move(s));
    } else {
      // Close the innermost open span of this kind and id (tolerates a missing end by closing
      // everything above it at the same time).
      for (size_t k = stack.size(); k-- > 0;) {
        Span& s = r.spans[stack[k]];
        bool match = s.kind == kind &&
                     (kind == SpanKind::Stage ? (e.id >= 0 && s.name == stage_names_[static_cast<size_t>(e.id)])
                      : kind == SpanKind::Run ? s.run == e.id
                                              : s.node == e.id);
        if (!match) continue;
        for (size_t j = k; j < stack.size(); ++j) r.spans[stack[j]].end_ns = e.t;
        stack.resize(k);
        break;
      }
      if (kind == SpanKind::Run) r.counters.push_back({e.t, e.tid, 0, 0.0});
    }
  }
  // Spans still open (a run in progress): end them at their last child's end or their start.
  for (auto& [tid, stack] : stacks) {
    (void)tid;
    for (size_t k = stack.size(); k-- > 0;) {
      Span& s = r.spans[stack[k]];
      for (size_t j = stack[k] + 1; j < r.spans.size(); ++j)
        if (r.spans[j].tid == s.tid) s.end_ns = std::max(s.end_ns, r.spans[j].end_ns);
    }
  }
  if (!r.spans.empty()) r.main_tid = r.spans.front().tid;
  const std::map<int32_t, std::string> worker_names = add_worker_spans(r, workers);
  for (const auto& [tid, seen] : seen_threads) {
    (void)seen;
    r.thread_names.push_back({tid, tid == r.pid ? std::string("fusebox main") : "fusebox thread " + std::to_string(tid)});
  }
  for (const auto& [tid, name] : worker_names)
    if (!seen_threads.count(tid)) r.thread_names.push_back({tid, name});
  if (r.thread_names.empty()) r.thread_names.push_back({r.pid, "fusebox main"});
  return r;
}

}  // namespace fusebox::profiler
