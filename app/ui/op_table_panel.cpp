#include "app/ui/op_table_panel.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "app/ui/widgets.h"
#include "app/workbench/graph_layout.h"
#include "core/base/strings.h"

namespace fusebox::ui {
namespace {

ImU32 bound_color(profiler::Bound b) {
  switch (b) {
    case profiler::Bound::Compute:
      return IM_COL32(110, 200, 120, 255);
    case profiler::Bound::Memory:
      return IM_COL32(90, 160, 240, 255);
    case profiler::Bound::Overhead:
      return IM_COL32(240, 150, 70, 255);
    case profiler::Bound::BelowRoofs:
      return IM_COL32(235, 95, 120, 255);
    case profiler::Bound::Unknown:
      break;
  }
  return kTextDim;
}

enum Column {
  kOp, kCount, kMedian, kSpread, kShare, kPerCall, kGflops, kGbs, kCompute, kMemory, kBound, kColumns
};

void breakdown_bar(const profiler::Breakdown& b) {
  if (b.run_ns <= 0) return;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetFontSize() * 1.1f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  struct Part {
    double ns;
    ImU32 color;
    const char* name;
  };
  const Part parts[] = {{b.kernel_ns, IM_COL32(80, 170, 110, 255), "kernels"},
                        {b.gap_ns, IM_COL32(230, 140, 60, 255), "gaps"},
                        {b.edge_ns, IM_COL32(140, 140, 160, 255), "edges"}};
  float x = p.x;
  for (const Part& part : parts) {
    const float pw = static_cast<float>(w * std::clamp(part.ns / b.run_ns, 0.0, 1.0));
    dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + pw, p.y + h), part.color);
    x += pw;
  }
  ImGui::Dummy(ImVec2(w, h));
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "median run %s: kernels %s (%.0f%%), gaps between kernels %s (%.0f%%), "
        "edges (copy in/out) %s (%.0f%%); %lld ops per run",
        format_ns(b.run_ns).c_str(), format_ns(b.kernel_ns).c_str(), 100 * b.kernel_fraction(),
        format_ns(b.gap_ns).c_str(), 100 * b.gap_fraction(), format_ns(b.edge_ns).c_str(),
        100 * b.edge_fraction(), static_cast<long long>(b.ops_per_run));
  }
  ImGui::TextDisabled(
      "recorded run %s (median of %lld, hooks on) = kernels %.0f%% + gaps %.0f%% + edges %.0f%%  "
      "(%lld ops)",
      format_ns(b.run_ns).c_str(), static_cast<long long>(b.runs), 100 * b.kernel_fraction(),
      100 * b.gap_fraction(), 100 * b.edge_fraction(), static_cast<long long>(b.ops_per_run));
}

// The figures' columns: each as wide as its header (with room for the sort arrow) or its widest
// usual value, whichever is wider, so no header is clipped.
struct FigureColumn {
  const char* header;
  const char* widest;
  ImGuiTableColumnFlags flags;
};
constexpr ImGuiTableColumnFlags kDesc = ImGuiTableColumnFlags_PreferSortDescending;
constexpr FigureColumn kFigureColumns[] = {
    {"calls", "999", 0},                                               // per run
    {"median", "99.9 us", ImGuiTableColumnFlags_DefaultSort | kDesc},  // per run
    {"p10-p90", "99.9 us - 999 us", kDesc},
    {"%run", "99.9", kDesc},
    {"/call", "99.9 us", kDesc},
    {"GFLOP/s", "9999.9", kDesc},
    {"GB/s", "999.9", kDesc},
    {"%comp", "100%", kDesc},
    {"%mem", "100%", kDesc},
};
float figure_width(const FigureColumn& c) {
  return std::max(ImGui::CalcTextSize(c.header).x + ImGui::GetFontSize(),
                  ImGui::CalcTextSize(c.widest).x);
}
// What the names and the bound class need to be read: below it, the table scrolls sideways.
float names_min_width() {
  return ImGui::CalcTextSize("NhwcGlobalAveragePool").x + ImGui::CalcTextSize("memory-bound").x;
}

