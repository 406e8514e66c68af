#pragma once
// The op table: per op type or per node, time, share, achieved GFLOP/s and GB/s and the roofline
// class with the reason; sortable by any column. Above it the run's breakdown (kernels vs the
// gaps between them vs the run's edges) as one bar.
#include <imgui.h>
#include <imgui_internal.h>  // ImRect

#include <optional>
#include <string>

#include "app/ui/panel.h"

namespace fusebox::ui {

struct OpTablePanel {
  void draw(const Frame& frame);
  // "ops.group=type|node".
  std::string command(const std::string& key, const std::string& value);

  bool by_node = false;
  struct Drawn {
    size_t rows = 0;
    std::optional<ImRect> selected_row;  // screen rect of the selected node's row (or its type's)
  } drawn;
};

}  // namespace fusebox::ui
