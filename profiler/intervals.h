#pragma once
// Time intervals [start, end) on one clock (nanoseconds): merged into their union, measured,
// intersected, and an index answering how much of a span a set covers. The GPU analysis, clock
// skew, communication and ranks all measure unions of kernels and calls with these.
#include <cstdint>
#include <utility>
#include <vector>

namespace fusebox::profiler {

using Interval = std::pair<int64_t, int64_t>;
using Intervals = std::vector<Interval>;

// Sorted and disjoint, touching intervals joined, empty ones dropped.
Intervals merged(Intervals iv);
// The total length of merged intervals.
int64_t length(const Intervals& merged_iv);
// The length of the union of any intervals.
int64_t union_length(Intervals iv);
// |a ∩ b| of two merged lists, in one walk.
int64_t intersection(const Intervals& a, const Intervals& b);

// A set of intervals merged into their union: how much of [s, e) does it cover? O(log n).
class CoverIndex {
 public:
  void add(int64_t s, int64_t e) {
    if (e > s) iv_.push_back({s, e});
  }
  void build();  // after the adds, before covered()
  int64_t covered(int64_t s, int64_t e) const { return e > s ? upto(e) - upto(s) : 0; }

 private:
  int64_t upto(int64_t t) const;  // covered time before t
  Intervals iv_;                  // disjoint, sorted once built
  std::vector<int64_t> prefix_;
};

}  // namespace fusebox::profiler
