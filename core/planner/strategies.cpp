#include "core/planner/strategies.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace fusebox::planner {

namespace {

bool overlap_in_time(const Buffer& a, const Buffer& b) { return a.first <= b.last && b.first <= a.last; }

struct Placed {
  size_t offset, bytes;
};

// The gaps left by `busy` (placed buffers alive at the same time), lowest offset first.
// `best` picks the smallest gap that fits; otherwise the first one. No gap fits: above them all.
size_t find_offset(size_t bytes, std::vector<Placed> busy, bool best) {
  std::sort(busy.begin(), busy.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
  size_t cursor = 0, chosen = std::numeric_limits<size_t>::max();
  size_t chosen_gap = std::numeric_limits<size_t>::max();
  for (const Placed& p : busy) {
    if (p.offset >= cursor + bytes) {
      size_t gap = p.offset - cursor;
      if (!best) return cursor;
      if (gap < chosen_gap) chosen_gap = gap, chosen = cursor;
    }
    cursor = std::max(cursor, p.offset + p.bytes);
  }
  return chosen != std::numeric_limits<size_t>::max() ? chosen : cursor;
}

// Places buffers one at a time in `order`, each against the already-placed ones it meets in time.
std::vector<size_t> place_in_order(const std::vector<Buffer>& buffers, const std::vector<size_t>& order,
                                   bool best) {
  std::vector<size_t> offsets(buffers.size(), 0);
  std::vector<size_t> done;
  for (size_t i : order) {
    std::vector<Placed> busy;
    for (size_t j : done)
      if (overlap_in_time(buffers[i], buffers[j])) busy.push_back({offsets[j], buffers[j].bytes});
    offsets[i] = find_offset(buffers[i].bytes, std::move(busy), best);
    done.push_back(i);
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
