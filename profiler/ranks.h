#pragma once
// The ranks of one distributed job, one trace each, read side by side: per rank its step time,
// computation, communication and idle time, and the straggler: the rank the others wait for.
// Times are nanoseconds.
//
// Definitions:
//  - A rank is kineto's distributedInfo.rank, else the number after "rank" in the file's name
//    ("rank-3", "rank_3", "rank3"). The ranks must belong to one job: the same world size
//    where the traces say it, no rank twice, each below the world size. Ranks of the world not
//    given are listed; the straggler is then named among those given.
//  - Steps are the profiler's step annotations ("ProfilerStep#N", a host range on the main
//    thread, as PyTorch's profiler.step() writes them). The ranks are aligned on step number N,
//    not on time (their hosts' clocks need not agree): the figures are over the steps every
//    rank has. With no step annotation in any trace, each rank's whole GPU window is one step.
//    A trace with steps beside one without, or step sets with nothing in common, cannot be
//    aligned and are refused, naming the files and their steps.
//  - A step's GPU work: steps.h (launched inside the step's host range).
//    Per rank and step: step time (the host range's duration), computation and communication
//    kernel time (sums of durations, communication.h's classification), exposed communication
//    (communication.h, HTA's definition) and idle = step time - |U(the step's GPU work)|,
//    at least 0.
//  - The straggler (HTA's straggler analysis reasons the same way from late-starting
//    collectives): a collective kernel starts on each rank when that rank launches it and
//    completes only when every rank has joined, so a rank that arrives early spends its wait
//    inside the collective, and the last to arrive spends the least time in communication. The
//    straggler is the rank with the least communication time over the common steps; the time
//    each other rank waits for it is its communication time beyond the straggler's, per step,
//    summed (this takes the transfer itself to cost every rank the same). Without communication
//    kernels no rank waits for another, and the slowest step is reported instead.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/recording.h"

namespace fusebox::profiler {

struct RankTrace {
  std::string file;
  const Recording* recording = nullptr;
};

struct RankStep {
  int64_t step = 0;  // N of ProfilerStep#N; -1 for the whole window
  int64_t step_ns = 0;
  int64_t compute_ns = 0, comm_ns = 0, comm_exposed_ns = 0, idle_ns = 0;
  int64_t wait_ns = 0;  // waiting for the straggler in this step
};

struct RankSummary {
  int32_t rank = -1;
  std::string file;
  std::string rank_from;  // "distributedInfo" or "file name"
  int32_t world_size = 0;
  std::vector<RankStep> steps;  // the common steps, in step order
  // Sums over the common steps.
  int64_t step_ns = 0, compute_ns = 0, comm_ns = 0, comm_exposed_ns = 0, idle_ns = 0;
  int64_t wait_ns = 0;
};

struct RankAnalysis {
  int32_t world_size = 0;             // 0 when no trace says
  std::vector<RankSummary> ranks;     // by rank
  int64_t missing = 0;                // ranks of the world not given
  std::vector<int32_t> missing_first; // the first few of them
  std::vector<int64_t> steps;         // the common step numbers; {-1}: whole windows
  std::string step_source;            // how the steps were found
  bool communication = false;         // any communication kernel in the steps
  int32_t straggler = -1;
  int64_t others_wait_ns = 0;         // the other ranks' waits, summed
  std::string verdict;
};

// Throws fusebox::Error naming the files when the traces are not ranks of one job.
RankAnalysis analyze_ranks(const std::vector<RankTrace>& traces);
std::string rank_analysis_text(const RankAnalysis& a);
nlohmann::json rank_analysis_json(const RankAnalysis& a);

}  // namespace fusebox::profiler
