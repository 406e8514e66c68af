#pragma once
// GPU analysis of a recording, top down: what each GPU did, why it sat idle, what launching cost,
// which kernels and copies the time went to, and what to do about it. It reads only
// `Recording::device` (exec::DeviceActivity) and the host spans, so it runs on a fusebox session
// with a GPU backend and on kineto / nsys traces alike. Times are nanoseconds.
//
// Definitions (HTA = Holistic Trace Analysis, nsys = Nsight Systems expert rules):
//  - GPU work is Kernel, Memcpy and Memset records. A device's window runs from its first GPU
//    work's start to its last GPU work's end (Sync and Runtime records do not extend it). Busy is
//    the union of its GPU work over all streams (overlapping streams counted once); idle = window
//    - busy. The per-kind times (kernel, memcpy, memset) are sums of durations, so they can add
//    up to more than busy. Sync time is the sum of the Sync records on the device: time the host
//    was held, not GPU work, so it is not part of busy. This is HTA's temporal breakdown, but over
//    the device (nsys's view, "GPU gaps" are per device) rather than per stream: a gap on one
//    stream while another computes is not idle GPU time.
//  - An idle gap is an interval of the window with no GPU work on the device. Each gap gets the
//    cause that covers the most of it (ties go to the earlier in this list; none: other):
//      sync       time covered by a Sync record on this device, or by a host runtime call whose
//                 name contains "Synchronize" (cudaDeviceSynchronize, cudaStreamSynchronize,
//                 cudaEventSynchronize, cuCtxSynchronize...) or by a synchronous memcpy call (a
//                 name containing "Memcpy" but not "Async"): the host chose to wait, so it could
//                 not queue work ahead (nsys cuda_api_sync, cuda_memcpy_sync);
//      copy_wait  time covered by an asynchronous memcpy runtime call (cudaMemcpyAsync,
//                 cuMemcpy*Async): the host is inside the copy call (staging pageable memory,
//                 nsys cuda_memcpy_async) while the device has no copy running;
//      host_bound from the gap's start to the start of the runtime call (by correlation id) that
//                 launched the GPU item ending the gap, when that call started after the gap
//                 began: the queue ran empty while the host worked (HTA's "host wait");
//      other      none of these (the next item was queued before the gap: a cross-stream or
//                 event dependency; or it has no correlated launch).
//    Largest share rather than a fixed precedence because a sync usually overlaps only the first
//    microseconds of a gap (its return) while the host then works for a millisecond before the
//    next launch: that gap is host time (an nsys trace of CloverLeaf shows exactly this); the
//    syncs' own cost is its own finding.
//    HTA classifies idle time per stream and also has "kernel wait" (tiny gaps between
//    consecutive kernels); here gaps are per device and those fall into the causes above. Runtime
//    calls are host-wide: a sync call on any thread counts for every GPU.
//  - Launch calls: the runtime records that kernels correlate to. A call is counted once however
//    many kernels it launched (a graph launch starts hundreds). Graph launches (a name containing
//    "GraphLaunch": cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch) are replays, counted apart
//    below; every other correlated call is a direct launch.
//  - Launch delay (per direct launch) = its first kernel's start - the call's start; queue
//    delay = that kernel's start - the call's end. HTA calls the latter its "launch delay"; both
//    are reported, named as above. A queue delay below 0 is a kernel that started before its
//    call returned (the queue was empty): real, counted, and left in. Host times are first
//    shifted by the clock offset clock_skew.h detects, so neither is skew.
//    A launch-bound launch (HTA's "short kernel") is a direct launch whose call took longer than
//    its kernels; the time it costs is (call - kernels) summed over them, each call counted once
//    and at most at the median launch call (a first call that loads modules lazily can take
//    seconds, which is not launch overhead). So the total is bounded by the host time spent in
//    launch calls.
//  - Graph replays: the kernels of one graph launch call are one replay. Reported: replays,
//    kernels per replay, their GPU time, the launch calls' host time per kernel. Replayed kernels
//    are never launch-bound and never a graph candidate: they already are a graph. With replays
//    in the trace, the directly launched kernels are what runs outside the graphs (piecewise
//    graphs leave attention outside, e.g. vLLM): their count, GPU time and launch calls' host
//    time are reported, and a finding when those launches are launch-bound.
//    A capture (a runtime call containing "BeginCapture" on a thread, to the next containing
//    "EndCapture" there) records launches into a graph without running them: kernel launch
//    calls inside it launch nothing and are counted as captured, never as slow launches;
//    graph instantiations (names containing "GraphInstantiate") are a one-time cost, counted.
//  - Serving phases (prefill, decode, mixed): profiler/phases.h.
//  - Communication: profiler/communication.h (which kernels, bandwidth, HTA's overlap), per
//    device; a finding when the exposed communication is time lost.
//  - GPU-bound: a device busy at least 1 - `gpu_bound_idle` (90%) of the trace's wall time (its
//    first host or GPU event to its last, after the clock correction; not the device's own
//    window, which leaves out the idle time before its first kernel and after its last) has
//    nothing to gain from the host side; its finding names the kernels holding the time (the
//    fewest names covering half of its kernel time, at most five) and points to the kernel
//    level (Nsight Compute). 10% is our threshold: the nsys GPU-utilization rule flags windows
//    below 50% utilization, which leaves 50-90% to the idle findings, and these are ranked by
//    time lost anyway.
//  - A kernel's launcher is the innermost host span (Op or Range) on the runtime call's thread
//    that contains the call's start; kernels without one are grouped as "(no host range)".
//  - Copies are grouped by direction (copy kind) and source -> destination memory kinds;
//    achieved GB/s = bytes / duration (ns), over the copies whose size the trace records: a copy
//    without one (a record with no "bytes", or 0, and no size on its copy call: the kineto
//    importer takes a ROCm copy's size from its hipMemcpy* call, as newer kineto does) counts in
//    the group's count and time, not in its rate, and a group with no sized copy has no rate
//    ("-"), not 0 GB/s. A copy from or to
//    pageable memory is flagged (nsys cuda_memcpy_async "pageable").
//  - CUDA graph candidates: per host thread, the kernel launches in order of their runtime call;
//    a window of k consecutive launches (min_sequence <= k <= max_sequence) counts when every
//    host gap inside it (next call start - previous call end) is at most `max_launch_gap_ns`
//    (launched back to back). The same k names counted greedily left to right without overlap
//    give a repetition count; the candidate is the sequence repeated most often (at least
//    `min_repeats`), ties to the longer, then to the larger saving, skipping sequences that are
//    themselves a shorter sequence repeated. Saving model: a graph replaces the k launch calls of
//    each repetition by one graph launch costing about one mean launch call, so
//    saving = sum of those launch calls' durations - repetitions * mean launch call duration.
//    Bounded: O(n * max_sequence) hashing per thread.
//  - Findings (nsys rules, thresholds lowered for short traces): GPU idle (with its main cause),
//    long gaps (gpu_gaps, > gap_threshold_ns rather than 500 ms), pageable copies, synchronous
//    copies, synchronisation calls, launch-bound kernels and the graph candidate, each with the
//    time it costs, ordered by that time. The time is GPU time for idle and gaps, copy time for
//    pageable copies, host time held for synchronous copies and syncs (nsys's measure: it can
//    exceed the GPU time lost, since the GPU may be busy while the host waits), launch time over
//    kernel time for launch-bound kernels, and the modelled saving for a graph. nsys's
//    gpu_time_util is covered by the idle finding.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiler/clock_skew.h"
#include "profiler/communication.h"
#include "profiler/counters.h"
#include "profiler/phases.h"
#include "profiler/recording.h"

