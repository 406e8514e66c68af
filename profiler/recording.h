#pragma once
// Recording: what a profiled run or a recorded trace holds, as plain data. Spans on thread tracks
// (stages, runs, ops, NVTX ranges and user annotations, intra-op workers), the graph's node table,
// counter tracks, and the device's activity records (kernels, copies, syncs) with what the trace
// says of its GPUs and collectives. The Recorder (recorder.h) fills one from a Session; the
// importers (trace_import.h) from a kineto or nsys file; the analyses, exporters, the saved form
// and the window read it. This header includes nothing of the runtime (core/exec), so a reader of
// trace files needs none of it: the library it is in, fusebox_trace, links fusebox_base alone
// (profiler/CMakeLists.txt).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/device_activity.h"
#include "core/base/name.h"

namespace fusebox::profiler {

// Stage, Run and Op come from a session. Range is an NVTX range or user annotation of a recorded
// trace (kineto's user_annotation, nsys's NVTX_EVENTS); a recorded trace's host ops (kineto's
// cpu_op) are Op spans that name no node (node = -1). Worker is one intra-op thread's busy span
// inside a parallel region of an op's kernel (exec::WorkerSpan): it names the op that forked the
// region (node, run, and the op's name) and sits on the thread that did the work: a pool thread,
// or the op's own thread (team member 0), where it nests inside the op span.
enum class SpanKind : uint8_t { Stage, Run, Op, Range, Worker };
const char* span_kind_name(SpanKind kind);  // "stage", "run", "op", "range", "worker"

// What the profiler knows about one graph node.
struct NodeInfo {
  std::string name;
  std::string op;
  std::vector<std::string> inputs, outputs;  // tensor names
  std::vector<std::vector<int64_t>> input_shapes, output_shapes;
  double flops = 0;
  double bytes = 0;                   // read + written (ir::node_cost)
  std::vector<int64_t> output_offsets;  // arena byte offsets of the outputs, -1 when not in the arena
  size_t live_bytes = 0;              // arena bytes live at this step (plan)
  // The transcendental functions it evaluates per element ("tanh", "erf", "exp", "sigmoid"),
  // from its op type and attributes (analysis.h: transcendental_math).
  std::vector<std::string> math;
  // It writes a KV cache a generation feeds back to the next step (fusebox generate marks the
  // nodes that make its presents): a phase's "KV writes" on the CPU (phases.h).
  bool kv_cache_write = false;
};

// 48 bytes (80 with a std::string name and the kind first): a recording holds millions.
struct Span {
  Name name;              // stage name, "run <n>", or "<OpType>.<index>(<node name>)" (interned)
  int64_t start_ns = 0;   // absolute, CLOCK_MONOTONIC_RAW
  int64_t end_ns = 0;
  int64_t run = -1;       // run index (runs and ops)
  int32_t tid = 0;
  int32_t node = -1;      // node index (ops)
  int32_t depth = 0;      // nesting depth on its thread, 0 = outermost
  SpanKind kind = SpanKind::Op;
};
static_assert(sizeof(Span) == 48, "a span's size is a budget: see above");

// A counter: a value over time, as the arena's live bytes, a device's allocated memory, a
// generation's KV cache or a queue's depth. Each sample holds from t_ns to the track's next.
struct CounterTrack {
  std::string name;
  bool bytes = true;  // the values count bytes (else they are plain numbers)
};
struct CounterSample {
  int64_t t_ns = 0;
  int32_t tid = 0;
  int32_t track = 0;  // index into Recording::counter_tracks
  double value = 0;
};
inline constexpr const char* kArenaCounter = "arena live bytes";  // the recorder's track

// A GPU the recording ran on, as its trace describes it (kineto's deviceProperties, nsys's
// TARGET_INFO_GPU). Zero where the trace does not say.
struct GpuInfo {
  int32_t device = 0;
  std::string name;  // "NVIDIA A100-SXM4-40GB"
  int32_t sm_count = 0;
  int32_t compute_major = 0, compute_minor = 0;
  uint64_t memory_bytes = 0;
  double memory_bandwidth_bps = 0;  // bytes per second
};

// A collective's arguments as the trace records them with its kernel (kineto, PyTorch 2.1 on:
// "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype").
struct CollectiveArgs {
  size_t activity = 0;     // index of the Kernel record in Recording::device
  std::string collective;  // "allreduce", "allgather", "send"...
  int64_t in_nelems = 0, out_nelems = 0;
  int64_t group_size = 0;
  std::string dtype;  // "Float", "BFloat16"...
};

// A whole recording, self-contained (it can be saved, loaded, exported and compared later).
struct Recording {
  // "fusebox" for a session this program recorded; "kineto" or "nsys" for a trace read from
  // another tool's file (then `model` is the file, and nodes, arena and label are empty).
  std::string source = "fusebox";
  std::string model;
  std::string label;  // "passes=all executor=compiled threads=1 ..." : the configuration
  std::string backend, executor, passes, planner;
  int threads = 1;
  int32_t pid = 0;
  int32_t main_tid = 0;
  std::vector<std::pair<int32_t, std::string>> thread_names;  // tid -> name
  int64_t origin_ns = 0;          // session start on CLOCK_MONOTONIC_RAW; exports count from here
  int64_t origin_utc_ns = 0;      // the same instant on the UTC clock
  size_t arena_bytes = 0;
  size_t node_count = 0;          // graph nodes after passes
  std::vector<NodeInfo> nodes;    // parallel to the session's graph nodes
  std::vector<Span> spans;        // ordered by start time, parents before children
  // Counter tracks, and every sample of them, each track's in time order. A recording of ours
  // has kArenaCounter; a trace has what it records (import_kineto.cpp).
  std::vector<CounterTrack> counter_tracks;
  std::vector<CounterSample> counters;
  std::vector<exec::DeviceActivity> device;  // from Backend::end_recording() or a trace file
  std::vector<GpuInfo> gpus;                 // what the trace says about its GPUs
  std::vector<CollectiveArgs> collectives;   // by activity index; what the trace says of them
  // The process's place in a distributed job (kineto's distributedInfo): -1 / 0 when unknown.
  int32_t rank = -1;
  int32_t world_size = 0;

