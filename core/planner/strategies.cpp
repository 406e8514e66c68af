#include "core/planner/strategies.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "core/base/error.h"

namespace fusebox::planner {

namespace {

bool overlap_in_time(const Buffer& a, const Buffer& b) { return a.first <= b.last && b.first <= a.last; }

// Places buffers one at a time in `order`, each against the already-placed ones it meets in time:
// the gaps they leave, lowest offset first; `best` takes the smallest gap that fits, otherwise the
// first. No gap fits: above them all. The placed buffers are kept sorted by offset, so each
// placement is one scan (the work grows with the square of the buffers, hence the cap).
std::vector<size_t> place_in_order(const std::vector<Buffer>& buffers, const std::vector<size_t>& order,
                                   bool best) {
  if (buffers.size() > kMaxGapSearchBuffers)
    throw Error("planner: " + std::to_string(buffers.size()) + " buffers; first_fit, best_fit and greedy_by_size " +
                "place at most " + std::to_string(kMaxGapSearchBuffers) +
                " (their work grows with the square of it): use planner=naive");
  std::vector<size_t> offsets(buffers.size(), 0);
  std::vector<size_t> by_offset;  // placed buffers, lowest offset first
  by_offset.reserve(buffers.size());
  for (size_t i : order) {
    const size_t bytes = buffers[i].bytes;
    size_t cursor = 0, chosen = std::numeric_limits<size_t>::max(), chosen_gap = chosen;
    for (size_t j : by_offset) {
      if (!overlap_in_time(buffers[i], buffers[j])) continue;
      const size_t at = offsets[j];
      if (at >= cursor + bytes) {
        if (!best) {
          chosen = cursor;
          break;
        }
        if (at - cursor < chosen_gap) chosen_gap = at - cursor, chosen = cursor;
      }
      cursor = std::max(cursor, at + buffers[j].bytes);
    }
    offsets[i] = chosen != std::numeric_limits<size_t>::max() ? chosen : cursor;
    const auto where = std::upper_bound(by_offset.begin(), by_offset.end(), offsets[i],
                                        [&](size_t off, size_t j) { return off < offsets[j]; });
    by_offset.insert(where, i);
  }
  return offsets;
}

std::vector<size_t> execution_order(const std::vector<Buffer>& b) {
  std::vector<size_t> order(b.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return b[x].first < b[y].first; });
  return order;
}

std::vector<size_t> naive(const std::vector<Buffer>& b) {
  std::vector<size_t> offsets;
  size_t cursor = 0;
  for (const Buffer& x : b) offsets.push_back(cursor), cursor += x.bytes;
  return offsets;
}

std::vector<size_t> first_fit(const std::vector<Buffer>& b) {
  return place_in_order(b, execution_order(b), /*best=*/false);
}

std::vector<size_t> best_fit(const std::vector<Buffer>& b) {
  return place_in_order(b, execution_order(b), /*best=*/true);
}

// TFLite / XLA "greedy by size": the big buffers choose first, then smaller ones fill the gaps.
std::vector<size_t> greedy_by_size(const std::vector<Buffer>& b) {
  std::vector<size_t> order(b.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (b[x].bytes != b[y].bytes) return b[x].bytes > b[y].bytes;
    int lx = b[x].last - b[x].first, ly = b[y].last - b[y].first;
    if (lx != ly) return lx > ly;  // equal sizes: the longest-lived claims its place first
    return b[x].first < b[y].first;
  });
  return place_in_order(b, order, /*best=*/true);
}

}  // namespace

const Registry<Strategy>& strategies() {
  static const Registry<Strategy> all = [] {
    Registry<Strategy> r("planner");
    r.add({"naive", "no reuse: every buffer gets its own bytes (what an allocator-free eager run needs)", naive});
    r.add({"first_fit", "in execution order, the lowest gap that fits among buffers alive at the same time",
           first_fit});
    r.add({"best_fit", "in execution order, the smallest gap that fits (less fragmentation than first_fit)",
           best_fit});
    r.add({"greedy_by_size", "largest buffers first, each in the best-fitting gap (TFLite/XLA offset planning)",
           greedy_by_size});
    return r;
  }();
  return all;
}

}  // namespace fusebox::planner
