#include "profiler/timeline.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/base/sorted.h"
#include "core/base/strings.h"
#include "profiler/counters.h"

namespace fusebox::profiler {

namespace {

// Rows by nesting depth, depths with no spans left out.
std::vector<int32_t> compact_depths(std::vector<int32_t> depths) {
  std::sort(depths.begin(), depths.end());
  depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
  return depths;
}

size_t row_of_depth(const std::vector<int32_t>& depths, int32_t depth) {
  return static_cast<size_t>(std::lower_bound(depths.begin(), depths.end(), depth) -
                             depths.begin());
}

TimelineItemKind item_kind(SpanKind kind) {
  switch (kind) {
    case SpanKind::Stage: return TimelineItemKind::Stage;
    case SpanKind::Run: return TimelineItemKind::Run;
    case SpanKind::Op: return TimelineItemKind::Op;
    case SpanKind::Range: return TimelineItemKind::Range;
    case SpanKind::Worker: return TimelineItemKind::Worker;
  }
  return TimelineItemKind::Op;
}

TimelineItemKind item_kind(exec::ActivityKind kind) {
  switch (kind) {
    case exec::ActivityKind::Kernel: return TimelineItemKind::Kernel;
    case exec::ActivityKind::Memcpy: return TimelineItemKind::Memcpy;
    case exec::ActivityKind::Memset: return TimelineItemKind::Memset;
    case exec::ActivityKind::Runtime: return TimelineItemKind::Runtime;
    case exec::ActivityKind::Sync: return TimelineItemKind::Sync;
  }
  return TimelineItemKind::Kernel;
}

int64_t earliest_ns(const Recording& rec) {
  int64_t base = INT64_MAX;
  for (const Span& s : rec.spans) base = std::min(base, s.start_ns);
  for (const exec::DeviceActivity& a : rec.device) base = std::min(base, a.start_ns);
  return base == INT64_MAX ? 0 : base;
}

class Builder {
 public:
  Builder(const Recording& rec, Timeline& t) : rec_(rec), t_(t) {}

  void span_tracks() {
    add_span_track("NVTX", TrackKind::Nvtx,
                   [](const Span& s) { return s.kind != SpanKind::Op && s.kind != SpanKind::Worker; });
    std::vector<std::pair<int32_t, std::string>> threads = rec_.thread_names;
    for (const Span& s : rec_.spans) {
      const bool named = std::any_of(threads.begin(), threads.end(),
                                     [&](const auto& th) { return th.first == s.tid; });
      if (!named) threads.push_back({s.tid, "thread " + std::to_string(s.tid)});
    }
    for (const auto& [tid, name] : threads)
      add_span_track("CPU " + name, TrackKind::Cpu,
                     [tid](const Span& s) { return s.tid == tid && s.kind != SpanKind::Worker; });
  }

  // One track per thread with Worker spans, in team order, under the CPU threads. A team of one
  // (threads=1: worker 0 is the thread that runs the ops) gets none: its CPU track already is
  // that thread, and one thread is one track.
  void worker_tracks() {
    const std::vector<WorkerUtilisation> workers = worker_utilisation(rec_);
    if (workers.size() == 1 && workers.front().worker == 0) return;
    for (const WorkerUtilisation& w : workers) {
      const size_t before = t_.tracks.size();
      const int32_t tid = w.tid;
      add_span_track(worker_label(w), TrackKind::Worker,
                     [tid](const Span& s) { return s.tid == tid && s.kind == SpanKind::Worker; });
      if (t_.tracks.size() == before) continue;
      TimelineTrack& track = t_.tracks.back();
      track.tid = tid;
      track.worker = w.worker;
      track.utilisation = w.utilisation();
      for (size_t i = 0; i < w.runs.size(); ++i) track.run_utilisation.push_back({w.runs[i], w.per_run[i]});
    }
  }

