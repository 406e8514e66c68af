#include "profiler/gpu_analysis.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <span>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "core/base/checked.h"
#include "core/base/sorted.h"
#include "core/base/strings.h"
#include "profiler/correlation.h"
#include "profiler/intervals.h"

namespace fusebox::profiler {

using exec::ActivityKind;
using exec::DeviceActivity;

const char* idle_cause_name(IdleCause c) {
  switch (c) {
    case IdleCause::HostBound:
      return "host_bound";
    case IdleCause::Sync:
      return "sync";
    case IdleCause::CopyWait:
      return "copy_wait";
    case IdleCause::Other:
      return "other";
  }
  return "other";
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}


std::string fmt_bytes(double b) {
  if (b < 1024) return fmt("%.0f B", b);
  if (b < 1024.0 * 1024) return fmt("%.1f KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return fmt("%.1f MiB", b / (1024.0 * 1024));
  return fmt("%.2f GiB", b / (1024.0 * 1024 * 1024));
}

bool is_work(const DeviceActivity& a) {
  return a.kind == ActivityKind::Kernel || a.kind == ActivityKind::Memcpy ||
         a.kind == ActivityKind::Memset;
}
int64_t dur(const DeviceActivity& a) {
  return std::max<int64_t>(0, a.end_ns - a.start_ns);
}

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}
bool is_sync_call(const std::string& n) {
  return contains(n, "Synchronize") || (contains(n, "Memcpy") && !contains(n, "Async"));
}
bool is_sync_memcpy_call(const std::string& n) {
  return contains(n, "Memcpy") && !contains(n, "Async");
}
bool is_async_memcpy_call(const std::string& n) {
  return contains(n, "Memcpy") && contains(n, "Async");
}

DelayStats delay_stats(std::vector<double> v) {
  DelayStats d;
  d.count = static_cast<int64_t>(v.size());
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  d.median_ns = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  d.p90_ns = v[std::min(n - 1, static_cast<size_t>(0.9 * static_cast<double>(n - 1) + 0.5))];
  d.max_ns = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  d.mean_ns = sum / static_cast<double>(n);
  return d;
}

// Innermost Op/Range span of a thread containing a time, through parent links.
class LauncherIndex {
 public:
  explicit LauncherIndex(const Recording& r) {
    for (const Span& s : r.spans)
      if (s.kind == SpanKind::Op || s.kind == SpanKind::Range) by_tid_[s.tid].push_back({&s, -1});
    for (auto& [tid, v] : by_tid_) {
      std::stable_sort(v.begin(), v.end(), [](const Item& a, const Item& b) {
        return a.s->start_ns != b.s->start_ns ? a.s->start_ns < b.s->start_ns
                                              : a.s->end_ns > b.s->end_ns;
      });
      std::vector<int64_t> stack;
      for (size_t i = 0; i < v.size(); ++i) {
        while (!stack.empty() && v[static_cast<size_t>(stack.back())].s->end_ns <= v[i].s->start_ns)
          stack.pop_back();
        v[i].parent = stack.empty() ? -1 : stack.back();
        stack.push_back(static_cast<int64_t>(i));
      }
    }
  }
  const Span* at(int32_t tid, int64_t t) const {
    const auto f = by_tid_.find(tid);
    if (f == by_tid_.end()) return nullptr;
    const auto& v = f->second;
    auto it = std::upper_bound(v.begin(), v.end(), t,
                               [](int64_t when, const Item& x) { return when < x.s->start_ns; });
    if (it == v.begin()) return nullptr;
    int64_t i = static_cast<int64_t>(it - v.begin()) - 1;
    for (int guard = 0; i >= 0 && guard < 10000; ++guard) {
      const Span* s = v[static_cast<size_t>(i)].s;
      if (s->start_ns <= t && t <= s->end_ns) return s;
      i = v[static_cast<size_t>(i)].parent;
    }
    return nullptr;
  }

 private:
  struct Item {
    const Span* s;
    int64_t parent;
  };
  std::unordered_map<int32_t, std::vector<Item>> by_tid_;
};

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Whether ids[0..k) is a shorter sequence repeated (has a period p < k dividing k).
bool periodic(const uint32_t* ids, size_t k) {
  for (size_t p = 1; p < k; ++p) {
    if (k % p) continue;
    bool same = true;
    for (size_t i = p; i < k && same; ++i) same = ids[i] == ids[i - p];
    if (same) return true;
  }
  return false;
}

struct Launch {
  const DeviceActivity* call;
  const DeviceActivity* kernel;
};

// The best graph candidate of one thread's launches (in call order), if any.
bool best_sequence(const std::vector<Launch>& ls, const GpuAnalysisOptions& o,
                   GraphCandidate& out) {
  const size_t n = ls.size();
  if (n < o.min_sequence || o.min_sequence == 0) return false;
  std::unordered_map<const std::string*, uint32_t> name_id;  // by interned text
  std::vector<uint32_t> ids(n);
  for (size_t i = 0; i < n; ++i)
    ids[i] = name_id.emplace(&ls[i].kernel->name.str(), static_cast<uint32_t>(name_id.size()))
                 .first->second;
  // Prefix sums of the calls' and kernels' times: a window's totals in two subtractions.
  std::vector<int64_t> call_sum(n + 1, 0), kernel_sum(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    call_sum[i + 1] = call_sum[i] + dur(*ls[i].call);
    kernel_sum[i + 1] = kernel_sum[i] + dur(*ls[i].kernel);
  }
  // breaks[i] = number of non-back-to-back steps among steps 0..i-1 (step j: launch j -> j+1).
  std::vector<int64_t> breaks(n, 0);
  for (size_t i = 1; i < n; ++i)
    breaks[i] = breaks[i - 1] +
                (ls[i].call->start_ns - ls[i - 1].call->end_ns > o.max_launch_gap_ns ? 1 : 0);
  struct Entry {
    size_t first = 0;
    int64_t reps = 0;
    size_t next_free = 0;
    int64_t launch_ns = 0, kernel_ns = 0, calls = 0;
  };
  bool found = false;
  size_t best_k = 0, best_first = 0;
  Entry best;
  auto better = [&](const Entry& e, size_t k) {
    if (!found) return true;
    if (e.reps != best.reps) return e.reps > best.reps;
    if (k != best_k) return k > best_k;
    return e.launch_ns > best.launch_ns;
  };
  // hash[i]: the window of length k starting at i, its names hashed in order; one more name
  // mixed in per k.
  std::vector<uint64_t> hash(n, 0);
  for (size_t k = 1; k <= std::min(o.max_sequence, n); ++k) {
    for (size_t i = 0; i + k <= n; ++i)
      hash[i] = mix(hash[i] ^ (static_cast<uint64_t>(ids[i + k - 1]) + ((k - 1) << 40)));
    if (k < o.min_sequence) continue;
    std::unordered_map<uint64_t, Entry> seen;
    for (size_t i = 0; i + k <= n; ++i) {
      if (breaks[i + k - 1] - breaks[i] != 0) continue;  // not back to back
      auto [it, fresh] = seen.try_emplace(hash[i]);
      Entry& e = it->second;
      if (fresh) e.first = i;
      if (i < e.next_free && !fresh) continue;
      e.reps += 1;
      e.next_free = i + k;
      e.launch_ns += call_sum[i + k] - call_sum[i];
      e.kernel_ns += kernel_sum[i + k] - kernel_sum[i];
      e.calls += static_cast<int64_t>(k);
    }
    for (const auto& [h, e] : seen) {
      if (e.reps < o.min_repeats || periodic(&ids[e.first], k)) continue;
      if (better(e, k) || (found && e.reps == best.reps && k == best_k &&
                           e.launch_ns == best.launch_ns && e.first < best_first)) {
        found = true;
        best = e;
        best_k = k;
        best_first = e.first;
      }
    }
  }
  if (!found) return false;
  out.thread = static_cast<int32_t>(ls[best_first].call->thread_id);
  out.kernels.clear();
  for (size_t j = 0; j < best_k; ++j) out.kernels.push_back(ls[best_first + j].kernel->name);
  out.repetitions = best.reps;
  out.launch_ns = best.launch_ns;
  out.kernel_ns = best.kernel_ns;
  const double mean_call =
      best.calls ? static_cast<double>(best.launch_ns) / static_cast<double>(best.calls) : 0;
  out.saving_ns =
      best.launch_ns - static_cast<int64_t>(static_cast<double>(best.reps) * mean_call + 0.5);
  return true;
}

// Kernel groups by their key's interned text (a pointer: one per distinct key).
using Groups = std::unordered_map<const std::string*, KernelGroup>;

std::vector<KernelGroup> finish_groups(Groups& m, int64_t kernel_total) {
  std::vector<KernelGroup> v;
  v.reserve(m.size());
  for (auto& [k, g] : m) {
    g.mean_ns = g.count ? static_cast<double>(g.total_ns) / static_cast<double>(g.count) : 0;
    g.share =
        kernel_total > 0 ? static_cast<double>(g.total_ns) / static_cast<double>(kernel_total) : 0;
    v.push_back(std::move(g));
  }
  std::sort(v.begin(), v.end(), [](const KernelGroup& a, const KernelGroup& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.key < b.key;
  });
  return v;
}

void add_to_group(Groups& m, const Name& key, int64_t d) {
  auto [it, fresh] = m.try_emplace(&key.str());
  KernelGroup& g = it->second;
  if (fresh) {
    g.key = key.str();
    g.min_ns = g.max_ns = d;
  }
  g.count += 1;
  g.total_ns += d;
  g.min_ns = std::min(g.min_ns, d);
  g.max_ns = std::max(g.max_ns, d);
}

std::string pct(double f) {
  return fmt("%.0f%%", 100 * f);
}

// Demangled kernel names run to hundreds of characters: at most 40 in a sentence.
std::string short_name(const std::string& n) {
  return n.size() > 40 ? n.substr(0, 37) + "..." : n;
}
std::string sequence_text(const std::vector<std::string>& names) {
  std::string seq;
  for (size_t i = 0; i < names.size(); ++i) seq += (i ? ", " : "") + short_name(names[i]);
  return seq;
}

using Activities = std::vector<DeviceActivity>;
using WorkItems = std::vector<const DeviceActivity*>;

// Runtime calls by correlation id, and the host-wide sync / copy call indexes.
struct HostCalls {
  explicit HostCalls(const Activities& dev) : calls(dev) {}
  CorrelationIndex calls;
  CoverIndex async_copy_calls;
  std::vector<const DeviceActivity*> sync_calls, sync_recs;
  int64_t sync_memcpy_calls = 0, sync_memcpy_ns = 0, sync_api_calls = 0, sync_api_ns = 0;
  int64_t sync_record_count = 0, sync_record_ns = 0;
  int64_t hip_calls = 0, cuda_calls = 0;  // runtime calls named hip* and cu*

