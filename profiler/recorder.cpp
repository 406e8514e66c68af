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

const char* span_kind_name(SpanKind kind) {
  switch (kind) {
    case SpanKind::Stage: return "stage";
    case SpanKind::Run: return "run";
    case SpanKind::Op: return "op";
    case SpanKind::Range: return "range";
    case SpanKind::Worker: return "worker";
  }
  return "?";
}

std::string op_range_name(const std::string& op, size_t index, const std::string& node_name) {
  return op + "." + std::to_string(index) + "(" + node_name + ")";
}

std::string run_range_name(int64_t run) { return "run " + std::to_string(run); }

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
    ir::OpCost cost = ir::node_cost(n, in, out);
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

Recording Recorder::finish(std::vector<exec::DeviceActivity> device,
                           const std::vector<exec::WorkerSpan>& workers) const {
  Recording r = base_;
  r.pid = static_cast<int32_t>(getpid());
  r.main_tid = r.pid;
  r.origin_ns = origin_ns_;
  r.origin_utc_ns = origin_utc_ns_;
  r.device = std::move(device);
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

// ---- Worker utilisation -----------------------------------------------------------------------

std::vector<WorkerUtilisation> worker_utilisation(const Recording& r) {
  std::vector<const Span*> runs;
  for (const Span& s : r.spans)
    if (s.kind == SpanKind::Run) runs.push_back(&s);
  std::map<int32_t, std::map<int64_t, int64_t>> busy;  // tid -> run -> busy ns
  std::map<int32_t, int32_t> ops_of_tid;               // threads that run ops
  for (const Span& s : r.spans) {
    if (s.kind == SpanKind::Op) ++ops_of_tid[s.tid];
    if (s.kind != SpanKind::Worker) continue;
    // Spans of one thread never overlap (a thread runs one chunk at a time): their sum is the
    // time it was busy.
    busy[s.tid][s.run] += s.end_ns - s.start_ns;
  }
  std::vector<WorkerUtilisation> out;
  for (const auto& [tid, by_run] : busy) {
    WorkerUtilisation w;
    w.tid = tid;
    for (const auto& [t, name] : r.thread_names)
      if (t == tid) w.name = name;
    if (w.name.empty()) w.name = "thread " + std::to_string(tid);
    const std::string prefix = "fusebox worker ";
    if (ops_of_tid.count(tid)) {
      w.worker = 0;
    } else if (w.name.rfind(prefix, 0) == 0) {
      w.worker = std::max(1, std::atoi(w.name.c_str() + prefix.size()));
    } else {
      w.worker = static_cast<int32_t>(out.size()) + 1;
    }
    for (const Span* run : runs) {
      const int64_t wall = run->end_ns - run->start_ns;
      auto it = by_run.find(run->run);
      const int64_t b = it == by_run.end() ? 0 : std::min(it->second, wall);
      w.runs.push_back(run->run);
      w.per_run.push_back(wall > 0 ? static_cast<double>(b) / static_cast<double>(wall) : 0.0);
      w.busy_ns += b;
      w.wall_ns += wall;
    }
    out.push_back(std::move(w));
  }
  std::stable_sort(out.begin(), out.end(), [](const WorkerUtilisation& a, const WorkerUtilisation& b) {
    return a.worker != b.worker ? a.worker < b.worker : a.tid < b.tid;
  });
  return out;
}

std::string worker_label(const WorkerUtilisation& w) { return "worker " + std::to_string(w.worker); }

std::string worker_utilisation_line(const Recording& r) {
  const std::vector<WorkerUtilisation> ws = worker_utilisation(r);
  if (ws.empty()) return "";
  std::string line;
  for (const WorkerUtilisation& w : ws) {
    if (!line.empty()) line += ", ";
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * w.utilisation());
    line += worker_label(w) + (w.worker == 0 ? " (runs the ops) " : " ") + pct;
  }
  const size_t runs = ws.front().runs.size();
  return line + " busy over " + std::to_string(runs) + " recorded run" + (runs == 1 ? "" : "s") +
         "' wall time";
}

int64_t Recording::run_count() const {
  int64_t n = 0;
  for (const Span& s : spans) n += s.kind == SpanKind::Run;
  return n;
}

