#include "app/ui/compare_panel.h"

#include <imgui.h>

#include <cmath>

#include "app/ui/model_title.h"
#include "app/ui/widgets.h"
#include "app/workbench/opened_trace.h"

namespace fusebox::ui {
namespace {

// "-12.3%" in green when it went down (less time, fewer nodes, smaller arena), red when up.
void delta(double a, double b) {
  if (a <= 0) {
    ImGui::TextDisabled("-");
    return;
  }
  const double pct = 100.0 * (b - a) / a;
  const ImVec4 color = std::fabs(pct) < 0.5 ? ImVec4(0.7f, 0.7f, 0.7f, 1)
                       : pct < 0            ? ImVec4(0.45f, 0.85f, 0.45f, 1)
                                            : ImVec4(0.95f, 0.45f, 0.4f, 1);
  ImGui::TextColored(color, "%+.1f%%", pct);
}

// The header row of a table: what the rows are, then baseline, current and change.
void setup_columns(const char* rows) {
  ImGui::TableSetupColumn(rows);
  ImGui::TableSetupColumn("baseline");
  ImGui::TableSetupColumn("current");
  ImGui::TableSetupColumn("change");
  ImGui::TableHeadersRow();
}

constexpr ImGuiTableFlags kTableFlags =
    ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp;

void summary_row(const char* name, const std::string& a, const std::string& b, double va,
                 double vb) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(name);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(a.c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(b.c_str());
  ImGui::TableNextColumn();
  delta(va, vb);
}

// The latency row: each side's median with its spread, and the change coloured by the verdict:
// grey "within noise" unless the Mann-Whitney test and the minimum effect both call it.
void latency_row(const workbench::RunComparison& c) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted("latency");
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(c.latency_a.text().c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(c.latency_b.text().c_str());
  ImGui::TableNextColumn();
  const workbench::Verdict v = c.verdict.verdict;
  const ImVec4 color = v == workbench::Verdict::Faster   ? ImVec4(0.45f, 0.85f, 0.45f, 1)
                       : v == workbench::Verdict::Slower ? ImVec4(0.95f, 0.45f, 0.4f, 1)
                                                         : ImVec4(0.7f, 0.7f, 0.7f, 1);
  ImGui::TextColored(color, "%+.1f%% %s", 100 * c.verdict.effect, workbench::verdict_name(v));
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", c.verdict.text().c_str());
}

// Latency, nodes, arena, lower bound and kernel time, side by side.
void draw_summary(const workbench::RunComparison& c) {
  if (!ImGui::BeginTable("summary", 4, kTableFlags)) return;
  setup_columns("");
  latency_row(c);
  summary_row("nodes", std::to_string(c.ops.nodes_a), std::to_string(c.ops.nodes_b),
              static_cast<double>(c.ops.nodes_a), static_cast<double>(c.ops.nodes_b));
  summary_row("arena", format_bytes(static_cast<double>(c.ops.arena_a)),
              format_bytes(static_cast<double>(c.ops.arena_b)), static_cast<double>(c.ops.arena_a),
              static_cast<double>(c.ops.arena_b));
  summary_row("lower bound", format_bytes(static_cast<double>(c.lower_bound_a)),
              format_bytes(static_cast<double>(c.lower_bound_b)),
              static_cast<double>(c.lower_bound_a), static_cast<double>(c.lower_bound_b));
  if (c.ops.run_ns_a > 0 && c.ops.run_ns_b > 0)
    summary_row("kernel time / run", format_ns(c.ops.kernel_ns_a), format_ns(c.ops.kernel_ns_b),
                c.ops.kernel_ns_a, c.ops.kernel_ns_b);
  ImGui::EndTable();
}

// Time per run in each op type, with the types that appeared or went.
void draw_op_types(const workbench::RunComparison& c) {
  if (c.ops.op_types.empty() ||
      !ImGui::BeginTable("optypes", 4, kTableFlags | ImGuiTableFlags_ScrollY))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  setup_columns("op type (time per run)");
  for (const auto& d : c.ops.op_types) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%s", d.op.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s (%lld)", format_ns(d.ns_per_run_a).c_str(), static_cast<long long>(d.nodes_a));
    ImGui::TableNextColumn();
    ImGui::Text("%s (%lld)", format_ns(d.ns_per_run_b).c_str(), static_cast<long long>(d.nodes_b));
    ImGui::TableNextColumn();
    if (d.nodes_a == 0)
      ImGui::TextColored(ImVec4(0.6f, 0.8f, 1, 1), "new");
    else if (d.nodes_b == 0)
      ImGui::TextColored(ImVec4(0.6f, 0.8f, 1, 1), "gone");
    else
      delta(d.ns_per_run_a, d.ns_per_run_b);
  }
  ImGui::EndTable();
}

