#pragma once
// What every panel draws from. A panel is one struct in one file: its own state (scroll, zoom,
// sort order), one `void draw(const Frame& frame)` over the current result and the shared
// selection, and a `Drawn` record of what the last frame put on screen (tests assert on it).
// A panel never runs the engine and never changes shared state itself: every user action it
// sees (a click, a checkbox, a menu item) becomes a command string handed to frame.command,
// which the App runs after the frame, the same way `--do` and the tests drive it.
//
//   frame.command("passes.fuse_patterns=off");   // a settings key: re-runs the pipeline
//   frame.command("select=Attention_0");         // selects a node in every panel
//
// Every panel has an explicit empty state (no result yet: what is running) and error state (the
// last run failed: the message, with the last good result still drawn when there is one).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <functional>
#include <memory>
#include <string>

#include "app/workbench/kernel_level.h"
#include "app/workbench/run_result.h"
#include "app/workbench/runner.h"
#include "app/workbench/settings.h"

namespace fusebox::workbench {
class LayoutCache;
struct OpenedTrace;
class Walkthrough;
}

namespace fusebox::ui {

// The selection every panel shows: a node of the current result's graph, by name.
struct Selection {
  std::string node;  // "" when nothing is selected
  std::string kernel;  // an opened trace's kernel (its name), "" when none
  bool empty() const { return node.empty(); }
};

// The panels, in the order the keys 1-8 focus them, and their names (commands, scenarios'
// look_at, the View menu). A new panel: its file, its id and name here, its member in App and
// its row in App::make_panels (which says where it sits and draws it).
enum class PanelId : uint8_t { Graph, Arena, Trace, Ops, Compare, Passes, Walkthrough, Details };
inline constexpr const char* kPanelNames[] = {"graph",   "arena",  "trace",       "ops",
                                              "compare", "passes", "walkthrough", "details"};
inline constexpr int kPanelCount = static_cast<int>(std::size(kPanelNames));
inline const char* panel_name(PanelId id) { return kPanelNames[static_cast<size_t>(id)]; }

struct Frame {
  const workbench::Runner::Snapshot& snap;   // result (last good, may be null), error, progress
  const workbench::Settings& settings;       // what the user asked for (ahead of the result while running)
  std::shared_ptr<const workbench::RunResult> baseline;  // pinned, or null
  const Selection& selection;
  PanelId focus = PanelId::Graph;             // the focused panel draws a highlighted border
  std::function<void(const std::string&)> command;
  const workbench::Walkthrough* walkthrough = nullptr;  // the scenario being played, or null
  workbench::LayoutCache* layouts = nullptr;  // the App's graph layouts (the graph panel asks it)
  // A GPU trace file opened instead of a model (open=FILE.json.gz / .sqlite), or null. While
  // one is open the trace and op table panels show it, and the panels that draw a graph say
  // there is none (result_or_empty_state).
  const workbench::OpenedTrace* trace = nullptr;
  // A trace pinned as the compare baseline (pin while a trace is open), or null: the compare
  // panel sets the trace on screen against it (workbench/trace_compare.h).
  const workbench::OpenedTrace* baseline_trace = nullptr;
  // An Nsight Compute export opened beside `trace` (kernels=PATH), or null.
  const workbench::KernelLevel* kernels = nullptr;

  const workbench::RunResult* result() const { return snap.result.get(); }
};

}  // namespace fusebox::ui