  // One track per (device, stream), and the API calls per host thread.
  void device_tracks() {
    std::map<std::pair<int64_t, int64_t>, size_t> stream_track;
    std::map<uint32_t, size_t> api_track;
    for (size_t i = 0; i < rec_.device.size(); ++i) {
      const exec::DeviceActivity& a = rec_.device[i];
      const bool api = a.kind == exec::ActivityKind::Runtime;
      size_t track = 0;
      bool fresh = false;
      if (api) {
        const auto [pos, added] = api_track.try_emplace(a.thread_id, t_.tracks.size());
        track = pos->second, fresh = added;
      } else {
        const auto [pos, added] = stream_track.try_emplace({a.device, a.stream}, t_.tracks.size());
        track = pos->second, fresh = added;
      }
      if (fresh) {
        std::string label = api ? "CUDA API " + std::to_string(a.thread_id)
                                : "GPU " + std::to_string(a.device) + " stream " +
                                      std::to_string(a.stream);
        t_.tracks.push_back({std::move(label), api ? TrackKind::CudaApi : TrackKind::GpuStream,
                             std::vector<TimelineRow>(1), api ? -1 : a.device});
      }
      t_.tracks[track].rows[0].items.push_back(
          item(a.start_ns, a.end_ns, i, a.node_index, item_kind(a.kind)));
    }
  }

  // Sorts each row, measures it and the extent, and indexes the op spans per node.
  void index_items() {
    t_.op_items_of_node.assign(rec_.nodes.size(), {});
    t_.worker_items_of_node.assign(rec_.nodes.size(), {});
    t_.extent_t0 = INFINITY;
    t_.extent_t1 = -INFINITY;
    for (size_t t = 0; t < t_.tracks.size(); ++t) {
      for (size_t r = 0; r < t_.tracks[t].rows.size(); ++r) {
        TimelineRow& row = t_.tracks[t].rows[r];
        const auto by_start = [](const TimelineItem& a, const TimelineItem& b) {
          return a.t0 < b.t0;
        };
        stable_sort_unless_sorted(row.items.begin(), row.items.end(), by_start);
        double reach = -INFINITY;  // the latest end so far
        for (size_t i = 0; i < row.items.size(); ++i) {
          const TimelineItem& it = row.items[i];
          row.max_len = std::max(row.max_len, it.t1 - it.t0);
          if (it.t0 < reach) row.disjoint = false;
          reach = std::max(reach, it.t1);
          t_.extent_t0 = std::min(t_.extent_t0, it.t0);
          t_.extent_t1 = std::max(t_.extent_t1, it.t1);
          // Op spans on CPU tracks are what a selection outlines (NVTX holds no ops).
          if (it.kind == TimelineItemKind::Op && it.node >= 0 &&
              static_cast<size_t>(it.node) < t_.op_items_of_node.size())
            t_.op_items_of_node[static_cast<size_t>(it.node)].push_back(
                {static_cast<uint32_t>(t), static_cast<uint32_t>(r), static_cast<uint32_t>(i)});
          if (it.kind == TimelineItemKind::Worker && it.node >= 0 &&
              static_cast<size_t>(it.node) < t_.worker_items_of_node.size())
            t_.worker_items_of_node[static_cast<size_t>(it.node)].push_back(
                {static_cast<uint32_t>(t), static_cast<uint32_t>(r), static_cast<uint32_t>(i)});
        }
      }
    }
    for (auto& refs : t_.worker_items_of_node)
      std::sort(refs.begin(), refs.end(), [&](const TimelineItemRef& a, const TimelineItemRef& b) {
        return t_.item(a).t0 < t_.item(b).t0;
      });
    for (auto& refs : t_.op_items_of_node)
      std::sort(refs.begin(), refs.end(), [&](const TimelineItemRef& a, const TimelineItemRef& b) {
        return t_.item(a).t0 < t_.item(b).t0;
      });
    if (!std::isfinite(t_.extent_t0)) t_.extent_t0 = t_.extent_t1 = 0;
  }