std::string check_recording(const Recording& r) {
  std::map<int32_t, std::vector<const Span*>> stacks;
  int64_t last_start = INT64_MIN;
  for (size_t i = 0; i < r.spans.size(); ++i) {
    const Span& s = r.spans[i];
    if (s.end_ns < s.start_ns) return "span " + std::to_string(i) + " '" + s.name + "' ends before it starts";
    if (s.start_ns < last_start) return "span " + std::to_string(i) + " '" + s.name + "' is out of start order";
    last_start = s.start_ns;
    auto& stack = stacks[s.tid];
    // Pop what ended before this span starts. A span starting exactly where its predecessor
    // ended is a sibling, not a child.
    while (!stack.empty() && s.start_ns >= stack.back()->end_ns) stack.pop_back();
    if (!stack.empty() && s.end_ns > stack.back()->end_ns)
      return "span " + std::to_string(i) + " '" + s.name + "' overlaps '" + stack.back()->name +
             "' on thread " + std::to_string(s.tid) + " without nesting inside it";
    stack.push_back(&s);
  }
  for (size_t i = 0; i < r.counters.size(); ++i)
    if (r.counters[i].track < 0 ||
        static_cast<size_t>(r.counters[i].track) >= r.counter_tracks.size())
      return "counter sample " + std::to_string(i) + " names track " +
             std::to_string(r.counters[i].track) + " of " + std::to_string(r.counter_tracks.size());
  return "";
}

// ---- JSON -------------------------------------------------------------------------------------

nlohmann::json Recording::to_json() const {
  using nlohmann::json;
  json j;
  j["format"] = "fusebox-recording";
  j["version"] =
      2;  // 2: named counter tracks ("counters"); 1 held the arena's alone ("arena_live")
  j["source"] = source;
  j["model"] = model;
  j["label"] = label;
  j["backend"] = backend;
  j["executor"] = executor;
  j["passes"] = passes;
  j["planner"] = planner;
  j["threads"] = threads;
  j["pid"] = pid;
  j["main_tid"] = main_tid;
  j["origin_ns"] = origin_ns;
  j["origin_utc_ns"] = origin_utc_ns;
  j["arena_bytes"] = arena_bytes;
  j["node_count"] = node_count;
  json tn = json::array();
  for (const auto& [tid, name] : thread_names) tn.push_back({tid, name});
  j["thread_names"] = tn;
  json nj = json::array();
  for (const NodeInfo& n : nodes)
    nj.push_back({{"name", n.name}, {"op", n.op}, {"inputs", n.inputs}, {"outputs", n.outputs},
                  {"input_shapes", n.input_shapes}, {"output_shapes", n.output_shapes}, {"flops", n.flops},
                  {"bytes", n.bytes}, {"output_offsets", n.output_offsets}, {"live_bytes", n.live_bytes},
                  {"math", n.math}});
  j["nodes"] = nj;
  // Spans as compact rows: [kind, name, start_ns, end_ns, tid, run, node, depth]
  json sj = json::array();
  for (const Span& s : spans)
    sj.push_back({static_cast<int>(s.kind), s.name, s.start_ns, s.end_ns, s.tid, s.run, s.node, s.depth});
  j["spans"] = sj;
  json tj = json::array();
  for (const CounterTrack& t : counter_tracks) tj.push_back({{"name", t.name}, {"bytes", t.bytes}});
  j["counter_tracks"] = tj;
  json cj = json::array();  // [t_ns, tid, value, track]
  for (const CounterSample& c : counters) cj.push_back({c.t_ns, c.tid, c.value, c.track});
  j["counters"] = cj;
  json dj = json::array();
  for (const exec::DeviceActivity& a : device)
    dj.push_back({{"kind", static_cast<int>(a.kind)}, {"name", a.name}, {"start_ns", a.start_ns},
                  {"end_ns", a.end_ns}, {"device", a.device}, {"stream", a.stream},
                  {"correlation_id", a.correlation_id}, {"thread_id", a.thread_id},
                  {"grid", {a.grid[0], a.grid[1], a.grid[2]}}, {"block", {a.block[0], a.block[1], a.block[2]}},
                  {"shared_memory", a.shared_memory}, {"registers", a.registers}, {"bytes", a.bytes},
                  {"copy_kind", a.copy_kind}, {"src_kind", a.src_kind}, {"dst_kind", a.dst_kind},
                  {"node_index", a.node_index}});
  j["device"] = dj;
  json gj = json::array();
  for (const GpuInfo& g : gpus)
    gj.push_back({{"device", g.device}, {"name", g.name}, {"sm_count", g.sm_count},
                  {"compute", {g.compute_major, g.compute_minor}}, {"memory_bytes", g.memory_bytes},
                  {"memory_bandwidth_bps", g.memory_bandwidth_bps}});
  j["gpus"] = gj;
  json kj = json::array();
  for (const CollectiveArgs& c : collectives)
    kj.push_back({{"activity", c.activity}, {"collective", c.collective},
                  {"in_nelems", c.in_nelems}, {"out_nelems", c.out_nelems},
                  {"group_size", c.group_size}, {"dtype", c.dtype}});
  j["collectives"] = kj;
  j["rank"] = rank;
  j["world_size"] = world_size;
  return j;
}