// Whether the figures leave the names and the bound class too little of `width` to be read.
bool table_too_narrow(float width) {
  float figures = 0;
  for (const FigureColumn& c : kFigureColumns)
    figures += figure_width(c) + 2 * ImGui::GetStyle().CellPadding.x;
  return width - figures < names_min_width();
}

// The table's columns; the first names the rows (op types or nodes), the figures follow, and the
// names and the bound class share what is left. In a panel too narrow for that (`scroll`), the
// names and bound get the width they need, the table scrolls sideways and the names stay put.
void setup_columns(bool by_node, bool scroll) {
  ImGui::TableSetupScrollFreeze(scroll ? 1 : 0, 1);
  const char* name = by_node ? "node" : "op";
  if (scroll)
    ImGui::TableSetupColumn(
        name, ImGuiTableColumnFlags_WidthFixed,
        ImGui::CalcTextSize("NhwcGlobalAveragePool").x + ImGui::GetFontSize());  // and its swatch
  else
    ImGui::TableSetupColumn(name, ImGuiTableColumnFlags_WidthStretch, 2.6f);
  for (const FigureColumn& c : kFigureColumns)
    ImGui::TableSetupColumn(c.header, c.flags | ImGuiTableColumnFlags_WidthFixed, figure_width(c));
  if (scroll)
    ImGui::TableSetupColumn("bound", ImGuiTableColumnFlags_WidthFixed,
                            ImGui::CalcTextSize("memory-bound").x);
  else
    ImGui::TableSetupColumn("bound", ImGuiTableColumnFlags_WidthStretch, 2.4f);
  ImGui::TableHeadersRow();
}

// By the column the user clicked, in its direction.
void sort_rows(std::vector<const profiler::OpRow*>& rows) {
  ImGuiTableSortSpecs* sort = ImGui::TableGetSortSpecs();
  if (!sort || sort->SpecsCount == 0) return;
  const ImGuiTableColumnSortSpecs spec = sort->Specs[0];
  auto key = [&](const profiler::OpRow* row) -> double {
    switch (spec.ColumnIndex) {
      case kCount:
        return row->calls_per_run;
      case kMedian:
        return row->run_median_ns;
      case kSpread:
        return row->run_p90_ns - row->run_p10_ns;
      case kShare:
        return row->run_share;
      case kPerCall:
        return row->stats.median_ns;
      case kGflops: return row->gflops;
      case kGbs: return row->gbs;
      case kCompute: return row->compute_fraction;
      case kMemory: return row->memory_fraction;
      case kBound: return static_cast<double>(row->bound) * 16 + static_cast<double>(row->reason);
      default: return 0;
    }
  };
  const bool ascending = spec.SortDirection == ImGuiSortDirection_Ascending;
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const profiler::OpRow* x, const profiler::OpRow* y) {
                     if (spec.ColumnIndex == kOp) return ascending ? x->key < y->key : x->key > y->key;
                     return ascending ? key(x) < key(y) : key(x) > key(y);
                   });
}

// The class as the column fits it: "below: tanh" for a transcendental op, "below: latency", ...
// (the tooltip has the whole label and why).
std::string short_label(const profiler::OpRow& row) {
  if (row.bound != profiler::Bound::BelowRoofs) return row.label();  // "L2-bound", "compute-bound"
  if (row.reason == profiler::BelowReason::Transcendental && !row.math.empty())
    return "below: " + join(row.math, ", ");
  return std::string("below: ") + profiler::below_reason_name(row.reason);
}

