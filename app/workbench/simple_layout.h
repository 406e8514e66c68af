#pragma once
// The layout for graphs too big for dot (see kLayeredLayoutMaxBoxes): boxes in rows by rank (the
// longest path from the inputs; the outputs in the last row), in graph order within a row, a rank
// wider than kSimpleLayoutRowBoxes wrapped onto several rows, edges drawn straight. No crossing
// minimisation: linear in the graph, so any graph the window can hold lays out in well under a
// second.
#include <atomic>
#include <string>
#include <vector>

#include "app/workbench/graph_layout.h"

namespace fusebox::workbench {

// The rank of every box of `l` (boxes and edges described, no coordinates): inputs and nodes
// reading only weights 0, a node one below its lowest-placed producer, outputs below every node.
std::vector<size_t> layout_ranks(const GraphLayout& l);
// The number of boxes in the most crowded rank.
size_t widest_rank(const std::vector<size_t>& ranks);

// Sizes and places l.boxes (labels: each box's two lines, "\n" between) and draws l.edges as
// straight lines with arrowheads; sets l.width and l.height. Throws LayoutCancelled once `stop`
// (when given) is set.
void simple_layout(GraphLayout& l, const std::vector<std::string>& labels,
                   const std::vector<size_t>& ranks, const std::atomic<bool>* stop);

}  // namespace fusebox::workbench