  // The runtime call that launched x, or nullptr.
  const DeviceActivity* launch_of(const DeviceActivity& x) const { return calls.launch_of(x); }
};

HostCalls index_host_calls(const Activities& dev) {
  HostCalls h(dev);
  for (const DeviceActivity& x : dev) {
    if (x.kind == ActivityKind::Runtime) {
      h.hip_calls += x.name.rfind("hip", 0) == 0;
      h.cuda_calls += x.name.rfind("cu", 0) == 0;
      if (is_sync_call(x.name)) h.sync_calls.push_back(&x);
      if (is_async_memcpy_call(x.name)) h.async_copy_calls.add(x.start_ns, x.end_ns);
      if (is_sync_memcpy_call(x.name)) {
        h.sync_memcpy_calls += 1;
        h.sync_memcpy_ns += dur(x);
      } else if (contains(x.name, "Synchronize")) {
        h.sync_api_calls += 1;
        h.sync_api_ns += dur(x);
      }
    } else if (x.kind == ActivityKind::Sync) {
      h.sync_recs.push_back(&x);
      h.sync_record_count += 1;
      h.sync_record_ns += dur(x);
    }
  }
  h.async_copy_calls.build();
  return h;
}

// Each device's GPU work, in start order.
std::map<int32_t, WorkItems> work_by_device(const Activities& dev) {
  std::map<int32_t, WorkItems> work;
  for (const DeviceActivity& x : dev)
    if (is_work(x)) work[x.device].push_back(&x);
  const auto by_start = [](const DeviceActivity* x, const DeviceActivity* y) {
    return x->start_ns != y->start_ns ? x->start_ns < y->start_ns : x->end_ns < y->end_ns;
  };
  for (auto& [d, items] : work) sort_unless_sorted(items.begin(), items.end(), by_start);
  return work;
}

// The window, the per-kind counts and times, and the streams of a device's work.
void add_work_totals(DeviceSplit& s, const WorkItems& items) {
  std::vector<int32_t> streams;
  s.window_start_ns = items.front()->start_ns;
  s.window_end_ns = items.front()->start_ns;
  for (const DeviceActivity* x : items) {
    s.window_end_ns = std::max(s.window_end_ns, x->end_ns);
    streams.push_back(x->stream);
    switch (x->kind) {
      case ActivityKind::Kernel:
        s.kernel_count += 1, s.kernel_ns += dur(*x);
        break;
      case ActivityKind::Memcpy:
        s.memcpy_count += 1, s.memcpy_ns += dur(*x);
        s.memcpy_bytes = saturating_add(s.memcpy_bytes, x->bytes);  // sizes from a file: no wrap
        break;
      case ActivityKind::Memset:
        s.memset_count += 1, s.memset_ns += dur(*x);
        s.memset_bytes = saturating_add(s.memset_bytes, x->bytes);
        break;
      default:
        break;
    }
  }
  std::sort(streams.begin(), streams.end());
  s.streams = std::unique(streams.begin(), streams.end()) - streams.begin();
  s.window_ns = s.window_end_ns - s.window_start_ns;
}

// The host held in a sync: this device's Sync records and every synchronising call.
CoverIndex host_held_in_sync(const HostCalls& h, int32_t d) {
  CoverIndex held;
  for (const DeviceActivity* x : h.sync_calls) held.add(x->start_ns, x->end_ns);
  for (const DeviceActivity* x : h.sync_recs)
    if (x->device == d) held.add(x->start_ns, x->end_ns);
  held.build();
  return held;
}

// The launch of the item that ends a gap (any of those starting where items[i] starts with a
// launch).
const DeviceActivity* gap_end_launch(const WorkItems& items, size_t i, const HostCalls& h) {
  const int64_t ge = items[i]->start_ns;
  const DeviceActivity* launch = nullptr;
  for (size_t j = i; j < items.size() && items[j]->start_ns == ge && !launch; ++j)
    launch = h.launch_of(*items[j]);
  return launch;
}

// Each cause's share of the gap [gs, ge); the largest wins (ties: sync, copy_wait, host_bound).
IdleCause gap_cause(int64_t gs, int64_t ge, const DeviceActivity* launch, const CoverIndex& held,
                    const CoverIndex& async_copy_calls) {
  const int64_t sync_ov = held.covered(gs, ge);
  const int64_t copy_ov = async_copy_calls.covered(gs, ge);
  const int64_t host_ov =
      launch && launch->start_ns > gs ? std::min(launch->start_ns, ge) - gs : 0;
  if (sync_ov > 0 && sync_ov >= copy_ov && sync_ov >= host_ov) return IdleCause::Sync;
  if (copy_ov > 0 && copy_ov >= host_ov) return IdleCause::CopyWait;
  if (host_ov > 0) return IdleCause::HostBound;
  return IdleCause::Other;
}

void add_idle_by_cause(DeviceSplit& s, const IdleGap& g) {
  switch (g.cause) {
    case IdleCause::HostBound:
      s.idle_host_bound_ns += g.duration_ns;
      break;
    case IdleCause::Sync:
      s.idle_sync_ns += g.duration_ns;
      break;
    case IdleCause::CopyWait:
      s.idle_copy_wait_ns += g.duration_ns;
      break;
    case IdleCause::Other:
      s.idle_other_ns += g.duration_ns;
      break;
  }
}

// Union and gaps: walk in start order; a gap opens when the next item starts after the current
// union's end. Adds the busy time and each gap's idle time by cause to s; returns the gaps in
// time order.
std::vector<IdleGap> walk_gaps(DeviceSplit& s, const WorkItems& items, const HostCalls& h) {
  const CoverIndex held = host_held_in_sync(h, s.device);
  std::vector<IdleGap> gaps;
  int64_t cur_s = items.front()->start_ns,
          cur_e = std::max(items.front()->start_ns, items.front()->end_ns);
  for (size_t i = 1; i <= items.size(); ++i) {
    if (i < items.size() && items[i]->start_ns <= cur_e) {
      cur_e = std::max(cur_e, items[i]->end_ns);
      continue;
    }
    s.busy_ns += cur_e - cur_s;
    if (i == items.size()) break;
    IdleGap g;
    g.device = s.device;
    g.start_ns = cur_e;
    g.duration_ns = items[i]->start_ns - cur_e;
    g.cause = gap_cause(g.start_ns, items[i]->start_ns, gap_end_launch(items, i, h), held,
                        h.async_copy_calls);
    add_idle_by_cause(s, g);
    gaps.push_back(std::move(g));
    cur_s = items[i]->start_ns;
    cur_e = std::max(items[i]->start_ns, items[i]->end_ns);
  }
  return gaps;
}

// Keeps the `keep` longest gaps, longest first.
void keep_longest(std::vector<IdleGap>& gaps, size_t top) {
  const size_t keep = std::min(top, gaps.size());
  std::partial_sort(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(keep), gaps.end(),
                    [](const IdleGap& x, const IdleGap& y) {
                      return x.duration_ns != y.duration_ns ? x.duration_ns > y.duration_ns
                                                            : x.start_ns < y.start_ns;
                    });
  gaps.resize(keep);
}

struct HostItem {
  const std::string* name;
  int64_t s0, e0;
  int64_t tid;
  bool span;
};

// Host spans and API calls (and device d's Sync records) overlapping [gs, ge): per thread by
// start, longer (outer) first, API calls after spans of the same extent: items nest, so a span
// holds another exactly when the next one starts inside it.
std::vector<HostItem> host_items_during(const Recording& r, int32_t d, int64_t gs, int64_t ge) {
  std::vector<HostItem> items;
  for (const Span& sp : r.spans)
    if ((sp.kind == SpanKind::Op || sp.kind == SpanKind::Range) && sp.end_ns > gs &&
        sp.start_ns < ge)
      items.push_back({&sp.name.str(), sp.start_ns, sp.end_ns, sp.tid, true});
  for (const DeviceActivity& x : r.device)
    if ((x.kind == ActivityKind::Runtime || (x.kind == ActivityKind::Sync && x.device == d)) &&
        x.end_ns > gs && x.start_ns < ge)
      items.push_back(
          {&x.name.str(), x.start_ns, x.end_ns, static_cast<int64_t>(x.thread_id), false});
  std::stable_sort(items.begin(), items.end(), [](const HostItem& x, const HostItem& y) {
    if (x.tid != y.tid) return x.tid < y.tid;
    if (x.s0 != y.s0) return x.s0 < y.s0;
    if (x.e0 != y.e0) return x.e0 > y.e0;
    return x.span && !y.span;
  });
  return items;
}


// The host activity during a listed gap on device d: what the host was doing, as specific as the
// trace says: a host span that holds another span or an API call overlapping the gap on its
// thread is left out for them (the outermost ranges cover every gap and would crowd out the
// cudaMalloc inside). Per name, the union of its items' overlaps (nested spans of one name count
// once); the top_host largest.
void describe_host_activity(IdleGap& g, const Recording& r, int32_t d, size_t top_host) {
  const int64_t gs = g.start_ns, ge = g.start_ns + g.duration_ns;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> by_name;
  const std::vector<HostItem> items = host_items_during(r, d, gs, ge);
  for (size_t i = 0; i < items.size(); ++i) {
    const HostItem& a = items[i];
    const bool outer =
        a.span && i + 1 < items.size() && items[i + 1].tid == a.tid && items[i + 1].s0 < a.e0;
    if (outer) continue;
    const int64_t a0 = std::max(a.s0, gs), a1 = std::min(a.e0, ge);
    if (a1 > a0) by_name[*a.name].push_back({a0, a1});
  }
  for (auto& [name, iv] : by_name) g.host.push_back({name, union_length(iv)});
  std::sort(g.host.begin(), g.host.end(), [](const HostOverlap& x, const HostOverlap& y) {
    return x.overlap_ns != y.overlap_ns ? x.overlap_ns > y.overlap_ns : x.name < y.name;
  });
  if (g.host.size() > top_host) g.host.resize(top_host);
}

// Per device: the split, its gaps and their causes, the longest gaps with the host activity
// during them; every gap longer than the threshold goes to long_gaps (device, then time order).
void split_devices(GpuAnalysis& a, const Recording& r, const HostCalls& h,
                   const GpuAnalysisOptions& o, std::vector<IdleGap>& long_gaps) {
  const std::map<int32_t, WorkItems> work = work_by_device(r.device);
  std::map<int32_t, DeviceSplit> splits;
  for (const DeviceActivity* x : h.sync_recs) {
    if (!work.count(x->device)) continue;
    DeviceSplit& s = splits[x->device];
    s.sync_count += 1;
    s.sync_ns += dur(*x);
  }
  for (const auto& [d, items] : work) {
    DeviceSplit& s = splits[d];
    s.device = d;
    add_work_totals(s, items);
    std::vector<IdleGap> gaps = walk_gaps(s, items, h);
    s.idle_ns = s.window_ns - s.busy_ns;
    s.gap_count = static_cast<int64_t>(gaps.size());
    for (const IdleGap& g : gaps)
      if (g.duration_ns > o.gap_threshold_ns) long_gaps.push_back(g);
    keep_longest(gaps, o.top_gaps);
    for (IdleGap& g : gaps) describe_host_activity(g, r, d, o.top_host);
    s.longest_gaps = std::move(gaps);
    WorkItems kernels;
    for (const DeviceActivity* x : items)
      if (x->kind == ActivityKind::Kernel) kernels.push_back(x);
    s.comm = comm_split(kernels);
  }
  for (auto& [d, s] : splits)
    if (work.count(d)) a.devices.push_back(std::move(s));
  a.has_gpu = !a.devices.empty();
  for (const DeviceSplit& s : a.devices) {
    a.comm.kernel_count += s.comm.kernel_count, a.comm.kernel_ns += s.comm.kernel_ns;
    a.comm.busy_ns += s.comm.busy_ns, a.comm.compute_busy_ns += s.comm.compute_busy_ns;
    a.comm.overlap_ns += s.comm.overlap_ns, a.comm.exposed_ns += s.comm.exposed_ns;
    a.kernel_count += s.kernel_count, a.kernel_ns += s.kernel_ns;
    a.memcpy_count += s.memcpy_count, a.memcpy_ns += s.memcpy_ns;
    a.memcpy_bytes = saturating_add(a.memcpy_bytes, s.memcpy_bytes);
    a.memset_count += s.memset_count, a.memset_ns += s.memset_ns;
    a.memset_bytes = saturating_add(a.memset_bytes, s.memset_bytes);
  }
}

bool is_graph_launch(const std::string& n) {
  return contains(n, "GraphLaunch");
}
// cudaLaunchKernel(ExC), cuLaunchKernel(Ex), cudaLaunchCooperativeKernel, hipLaunchKernel,
// hipModuleLaunchKernel, hipExtModuleLaunchKernel...
bool is_kernel_launch_call(const std::string& n) {
  return contains(n, "LaunchKernel") || contains(n, "LaunchCooperativeKernel");
}

// A launch call and the kernels it started (in record order): a view into one flat array shared
// by every call, as a trace holds millions of calls of one kernel each (a vector apiece cost 64
// bytes a call).
struct CallKernels {
  const DeviceActivity* call = nullptr;
  std::span<const DeviceActivity* const> kernels;
  int64_t first_start() const {
    int64_t t = kernels.front()->start_ns;
    for (const DeviceActivity* k : kernels) t = std::min(t, k->start_ns);
    return t;
  }
  int64_t last_end() const {
    int64_t t = kernels.front()->end_ns;
    for (const DeviceActivity* k : kernels) t = std::max(t, k->end_ns);
    return t;
  }
  int64_t kernel_ns() const {
    int64_t t = 0;
    for (const DeviceActivity* k : kernels) t += dur(*k);
    return t;
  }
};

// A replay's kernels: its GPU time and span.
void add_replay(GraphReplays& g, const CallKernels& c, std::vector<double>& per_replay,
                std::vector<double>& spans) {
  g.replays += 1;
  g.kernels += static_cast<int64_t>(c.kernels.size());
  g.kernel_ns += c.kernel_ns();
  g.launch_call_ns += dur(*c.call);
  per_replay.push_back(static_cast<double>(c.kernels.size()));
  spans.push_back(static_cast<double>(c.last_end() - c.first_start()));
}

// What count_captures asks of a runtime call's name (bits), worked out once per name.
enum CaptureRole : uint8_t {
  kBeginCapture = 1,
  kEndCapture = 2,
  kLaunchCall = 4,
  kInstantiate = 8
};
uint8_t capture_role(const std::string& n) {
  return static_cast<uint8_t>((contains(n, "BeginCapture") ? kBeginCapture : 0) |
                              (contains(n, "EndCapture") ? kEndCapture : 0) |
                              (is_kernel_launch_call(n) ? kLaunchCall : 0) |
                              (contains(n, "GraphInstantiate") ? kInstantiate : 0));
}

// Stream captures: kernel launch calls between a thread's BeginCapture and EndCapture launch
// nothing (they are recorded into a graph); instantiations are counted with their time.
// `launched(x)`: launch call x started kernels.
template <typename Launched>
void count_captures(GraphReplays& g, const Activities& dev, const Launched& launched) {
  NameMemo<uint8_t> role(&capture_role);
  std::map<uint32_t, std::vector<const DeviceActivity*>> by_thread;
  for (const DeviceActivity& x : dev) {
    if (x.kind != ActivityKind::Runtime) continue;
    by_thread[x.thread_id].push_back(&x);
    if (role(x.name) & kInstantiate) g.instantiations += 1, g.instantiate_ns += dur(x);
  }
  const auto by_start = [](const DeviceActivity* a, const DeviceActivity* b) {
    return a->start_ns < b->start_ns;
  };
  for (auto& [tid, calls] : by_thread) {
    stable_sort_unless_sorted(calls.begin(), calls.end(), by_start);
    bool capturing = false;
    for (const DeviceActivity* x : calls) {
      const uint8_t r = role(x->name);
      if (r & kBeginCapture) {
        capturing = true;
        g.captures += 1;
      } else if (r & kEndCapture) {
        capturing = false;
      } else if (capturing && (r & kLaunchCall) && (x->correlation_id == 0 || !launched(*x))) {
        g.captured_launch_calls += 1;
      }
    }
  }
}

// Launch overhead (direct launches), graph replays and kernel groups; returns each thread's
// direct launches (the graph candidates' input), in kernel record order.
std::map<uint32_t, std::vector<Launch>> analyze_launches(GpuAnalysis& a, const Recording& r,
                                                         const HostCalls& h) {
  LauncherIndex launchers(r);
  Groups by_name, by_launcher;
  const Name no_range("(no host range)");
  // The launch calls in the order of their first kernel, and each kernel's call (kNone: none),
  // then every call's kernels side by side in one array (a counting sort, record order kept).
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> call_at(r.device.size(), kNone);  // by a launch call's record index
  std::vector<uint32_t> call_of_kernel;
  std::vector<const DeviceActivity*> call_record;
  std::vector<uint32_t> kernel_count;
  for (const DeviceActivity& x : r.device) {
    if (x.kind != ActivityKind::Kernel) continue;
    a.launch.kernels += 1;
    add_to_group(by_name, x.name, dur(x));
    const DeviceActivity* launch = h.launch_of(x);
    if (!launch) {
      add_to_group(by_launcher, no_range, dur(x));
      call_of_kernel.push_back(kNone);
      continue;
    }
    a.launch.correlated += 1;
    const Span* sp = launchers.at(static_cast<int32_t>(launch->thread_id), launch->start_ns);
    add_to_group(by_launcher, sp ? sp->name : no_range, dur(x));
    uint32_t& slot = call_at[static_cast<size_t>(launch - r.device.data())];
    if (slot == kNone) {
      slot = static_cast<uint32_t>(call_record.size());
      call_record.push_back(launch);
      kernel_count.push_back(0);
    }
    kernel_count[slot] += 1;
    call_of_kernel.push_back(slot);
  }
  std::vector<size_t> next(call_record.size() + 1, 0);  // where each call's kernels begin
  for (size_t c = 0; c < call_record.size(); ++c) next[c + 1] = next[c] + kernel_count[c];
  kernel_count = {};
  std::vector<const DeviceActivity*> by_call(next.back());
  std::vector<CallKernels> calls(call_record.size());
  for (size_t c = 0; c < calls.size(); ++c)
    calls[c] = {call_record[c], std::span(by_call).subspan(next[c], next[c + 1] - next[c])};
  call_record = {};
  size_t k = 0;
  for (const DeviceActivity& x : r.device)
    if (x.kind == ActivityKind::Kernel)
      if (const uint32_t c = call_of_kernel[k++]; c != kNone) by_call[next[c]++] = &x;
  call_of_kernel = {};
  next = {};
  std::vector<double> launch_delays, queue_delays, call_durs, per_replay, spans;
  std::map<uint32_t, std::vector<Launch>> per_thread;
  std::vector<std::pair<int64_t, int64_t>> bound;  // launch-bound calls: call, kernels' time
  GraphReplays& g = a.graphs;
  for (const CallKernels& c : calls) {
    const DeviceActivity& call = *c.call;
    if (is_graph_launch(call.name)) {
      add_replay(g, c, per_replay, spans);
      continue;
    }
    const int64_t first = c.first_start(), kernels_ns = c.kernel_ns();
    a.launch.calls += 1;
    launch_delays.push_back(static_cast<double>(first - call.start_ns));
    queue_delays.push_back(static_cast<double>(first - call.end_ns));
    if (first < call.end_ns) a.launch.queue_negative += 1;
    call_durs.push_back(static_cast<double>(dur(call)));
    a.launch.launch_call_total_ns += dur(call);
    if (kernels_ns < dur(call)) {
      a.launch.launch_bound += 1;
      bound.push_back({dur(call), kernels_ns});
    }
    g.outside_kernels += static_cast<int64_t>(c.kernels.size());
    g.outside_kernel_ns += kernels_ns;
    g.outside_calls += 1;
    g.outside_call_ns += dur(call);
    for (const DeviceActivity* k : c.kernels) per_thread[call.thread_id].push_back({&call, k});
  }
  if (g.replays == 0) g.outside_kernels = g.outside_kernel_ns = g.outside_calls = g.outside_call_ns = 0;
  g.kernels_per_replay = delay_stats(std::move(per_replay));
  g.replay_span_ns = delay_stats(std::move(spans));
  g.host_ns_per_kernel =
      g.kernels ? static_cast<double>(g.launch_call_ns) / static_cast<double>(g.kernels) : 0;
  count_captures(g, r.device, [&](const DeviceActivity& x) {
    const DeviceActivity* call = h.launch_of(x);  // the call its id names, as kernels find theirs
    return call && call_at[static_cast<size_t>(call - r.device.data())] != kNone;
  });
  a.launch.launch_delay = delay_stats(std::move(launch_delays));
  a.launch.queue_delay = delay_stats(std::move(queue_delays));
  a.launch.call_duration = delay_stats(std::move(call_durs));
  // A launch-bound call loses its time beyond its kernels', the call counted at most at the
  // median call (an outlier call, e.g. lazy module loading, is not launch overhead).
  const auto typical_call = static_cast<int64_t>(a.launch.call_duration.median_ns);
  for (const auto& [c, k] : bound)
    a.launch.launch_bound_lost_ns += std::max<int64_t>(0, std::min(c, typical_call) - k);
  a.kernels_by_name = finish_groups(by_name, a.kernel_ns);
  a.kernels_by_launcher = finish_groups(by_launcher, a.kernel_ns);
  return per_thread;
}

void find_graph_candidates(GpuAnalysis& a, std::map<uint32_t, std::vector<Launch>>& per_thread,
                           const GpuAnalysisOptions& o) {
  const auto by_call = [](const Launch& x, const Launch& y) {
    return x.call->start_ns < y.call->start_ns;
  };
  for (auto& [tid, ls] : per_thread) {
    stable_sort_unless_sorted(ls.begin(), ls.end(), by_call);
    GraphCandidate g;
    if (best_sequence(ls, o, g) && g.saving_ns > 0) a.graph_candidates.push_back(std::move(g));
  }
  std::sort(a.graph_candidates.begin(), a.graph_candidates.end(),
            [](const GraphCandidate& x, const GraphCandidate& y) {
              return x.saving_ns != y.saving_ns ? x.saving_ns > y.saving_ns : x.thread < y.thread;
            });
}

// Copies grouped by direction and memory kinds, most time first.
std::vector<CopyGroup> copy_groups(const Activities& dev) {
  std::map<std::tuple<std::string, std::string, std::string>, CopyGroup> copies;
  for (const DeviceActivity& x : dev) {
    if (x.kind != ActivityKind::Memcpy) continue;
    const std::string dir = exec::copy_kind_name(x.copy_kind);
    const std::string src = exec::memory_kind_name(x.src_kind),
                      dst = exec::memory_kind_name(x.dst_kind);
    CopyGroup& g = copies[{dir, src, dst}];
    g.direction = dir, g.src = src, g.dst = dst;
    g.pageable = x.src_kind == exec::kMemoryKindPageable || x.dst_kind == exec::kMemoryKindPageable;
    g.count += 1;
    g.bytes = saturating_add(g.bytes, x.bytes);  // file-given sizes: no wrap
    g.total_ns += dur(x);
    if (x.bytes > 0) g.sized += 1, g.sized_ns += dur(x);
  }
  std::vector<CopyGroup> out;
  for (auto& [k, g] : copies) {
    g.gbs = g.sized_ns > 0 ? static_cast<double>(g.bytes) / static_cast<double>(g.sized_ns) : 0;
    out.push_back(g);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CopyGroup& x, const CopyGroup& y) { return x.total_ns > y.total_ns; });
  return out;
}