// A roof fraction as a percent: the binding roof's plain, the other dimmed; "n/a" where no roof
// fits (profiler/analysis.h: the op beat every roof its FLOPs or bytes allow).
void roof_percent(double fraction, bool binding, bool known) {
  if (!known) {
    ImGui::TextDisabled("n/a");
  } else if (binding) {
    ImGui::Text("%.0f%%", 100 * fraction);
  } else {
    ImGui::TextDisabled("%.0f%%", 100 * fraction);
  }
}

// The figures right of the name, per recorded run: calls, median time with its p10 - p90, share of
// the median run; then the median call, rates and bound.
void draw_figures(const profiler::OpRow& row) {
  ImGui::TableNextColumn();
  ImGui::Text("%g", row.calls_per_run);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(format_ns(row.run_median_ns).c_str());
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s - %s", format_ns(row.run_p10_ns).c_str(),
                      format_ns(row.run_p90_ns).c_str());
  ImGui::TableNextColumn();
  ImGui::Text("%.1f", 100 * row.run_share);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(format_ns(row.stats.median_ns).c_str());
  ImGui::TableNextColumn();
  ImGui::Text("%.1f", row.gflops);
  ImGui::TableNextColumn();
  ImGui::Text("%.1f", row.gbs);
  // Its place against both roofs, the binding one plain: the larger share is the roof at its
  // intensity (the compute roof right of the balance point, the memory roof left of it).
  const bool compute_side = row.compute_fraction >= row.memory_fraction;
  ImGui::TableNextColumn();
  roof_percent(row.compute_fraction, compute_side, !row.compute_roof.empty());
  ImGui::TableNextColumn();
  roof_percent(row.memory_fraction, !compute_side, !row.memory_level.empty());
  ImGui::TableNextColumn();
  ImGui::PushStyleColor(ImGuiCol_Text, bound_color(row.bound));
  ImGui::TextUnformatted(short_label(row).c_str());
  ImGui::PopStyleColor();
}

void row_tooltip(const profiler::OpRow& row) {
  ImGui::SetTooltip(
      "%s (%s)\n%s FLOP, %s moved per call; AI %.3f FLOP/B\n%s\n%s\nper call: min %s, median %s, max %s over "
      "%lld calls",
      row.key.c_str(), row.op.c_str(), format_count(row.flops).c_str(),
      format_bytes(row.bytes).c_str(), row.intensity, row.label().c_str(), row.why.c_str(),
      format_ns(row.stats.min_ns).c_str(), format_ns(row.stats.median_ns).c_str(),
      format_ns(row.stats.max_ns).c_str(), static_cast<long long>(row.stats.count));
}

}  // namespace

std::vector<PanelSwitch> OpTablePanel::switches() {
  return {
      {"group",
       {"type", "node"},
       "",
       "one row per op type, or one per node",
       [this](const std::string& v, const workbench::RunResult*) {
         by_node = v == "node";
         return std::string();
       }},
      {"phase",
       {"all", "prefill", "decode", "mixed", "idle"},
       "",
       "an opened serving or generation trace: the kernels (a CPU recording's ops) its steps of "
       "one phase "
       "launched, or all",
       [this](const std::string& v, const workbench::RunResult*) {
         gpu.phase = v == "all" ? "" : v;
         return std::string();
       }},
  };
}

std::string OpTablePanel::command(const std::string& key, const std::string& value) {
  return run_switch("ops", switches(), key, value, nullptr);
}

