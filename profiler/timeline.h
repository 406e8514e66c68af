#pragma once
// The timeline model of a recording (Tracy's Worker/View split: this is the worker's half, the
// trace panel only draws it, and `fusebox profile --timeline` prints it). Plain C++, no ImGui.
//
//   profiler::Timeline t = profiler::build_timeline(recording);
//   t.tracks    NVTX (stages and runs), one per CPU thread (nested spans by depth: the run on
//               top, its ops below), one per intra-op worker thread (its busy spans, each tied to
//               its op, the thread that runs the ops first; labelled "worker <k>", with its
//               utilisation), one per GPU (device, stream), one per host thread's CUDA API
//               calls; each track's rows are its nesting depths, those with no span left out
//   t.counters  each counter track (arena live bytes, a device's memory, a KV cache), its samples
//               sorted by time
//   t.runs      each recorded run's range and op count, by start time; t.median_run indexes it
//   t.flows     each API call tied (by correlation id) to the GPU work it launched
//   t.groups    several ranks in one recording: the tracks of each (TimelineTrack::group)
//
// Times are ns relative to `base_ns` (the earliest span or device activity), as doubles: they
// keep ns precision at that scale and the view divides them anyway. Built from the recording
// and its device activity only, so a recorded GPU trace read into a Recording gets the same model.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/rank_view.h"
#include "profiler/recording.h"

namespace fusebox::profiler {

enum class TimelineItemKind : uint8_t { Stage, Run, Op, Range, Kernel, Memcpy, Memset, Runtime, Sync, Worker };
// Kernel, Memcpy, Memset, Runtime and Sync items index recording.device; the others
// recording.spans.
bool is_device_item(TimelineItemKind kind);

// One bar.
struct TimelineItem {
  double t0 = 0, t1 = 0;
  int32_t index = 0;  // into recording.spans, or recording.device for device kinds
  int32_t node = -1;  // graph node, or -1
  TimelineItemKind kind = TimelineItemKind::Op;
};

struct TimelineRow {
  std::vector<TimelineItem> items;  // sorted by t0
  double max_len = 0;  // longest item: how far before a time window a visible one can start
  // No item starts before an earlier one ends (a stream's kernels, one nesting level's spans):
  // an item ends before the next one starts, so a drawing may jump over a run of them by
  // binary search (the trace panel's level of detail).
  bool disjoint = true;
};

// Worker: one intra-op thread's busy spans (Worker spans), the thread that runs the ops included.
enum class TrackKind : uint8_t { Nvtx, Cpu, GpuStream, CudaApi, Worker };

struct TimelineTrack {
  std::string label;  // "NVTX", "CPU main", "GPU 0 stream 7", "CUDA API 1234"
  TrackKind kind = TrackKind::Nvtx;
  std::vector<TimelineRow> rows;  // by nesting depth (CPU, NVTX); one row for device tracks
  int32_t device = -1;            // GpuStream tracks: the GPU
  // Worker tracks: the thread, its team index, and its utilisation (busy / run wall time) over
  // all recorded runs and per run (run index -> fraction); -1 on other tracks.
  int32_t tid = 0;
  int32_t worker = -1;
  double utilisation = -1;
  std::vector<std::pair<int64_t, double>> run_utilisation{};
  int32_t group = -1;  // index into Timeline::groups (a rank's tracks), -1 when not grouped
  double utilisation_of_run(int64_t run) const;  // -1 when that run is not recorded
  size_t span_count() const;
  double busy_ns() const;  // the union of its items' intervals
};

struct TimelineItemRef {
  uint32_t track = 0, row = 0, item = 0;
};

// A launch and what it launched: a CUDA API call (Runtime item) and the kernel, copy or memset
// with its correlation id. Drawn as a flow line, nsys and Perfetto style.
struct TimelineFlow {
  TimelineItemRef launch, target;
};

struct RunRange {
  int64_t run = 0;
  double t0 = 0, t1 = 0;
  size_t ops = 0;
  double duration() const { return t1 - t0; }
};

// A counter track: its samples, each holding until the next.
struct TimelineCounter {
  std::string name;
  bool bytes = true;
  std::vector<std::pair<double, double>> samples;  // (t, value), sorted by t
  double max = 1;  // the top of its scale: the peak sample (the arena's: at least the plan's size)
};

struct Timeline {
  int64_t base_ns = 0;
  std::vector<TimelineTrack> tracks;
  std::vector<TimelineCounter> counters;           // in the recording's track order
  std::vector<RunRange> runs;                      // by start time
  size_t median_run = 0;                           // index into runs (when there are any)
  double extent_t0 = 0, extent_t1 = 0;             // every item
  std::vector<std::vector<TimelineItemRef>> op_items_of_node;  // per node, by start time
  std::vector<std::vector<TimelineItemRef>> worker_items_of_node;  // its Worker spans, likewise
  std::vector<TimelineFlow> flows;  // by the launch's start time
  std::vector<RankSlice> groups;    // several ranks: each one's slice, its tracks together