// The communication kernels of every device, grouped by collective with the trace's arguments.
std::vector<CommGroup> collective_groups(const Recording& r) {
  std::unordered_map<const DeviceActivity*, const CollectiveArgs*> args_of;
  for (const CollectiveArgs& c : r.collectives)
    if (c.activity < r.device.size()) args_of[&r.device[c.activity]] = &c;
  WorkItems kernels;
  std::vector<const CollectiveArgs*> args;
  for (const DeviceActivity& x : r.device) {
    if (x.kind != ActivityKind::Kernel || !is_communication_kernel(x.name)) continue;
    kernels.push_back(&x);
    const auto f = args_of.find(&x);
    args.push_back(f == args_of.end() ? nullptr : f->second);
  }
  return comm_groups(kernels, args);
}

void add_finding(GpuAnalysis& a, std::string s, int64_t lost, const char* kind,
                 std::string next = "") {
  if (lost > 0) a.findings.push_back({std::move(s), lost, kind, std::move(next)});
}

// The fewest kernel names (at most five) holding half of a device's kernel time, largest first.
std::vector<std::pair<std::string, int64_t>> holding_kernels(const Recording& r, int32_t d,
                                                             int64_t kernel_ns) {
  std::unordered_map<std::string, int64_t> by;
  for (const DeviceActivity& x : r.device)
    if (x.kind == ActivityKind::Kernel && x.device == d) by[x.name] += dur(x);
  std::vector<std::pair<std::string, int64_t>> v(by.begin(), by.end());
  std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  std::vector<std::pair<std::string, int64_t>> out;
  int64_t held = 0;
  for (const auto& kv : v) {
    if (out.size() == 5 || 2 * held >= kernel_ns) break;
    out.push_back(kv);
    held += kv.second;
  }
  return out;
}