void OpTablePanel::draw(const Frame& frame) {
  draw_focus_border(frame, PanelId::Ops);
  drawn = {};
  if (frame.trace) {  // an opened GPU trace: its kernels and copies
    gpu.by_launcher = by_node;
    gpu.draw(frame, *frame.trace);
    drawn.rows = gpu.drawn.kernel_rows;
    return;
  }
  if (!result_or_empty_state(frame, "op table")) return;
  if (!measured_or_note(frame, "op table")) return;
  const workbench::RunResult& r = *frame.result();
  if (!r.analysis) {
    ImGui::TextDisabled("op table: no recorded runs (profile_runs=0): set profile_runs > 0");
    return;
  }
  const profiler::Analysis& a = *r.analysis;
  breakdown_bar(a.breakdown);

  if (ImGui::RadioButton("by op type", !by_node)) frame.command("ops.group=type");
  ImGui::SameLine();
  if (ImGui::RadioButton("by node", by_node)) frame.command("ops.group=node");
  ImGui::SameLine();
  // The memory roofs of the hierarchy at these threads ("L1 446, L2 229, L3 105, DRAM 30 GB/s"),
  // or the one measured bandwidth where the backend has no levels.
  auto gbs = [](double v) { return std::to_string(std::llround(v)); };
  std::string memory_roofs;
  for (size_t i = 0; i < a.roofline.levels.size(); ++i)
    memory_roofs += (i ? ", " : "") + a.roofline.levels[i].name + " " + gbs(a.roofline.level_gbs(i, a.threads));
  if (memory_roofs.empty()) memory_roofs = gbs(a.roofline.bandwidth_gbs);
  ImGui::TextDisabled("run %.1f GFLOP/s = %.0f%% of the FMA peak (%.0f at %d thread%s); GEMM roof %.0f GFLOP/s, "
                      "memory roofs %s GB/s, dispatch floor %s",
                      a.breakdown.run_gflops(), 100 * a.fma_fraction(), a.roofline.fma_peak_gflops(a.threads),
                      a.threads, a.threads == 1 ? "" : "s", a.roofline.peak_gflops(a.threads), memory_roofs.c_str(),
                      format_ns(a.roofline.dispatch_floor_ns).c_str());
  draw_table(frame, r, a);
}

void OpTablePanel::draw_table(const Frame& frame, const workbench::RunResult& r,
                              const profiler::Analysis& a) {
  std::vector<const profiler::OpRow*> rows;
  for (const auto& row : by_node ? a.by_node : a.by_type) rows.push_back(&row);
  const bool scroll = table_too_narrow(ImGui::GetContentRegionAvail().x);
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
      ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
      (scroll ? ImGuiTableFlags_ScrollX : ImGuiTableFlags_SizingStretchProp);
  if (!ImGui::BeginTable("ops", kColumns, flags)) return;
  drawn.scrolls_sideways = scroll;
  setup_columns(by_node, scroll);
  sort_rows(rows);
  // The selected node's op type, for the by-type table.
  std::string selected_op;
  for (const auto& n : r.graph().nodes) {
    if (n.name == frame.selection.node) selected_op = n.op;
  }
  for (const profiler::OpRow* row : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const bool selected = by_node ? row->key == frame.selection.node
                                  : (!selected_op.empty() && row->op == selected_op);
    draw_name(frame, a, *row, selected);
    draw_figures(*row);
    ++drawn.rows;
  }
  ImGui::EndTable();
}

// The row's name after its op kind's colour; a click selects the node (or the type's slowest).
void OpTablePanel::draw_name(const Frame& frame, const profiler::Analysis& a,
                             const profiler::OpRow& row, bool selected) {
  const ImU32 kind = rgb(workbench::node_kind_rgb(workbench::node_kind(row.op)));
  const ImVec2 c = ImGui::GetCursorScreenPos();
  const float sw = ImGui::GetFontSize() * 0.6f;
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(c.x, c.y + 3), ImVec2(c.x + sw, c.y + 3 + sw),
                                            kind);
  ImGui::SetCursorScreenPos(ImVec2(c.x + sw + 4, c.y));
  if (ImGui::Selectable(row.key.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
    if (by_node) {
      frame.command("select=" + (selected ? std::string() : row.key));
    } else if (!selected) {
      for (const auto& n : a.by_node) {
        if (n.op == row.op) {
          frame.command("select=" + n.key);
          break;
        }
      }
    }
  }
  if (selected) drawn.selected_row = ImRect(ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
  if (ImGui::IsItemHovered()) row_tooltip(row);
}

}  // namespace fusebox::ui