namespace {

// The recording's scalar fields and thread names.
void header_from_json(Recording& r, const nlohmann::json& j) {
  r.source = j.value("source", std::string("fusebox"));
  r.model = j.at("model").get<std::string>();
  r.label = j.value("label", "");
  r.backend = j.value("backend", "");
  r.executor = j.value("executor", "");
  r.passes = j.value("passes", "");
  r.planner = j.value("planner", "");
  r.threads = j.value("threads", 1);
  r.pid = j.value("pid", 0);
  r.main_tid = j.value("main_tid", 0);
  r.origin_ns = j.value("origin_ns", int64_t{0});
  r.origin_utc_ns = j.value("origin_utc_ns", int64_t{0});
  r.arena_bytes = j.value("arena_bytes", size_t{0});
  r.node_count = j.value("node_count", size_t{0});
  for (const auto& t : j.at("thread_names"))
    r.thread_names.push_back({t.at(0).get<int32_t>(), t.at(1).get<std::string>()});
}

NodeInfo node_from_json(const nlohmann::json& n) {
  NodeInfo info;
  info.name = n.at("name").get<std::string>();
  info.op = n.at("op").get<std::string>();
  info.inputs = n.value("inputs", std::vector<std::string>{});
  info.outputs = n.value("outputs", std::vector<std::string>{});
  info.input_shapes = n.at("input_shapes").get<std::vector<std::vector<int64_t>>>();
  info.output_shapes = n.at("output_shapes").get<std::vector<std::vector<int64_t>>>();
  info.flops = n.at("flops").get<double>();
  info.bytes = n.at("bytes").get<double>();
  info.output_offsets = n.at("output_offsets").get<std::vector<int64_t>>();
  info.live_bytes = n.value("live_bytes", size_t{0});
  info.math = n.value("math", std::vector<std::string>{});  // absent in older recordings
  return info;
}

// A span row: [kind, name, start_ns, end_ns, tid, run, node, depth]; its node must be one of
// node_count.
Span span_from_json(const nlohmann::json& s, size_t node_count) {
  Span sp;
  int kind = s.at(0).get<int>();
  if (kind < 0 || kind > static_cast<int>(SpanKind::Worker))
    throw Error("bad span kind " + std::to_string(kind));
  sp.kind = static_cast<SpanKind>(kind);
  sp.name = s.at(1).get<std::string>();
  sp.start_ns = s.at(2).get<int64_t>();
  sp.end_ns = s.at(3).get<int64_t>();
  sp.tid = s.at(4).get<int32_t>();
  sp.run = s.at(5).get<int64_t>();
  sp.node = s.at(6).get<int32_t>();
  sp.depth = s.at(7).get<int32_t>();
  if (sp.node >= static_cast<int32_t>(node_count))
    throw Error("span '" + sp.name + "' names node " + std::to_string(sp.node) + " of " +
                std::to_string(node_count));
  return sp;
}

exec::DeviceActivity device_activity_from_json(const nlohmann::json& d) {
  exec::DeviceActivity a;
  const int kind = d.at("kind").get<int>();
  if (kind < 0 || kind > static_cast<int>(exec::ActivityKind::Sync))
    throw Error("bad device activity kind " + std::to_string(kind));
  a.kind = static_cast<exec::ActivityKind>(kind);
  a.name = d.at("name").get<std::string>();
  a.start_ns = d.at("start_ns").get<int64_t>();
  a.end_ns = d.at("end_ns").get<int64_t>();
  a.device = d.value("device", 0);
  a.stream = d.value("stream", 0);
  a.correlation_id = d.value("correlation_id", 0u);
  a.thread_id = d.value("thread_id", 0u);
  for (int k = 0; k < 3; ++k) {
    a.grid[k] = d.at("grid").at(static_cast<size_t>(k)).get<int32_t>();
    a.block[k] = d.at("block").at(static_cast<size_t>(k)).get<int32_t>();
  }
  a.shared_memory = d.value("shared_memory", 0);
  a.registers = d.value("registers", 0);
  a.bytes = d.value("bytes", uint64_t{0});
  a.copy_kind = d.value("copy_kind", uint8_t{0});
  a.src_kind = d.value("src_kind", uint8_t{0});
  a.dst_kind = d.value("dst_kind", uint8_t{0});
  a.node_index = d.value("node_index", -1);
  return a;
}

GpuInfo gpu_from_json(const nlohmann::json& g) {
  GpuInfo info;
  info.device = g.at("device").get<int32_t>();
  info.name = g.value("name", std::string());
  info.sm_count = g.value("sm_count", 0);
  info.compute_major = g.at("compute").at(0).get<int32_t>();
  info.compute_minor = g.at("compute").at(1).get<int32_t>();
  info.memory_bytes = g.value("memory_bytes", uint64_t{0});
  info.memory_bandwidth_bps = g.value("memory_bandwidth_bps", 0.0);
  return info;
}

}  // namespace