  // Pairs each API call with the GPU work of the same correlation id (0 is "none"): the first
  // call with an id (by track, then time) launched every item carrying it. In launch order.
  void flows() {
    struct Tagged {
      uint32_t id;
      TimelineItemRef ref;
    };
    std::vector<Tagged> calls, targets;
    for (size_t t = 0; t < t_.tracks.size(); ++t) {
      const TimelineTrack& track = t_.tracks[t];
      if (track.kind != TrackKind::CudaApi && track.kind != TrackKind::GpuStream) continue;
      const std::vector<TimelineItem>& items = track.rows[0].items;
      for (size_t i = 0; i < items.size(); ++i) {
        const exec::DeviceActivity& a = rec_.device[static_cast<size_t>(items[i].index)];
        if (a.correlation_id == 0 || a.kind == exec::ActivityKind::Sync) continue;
        const TimelineItemRef ref{static_cast<uint32_t>(t), 0, static_cast<uint32_t>(i)};
        (track.kind == TrackKind::CudaApi ? calls : targets).push_back({a.correlation_id, ref});
      }
    }
    // The targets by id, each id's in track and time order; a call finds its id's by search.
    const auto by_id = [](const Tagged& a, const Tagged& b) { return a.id < b.id; };
    stable_sort_unless_sorted(targets.begin(), targets.end(), by_id);
    std::vector<bool> claimed(targets.size());  // by an id's first target: a call took them
    for (const Tagged& c : calls) {
      auto it = std::lower_bound(targets.begin(), targets.end(), c, by_id);
      if (it == targets.end() || it->id != c.id) continue;
      const auto first = static_cast<size_t>(it - targets.begin());
      if (claimed[first]) continue;  // a later call repeating the id
      claimed[first] = true;
      for (; it != targets.end() && it->id == c.id; ++it) t_.flows.push_back({c.ref, it->ref});
    }
    // One API track gives them in order already; several are merged by launch time.
    const auto by_launch = [&](const TimelineFlow& a, const TimelineFlow& b) {
      return t_.item(a.launch).t0 < t_.item(b.launch).t0;
    };
    stable_sort_unless_sorted(t_.flows.begin(), t_.flows.end(), by_launch);
  }

