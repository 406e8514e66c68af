// Chrome trace JSON in the layout of PyTorch's profiler (torch.profiler export_chrome_trace).
// import_kineto reads it back: whatever a Recording holds that the layout has a place for is
// written (copies' memory kinds, syncs' kind, the GPUs as deviceProperties), so an export of an
// imported export is the same file.
#include <map>
#include <set>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/ir/shape.h"
#include "profiler/exporters.h"

namespace fusebox::profiler {

namespace {

using nlohmann::json;

double us(int64_t ns_from_origin) { return static_cast<double>(ns_from_origin) / 1000.0; }

const char* device_category(exec::ActivityKind k) {
  switch (k) {
    case exec::ActivityKind::Kernel: return "kernel";
    case exec::ActivityKind::Memcpy: return "gpu_memcpy";
    case exec::ActivityKind::Memset: return "gpu_memset";
    case exec::ActivityKind::Runtime: return "cuda_runtime";
    case exec::ActivityKind::Sync: return "cuda_sync";
  }
  return "kernel";
}

// kineto's top-level "deviceProperties" (the fields a GpuInfo holds; bandwidth is ours).
json device_properties(const std::vector<GpuInfo>& gpus) {
  json out = json::array();
  for (const GpuInfo& g : gpus) {
    json d = {{"id", g.device},
              {"name", g.name},
              {"numSms", g.sm_count},
              {"computeMajor", g.compute_major},
              {"computeMinor", g.compute_minor},
              {"totalGlobalMem", g.memory_bytes}};
    if (g.memory_bandwidth_bps > 0) d["memoryBandwidthBytesPerSecond"] = g.memory_bandwidth_bps;
    out.push_back(std::move(d));
  }
  return out;
}

// The process's metadata events, then its thread names.
void add_process_metadata(json& events, const Recording& r) {
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"ts", 0}, {"pid", r.pid}, {"tid", 0},
                    {"args", {{"name", "fusebox " + r.model}}}});
  events.push_back({{"name", "process_labels"}, {"ph", "M"}, {"ts", 0}, {"pid", r.pid},
                    {"tid", 0}, {"args", {{"labels", r.label}}}});
  events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"ts", 0}, {"pid", r.pid},
                    {"tid", 0}, {"args", {{"sort_index", 0}}}});
  for (const auto& [tid, name] : r.thread_names)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"ts", 0}, {"pid", r.pid},
                      {"tid", tid}, {"args", {{"name", name}}}});
}

// A host span: an op with its node's details (cpu_op), else an annotation (stages, runs, ranges,
// and each worker thread's busy spans, which sit on that thread's tid; add_process_metadata has
// named every thread, so Perfetto shows one track per worker).
json span_event(const Recording& r, const Span& s) {
  json e = {{"ph", "X"},  {"name", s.name}, {"pid", r.pid}, {"tid", s.tid},
            {"ts", us(s.start_ns - r.origin_ns)}, {"dur", us(s.end_ns - s.start_ns)}};
  if (s.kind == SpanKind::Op && s.node >= 0 && static_cast<size_t>(s.node) < r.nodes.size()) {
    const NodeInfo& n = r.nodes[static_cast<size_t>(s.node)];
    e["cat"] = "cpu_op";
    e["args"] = {{"Op Type", n.op},
                 {"Node", n.name},
                 {"Node Index", s.node},
                 {"Run", s.run},
                 {"Input Dims", n.input_shapes},
                 {"Output Dims", n.output_shapes},
                 {"FLOPs", n.flops},
                 {"Bytes", n.bytes},
                 {"Arena Offsets", n.output_offsets},
                 {"Arena Live Bytes", n.live_bytes}};
    if (n.kv_cache_write) e["args"]["KV Cache Write"] = true;
  } else {
    e["cat"] = "user_annotation";
    e["args"] = {{"Kind", span_kind_name(s.kind)}};
    if (s.kind == SpanKind::Run || s.kind == SpanKind::Worker) e["args"]["Run"] = s.run;
    // A worker's busy span (on its own thread, named like its op): the op that forked it.
    if (s.kind == SpanKind::Worker) e["args"]["Node Index"] = s.node;
  }
  return e;
}

// The args of a GPU work or sync record, beyond its correlation and node index.
void add_device_args(json& args, const exec::DeviceActivity& a) {
  args["device"] = a.device;
  args["stream"] = a.stream;
  if (a.kind == exec::ActivityKind::Kernel) {
    args["grid"] = {a.grid[0], a.grid[1], a.grid[2]};
    args["block"] = {a.block[0], a.block[1], a.block[2]};
    args["registers per thread"] = a.registers;
    args["shared memory"] = a.shared_memory;
  } else if (a.kind == exec::ActivityKind::Sync) {
    args["cuda_sync_kind"] = a.name;  // kineto's name for what was waited on
  } else {
    args["bytes"] = a.bytes;
    args["copy kind"] = a.copy_kind;
    if (a.kind == exec::ActivityKind::Memcpy) {
      args["src kind"] = a.src_kind;
      args["dst kind"] = a.dst_kind;
    }
  }
}