Recording Recording::from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != "fusebox-recording")
    throw Error("not a fusebox recording (expected an object with \"format\": \"fusebox-recording\"; "
                "`fusebox profile --out DIR` writes DIR/profile.json)");
  Recording r;
  try {
    header_from_json(r, j);
    for (const auto& n : j.at("nodes")) r.nodes.push_back(node_from_json(n));
    for (const auto& s : j.at("spans")) r.spans.push_back(span_from_json(s, r.nodes.size()));
    if (j.contains("arena_live")) {  // written before counters had names: the arena's alone
      r.counter_tracks = {{kArenaCounter, true}};
      for (const auto& c : j.at("arena_live"))
        r.counters.push_back(
            {c.at(0).get<int64_t>(), c.at(1).get<int32_t>(), 0, c.at(2).get<double>()});
    } else {
      for (const auto& t : j.at("counter_tracks"))
        r.counter_tracks.push_back({t.at("name").get<std::string>(), t.at("bytes").get<bool>()});
      for (const auto& c : j.at("counters"))
        r.counters.push_back({c.at(0).get<int64_t>(), c.at(1).get<int32_t>(),
                              c.at(3).get<int32_t>(), c.at(2).get<double>()});
    }
    for (const auto& d : j.value("device", nlohmann::json::array()))
      r.device.push_back(device_activity_from_json(d));
    for (const auto& g : j.value("gpus", nlohmann::json::array()))
      r.gpus.push_back(gpu_from_json(g));
    for (const auto& c : j.value("collectives", nlohmann::json::array())) {
      CollectiveArgs a;
      a.activity = c.at("activity").get<size_t>();
      if (a.activity >= r.device.size() || r.device[a.activity].kind != exec::ActivityKind::Kernel)
        throw Error("bad fusebox recording: collective arguments for activity " +
                    std::to_string(a.activity) + ", which is not a kernel record");
      a.collective = c.value("collective", "");
      a.in_nelems = c.value("in_nelems", int64_t{0});
      a.out_nelems = c.value("out_nelems", int64_t{0});
      a.group_size = c.value("group_size", int64_t{0});
      a.dtype = c.value("dtype", "");
      r.collectives.push_back(std::move(a));
    }
    r.rank = j.value("rank", -1);
    r.world_size = j.value("world_size", 0);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("bad fusebox recording: ") + e.what());
  }
  std::string bad = check_recording(r);
  if (!bad.empty()) throw Error("bad fusebox recording: " + bad);
  return r;
}

void Recording::save(const std::string& path) const {
  nlohmann::json j = to_json();
  write_file_atomically(path, [&](std::ostream& os) {
    os << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  });
}

Recording Recording::load(const std::string& path) {
  std::string text = read_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not JSON: " + e.what());
  }
  try {
    return from_json(j);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace fusebox::profiler