  nlohmann::json to_json() const;
  static Recording from_json(const nlohmann::json& j);  // throws fusebox::Error on a bad file
  // Saves (atomically) / loads a JSON recording; errors name the path.
  void save(const std::string& path) const;
  static Recording load(const std::string& path);

  int64_t run_count() const;
};

// "<OpType>.<index>(<node name>)", as ONNX Runtime names its op ranges.
std::string op_range_name(const std::string& op, size_t index, const std::string& node_name);
std::string run_range_name(int64_t run);  // "run <n>"

// One thread's share of the recorded runs' intra-op work: its Worker spans' time over the runs'
// wall time (busy / wall), per run and over all of them.
struct WorkerUtilisation {
  int32_t tid = 0;
  std::string name;      // its thread name
  int32_t worker = 0;    // its index in the team: 0 for the thread that runs the ops
  std::vector<int64_t> runs;     // run indices, in start order
  std::vector<double> per_run;   // busy / wall of each of those runs, in [0, 1]
  int64_t busy_ns = 0, wall_ns = 0;  // over all recorded runs
  double utilisation() const { return wall_ns > 0 ? static_cast<double>(busy_ns) / static_cast<double>(wall_ns) : 0.0; }
};
// Every thread with Worker spans, the ops' own thread (worker 0) first, then by team index.
// Empty when the recording has none (a recorded trace, or a backend without workers).
std::vector<WorkerUtilisation> worker_utilisation(const Recording& r);
// "worker 0 (runs the ops) 62%, worker 1 48% busy over 20 recorded runs' wall time"; "" when
// there are no Worker spans.
std::string worker_utilisation_line(const Recording& r);
// "worker 0" or "worker 1": what the trace panel and reports call a thread of the team.
std::string worker_label(const WorkerUtilisation& w);

// Checks the recording's invariants (spans end after they start, children inside parents on
// each thread). Returns "" when they hold, else what is wrong. Exporters refuse bad recordings.
std::string check_recording(const Recording& r);

}  // namespace fusebox::profiler
