#pragma once
// Sorting what is most often in order already: an importer leaves its records in time order, so
// the analyses' and the timeline's arrays usually arrive sorted. One O(n) check spares the
// O(n log n) sort (on a 10M-event trace, a few hundred ms a sort).
//
// Two of them, as the standard has: sort_unless_sorted leaves equal elements in an unspecified
// order, as std::sort does; stable_sort_unless_sorted keeps their order. Where output depends
// on the order of ties, the call keeps the one it had.
#include <algorithm>

namespace fusebox {

template <class It, class Less>
void sort_unless_sorted(It first, It last, Less less) {
  if (!std::is_sorted(first, last, less)) std::sort(first, last, less);
}

template <class It, class Less>
void stable_sort_unless_sorted(It first, It last, Less less) {
  if (!std::is_sorted(first, last, less)) std::stable_sort(first, last, less);
}

}  // namespace fusebox