  const TimelineItem& item(const TimelineItemRef& ref) const {
    return tracks[ref.track].rows[ref.row].items[ref.item];
  }
  const RunRange* median() const { return runs.empty() ? nullptr : &runs[median_run]; }
  const RunRange* find_run(int64_t run) const;  // null when not recorded
};

Timeline build_timeline(const Recording& recording);

// What lies inside [t0, t1) of a timeline (ns from base_ns), for a range selected on it:
//   tracks  each track with an item overlapping the range: how many, and how much of the range
//           its outermost row covers (the union of those items clipped to it; the rows below
//           nest inside them, so they add nothing);
//   top     the names taking the most time inside the range (each item's time clipped to it,
//           summed per name): the GPU's work (kernels, copies, memsets) when the range holds any,
//           else the host's ops (op spans, inclusive: a parent op's time holds its children's;
//           annotations and runs, which contain them all, left out).
struct RangeStats {
  double t0 = 0, t1 = 0;
  struct Track {
    size_t track = 0;
    size_t items = 0;
    double busy_ns = 0;
  };
  std::vector<Track> tracks;
  struct Top {
    std::string name;
    size_t count = 0;
    double time_ns = 0;
  };
  std::vector<Top> top;   // by time, largest first
  bool gpu = false;       // top is the GPU's work
  double width() const { return t1 - t0; }
};
RangeStats range_stats(const Timeline& timeline, const Recording& recording, double t0, double t1, size_t top = 6);
// A recorded trace's order: GPU streams first, then the API calls, then the host threads, so
// the GPU stays in view above a trace's (often deep) Python-stack and annotation rows.
void put_gpu_first(Timeline& timeline);
// Several ranks merged into one recording (rank_view.h): each rank's tracks built as for its own
// recording, GPU first (put_gpu_first), one group after the other in the slices' order, on one
// time base.
Timeline build_timeline(const Recording& recording, const std::vector<RankSlice>& slices);

// What an item is tied to, for a selection to light up together (by the flows, so by
// correlation id):
//   a host span (Op, Range)  the API calls inside it on its thread and the GPU work they launched;
//   GPU work                 its launch call and the innermost host span around that call;
//   an API call              its GPU work and the innermost host span around it;
//   with ranks (groups), a communication kernel also the same collective on every other rank
//   (rank_view.h's same_collective).
// Others (stages, runs, syncs) have none. `recording` is the one `timeline` was built from.
std::vector<TimelineItemRef> linked_items(const Timeline& timeline, const Recording& recording,
                                          const TimelineItemRef& ref);
// Where `item` (a pointer into the timeline's rows) sits, or nullopt when it is not one of them.
std::optional<TimelineItemRef> find_item(const Timeline& timeline, const TimelineItem* item);

// The trace's default run, by one rule: the recorded run whose duration is nearest the recorded
// runs' median duration (Breakdown::run_ns, the op table's "recorded run" figure), so the run the
// trace opens on is the one the op table's figures describe: the middle run, and with an even
// count the shorter of the middle two, whose duration Breakdown::run_ns is. Equal durations keep
// start-time order. 0 when empty.
size_t median_run_index(const std::vector<RunRange>& runs);

// One line per track (spans, busy time), the counter, then the run ranges with the median marked:
//   timeline: 5 tracks, 20 runs, median run 7 (1.23 ms)
//     NVTX                 2 rows     21 spans  busy 25.1 ms
//     ...
std::string timeline_text(const Timeline& timeline);

}  // namespace fusebox::profiler
