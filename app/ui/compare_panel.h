#pragma once
// Baseline vs current: pin a result (the bar's "pin baseline"), flip switches, and see the
// latency, nodes, arena and per-op-type time side by side, with the ops that appeared, vanished
// or changed. The comparison is computed once per (baseline, current) pair. With a trace open,
// the same for two recordings: pin one, open another, and the steps' verdict, the GPU time by
// category and the kernels and host ops that appeared, vanished, or got faster or slower show.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"
#include "app/workbench/compare.h"
#include "app/workbench/trace_compare.h"

namespace fusebox::ui {

struct ComparePanel {
  void draw(const Frame& frame);
  // "compare.<key>=<value>": none yet (the table is empty; pin and unpin are the App's).
  std::vector<PanelSwitch> switches();
  std::string command(const std::string& key, const std::string& value,
                      const workbench::RunResult* result);

  struct Drawn {
    bool compared = false;  // a comparison was drawn (a baseline is pinned and a result exists)
    double speedup = 0;     // baseline latency / current latency
    std::string verdict;    // "faster", "slower" or "within noise" (workbench/noise.h)
    std::string sides;      // "baseline: mlp passes=...\ncurrent: mlp passes=..."
    size_t rows = 0;        // two traces: category, kernel and host-op rows drawn
  } drawn;

 private:
  void draw_traces(const Frame& frame);
  uint64_t trace_a_ = 0, trace_b_ = 0;  // the traces compared (OpenedTrace::id)
  std::optional<workbench::TraceComparison> traces_;
  const workbench::RunResult* cached_a_ = nullptr;
  const workbench::RunResult* cached_b_ = nullptr;
  std::shared_ptr<const workbench::RunResult> keep_a_, keep_b_;  // so the pointers stay unique
  std::optional<workbench::RunComparison> comparison_;
};

}  // namespace fusebox::ui
