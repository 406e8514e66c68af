#include "profiler/rank_view.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "core/base/error.h"
#include "profiler/communication.h"

namespace fusebox::profiler {

using exec::ActivityKind;
using exec::DeviceActivity;

namespace {

// Numbers a rank keeps unless an earlier rank took them; then the next free one.
template <typename Id>
class Renumber {
 public:
  void start_rank() { mine_.clear(); }
  Id operator()(Id id) {
    if (auto it = mine_.find(id); it != mine_.end()) return it->second;
    Id out = id;
    while (taken_.count(out)) ++out;
    taken_.insert(out);
    mine_.emplace(id, out);
    return out;
  }

 private:
  std::set<Id> taken_;
  std::map<Id, Id> mine_;  // this rank's
};

}  // namespace

MergedRanks merge_ranks(std::vector<Recording>&& ranks) {
  MergedRanks m;
  Recording& out = m.recording;
  if (!ranks.empty()) out.source = ranks.front().source;
  out.model = std::to_string(ranks.size()) + " ranks";
  Renumber<int32_t> devices, tids;
  uint64_t corr_base = 0;
  for (Recording& r : ranks) {
    devices.start_rank();
    tids.start_rank();
    RankSlice s;
    s.rank = r.rank;
    s.label = "rank " + std::to_string(r.rank);
    out.world_size = std::max(out.world_size, r.world_size);
    uint64_t corr_max = 0;
    for (const DeviceActivity& a : r.device) corr_max = std::max<uint64_t>(corr_max, a.correlation_id);
    if (corr_base + corr_max > std::numeric_limits<uint32_t>::max())
      throw Error("rank " + std::to_string(r.rank) + " (" + r.model + "): the ranks hold more than " +
                  std::to_string(std::numeric_limits<uint32_t>::max()) +
                  " launches together, more than one window can tie to their kernels");
    s.span_begin = out.spans.size();
    for (Span& sp : r.spans) {
      sp.tid = tids(sp.tid);
      out.spans.push_back(std::move(sp));
    }
    s.span_end = out.spans.size();
    s.device_begin = out.device.size();
    for (DeviceActivity& a : r.device) {
      if (a.kind == ActivityKind::Runtime || a.kind == ActivityKind::Sync)
        a.thread_id = static_cast<uint32_t>(tids(static_cast<int32_t>(a.thread_id)));
      else
        a.device = devices(a.device);
      if (a.correlation_id != 0) a.correlation_id = static_cast<uint32_t>(a.correlation_id + corr_base);
      out.device.push_back(std::move(a));
    }
    s.device_end = out.device.size();
    s.counter_begin = out.counters.size();
    const auto first_track = static_cast<int32_t>(out.counter_tracks.size());
    for (CounterTrack t : r.counter_tracks) {
      t.name = s.label + " " + t.name;
      out.counter_tracks.push_back(std::move(t));
    }
    for (CounterSample c : r.counters) {
      c.tid = tids(c.tid);
      c.track += first_track;
      out.counters.push_back(c);
    }
    s.counter_end = out.counters.size();
    for (auto& [tid, name] : r.thread_names) out.thread_names.push_back({tids(tid), s.label + " " + name});
    for (GpuInfo g : r.gpus) {
      g.device = devices(g.device);
      out.gpus.push_back(std::move(g));
    }
    for (CollectiveArgs c : r.collectives) {
      c.activity += s.device_begin;
      out.collectives.push_back(std::move(c));
    }
    corr_base += corr_max;
    m.slices.push_back(std::move(s));
    r = Recording{};  // its memory goes now, not when the caller's vector does
  }
  return m;
}

Recording slice_recording(const Recording& merged, const RankSlice& s) {
  Recording part;
  part.source = merged.source;
  part.model = merged.model;
  part.rank = s.rank;
  part.world_size = merged.world_size;
  part.spans.assign(merged.spans.begin() + static_cast<std::ptrdiff_t>(s.span_begin),
                    merged.spans.begin() + static_cast<std::ptrdiff_t>(s.span_end));
  part.device.assign(merged.device.begin() + static_cast<std::ptrdiff_t>(s.device_begin),
                     merged.device.begin() + static_cast<std::ptrdiff_t>(s.device_end));
  std::set<int32_t> tids, devices;
  for (const Span& x : part.spans) tids.insert(x.tid);
  for (const DeviceActivity& a : part.device) devices.insert(a.device);
  for (const auto& th : merged.thread_names)
    if (tids.count(th.first)) part.thread_names.push_back(th);
  for (const GpuInfo& g : merged.gpus)
    if (devices.count(g.device)) part.gpus.push_back(g);
  for (CollectiveArgs c : merged.collectives)
    if (c.activity >= s.device_begin && c.activity < s.device_end) {
      c.activity -= s.device_begin;
      part.collectives.push_back(std::move(c));
    }
  std::map<int32_t, int32_t> tracks;  // the merged track -> the part's, its rank's name again
  const std::string prefix = s.label + " ";
  for (size_t i = s.counter_begin; i < s.counter_end && i < merged.counters.size(); ++i) {
    CounterSample c = merged.counters[i];
    auto [it, fresh] = tracks.emplace(c.track, static_cast<int32_t>(part.counter_tracks.size()));
    if (fresh) {
      CounterTrack t = merged.counter_tracks[static_cast<size_t>(c.track)];
      if (t.name.starts_with(prefix)) t.name.erase(0, prefix.size());
      part.counter_tracks.push_back(std::move(t));
    }
    c.track = it->second;
    part.counters.push_back(c);
  }
  return part;
}

std::vector<size_t> same_collective(const Recording& merged, const std::vector<RankSlice>& slices,
                                    size_t activity) {
  const std::vector<DeviceActivity>& dev = merged.device;
  if (activity >= dev.size() || dev[activity].kind != ActivityKind::Kernel ||
      !is_communication_kernel(dev[activity].name))
    return {};
  const std::string& name = dev[activity].name;
  // The k-th kernel of that name in start order within [begin, end); ties by record order.
  auto launches = [&](size_t begin, size_t end) {
    std::vector<size_t> v;
    for (size_t i = begin; i < end; ++i)
      if (dev[i].kind == ActivityKind::Kernel && dev[i].name == name) v.push_back(i);
    std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) { return dev[a].start_ns < dev[b].start_ns; });
    return v;
  };
  const RankSlice* own = nullptr;
  for (const RankSlice& s : slices)
    if (activity >= s.device_begin && activity < s.device_end) own = &s;
  if (!own) return {};
  const std::vector<size_t> mine = launches(own->device_begin, own->device_end);
  const size_t k = static_cast<size_t>(std::find(mine.begin(), mine.end(), activity) - mine.begin());
  std::vector<size_t> out;
  for (const RankSlice& s : slices) {
    if (&s == own) continue;
    const std::vector<size_t> theirs = launches(s.device_begin, s.device_end);
    if (k < theirs.size()) out.push_back(theirs[k]);
  }
  return out;
}

}  // namespace fusebox::profiler