// The ops that appeared, vanished or changed, folded.
void draw_op_lists(const workbench::RunComparison& c) {
  if (c.ops.new_ops.empty() && c.ops.vanished_ops.empty() && c.ops.changed_ops.empty()) return;
  if (!ImGui::TreeNode("ops", "%zu new, %zu gone, %zu changed ops", c.ops.new_ops.size(),
                       c.ops.vanished_ops.size(), c.ops.changed_ops.size()))
    return;
  for (const auto& o : c.ops.new_ops) ImGui::BulletText("new: %s", o.c_str());
  for (const auto& o : c.ops.vanished_ops) ImGui::BulletText("gone: %s", o.c_str());
  for (const auto& o : c.ops.changed_ops) ImGui::BulletText("%s: %s", o.name.c_str(), o.what.c_str());
  ImGui::TreePop();
}

// The headline: the verdict first (a change within noise is not painted as a finding), then the
// ratio of the medians, then the test that decided it; a noisy side's warning under it.
void draw_verdict(const workbench::RunComparison& c) {
  const workbench::Verdict v = c.verdict.verdict;
  if (v == workbench::Verdict::WithinNoise) {
    ImGui::Text("within noise (%.2fx)", c.speedup());
  } else {
    ImGui::TextColored(v == workbench::Verdict::Faster ? ImVec4(0.45f, 0.85f, 0.45f, 1)
                                                       : ImVec4(0.95f, 0.45f, 0.4f, 1),
                       "%s: %.2fx", workbench::verdict_name(v), c.speedup());
  }
  ImGui::SameLine();
  ImGui::TextDisabled(
      "(baseline median / current median; p = %.2g, needs p < %g and |change| >= %g%%)",
      c.verdict.p_value, c.verdict.rule.alpha, 100 * c.verdict.rule.min_effect);
  for (const workbench::Latency* l : {&c.latency_a, &c.latency_b}) {
    const std::string noisy = l->noise_warning();
    if (!noisy.empty())
      ImGui::TextColored(ImVec4(0.95f, 0.7f, 0.3f, 1), "%s %s",
                         l == &c.latency_a ? "baseline" : "current", noisy.c_str());
  }
}

