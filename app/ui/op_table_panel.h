#pragma once
// The op table: per op type or per node, time, share, achieved GFLOP/s and GB/s, its % of the
// compute roof and of the memory roof, and the class (compute-, memory-, overhead-bound or below
// both roofs with the reason, profiler/analysis.h) with the numbers in its tooltip; sortable by
// any column. Above it the run's breakdown (kernels vs the
// gaps between them vs the run's edges) as one bar. With a GPU trace open, the GPU analysis
// instead (app/ui/gpu_table.h).
#include <imgui.h>
#include <imgui_internal.h>  // ImRect

#include <optional>
#include <string>
#include <vector>

#include "app/ui/gpu_table.h"
#include "app/ui/panel.h"
#include "app/ui/panel_switch.h"
#include "profiler/analysis.h"

namespace fusebox::ui {

struct OpTablePanel {
  void draw(const Frame& frame);
  // "ops.group=type|node", as a table (app/ui/panel_switch.h).
  std::vector<PanelSwitch> switches();
  std::string command(const std::string& key, const std::string& value);

  bool by_node = false;  // with an opened trace: kernels by launching host range
  GpuTable gpu;           // what it draws for an opened GPU trace
  struct Drawn {
    size_t rows = 0;
    bool scrolls_sideways = false;       // too narrow for the names beside the figures: ScrollX
    std::optional<ImRect> selected_row;  // screen rect of the selected node's row (or its type's)
  } drawn;

 private:
  void draw_table(const Frame& frame, const workbench::RunResult& r, const profiler::Analysis& a);
  void draw_name(const Frame& frame, const profiler::Analysis& a, const profiler::OpRow& row,
                 bool selected);
};

}  // namespace fusebox::ui