// gpu_bound: a device with (almost) no idle time: the kernels are the time.
void add_gpu_bound_findings(GpuAnalysis& a, const Recording& r, const GpuAnalysisOptions& o) {
  // The trace's wall time, host and GPU: a device busy through its own short window is still
  // idle while the host works before and after it.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Span& sp : r.spans) lo = std::min(lo, sp.start_ns), hi = std::max(hi, sp.end_ns);
  for (const DeviceActivity& x : r.device) lo = std::min(lo, x.start_ns), hi = std::max(hi, x.end_ns);
  const double wall = hi > lo ? static_cast<double>(hi) - static_cast<double>(lo) : 0;
  for (const DeviceSplit& s : a.devices) {
    if (wall <= 0 || s.kernel_ns <= 0 ||
        static_cast<double>(s.busy_ns) < (1 - o.gpu_bound_idle) * wall)
      continue;
    const auto top = holding_kernels(r, s.device, s.kernel_ns);
    std::string names, regex;
    int64_t held = 0;
    for (const auto& [name, t] : top) {
      names += (names.empty() ? "" : ", ") + short_name(name) + " " +
               pct(static_cast<double>(t) / static_cast<double>(s.kernel_ns));
      // The unqualified function name, its first 48 characters (ncu's regex: matches a part).
      const std::string f = kernel_function_name(name);
      const size_t colon = f.find_last_of(':');
      regex += (regex.empty() ? "" : "|") + f.substr(colon == std::string::npos ? 0 : colon + 1, 48);
      held += t;
    }
    add_finding(a,
                "GPU " + std::to_string(s.device) + " is busy " +
                    pct(static_cast<double>(s.busy_ns) / wall) + " of the trace's " +
                    format_duration_ns(wall) + ": the kernels are the time, not the host. " +
                    std::to_string(top.size()) + (top.size() == 1 ? " kernel holds " : " kernels hold ") +
                    pct(static_cast<double>(held) / static_cast<double>(s.kernel_ns)) +
                    " of the kernel time (" + names +
                    "). Next: the kernel level, an Nsight Compute report of them (ncu "
                    "--kernel-name regex:'" + regex + "')",
                std::min(held, s.busy_ns), "gpu_bound", "kernels");
  }
}