// The flow from a launch call to the GPU record it launched.
void add_flow(json& events, const Recording& r, const exec::DeviceActivity& call,
              const exec::DeviceActivity& a) {
  const int64_t o = r.origin_ns;
  int32_t tid = call.thread_id ? static_cast<int32_t>(call.thread_id) : r.main_tid;
  events.push_back({{"ph", "s"}, {"id", a.correlation_id}, {"pid", r.pid}, {"tid", tid},
                    {"ts", us(call.start_ns - o)}, {"cat", "ac2g"}, {"name", "ac2g"}});
  events.push_back({{"ph", "f"}, {"id", a.correlation_id}, {"pid", a.device}, {"tid", a.stream},
                    {"ts", us(a.start_ns - o)}, {"cat", "ac2g"}, {"name", "ac2g"}, {"bp", "e"}});
}

// Device activity: GPU work on pid = device, tid = stream; runtime calls on the host thread.
// Adds the devices and (device, stream) pairs seen.
void add_device_events(json& events, const Recording& r, std::set<int32_t>& devices,
                       std::set<std::pair<int32_t, int32_t>>& streams) {
  const int64_t o = r.origin_ns;
  std::map<uint32_t, const exec::DeviceActivity*> runtime_by_corr;
  for (const exec::DeviceActivity& a : r.device)
    if (a.kind == exec::ActivityKind::Runtime && a.correlation_id)
      runtime_by_corr[a.correlation_id] = &a;
  for (const exec::DeviceActivity& a : r.device) {
    json args = {{"correlation", a.correlation_id}};
    if (a.node_index >= 0) args["Node Index"] = a.node_index;
    if (a.kind == exec::ActivityKind::Runtime) {
      int32_t tid = a.thread_id ? static_cast<int32_t>(a.thread_id) : r.main_tid;
      events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", a.name}, {"pid", r.pid},
                        {"tid", tid}, {"ts", us(a.start_ns - o)},
                        {"dur", us(a.end_ns - a.start_ns)}, {"args", args}});
      continue;
    }
    devices.insert(a.device);
    streams.insert({a.device, a.stream});
    add_device_args(args, a);
    events.push_back({{"ph", "X"}, {"cat", device_category(a.kind)}, {"name", a.name},
                      {"pid", a.device}, {"tid", a.stream}, {"ts", us(a.start_ns - o)},
                      {"dur", us(a.end_ns - a.start_ns)}, {"args", args}});
    auto rt = runtime_by_corr.find(a.correlation_id);
    if (a.correlation_id && rt != runtime_by_corr.end()) add_flow(events, r, *rt->second, a);
  }
}

// A process per GPU and a thread per stream.
void add_device_metadata(json& events, const std::set<int32_t>& devices,
                         const std::set<std::pair<int32_t, int32_t>>& streams) {
  for (int32_t d : devices) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"ts", 0}, {"pid", d}, {"tid", 0},
                      {"args", {{"name", "GPU " + std::to_string(d)}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"ts", 0}, {"pid", d},
                      {"tid", 0}, {"args", {{"sort_index", 1000 + d}}}});
  }
  for (const auto& [d, s] : streams)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"ts", 0}, {"pid", d}, {"tid", s},
                      {"args", {{"name", "stream " + std::to_string(s)}}}});
}

}  // namespace

json chrome_trace(const Recording& r) {
  std::string bad = check_recording(r);
  if (!bad.empty()) throw Error("cannot export the recording: " + bad);
  json events = json::array();
  add_process_metadata(events, r);
  for (const Span& s : r.spans) events.push_back(span_event(r, s));
  for (const CounterSample& c :
       r.counters) {  // a bytes track's series is "bytes", another's "value"
    const CounterTrack& t = r.counter_tracks[static_cast<size_t>(c.track)];
    events.push_back({{"ph", "C"},
                      {"name", t.name},
                      {"pid", r.pid},
                      {"tid", c.tid},
                      {"ts", us(c.t_ns - r.origin_ns)},
                      {"args", {{t.bytes ? "bytes" : "value", c.value}}}});
  }
  std::set<int32_t> devices;
  std::set<std::pair<int32_t, int32_t>> streams;
  add_device_events(events, r, devices, streams);
  add_device_metadata(events, devices, streams);
  json trace = {{"schemaVersion", 1},
                {"displayTimeUnit", "ms"},
                {"baseTimeNanoseconds", r.origin_utc_ns},
                {"distributedInfo", {{"backend", r.backend}, {"rank", 0}, {"world_size", 1}}},
                {"traceName", "fusebox " + r.model + " " + r.label},
                {"traceEvents", std::move(events)}};
  if (!r.gpus.empty()) trace["deviceProperties"] = device_properties(r.gpus);
  return trace;
}

void write_chrome_trace(const Recording& r, const std::string& path) {
  json j = chrome_trace(r);  // validates before the file is touched
  write_file_atomically(path, [&](std::ostream& os) {
    os << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  });
}

}  // namespace fusebox::profiler
