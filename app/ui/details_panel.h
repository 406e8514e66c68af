#pragma once
// The details pane: everything the run knows about the selected node, in one place. Its op type
// (and the schema's one line on it), the shapes of its inputs and outputs and where each lives
// (weight, graph input, arena offset), its attributes; its time over the recorded runs (min /
// median / max per call, the median per run with p10 - p90); its point on the roofline
// (intensity, achieved GFLOP/s and GB/s, % of the compute roof and of the memory roof, the class
// with its reason, profiler/analysis.h); the arena buffers it writes, reads and scratches in
// (offset, size, the steps each is live); and the rewrites that made it (pass, pattern, sentence)
// with the loaded model's nodes it came from. A node that a pass removed (selected in a pass's
// "before" view) says which rewrite took it and what replaced it. Linked to the selection like
// every panel; with nothing selected it says so and how to select.
//
// node_details() gathers the figures (no ImGui): the panel draws them and its Drawn record keeps
// the last frame's copy for the tests.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"
#include "profiler/analysis.h"

namespace fusebox::ui {

struct TensorDetail {
  std::string name;
  std::string type;   // "f32[1,16,32]"
  std::string where;  // "weight", "graph input", "arena @ 4.0 KiB", "view of x", "graph output"
};

struct BufferDetail {
  std::string name;     // the buffer's tensor, or "<node>:scratch"
  std::string role;     // "writes", "reads", "scratch"
  size_t offset = 0;    // bytes from the arena's start
  size_t bytes = 0;
  int first = 0, last = 0;  // the steps it holds data, inclusive
};

struct RewriteDetail {
  std::string pass;     // "fuse_patterns"
  std::string pattern;  // "bias_gelu"
  std::string text;     // the rewrite's sentence
  std::vector<std::string> added;  // what it made (for a removed node: its replacements)
};

struct NodeDetails {
  enum class State : uint8_t {
    NoSelection,  // nothing selected
    NotFound,     // the selected name is in no graph of this run
    Removed,      // in the loaded model or a pass's snapshot, not in the graph that ran
    Node,         // a node of the graph that ran
  };
  State state = State::NoSelection;
  std::string node;
  std::string op, doc;  // op type and the schema's one line
  int index = -1;       // in the graph that ran (the execution step)
  std::vector<TensorDetail> inputs, outputs;
  std::vector<std::pair<std::string, std::string>> attributes;  // name, "name=value"
  std::optional<profiler::OpRow> row;  // its op-table row (by node); none without recorded runs
  std::vector<BufferDetail> buffers;
  std::vector<RewriteDetail> rewrites;  // Node: the rewrites that led to it (its origins' too),
                                        // in pass order; Removed: the one that removed it
  std::vector<std::string> origins;     // the loaded model's nodes it came from (itself when no
                                        // pass replaced it)
};

const char* details_state_name(NodeDetails::State s);  // "no selection", "not found", ...

// What `result` knows about `node` ("" : nothing selected).
NodeDetails node_details(const workbench::RunResult& result, const std::string& node);

struct DetailsPanel {
  void draw(const Frame& frame);
  // "details.<key>=<value>": none (it follows the selection).
  std::vector<PanelSwitch> switches() { return {}; }

  struct Drawn {
    bool empty_state = true;  // no result, an opened trace, or nothing selected: the note drawn
    std::string note;         // the empty state's text
    NodeDetails details;      // what the last frame drew (State::NoSelection when empty)
  } drawn;

 private:
  void draw_node(const Frame& frame, const NodeDetails& d);
};

}  // namespace fusebox::ui
