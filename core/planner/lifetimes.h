#pragma once
// Lifetime analysis over a graph's execution order (step i = graph.nodes[i]).
//  - Every tensor that needs arena memory gets one Buffer: graph inputs (copied in before step 0),
//    node outputs, and kernel scratch (sized by the target backend, live for exactly its step).
//  - View outputs (Reshape & co) get no buffer: they alias their source's root buffer, and each
//    use of a view extends the root's life.
//  - In-place updates (OpSchema::in_place: ScatterND, ScatterElements) write output 0 into input
//    0's buffer when nothing reads those bytes after the node: every tensor sharing them (the
//    root, its views, earlier in-place outputs) has its last use there, none is a graph output,
//    and no other input of the node shares them. A KV cache updated by scatter (Hugging Face's
//    static cache) is then written where it lies, not copied whole each step.
//  - Graph outputs live to the last step. Weights live outside the arena and get no buffer.
//  - The lower bound is the most bytes live at any one step: no plan can use less arena.
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/op_schema.h"

namespace fusebox::planner {

// What the planner takes from the backend that will run the plan (exec::memory_rules makes it
// from one): the alignment of every buffer and each kernel's scratch bytes.
struct MemoryRules {
  size_t alignment = 0;  // a power of two
  ir::ScratchFn scratch;  // node, input types, output types -> bytes
};

struct Buffer {
  std::string name;  // tensor name, or "<node>:scratch"
  size_t bytes = 0;  // rounded up to the rules' alignment
  int first = 0;     // first step it must hold data (inclusive)
  int last = 0;      // last step it must hold data (inclusive)
  bool scratch = false;
  int step_of_scratch = -1;  // for scratch buffers: the node index it belongs to
};

struct Lifetimes {
  std::vector<Buffer> buffers;
  // view tensor -> the tensor whose buffer it shares (transitively resolved); weights and
  // graph inputs can be roots too.
  std::unordered_map<std::string, std::string> alias_root;
  int num_steps = 0;
  size_t lower_bound = 0;              // max over steps of live bytes
  std::vector<size_t> live_bytes;      // per step
};

// Throws fusebox::Error for rules with no scratch function or an alignment not a power of two.
Lifetimes analyze_lifetimes(const ir::Graph& graph, const MemoryRules& rules);
// `bytes` rounded up to a multiple of `alignment` (at least one alignment).
size_t align_bytes(size_t bytes, size_t alignment);

}  // namespace fusebox::planner