// communication: per device, the communication the computation did not hide.
void add_comm_findings(GpuAnalysis& a) {
  std::string groups;
  for (size_t i = 0; i < a.collectives.size() && i < 3; ++i)
    groups += (groups.empty() ? "" : ", ") + a.collectives[i].collective + " " +
              pct(a.comm.kernel_ns > 0 ? static_cast<double>(a.collectives[i].total_ns) /
                                             static_cast<double>(a.comm.kernel_ns)
                                       : 0);
  for (const DeviceSplit& s : a.devices) {
    if (s.comm.kernel_count == 0 || s.busy_ns <= 0) continue;
    add_finding(a,
                "GPU " + std::to_string(s.device) + " communicates " +
                    format_duration_ns(static_cast<double>(s.comm.busy_ns)) + " (" +
                    pct(static_cast<double>(s.comm.busy_ns) / static_cast<double>(s.busy_ns)) +
                    " of its busy time; " + groups + "), " +
                    format_duration_ns(static_cast<double>(s.comm.exposed_ns)) +
                    " of it exposed (computation overlapped " + pct(s.comm.overlap_fraction()) +
                    ", HTA's measure). Next: the ranks, to see which one the others wait for",
                s.comm.exposed_ns, "communication", "ranks");
  }
}

// gpu_idle: per device, its idle time and the cause with the most of it.
void add_idle_findings(GpuAnalysis& a) {
  for (const DeviceSplit& s : a.devices) {
    if (s.idle_ns <= 0) continue;
    const std::pair<int64_t, const char*> causes[] = {
        {s.idle_host_bound_ns, "while the host was launching (host-bound)"},
        {s.idle_sync_ns, "while the host waited in a synchronisation (sync)"},
        {s.idle_copy_wait_ns, "while the host was inside a copy call (copy wait)"},
        {s.idle_other_ns, "with work queued behind a dependency (other)"}};
    const auto* top = &causes[0];
    for (const auto& c : causes)
      if (c.first > top->first) top = &c;
    add_finding(a,
                "GPU " + std::to_string(s.device) + " idle " + pct(s.idle_fraction()) + " of " +
                    format_duration_ns(static_cast<double>(s.window_ns)) + " (" +
                    format_duration_ns(static_cast<double>(s.idle_ns)) + "): " +
                    format_duration_ns(static_cast<double>(top->first)) + " " + top->second,
                s.idle_ns, "gpu_idle");
  }
}

// gpu_gaps: per device, the gaps longer than the threshold.
void add_gap_findings(GpuAnalysis& a, const std::vector<IdleGap>& long_gaps,
                      const GpuAnalysisOptions& o) {
  std::map<int32_t, std::pair<int64_t, int64_t>> per_dev;  // count, total
  std::map<int32_t, const IdleGap*> longest;
  for (const IdleGap& g : long_gaps) {
    per_dev[g.device].first += 1;
    per_dev[g.device].second += g.duration_ns;
    if (!longest[g.device] || g.duration_ns > longest[g.device]->duration_ns)
      longest[g.device] = &g;
  }
  for (const auto& [d, ct] : per_dev)
    add_finding(a,
                std::to_string(ct.first) + " gaps longer than " +
                    format_duration_ns(static_cast<double>(o.gap_threshold_ns)) + " on GPU " +
                    std::to_string(d) + " add up to " +
                    format_duration_ns(static_cast<double>(ct.second)) + " (longest " +
                    format_duration_ns(static_cast<double>(longest[d]->duration_ns)) + ", " +
                    idle_cause_name(longest[d]->cause) + ")",
                ct.second, "gpu_gaps");
}

