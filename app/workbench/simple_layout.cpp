#include "app/workbench/simple_layout.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace fusebox::workbench {

namespace {

// Close to what dot gives the same labels (10 pt Helvetica, nodesep 0.25 in, ranksep 0.3 in).
constexpr double kCharWidth = 6;
constexpr double kBoxPadding = 20;
constexpr double kMinBoxWidth = 54;
constexpr double kBoxHeight = 36;
constexpr double kColumnGap = 18;
constexpr double kRowGap = 28;
constexpr double kArrowLength = 6;
constexpr size_t kStopCheckEvery = 256;  // boxes or edges between looks at the stop flag

void check_stop(const std::atomic<bool>* stop, size_t i) {
  if (stop && i % kStopCheckEvery == 0 && stop->load(std::memory_order_relaxed))
    throw LayoutCancelled{};
}

double box_width(const std::string& label) {
  size_t longest = 0, line = 0;
  for (char c : label) {
    line = c == '\n' ? 0 : line + 1;
    longest = std::max(longest, line);
  }
  return std::max(kMinBoxWidth, kCharWidth * static_cast<double>(longest) + kBoxPadding);
}

// The boxes of each rank, in box order.
std::vector<std::vector<size_t>> by_rank(const std::vector<size_t>& ranks) {
  std::vector<std::vector<size_t>> rows;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] >= rows.size()) rows.resize(ranks[i] + 1);
    rows[ranks[i]].push_back(i);
  }
  return rows;
}

// Lays one row of boxes out left to right at `top`; returns the row's width.
double place_row(GraphLayout& l, const std::vector<std::string>& labels,
                 const std::vector<size_t>& boxes, size_t first, size_t last, double top,
                 const std::atomic<bool>* stop) {
  double x = 0;
  for (size_t k = first; k < last; ++k) {
    check_stop(stop, k);
    LayoutBox& b = l.boxes[boxes[k]];
    b.width = box_width(labels[boxes[k]]);
    b.height = kBoxHeight;
    b.x = x + b.width / 2;
    b.y = top + kBoxHeight / 2;
    x += b.width + kColumnGap;
  }
  return x - kColumnGap;
}

// A straight cubic from the bottom of `from` to just above the top of `to`, arrow to the top.
void route(const LayoutBox& from, const LayoutBox& to, LayoutEdge& e) {
  const LayoutPoint a{from.x, from.y + from.height / 2};
  const LayoutPoint tip{to.x, to.y - to.height / 2};
  const double dx = tip.x - a.x, dy = tip.y - a.y;
  const double length = std::max(1.0, std::hypot(dx, dy));
  const LayoutPoint b{tip.x - dx / length * kArrowLength, tip.y - dy / length * kArrowLength};
  e.points = {a,
              {a.x + (b.x - a.x) / 3, a.y + (b.y - a.y) / 3},
              {a.x + 2 * (b.x - a.x) / 3, a.y + 2 * (b.y - a.y) / 3},
              b};
  e.arrow_tip = tip;
  e.label_pos.reset();
}

}  // namespace

std::vector<size_t> layout_ranks(const GraphLayout& l) {
  // Longest path from the sources, box by box in topological order (Kahn). Without folds every
  // producer precedes its consumers; a folded scope can make a cycle (a node outside it between
  // two inside), which is broken at the earliest box still waiting. The outputs all go in one
  // row below the nodes.
  const size_t n = l.boxes.size();
  std::vector<size_t> ranks(n, 0), waiting(n, 0);
  std::vector<std::vector<size_t>> out(n);
  for (const LayoutEdge& e : l.edges) {
    if (e.from == e.to || e.to >= l.node_count) continue;
    out[e.from].push_back(e.to);
    ++waiting[e.to];
  }
  std::vector<bool> done(n, false);
  std::vector<size_t> ready;
  for (size_t i = n; i-- > 0;)
    if (waiting[i] == 0) ready.push_back(i);
  size_t settled = 0, next_stuck = 0;
  while (settled < n) {
    if (ready.empty()) {
      while (done[next_stuck]) ++next_stuck;
      ready.push_back(next_stuck);  // a cycle: take the earliest box
    }
    const size_t b = ready.back();
    ready.pop_back();
    if (done[b]) continue;
    done[b] = true;
    ++settled;
    for (size_t to : out[b]) {
      ranks[to] = std::max(ranks[to], ranks[b] + 1);
      if (waiting[to] > 0 && --waiting[to] == 0 && !done[to]) ready.push_back(to);
    }
  }
  size_t deepest = 0;
  for (size_t i = 0; i < l.node_count; ++i) deepest = std::max(deepest, ranks[i]);
  for (size_t i = 0; i < l.output_count; ++i) ranks[l.output_box(i)] = deepest + 1;
  return ranks;
}

size_t widest_rank(const std::vector<size_t>& ranks) {
  std::vector<size_t> count;
  size_t widest = 0;
  for (size_t r : ranks) {
    if (r >= count.size()) count.resize(r + 1, 0);
    widest = std::max(widest, ++count[r]);
  }
  return widest;
}

void simple_layout(GraphLayout& l, const std::vector<std::string>& labels,
                   const std::vector<size_t>& ranks, const std::atomic<bool>* stop) {
  double top = 0, width = 0;
  for (const std::vector<size_t>& row : by_rank(ranks)) {
    for (size_t first = 0; first < row.size(); first += kSimpleLayoutRowBoxes) {
      const size_t last = std::min(row.size(), first + kSimpleLayoutRowBoxes);
      width = std::max(width, place_row(l, labels, row, first, last, top, stop));
      top += kBoxHeight + kRowGap;
    }
  }
  for (size_t i = 0; i < l.edges.size(); ++i) {
    check_stop(stop, i);
    route(l.boxes[l.edges[i].from], l.boxes[l.edges[i].to], l.edges[i]);
  }
  l.width = width;
  l.height = std::max(0.0, top - kRowGap);
}

}  // namespace fusebox::workbench
