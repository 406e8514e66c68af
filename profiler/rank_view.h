#pragma once
// Several ranks of one job as one recording, for one window: each rank's spans and device
// records one after the other (rank order), so a timeline can show the ranks as groups of
// tracks and a selection can reach from one rank to the others.
//
// What merging changes, and nothing else:
//  - A rank's GPU keeps its number unless an earlier rank used it; it then gets the next number
//    no rank uses (ranks on separate nodes all call their GPU 0). Host threads likewise.
//  - Correlation ids are made unique across ranks (each rank's are moved past the previous
//    ranks' largest), so a launch is tied to its own rank's kernel only; 0 stays "none".
//  - Times are the traces' own: ranks on one node share its clock. (The host side of each rank is
//    already on its GPU's clock when it was opened with analyze_gpu_aligning.)
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/recording.h"

namespace fusebox::profiler {

// One rank's share of the merged recording: spans [span_begin, span_end), device records
// [device_begin, device_end).
struct RankSlice {
  int32_t rank = -1;
  std::string label;  // "rank 3"
  size_t span_begin = 0, span_end = 0;
  size_t device_begin = 0, device_end = 0;
  size_t counter_begin = 0,
         counter_end = 0;  // its counters' samples, tracks named "<label> <name>"
};

struct MergedRanks {
  Recording recording;
  std::vector<RankSlice> slices;  // in the order given
};

// Consumes `ranks` (one recording per rank, in rank order, each with its `rank` set). Throws
// fusebox::Error when the ranks hold more launches than 32-bit correlation ids can tell apart.
MergedRanks merge_ranks(std::vector<Recording>&& ranks);

// One rank's share of the merged recording, as a recording of its own (a copy).
Recording slice_recording(const Recording& merged, const RankSlice& slice);

// The same collective on the other ranks: for a communication kernel (communication.h) at
// `activity` in the merged recording, the kernel of the same name that is the same launch of
// that name on each other rank (the k-th in start order on both). NCCL runs a communicator's
// collectives in the order every rank issues them, so the k-th launch of a collective kernel
// is the same collective on every rank whose trace covers the same steps (what ranks.h checks).
// Empty for anything else.
std::vector<size_t> same_collective(const Recording& merged, const std::vector<RankSlice>& slices,
                                    size_t activity);

}  // namespace fusebox::profiler