// pageable_copy: copies from or to pageable host memory.
void add_copy_findings(GpuAnalysis& a) {
  int64_t n = 0, t = 0, sized_t = 0;
  uint64_t b = 0;
  for (const CopyGroup& g : a.copies)
    if (g.pageable) n += g.count, t += g.total_ns, b += g.bytes, sized_t += g.sized_ns;
  const std::string rate =  // over the sized copies only (the header's definition)
      sized_t > 0 ? " at " + fmt("%.1f", static_cast<double>(b) / static_cast<double>(sized_t)) + " GB/s" : "";
  if (n > 0)
    add_finding(a,
                std::to_string(n) + " copies from pageable memory took " +
                    format_duration_ns(static_cast<double>(t)) + rate + ": pin the host buffers",
                t, "pageable_copy");
}

// memcpy_sync and api_sync: the time the host was held in synchronous calls.
void add_sync_findings(GpuAnalysis& a, const HostCalls& h) {
  if (h.sync_memcpy_calls > 0)
    add_finding(a,
                std::to_string(h.sync_memcpy_calls) + " synchronous memcpy calls held the host " +
                    format_duration_ns(static_cast<double>(h.sync_memcpy_ns)) +
                    ": use " + (a.runtime == "HIP" ? "hipMemcpyAsync" : "cudaMemcpyAsync") +
                    " on a stream",
                h.sync_memcpy_ns, "memcpy_sync");
  // Sync records where the trace has them (they are the held time), else the Synchronize calls.
  const int64_t n = h.sync_record_count > 0 ? h.sync_record_count : h.sync_api_calls;
  const int64_t t = h.sync_record_count > 0 ? h.sync_record_ns : h.sync_api_ns;
  if (n > 0)
    add_finding(a,
                std::to_string(n) + " synchronisations held the host " +
                    format_duration_ns(static_cast<double>(t)) +
                    ": drop the ones that are not needed so the host can queue work ahead",
                t, "api_sync");
}

// launch_bound and cuda_graph: launch overhead.
void add_launch_findings(GpuAnalysis& a) {
  const GraphReplays& g = a.graphs;
  const std::string where =
      g.replays > 0 ? " outside the " + std::to_string(g.replays) + " graph replays (which ran " +
                          std::to_string(g.kernels) + " kernels for " +
                          format_duration_ns(static_cast<double>(g.launch_call_ns)) +
                          " of launch calls)"
                    : "";
  if (a.launch.launch_bound > 0)
    add_finding(a,
                std::to_string(a.launch.launch_bound) + " of " + std::to_string(a.launch.calls) +
                    " kernel launches" + where +
                    " took longer than the kernels they launched (median launch call " +
                    format_duration_ns(a.launch.call_duration.median_ns) + "), losing " +
                    format_duration_ns(static_cast<double>(a.launch.launch_bound_lost_ns)) +
                    " of host time",
                a.launch.launch_bound_lost_ns, g.replays > 0 ? "graph_outside" : "launch_bound");
  for (const GraphCandidate& g : a.graph_candidates)
    add_finding(a,
                "the sequence " + sequence_text(g.kernels) + " repeats " +
                    std::to_string(g.repetitions) + " times: a " + a.runtime + " graph would save about " +
                    format_duration_ns(static_cast<double>(g.saving_ns)) + " of launch time",
                g.saving_ns, "cuda_graph");
}

// The findings, most time lost first.
void add_findings(GpuAnalysis& a, const Recording& r, const HostCalls& h,
                  const std::vector<IdleGap>& long_gaps, const GpuAnalysisOptions& o) {
  add_gpu_bound_findings(a, r, o);
  add_comm_findings(a);
  add_idle_findings(a);
  add_gap_findings(a, long_gaps, o);
  add_copy_findings(a);
  add_sync_findings(a, h);
  add_launch_findings(a);
  std::stable_sort(
      a.findings.begin(), a.findings.end(),
      [](const GpuFinding& x, const GpuFinding& y) { return x.time_lost_ns > y.time_lost_ns; });
}

}  // namespace

namespace {

// Moves the recording's host side (spans, runtime calls, sync records) by `shift`.
void shift_host(Recording& r, int64_t shift) {
  for (Span& s : r.spans) s.start_ns = shifted(s.start_ns, shift), s.end_ns = shifted(s.end_ns, shift);
  for (DeviceActivity& x : r.device)
    if (x.kind == ActivityKind::Runtime || x.kind == ActivityKind::Sync)
      x.start_ns = shifted(x.start_ns, shift), x.end_ns = shifted(x.end_ns, shift);
  for (CounterSample& c : r.counters) c.t_ns = shifted(c.t_ns, shift);  // sampled on the host
}

GpuAnalysis analyze_aligned(const Recording& r, const GpuAnalysisOptions& o) {
  GpuAnalysis a;
  const HostCalls calls = index_host_calls(r.device);
  if (calls.hip_calls > calls.cuda_calls) a.runtime = "HIP";
  std::vector<IdleGap> long_gaps;
  split_devices(a, r, calls, o, long_gaps);
  std::map<uint32_t, std::vector<Launch>> per_thread = analyze_launches(a, r, calls);
  find_graph_candidates(a, per_thread, o);
  a.copies = copy_groups(r.device);
  a.collectives = collective_groups(r);
  a.phases = analyze_phases(r);
  a.counters = summarize_counters(r);
  add_findings(a, r, calls, long_gaps, o);
  return a;
}

}  // namespace

GpuAnalysis analyze_gpu_aligning(Recording& r, const GpuAnalysisOptions& o) {
  const ClockSkew skew = detect_clock_skew(r.device);
  if (skew.detected()) shift_host(r, skew.host_shift_ns);
  GpuAnalysis a = analyze_aligned(r, o);
  a.skew = skew;
  if (skew.detected()) a.warnings.push_back(skew.warning());
  return a;
}

GpuAnalysis analyze_gpu(const Recording& r, const GpuAnalysisOptions& o) {
  if (!detect_clock_skew(r.device).detected()) return analyze_aligned(r, o);
  Recording copy = r;
  return analyze_gpu_aligning(copy, o);
}