// Kernels or host ops by name, largest change first; unchanged names left out.
void draw_name_deltas(const char* id, const char* rows, const std::vector<workbench::NameDelta>& v,
                      size_t& drawn_rows) {
  if (!ImGui::BeginTable(id, 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit))
    return;
  ImGui::TableSetupColumn(rows, ImGuiTableColumnFlags_WidthStretch);
  for (const char* c : {"change", "baseline (n)", "current (n)", "current - baseline"})
    ImGui::TableSetupColumn(c, ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableHeadersRow();
  size_t shown = 0;
  for (const workbench::NameDelta& d : v) {
    if (d.delta_ns() == 0 && d.count_a == d.count_b) continue;
    if (++shown > 40) break;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(d.name.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", d.name.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(d.change());
    ImGui::TableNextColumn();
    ImGui::Text("%s (%lld)", format_ns(static_cast<double>(d.ns_a)).c_str(), static_cast<long long>(d.count_a));
    ImGui::TableNextColumn();
    ImGui::Text("%s (%lld)", format_ns(static_cast<double>(d.ns_b)).c_str(), static_cast<long long>(d.count_b));
    ImGui::TableNextColumn();
    const double dn = static_cast<double>(d.delta_ns());
    ImGui::TextColored(dn < 0 ? ImVec4(0.45f, 0.85f, 0.45f, 1) : ImVec4(0.95f, 0.45f, 0.4f, 1), "%s%s",
                       dn < 0 ? "-" : "+", format_ns(std::fabs(dn)).c_str());
    ++drawn_rows;
  }
  ImGui::EndTable();
  if (shown == 0) ImGui::TextDisabled("no change");
}

}  // namespace

// Two recordings: the pinned trace against the one on screen (workbench/trace_compare.h, HTA's
// trace_diff): the steps' verdict, the categories, then kernels and host ops by name.
void ComparePanel::draw_traces(const Frame& frame) {
  if (!frame.baseline_trace) {
    ImGui::TextDisabled("compare: no trace pinned.");
    ImGui::TextWrapped("Pin this trace (pin, or the bar's \"pin baseline\"), then open another "
                       "recording (another commit, batch size or GPU): this panel shows what "
                       "appeared, vanished, got faster or slower, by kernel and by category.");
    return;
  }
  if (frame.baseline_trace == frame.trace) {
    ImGui::TextDisabled("compare: the pinned trace is the one on screen; open another to compare.");
    return;
  }
  if (trace_a_ != frame.baseline_trace->id || trace_b_ != frame.trace->id) {
    traces_ = workbench::compare_traces(*frame.baseline_trace, *frame.trace);
    trace_a_ = frame.baseline_trace->id;
    trace_b_ = frame.trace->id;
  }
  const workbench::TraceComparison& c = *traces_;
  drawn.compared = true;
  drawn.sides = "baseline: " + c.file_a + "\ncurrent: " + c.file_b;
  ImGui::TextWrapped("baseline: %s", c.file_a.c_str());
  ImGui::TextWrapped("current:  %s", c.file_b.c_str());
  if (c.step_verdict) {
    drawn.verdict = workbench::verdict_name(c.step_verdict->verdict);
    ImGui::TextWrapped("steps: %s -> %s: %s", c.step_latency_a.text().c_str(), c.step_latency_b.text().c_str(),
                       c.step_verdict->text().c_str());
  } else {
    ImGui::TextWrapped("%s", c.no_verdict.c_str());
  }
  if (ImGui::BeginTable("categories", 4, kTableFlags)) {
    setup_columns("GPU time by category");
    for (const workbench::CategoryDelta& d : c.categories) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(d.category.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_ns(static_cast<double>(d.ns_a)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_ns(static_cast<double>(d.ns_b)).c_str());
      ImGui::TableNextColumn();
      delta(static_cast<double>(d.ns_a), static_cast<double>(d.ns_b));
      ++drawn.rows;
    }
    ImGui::EndTable();
  }
  draw_name_deltas("kernels", "kernel", c.kernels, drawn.rows);
  draw_name_deltas("host_ops", "host op", c.ops, drawn.rows);
}

// None yet: pinning is the App's (pin, unpin).
std::vector<PanelSwitch> ComparePanel::switches() { return {}; }

std::string ComparePanel::command(const std::string& key, const std::string& value,
                                  const workbench::RunResult* result) {
  return run_switch("compare", switches(), key, value, result);
}

void ComparePanel::draw(const Frame& frame) {
  draw_focus_border(frame, PanelId::Compare);
  drawn = {};
  if (frame.trace) {
    draw_traces(frame);
    return;
  }
  if (!result_or_empty_state(frame, "compare")) return;
  if (!frame.baseline) {
    ImGui::TextDisabled("compare: no baseline pinned.");
    ImGui::TextWrapped(
        "Press \"pin baseline\" to keep this result, then flip a pass, the planner, the "
        "executor or the threads: this panel shows baseline vs current.");
    return;
  }
  if (!measured_or_note(frame, "compare")) return;
  const auto& current = frame.snap.result;
  if (cached_a_ != frame.baseline.get() || cached_b_ != current.get()) {
    comparison_ = workbench::compare(*frame.baseline, *current);
    cached_a_ = frame.baseline.get();
    cached_b_ = current.get();
    keep_a_ = frame.baseline;
    keep_b_ = current;
  }
  const workbench::RunComparison& c = *comparison_;
  drawn.compared = true;
  drawn.speedup = c.speedup();
  drawn.verdict = workbench::verdict_name(c.verdict.verdict);

  const std::string a = model_title(frame.baseline->settings.model) + " " + frame.baseline->settings.label();
  const std::string b = model_title(current->settings.model) + " " + current->settings.label();
  ImGui::TextWrapped("baseline: %s", a.c_str());
  ImGui::TextWrapped("current:  %s", b.c_str());
  drawn.sides = "baseline: " + a + "\ncurrent: " + b;
  if (frame.baseline->settings.model != current->settings.model) {
    ImGui::TextColored(ImVec4(0.95f, 0.7f, 0.3f, 1),
                       "different models: per-op rows compare op types only");
  }
  draw_verdict(c);
  draw_summary(c);
  draw_op_types(c);
  draw_op_lists(c);
}

}  // namespace fusebox::ui
