#include "profiler/recording.h"

#include <algorithm>
#include <climits>
#include <map>

#include "core/base/atomic_file.h"
#include "core/base/error.h"

namespace fusebox::profiler {

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
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].kv_cache_write) nj[i]["kv_cache_write"] = true;  // only where set: older files stay as they were
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
  info.kv_cache_write = n.value("kv_cache_write", false);
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