namespace {

std::string dur_text(int64_t ns) {
  return format_duration_ns(static_cast<double>(ns));
}

void text_split(std::ostringstream& os, const GpuAnalysis& a) {
  char line[512];
  os << "GPU time split (window = first to last GPU activity per device; busy = union over "
        "streams)\n";
  std::snprintf(line, sizeof line, "%-4s %8s %11s %11s %6s %11s %11s %11s %11s %7s\n", "gpu",
                "streams", "window", "busy", "idle%", "kernel", "memcpy", "memset", "sync", "gaps");
  os << line;
  for (const DeviceSplit& s : a.devices) {
    std::snprintf(line, sizeof line, "%-4d %8lld %11s %11s %6s %11s %11s %11s %11s %7lld\n",
                  s.device, static_cast<long long>(s.streams), dur_text(s.window_ns).c_str(),
                  dur_text(s.busy_ns).c_str(), pct(s.idle_fraction()).c_str(),
                  dur_text(s.kernel_ns).c_str(), dur_text(s.memcpy_ns).c_str(),
                  dur_text(s.memset_ns).c_str(), dur_text(s.sync_ns).c_str(),
                  static_cast<long long>(s.gap_count));
    os << line;
  }
}

void text_idle_causes(std::ostringstream& os, const GpuAnalysis& a) {
  char line[512];
  os << "\nidle time by cause\n";
  std::snprintf(line, sizeof line, "%-4s %11s %11s %11s %11s %11s\n", "gpu", "idle", "host_bound",
                "sync", "copy_wait", "other");
  os << line;
  for (const DeviceSplit& s : a.devices) {
    std::snprintf(line, sizeof line, "%-4d %11s %11s %11s %11s %11s\n", s.device,
                  dur_text(s.idle_ns).c_str(), dur_text(s.idle_host_bound_ns).c_str(),
                  dur_text(s.idle_sync_ns).c_str(), dur_text(s.idle_copy_wait_ns).c_str(),
                  dur_text(s.idle_other_ns).c_str());
    os << line;
  }
}

void text_launches(std::ostringstream& os, const LaunchStats& l) {
  os << "\nlaunches: " << l.correlated << " of " << l.kernels << " kernels with a launch call; "
     << l.calls << " direct launch calls: launch delay median "
     << format_duration_ns(l.launch_delay.median_ns) << ", p90 "
     << format_duration_ns(l.launch_delay.p90_ns) << ", max "
     << format_duration_ns(l.launch_delay.max_ns) << "; queue delay median "
     << format_duration_ns(l.queue_delay.median_ns) << " (" << l.queue_negative
     << " started before their call returned); " << l.launch_bound << " launch-bound\n";
}

void text_graphs(std::ostringstream& os, const GraphReplays& g) {
  if (g.replays > 0) {
    os << "\ngraph replays: " << g.replays << " replays ran " << g.kernels << " kernels ("
       << format_duration_ns(static_cast<double>(g.kernel_ns)) << " of GPU time; median "
       << g.kernels_per_replay.median_ns << " kernels and "
       << format_duration_ns(g.replay_span_ns.median_ns) << " a replay), launched by "
       << format_duration_ns(static_cast<double>(g.launch_call_ns)) << " of graph launch calls ("
       << format_duration_ns(g.host_ns_per_kernel) << " of host time a kernel)\n";
    os << "outside the graphs: " << g.outside_kernels << " kernels ("
       << format_duration_ns(static_cast<double>(g.outside_kernel_ns)) << " of GPU time) from "
       << g.outside_calls << " launch calls ("
       << format_duration_ns(static_cast<double>(g.outside_call_ns)) << " of host time)\n";
  }
  if (g.captures > 0 || g.instantiations > 0)
    os << "\ngraph capture: " << g.captures << " stream captures recorded "
       << g.captured_launch_calls << " kernel launch calls into graphs (they ran nothing); "
       << g.instantiations << " graph instantiations took "
       << format_duration_ns(static_cast<double>(g.instantiate_ns))
       << " (a one-time cost, not launch overhead)\n";
}

void text_comm(std::ostringstream& os, const GpuAnalysis& a) {
  if (a.comm.kernel_count == 0) return;
  char line[512];
  os << "\ncommunication (per GPU: U = union over streams; overlap and exposed as HTA defines them)\n";
  std::snprintf(line, sizeof line, "%-4s %7s %11s %11s %11s %11s %8s\n", "gpu", "kernels",
                "time", "U(comm)", "overlapped", "exposed", "overlap");
  os << line;
  for (const DeviceSplit& s : a.devices) {
    if (s.comm.kernel_count == 0) continue;
    std::snprintf(line, sizeof line, "%-4d %7lld %11s %11s %11s %11s %8s\n", s.device,
                  static_cast<long long>(s.comm.kernel_count), dur_text(s.comm.kernel_ns).c_str(),
                  dur_text(s.comm.busy_ns).c_str(), dur_text(s.comm.overlap_ns).c_str(),
                  dur_text(s.comm.exposed_ns).c_str(), pct(s.comm.overlap_fraction()).c_str());
    os << line;
  }
  std::snprintf(line, sizeof line, "%-14s %-12s %7s %11s %11s %6s %10s %10s\n", "collective",
                "algorithm", "count", "time", "bytes", "ranks", "algbw GB/s", "busbw GB/s");
  os << line;
  for (const CommGroup& g : a.collectives) {
    std::snprintf(line, sizeof line, "%-14s %-12s %7lld %11s %11s %6lld %10s %10s\n",
                  g.collective.c_str(), g.algorithm.empty() ? "-" : g.algorithm.c_str(),
                  static_cast<long long>(g.count), dur_text(g.total_ns).c_str(),
                  g.sized ? fmt_bytes(static_cast<double>(g.bytes)).c_str() : "-",
                  static_cast<long long>(g.group_size),
                  g.sized ? fmt("%.1f", g.algbw_gbs).c_str() : "-",
                  g.sized ? fmt("%.1f", g.busbw_gbs).c_str() : "-");
    os << line;
  }
}

// The 15 largest groups.
void text_groups(std::ostringstream& os, const char* title, const std::vector<KernelGroup>& v) {
  char line[512];
  os << "\n" << title << "\n";
  std::snprintf(line, sizeof line, "%-48s %7s %11s %11s %11s %11s %6s\n", "name", "count",
                "total", "mean", "min", "max", "share");
  os << line;
  for (size_t i = 0; i < v.size() && i < 15; ++i) {
    const KernelGroup& g = v[i];
    std::string k = g.key.size() > 48 ? g.key.substr(0, 45) + "..." : g.key;
    std::snprintf(line, sizeof line, "%-48s %7lld %11s %11s %11s %11s %6s\n", k.c_str(),
                  static_cast<long long>(g.count), dur_text(g.total_ns).c_str(),
                  format_duration_ns(g.mean_ns).c_str(), dur_text(g.min_ns).c_str(),
                  dur_text(g.max_ns).c_str(), pct(g.share).c_str());
    os << line;
  }
}

void text_copies(std::ostringstream& os, const std::vector<CopyGroup>& copies) {
  if (copies.empty()) return;
  char line[512];
  os << "\ncopies\n";
  std::snprintf(line, sizeof line, "%-6s %-26s %7s %11s %11s %9s %s\n", "dir", "src -> dst",
                "count", "bytes", "time", "GB/s", "");
  os << line;
  for (const CopyGroup& g : copies) {
    std::string kinds = g.src + " -> " + g.dst;
    // A group without one sized copy has neither bytes nor a rate: "-", not "0 B" and 0 GB/s.
    std::snprintf(line, sizeof line, "%-6s %-26s %7lld %11s %11s %9s %s\n", g.direction.c_str(),
                  kinds.c_str(), static_cast<long long>(g.count),
                  g.sized ? fmt_bytes(static_cast<double>(g.bytes)).c_str() : "-",
                  dur_text(g.total_ns).c_str(), g.sized ? fmt("%.2f", g.gbs).c_str() : "-",
                  g.pageable ? "pageable" : "");
    os << line;
  }
}

void text_gaps(std::ostringstream& os, const DeviceSplit& s) {
  if (s.longest_gaps.empty()) return;
  char line[512];
  os << "\nlongest idle gaps on GPU " << s.device
     << " (at: from the window start; cause; host activity during it)\n";
  for (const IdleGap& g : s.longest_gaps) {
    std::string host;
    for (const HostOverlap& h : g.host)
      host += (host.empty() ? "" : ", ") + h.name + " " + dur_text(h.overlap_ns);
    std::snprintf(line, sizeof line, "  at %11s  %11s  %-10s  %s\n",
                  dur_text(g.start_ns - s.window_start_ns).c_str(),
                  dur_text(g.duration_ns).c_str(), idle_cause_name(g.cause), host.c_str());
    os << line;
  }
}

void text_graph_candidates(std::ostringstream& os, const std::vector<GraphCandidate>& v,
                           const std::string& runtime) {
  if (v.empty()) return;
  os << "\n" << runtime << " graph candidates\n";
  for (const GraphCandidate& g : v) {
    os << "  thread " << g.thread << ": [" << sequence_text(g.kernels) << "] x" << g.repetitions
       << ", launches " << dur_text(g.launch_ns) << ", saving about " << dur_text(g.saving_ns)
       << "\n";
  }
}

void text_findings(std::ostringstream& os, const std::vector<GpuFinding>& findings) {
  os << "\nfindings\n";
  if (findings.empty()) os << "  none\n";
  for (const GpuFinding& f : findings) os << "  - " << f.sentence << "\n";
}

}  // namespace

std::string gpu_analysis_text(const GpuAnalysis& a) {
  std::ostringstream os;
  if (!a.has_gpu) {  // a CPU recording can still have phases (fusebox generate --out)
    os << "no GPU activity in this recording\n";
    if (!a.phases.steps.empty()) os << phases_text(a.phases);
    os << counters_text(a.counters);
    return os.str();
  }
  for (const std::string& w : a.warnings) os << "warning: " << w << "\n";
  text_split(os, a);
  text_idle_causes(os, a);
  text_launches(os, a.launch);
  text_graphs(os, a.graphs);
  text_comm(os, a);
  os << phases_text(a.phases);
  os << counters_text(a.counters);
  text_groups(os, "kernels by name", a.kernels_by_name);
  text_groups(os, "kernels by launching host span", a.kernels_by_launcher);
  text_copies(os, a.copies);
  for (const DeviceSplit& s : a.devices) text_gaps(os, s);
  text_graph_candidates(os, a.graph_candidates, a.runtime);
  text_findings(os, a.findings);
  return os.str();
}