  void counters() {
    for (const CounterTrack& track : rec_.counter_tracks) {
      TimelineCounter c;
      c.name = track.name;
      c.bytes = track.bytes;
      c.max =
          track.name == kArenaCounter ? std::max(1.0, static_cast<double>(rec_.arena_bytes)) : 0.0;
      t_.counters.push_back(std::move(c));
    }
    for (const CounterSample& s : rec_.counters) {
      TimelineCounter& c = t_.counters[static_cast<size_t>(s.track)];
      c.samples.push_back({rel(s.t_ns), s.value});
      c.max = std::max(c.max, s.value);
    }
    for (TimelineCounter& c : t_.counters) {
      if (c.max <= 0) c.max = 1;
      stable_sort_unless_sorted(c.samples.begin(), c.samples.end(),
                                [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    std::erase_if(t_.counters, [](const TimelineCounter& c) { return c.samples.empty(); });
  }

  void runs() {
    for (const Span& s : rec_.spans)
      if (s.kind == SpanKind::Run) t_.runs.push_back({s.run, rel(s.start_ns), rel(s.end_ns), 0});
    for (RunRange& r : t_.runs)
      for (const Span& s : rec_.spans) r.ops += s.kind == SpanKind::Op && s.run == r.run;
    t_.median_run = median_run_index(t_.runs);
  }

 private:
  double rel(int64_t t) const { return static_cast<double>(t - t_.base_ns); }
  // A bar from absolute times; one that ends before it starts is drawn as an instant.
  TimelineItem item(int64_t start_ns, int64_t end_ns, size_t index, int32_t node,
                    TimelineItemKind kind) const {
    TimelineItem it;
    it.t0 = rel(start_ns);
    it.t1 = std::max(it.t0, rel(end_ns));
    it.index = static_cast<int32_t>(index);
    it.node = node;
    it.kind = kind;
    return it;
  }

  // A track of the spans `keep` accepts, one row per nesting depth.
  template <typename Keep>
  void add_span_track(std::string label, TrackKind kind, Keep keep) {
    std::vector<int32_t> depths;
    for (const Span& s : rec_.spans)
      if (keep(s)) depths.push_back(s.depth);
    if (depths.empty()) return;
    depths = compact_depths(std::move(depths));
    TimelineTrack track{std::move(label), kind, std::vector<TimelineRow>(depths.size())};
    for (size_t i = 0; i < rec_.spans.size(); ++i) {
      const Span& s = rec_.spans[i];
      if (!keep(s)) continue;
      track.rows[row_of_depth(depths, s.depth)].items.push_back(
          item(s.start_ns, s.end_ns, i, s.node, item_kind(s.kind)));
    }
    t_.tracks.push_back(std::move(track));
  }

  const Recording& rec_;
  Timeline& t_;
};

}  // namespace

bool is_device_item(TimelineItemKind kind) {
  return kind == TimelineItemKind::Kernel || kind == TimelineItemKind::Memcpy ||
         kind == TimelineItemKind::Memset || kind == TimelineItemKind::Runtime ||
         kind == TimelineItemKind::Sync;
}

double TimelineTrack::utilisation_of_run(int64_t run) const {
  for (const auto& [r, u] : run_utilisation)
    if (r == run) return u;
  return -1;
}

size_t TimelineTrack::span_count() const {
  size_t n = 0;
  for (const TimelineRow& r : rows) n += r.items.size();
  return n;
}

double TimelineTrack::busy_ns() const {
  std::vector<std::pair<double, double>> v;
  for (const TimelineRow& r : rows)
    for (const TimelineItem& it : r.items) v.push_back({it.t0, it.t1});
  std::sort(v.begin(), v.end());
  double busy = 0, open0 = 0, open1 = -INFINITY;
  for (const auto& [a, b] : v) {
    if (a > open1) {
      if (std::isfinite(open1)) busy += open1 - open0;
      open0 = a, open1 = b;
    } else {
      open1 = std::max(open1, b);
    }
  }
  if (std::isfinite(open1)) busy += open1 - open0;
  return busy;
}

namespace {

bool same(const TimelineItemRef& a, const TimelineItemRef& b) {
  return a.track == b.track && a.row == b.row && a.item == b.item;
}

// The innermost host span (Op or Range) on `tid` around time `t`, searched on that thread's CPU
// track (its rows are nesting depths, deepest last).
std::optional<TimelineItemRef> innermost_span(const Timeline& tl, const Recording& rec, int32_t tid, double t) {
  for (size_t k = 0; k < tl.tracks.size(); ++k) {
    const TimelineTrack& track = tl.tracks[k];
    if (track.kind != TrackKind::Cpu) continue;
    for (size_t r = track.rows.size(); r-- > 0;) {
      const auto& items = track.rows[r].items;
      auto it = std::upper_bound(items.begin(), items.end(), t,
                                 [](double v, const TimelineItem& x) { return v < x.t0; });
      while (it != items.begin()) {
        --it;
        if (t - it->t0 > track.rows[r].max_len) break;
        const Span& s = rec.spans[static_cast<size_t>(it->index)];
        if (s.tid != tid || it->t1 < t) continue;
        if (s.kind == SpanKind::Op || s.kind == SpanKind::Range)
          return TimelineItemRef{static_cast<uint32_t>(k), static_cast<uint32_t>(r),
                                 static_cast<uint32_t>(it - items.begin())};
      }
    }
  }
  return std::nullopt;
}

// The GPU-track item of device record `index`.
std::optional<TimelineItemRef> device_item(const Timeline& tl, size_t index) {
  for (size_t k = 0; k < tl.tracks.size(); ++k) {
    if (tl.tracks[k].kind != TrackKind::GpuStream) continue;
    const auto& items = tl.tracks[k].rows[0].items;
    for (size_t i = 0; i < items.size(); ++i)
      if (static_cast<size_t>(items[i].index) == index)
        return TimelineItemRef{static_cast<uint32_t>(k), 0, static_cast<uint32_t>(i)};
  }
  return std::nullopt;
}

}  // namespace

std::vector<TimelineItemRef> linked_items(const Timeline& tl, const Recording& rec, const TimelineItemRef& ref) {
  std::vector<TimelineItemRef> out;
  const TimelineItem& item = tl.item(ref);
  auto call_thread = [&](const TimelineItemRef& launch) {
    return static_cast<int32_t>(rec.device[static_cast<size_t>(tl.item(launch).index)].thread_id);
  };
  if (item.kind == TimelineItemKind::Op || item.kind == TimelineItemKind::Range) {
    const int32_t tid = rec.spans[static_cast<size_t>(item.index)].tid;
    auto first = std::lower_bound(tl.flows.begin(), tl.flows.end(), item.t0,
                                  [&](const TimelineFlow& f, double t) { return tl.item(f.launch).t0 < t; });
    for (auto f = first; f != tl.flows.end() && tl.item(f->launch).t0 <= item.t1; ++f) {
      if (call_thread(f->launch) != tid) continue;
      out.push_back(f->launch);
      out.push_back(f->target);
    }
    return out;
  }
  if (!is_device_item(item.kind) || item.kind == TimelineItemKind::Sync) return out;
  for (const TimelineFlow& f : tl.flows) {
    if (!same(f.launch, ref) && !same(f.target, ref)) continue;
    out.push_back(same(f.launch, ref) ? f.target : f.launch);
    if (auto span = innermost_span(tl, rec, call_thread(f.launch), tl.item(f.launch).t0)) out.push_back(*span);
    break;
  }
  // Several ranks: a collective is picked on every rank.
  if (item.kind == TimelineItemKind::Kernel && !tl.groups.empty())
    for (size_t other : same_collective(rec, tl.groups, static_cast<size_t>(item.index)))
      if (auto at = device_item(tl, other)) out.push_back(*at);
  return out;
}

std::optional<TimelineItemRef> find_item(const Timeline& tl, const TimelineItem* item) {
  for (size_t k = 0; k < tl.tracks.size(); ++k)
    for (size_t r = 0; r < tl.tracks[k].rows.size(); ++r) {
      const auto& items = tl.tracks[k].rows[r].items;
      if (items.empty() || item < items.data() || item >= items.data() + items.size()) continue;
      return TimelineItemRef{static_cast<uint32_t>(k), static_cast<uint32_t>(r),
                             static_cast<uint32_t>(item - items.data())};
    }
  return std::nullopt;
}

const RunRange* Timeline::find_run(int64_t run) const {
  for (const RunRange& r : runs)
    if (r.run == run) return &r;
  return nullptr;
}

size_t median_run_index(const std::vector<RunRange>& runs) {
  if (runs.empty()) return 0;
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return runs[a].duration() < runs[b].duration();
  });
  return order[(order.size() - 1) / 2];
}

namespace {

Timeline build_from(const Recording& recording, int64_t base_ns) {
  Timeline t;
  t.base_ns = base_ns;
  Builder b(recording, t);
  b.span_tracks();
  b.worker_tracks();
  b.device_tracks();
  b.index_items();
  b.flows();
  b.counters();
  b.runs();
  return t;
}

}  // namespace

Timeline build_timeline(const Recording& recording) {
  return build_from(recording, earliest_ns(recording));
}

void put_gpu_first(Timeline& t) {
  auto order_of = [&](const TimelineTrack& track) {
    switch (track.kind) {
      case TrackKind::GpuStream: return 0;
      case TrackKind::CudaApi: return 1;
      default: return 2;
    }
  };
  std::vector<uint32_t> order(t.tracks.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return order_of(t.tracks[a]) < order_of(t.tracks[b]); });
  std::vector<uint32_t> moved_to(order.size());
  for (uint32_t k = 0; k < order.size(); ++k) moved_to[order[k]] = k;
  std::vector<TimelineTrack> tracks;
  tracks.reserve(order.size());
  for (uint32_t k : order) tracks.push_back(std::move(t.tracks[k]));
  t.tracks = std::move(tracks);
  auto remap = [&](TimelineItemRef& r) { r.track = moved_to[r.track]; };
  for (TimelineFlow& f : t.flows) remap(f.launch), remap(f.target);
  for (auto* index : {&t.op_items_of_node, &t.worker_items_of_node})
    for (auto& refs : *index)
      for (TimelineItemRef& r : refs) remap(r);
}

Timeline build_timeline(const Recording& recording, const std::vector<RankSlice>& slices) {
  if (slices.empty()) return build_timeline(recording);
  Timeline out;
  out.base_ns = earliest_ns(recording);
  out.groups = slices;
  out.extent_t0 = INFINITY;
  out.extent_t1 = -INFINITY;
  for (size_t g = 0; g < slices.size(); ++g) {
    const RankSlice& s = slices[g];
    Timeline part = build_from(slice_recording(recording, s), out.base_ns);
    put_gpu_first(part);
    const auto first_track = static_cast<uint32_t>(out.tracks.size());
    for (TimelineTrack& track : part.tracks) {
      track.group = static_cast<int32_t>(g);
      for (TimelineRow& row : track.rows)
        for (TimelineItem& it : row.items)
          it.index += static_cast<int32_t>(is_device_item(it.kind) ? s.device_begin : s.span_begin);
      out.tracks.push_back(std::move(track));
    }
    for (TimelineFlow f : part.flows) {
      f.launch.track += first_track;
      f.target.track += first_track;
      out.flows.push_back(f);
    }
    for (TimelineCounter& c : part.counters) {  // named for their rank, as its threads are
      c.name = s.label + " " + c.name;
      out.counters.push_back(std::move(c));
    }
    if (!part.tracks.empty()) {
      out.extent_t0 = std::min(out.extent_t0, part.extent_t0);
      out.extent_t1 = std::max(out.extent_t1, part.extent_t1);
    }
  }
  if (!std::isfinite(out.extent_t0)) out.extent_t0 = out.extent_t1 = 0;
  std::sort(out.flows.begin(), out.flows.end(), [&](const TimelineFlow& a, const TimelineFlow& b) {
    return out.item(a.launch).t0 < out.item(b.launch).t0;
  });
  return out;
}

std::string timeline_text(const Timeline& t) {
  std::string out = "timeline: " + std::to_string(t.tracks.size()) + " tracks, " +
                    std::to_string(t.runs.size()) + " runs";
  if (const RunRange* m = t.median())
    out += ", median run " + std::to_string(m->run) + " (" + format_duration_ns(m->duration()) + ")";
  out += ", " + format_duration_ns(t.extent_t1 - t.extent_t0) + " from the first span to the last\n";
  char line[256];
  for (const TimelineTrack& track : t.tracks) {
    std::snprintf(line, sizeof line, "  %-24s %2zu row%s %7zu spans  busy %s",
                  track.label.c_str(), track.rows.size(), track.rows.size() == 1 ? " " : "s",
                  track.span_count(), format_duration_ns(track.busy_ns()).c_str());
    out += line;
    if (track.utilisation >= 0) {
      std::snprintf(line, sizeof line, "  (%.0f%% of the runs' wall time)", 100.0 * track.utilisation);
      out += line;
    }
    out += "\n";
  }
  for (const TimelineCounter& c : t.counters) {
    std::snprintf(line, sizeof line, "  %-24s counter %zu samples, top of scale %s\n",
                  c.name == kArenaCounter ? "arena live" : c.name.c_str(), c.samples.size(),
                  counter_value_text(c.bytes, c.max).c_str());
    out += line;
  }
  if (!t.flows.empty()) out += "  " + std::to_string(t.flows.size()) + " flows from API calls to the GPU work they launched\n";
  if (!t.runs.empty()) out += "runs (from the first span):\n";
  for (size_t i = 0; i < t.runs.size(); ++i) {
    const RunRange& r = t.runs[i];
    std::snprintf(line, sizeof line, "  run %-5lld %12s .. %-12s %10s  %4zu ops%s\n",
                  static_cast<long long>(r.run), format_duration_ns(r.t0).c_str(), format_duration_ns(r.t1).c_str(),
                  format_duration_ns(r.duration()).c_str(), r.ops, i == t.median_run ? "  median" : "");
    out += line;
  }
  return out;
}

RangeStats range_stats(const Timeline& t, const Recording& r, double t0, double t1, size_t top) {
  RangeStats out;
  out.t0 = std::min(t0, t1);
  out.t1 = std::max(t0, t1);
  std::map<std::string, RangeStats::Top> gpu, host;
  // The items of `row` overlapping the range, in start order.
  auto overlapping = [&](const TimelineRow& row, auto&& visit) {
    auto it = std::lower_bound(row.items.begin(), row.items.end(), out.t0 - row.max_len,
                               [](const TimelineItem& x, double v) { return x.t0 < v; });
    for (; it != row.items.end() && it->t0 < out.t1; ++it)
      if (it->t1 > out.t0) visit(*it);
  };
  for (size_t k = 0; k < t.tracks.size(); ++k) {
    const TimelineTrack& track = t.tracks[k];
    RangeStats::Track stat{k, 0, 0};
    for (size_t row = 0; row < track.rows.size(); ++row) {
      double covered_to = out.t0;  // the union of row 0's clipped items, swept in start order
      overlapping(track.rows[row], [&](const TimelineItem& it) {
        ++stat.items;
        const double a = std::max(it.t0, out.t0), b = std::min(it.t1, out.t1);
        if (row == 0 && b > covered_to) {
          stat.busy_ns += b - std::max(a, covered_to);
          covered_to = b;
        }
        const bool device = is_device_item(it.kind);
        if (it.kind == TimelineItemKind::Runtime || it.kind == TimelineItemKind::Sync) return;
        if (!device && it.kind != TimelineItemKind::Op) return;
        const std::string& name =
            device ? r.device[static_cast<size_t>(it.index)].name : r.spans[static_cast<size_t>(it.index)].name;
        RangeStats::Top& n = (device ? gpu : host)[name];
        n.name = name;
        ++n.count;
        n.time_ns += b - a;
      });
    }
    if (stat.items) out.tracks.push_back(stat);
  }
  out.gpu = !gpu.empty();
  for (auto& [name, n] : out.gpu ? gpu : host) out.top.push_back(std::move(n));
  std::stable_sort(
      out.top.begin(), out.top.end(),
      [](const RangeStats::Top& a, const RangeStats::Top& b) { return a.time_ns > b.time_ns; });
  if (out.top.size() > top) out.top.resize(top);
  return out;
}

}  // namespace fusebox::profiler