namespace fusebox::profiler {

enum class IdleCause : uint8_t { HostBound, Sync, CopyWait, Other };
const char* idle_cause_name(IdleCause c);  // "host_bound", "sync", "copy_wait", "other"

struct HostOverlap {
  std::string name;        // host span or runtime call name
  int64_t overlap_ns = 0;  // the union of that name's items within the gap
};

struct IdleGap {
  int32_t device = 0;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  IdleCause cause = IdleCause::Other;
  // The host activity during it, largest overlap first (a few): the innermost host spans and
  // the API calls, not the ranges around them (those cover every gap alike).
  std::vector<HostOverlap> host;
};

struct DeviceSplit {
  int32_t device = 0;
  int64_t window_start_ns = 0, window_end_ns = 0;  // first GPU work's start, last one's end
  int64_t window_ns = 0;
  int64_t busy_ns = 0;  // union of kernels, copies and memsets over all streams
  int64_t idle_ns = 0;  // window - busy
  int64_t kernel_ns = 0, memcpy_ns = 0, memset_ns = 0, sync_ns = 0;  // sums of durations
  int64_t kernel_count = 0, memcpy_count = 0, memset_count = 0, sync_count = 0;
  uint64_t memcpy_bytes = 0, memset_bytes = 0;
  int64_t streams = 0;
  // Idle time by cause (sums to idle_ns).
  int64_t idle_host_bound_ns = 0, idle_sync_ns = 0, idle_copy_wait_ns = 0, idle_other_ns = 0;
  int64_t gap_count = 0;
  std::vector<IdleGap> longest_gaps;  // longest first, at most options.top_gaps
  CommSplit comm;                     // communication vs computation kernels
  double idle_fraction() const {
    return window_ns > 0 ? static_cast<double>(idle_ns) / window_ns : 0;
  }
};

struct DelayStats {
  int64_t count = 0;
  double median_ns = 0, p90_ns = 0, max_ns = 0, mean_ns = 0;
};

struct LaunchStats {
  int64_t kernels = 0;               // all kernels
  int64_t correlated = 0;            // with a runtime call
  int64_t calls = 0;                 // direct launch calls (each once)
  DelayStats launch_delay;           // per direct launch: first kernel start - call start
  DelayStats queue_delay;            // per direct launch: first kernel start - call end
  int64_t queue_negative = 0;        // of those, kernels starting before their call returned
  DelayStats call_duration;          // the direct launch calls
  int64_t launch_bound = 0;          // direct launches whose call took longer than their kernels
  int64_t launch_bound_lost_ns = 0;  // sum over those of min(call, median call) - kernels
  int64_t launch_call_total_ns = 0;  // sum of the direct launch calls' durations
};

struct GraphReplays {
  int64_t replays = 0;           // graph launch calls that ran kernels
  int64_t kernels = 0, kernel_ns = 0;
  int64_t launch_call_ns = 0;    // the graph launch calls' total duration
  DelayStats kernels_per_replay;
  DelayStats replay_span_ns;     // per replay: first kernel start to last kernel end
  double host_ns_per_kernel = 0;  // launch_call_ns / kernels
  // With replays: the directly launched kernels, outside every graph.
  int64_t outside_kernels = 0, outside_kernel_ns = 0;
  int64_t outside_calls = 0, outside_call_ns = 0;
  int64_t captures = 0;               // stream captures begun
  int64_t captured_launch_calls = 0;  // kernel launch calls inside a capture
  int64_t instantiations = 0, instantiate_ns = 0;
};

struct KernelGroup {
  std::string key;  // kernel name, or the launching host span's name
  int64_t count = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  double mean_ns = 0;
  double share = 0;  // of all kernel time
};

struct CopyGroup {
  std::string direction;  // "HtoD"...
  std::string src, dst;   // memory kind names: "pageable", "device"...
  bool pageable = false;
  int64_t count = 0;
  int64_t sized = 0;  // copies whose size the trace records (bytes > 0)
  uint64_t bytes = 0;
  int64_t total_ns = 0;
  int64_t sized_ns = 0;  // the time of those
  double gbs = 0;        // bytes / sized_ns; 0 when no copy is sized
};

struct GraphCandidate {
  int32_t thread = 0;
  std::vector<std::string> kernels;  // the repeated sequence
  int64_t repetitions = 0;
  int64_t launch_ns = 0;  // launch calls' total duration in those repetitions
  int64_t kernel_ns = 0;  // the kernels' total duration in them
  int64_t saving_ns = 0;  // launch_ns - repetitions * mean launch call
};

struct GpuFinding {
  std::string sentence;
  int64_t time_lost_ns = 0;
  std::string kind;  // "gpu_bound", "communication", "gpu_idle", "gpu_gaps", "pageable_copy",
                     // "memcpy_sync", "api_sync", "launch_bound", "graph_outside", "cuda_graph"
  std::string next;  // the level to open next ("kernels", "one GPU", ...), "" when none
};

struct GpuAnalysisOptions {
  size_t top_gaps = 10;                // longest gaps listed per device
  size_t top_host = 3;                 // host names listed per gap
  int64_t gap_threshold_ns = 1000000;  // gpu_gaps finding: gaps longer than this (nsys: 500 ms)
  size_t min_sequence = 3, max_sequence = 8;  // graph candidates: sequence length
  int64_t min_repeats = 3;
  int64_t max_launch_gap_ns = 20000;  // host gap between launches still "back to back"
  double gpu_bound_idle = 0.10;       // a device idle at most this share of its window
};

struct GpuAnalysis {
  bool has_gpu = false;              // any kernel, memcpy or memset
  // The runtime the host calls name, for the advice's API names: "HIP" where more runtime calls
  // start with "hip" than with "cu" (a ROCm trace), else "CUDA".
  std::string runtime = "CUDA";
  std::vector<DeviceSplit> devices;  // by device id
  int64_t kernel_count = 0, kernel_ns = 0;
  int64_t memcpy_count = 0, memcpy_ns = 0;
  uint64_t memcpy_bytes = 0;
  int64_t memset_count = 0, memset_ns = 0;
  uint64_t memset_bytes = 0;
  LaunchStats launch;
  GraphReplays graphs;
  ClockSkew skew;
  CommSplit comm;                       // over all devices (sums of the per-device splits)
  std::vector<CommGroup> collectives;   // communication kernels by collective
  std::vector<std::string> warnings;    // what the figures had to correct for (clock skew)
  Phases phases;                        // LLM serving phases (phases.h), where annotated
  std::vector<CounterSummary> counters;  // the counter tracks (counters.h): memory, KV cache
  std::vector<KernelGroup> kernels_by_name;      // by total, largest first
  std::vector<KernelGroup> kernels_by_launcher;  // by total, largest first
  std::vector<CopyGroup> copies;                 // by total time, largest first
  std::vector<GraphCandidate> graph_candidates;  // best per host thread, by saving
  std::vector<GpuFinding> findings;              // by time lost, largest first
};

GpuAnalysis analyze_gpu(const Recording& r, const GpuAnalysisOptions& options = {});
// The same analysis, after moving `r`'s host side (spans, runtime and sync records) onto the
// GPU's clock where clock_skew.h detects an offset: what a viewer of the trace then draws is
// what the figures measured (a launch before its kernel, not 146 ms after it). The figures and
// the warning are analyze_gpu's; it copies the recording to shift it, this does not.
GpuAnalysis analyze_gpu_aligning(Recording& r, const GpuAnalysisOptions& options = {});
std::string gpu_analysis_text(const GpuAnalysis& a);
nlohmann::json gpu_analysis_json(const GpuAnalysis& a);

}  // namespace fusebox::profiler