namespace {

using nlohmann::json;

json json_gap(const IdleGap& g) {
  json host = json::array();
  for (const HostOverlap& h : g.host)
    host.push_back({{"name", h.name}, {"overlap_ns", h.overlap_ns}});
  return {{"start_ns", g.start_ns},
          {"duration_ns", g.duration_ns},
          {"cause", idle_cause_name(g.cause)},
          {"host", host}};
}

json json_comm(const CommSplit& c) {
  return {{"kernel_count", c.kernel_count},   {"kernel_ns", c.kernel_ns},
          {"busy_ns", c.busy_ns},             {"compute_busy_ns", c.compute_busy_ns},
          {"overlap_ns", c.overlap_ns},       {"exposed_ns", c.exposed_ns},
          {"overlap_fraction", c.overlap_fraction()}};
}

json json_device(const DeviceSplit& s) {
  json gaps = json::array();
  for (const IdleGap& g : s.longest_gaps) gaps.push_back(json_gap(g));
  return {{"device", s.device},
          {"window_start_ns", s.window_start_ns},
          {"window_end_ns", s.window_end_ns},
          {"window_ns", s.window_ns},
          {"busy_ns", s.busy_ns},
          {"idle_ns", s.idle_ns},
          {"idle_fraction", s.idle_fraction()},
          {"kernel_ns", s.kernel_ns},
          {"memcpy_ns", s.memcpy_ns},
          {"memset_ns", s.memset_ns},
          {"sync_ns", s.sync_ns},
          {"kernel_count", s.kernel_count},
          {"memcpy_count", s.memcpy_count},
          {"memset_count", s.memset_count},
          {"sync_count", s.sync_count},
          {"memcpy_bytes", s.memcpy_bytes},
          {"memset_bytes", s.memset_bytes},
          {"streams", s.streams},
          {"idle_by_cause",
           {{"host_bound_ns", s.idle_host_bound_ns},
            {"sync_ns", s.idle_sync_ns},
            {"copy_wait_ns", s.idle_copy_wait_ns},
            {"other_ns", s.idle_other_ns}}},
          {"gap_count", s.gap_count},
          {"longest_gaps", gaps},
          {"comm", json_comm(s.comm)}};
}

json json_delay(const DelayStats& d) {
  return json{{"count", d.count},
              {"median_ns", d.median_ns},
              {"p90_ns", d.p90_ns},
              {"max_ns", d.max_ns},
              {"mean_ns", d.mean_ns}};
}

json json_graphs(const GraphReplays& g) {
  return {{"replays", g.replays},
          {"kernels", g.kernels},
          {"kernel_ns", g.kernel_ns},
          {"launch_call_ns", g.launch_call_ns},
          {"kernels_per_replay", json_delay(g.kernels_per_replay)},
          {"replay_span", json_delay(g.replay_span_ns)},
          {"host_ns_per_kernel", g.host_ns_per_kernel},
          {"outside_kernels", g.outside_kernels},
          {"outside_kernel_ns", g.outside_kernel_ns},
          {"outside_calls", g.outside_calls},
          {"outside_call_ns", g.outside_call_ns},
          {"captures", g.captures},
          {"captured_launch_calls", g.captured_launch_calls},
          {"instantiations", g.instantiations},
          {"instantiate_ns", g.instantiate_ns}};
}

json json_skew(const ClockSkew& k) {
  return {{"host_shift_ns", k.host_shift_ns},
          {"kernels_before_call", k.before_call},
          {"worst_before_ns", k.worst_before_ns},
          {"idle_starts", k.idle_starts},
          {"least_idle_start_ns", k.least_idle_start_ns},
          {"most_idle_wait_ns", k.most_idle_wait_ns}};
}

json json_collectives(const std::vector<CommGroup>& v) {
  json out = json::array();
  for (const CommGroup& g : v)
    out.push_back({{"collective", g.collective},
                   {"algorithm", g.algorithm},
                   {"count", g.count},
                   {"total_ns", g.total_ns},
                   {"bytes", g.bytes},
                   {"sized", g.sized},
                   {"group_size", g.group_size},
                   {"algbw_gbs", g.algbw_gbs},
                   {"busbw_gbs", g.busbw_gbs}});
  return out;
}

json json_launch(const LaunchStats& l) {
  return {{"kernels", l.kernels},
          {"correlated", l.correlated},
          {"calls", l.calls},
          {"queue_negative", l.queue_negative},
          {"launch_delay", json_delay(l.launch_delay)},
          {"queue_delay", json_delay(l.queue_delay)},
          {"call_duration", json_delay(l.call_duration)},
          {"launch_bound", l.launch_bound},
          {"launch_bound_lost_ns", l.launch_bound_lost_ns},
          {"launch_call_total_ns", l.launch_call_total_ns}};
}

json json_groups(const std::vector<KernelGroup>& v) {
  json out = json::array();
  for (const KernelGroup& g : v)
    out.push_back({{"key", g.key},
                   {"count", g.count},
                   {"total_ns", g.total_ns},
                   {"mean_ns", g.mean_ns},
                   {"min_ns", g.min_ns},
                   {"max_ns", g.max_ns},
                   {"share", g.share}});
  return out;
}

json json_copies(const std::vector<CopyGroup>& v) {
  json copies = json::array();
  for (const CopyGroup& g : v)
    copies.push_back({{"direction", g.direction},
                      {"src", g.src},
                      {"dst", g.dst},
                      {"pageable", g.pageable},
                      {"count", g.count},
                      {"sized", g.sized},
                      {"bytes", g.bytes},
                      {"total_ns", g.total_ns},
                      {"sized_ns", g.sized_ns},
                      {"gbs", g.gbs}});
  return copies;
}

json json_graph_candidates(const std::vector<GraphCandidate>& v) {
  json graphs = json::array();
  for (const GraphCandidate& g : v)
    graphs.push_back({{"thread", g.thread},
                      {"kernels", g.kernels},
                      {"repetitions", g.repetitions},
                      {"launch_ns", g.launch_ns},
                      {"kernel_ns", g.kernel_ns},
                      {"saving_ns", g.saving_ns}});
  return graphs;
}

json json_findings(const std::vector<GpuFinding>& v) {
  json findings = json::array();
  for (const GpuFinding& f : v)
    findings.push_back(
        {{"sentence", f.sentence}, {"time_lost_ns", f.time_lost_ns}, {"kind", f.kind},
         {"next", f.next}});
  return findings;
}

}  // namespace

nlohmann::json gpu_analysis_json(const GpuAnalysis& a) {
  json j;
  j["has_gpu"] = a.has_gpu;
  j["runtime"] = a.runtime;
  if (!a.has_gpu) j["message"] = "no GPU activity in this recording";
  j["kernel_count"] = a.kernel_count;
  j["kernel_ns"] = a.kernel_ns;
  j["memcpy_count"] = a.memcpy_count;
  j["memcpy_ns"] = a.memcpy_ns;
  j["memcpy_bytes"] = a.memcpy_bytes;
  j["memset_count"] = a.memset_count;
  j["memset_ns"] = a.memset_ns;
  j["memset_bytes"] = a.memset_bytes;
  json devs = json::array();
  for (const DeviceSplit& s : a.devices) devs.push_back(json_device(s));
  j["devices"] = devs;
  j["launch"] = json_launch(a.launch);
  j["graphs"] = json_graphs(a.graphs);
  j["clock_skew"] = json_skew(a.skew);
  j["communication"] = json_comm(a.comm);
  j["collectives"] = json_collectives(a.collectives);
  j["analysis_warnings"] = a.warnings;
  j["phases"] = phases_json(a.phases);
  j["counters"] = counters_json(a.counters);
  j["kernels_by_name"] = json_groups(a.kernels_by_name);
  j["kernels_by_launcher"] = json_groups(a.kernels_by_launcher);
  j["copies"] = json_copies(a.copies);
  j["graph_candidates"] = json_graph_candidates(a.graph_candidates);
  j["findings"] = json_findings(a.findings);
  return j;
}

}  // namespace fusebox::profiler
