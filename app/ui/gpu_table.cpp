#include "app/ui/gpu_table.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "app/ui/widgets.h"

namespace fusebox::ui {
namespace {

// One device's window as a bar: the kinds' shares of the busy time, then idle.
void device_bar(const profiler::DeviceSplit& d) {
  if (d.window_ns <= 0) return;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetFontSize() * 1.1f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Per-kind sums can exceed busy (streams overlap): scale them into the busy part.
  const double kinds = static_cast<double>(d.kernel_ns + d.memcpy_ns + d.memset_ns);
  const double busy_scale = kinds > 0 ? static_cast<double>(d.busy_ns) / kinds : 0;
  struct Part {
    double ns;
    ImU32 color;
  };
  const Part parts[] = {{d.kernel_ns * busy_scale, kKernelColor},
                        {d.memcpy_ns * busy_scale, kMemcpyColor},
                        {d.memset_ns * busy_scale, kMemsetColor},
                        {static_cast<double>(d.idle_ns), kIdleColor}};
  float x = p.x;
  for (const Part& part : parts) {
    const float pw = static_cast<float>(w * std::clamp(part.ns / static_cast<double>(d.window_ns), 0.0, 1.0));
    dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + pw, p.y + h), part.color);
    x += pw;
  }
  ImGui::Dummy(ImVec2(w, h));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "GPU %d over %s (first GPU work to last): kernels %s, copies %s, memsets %s (sums; "
        "streams may overlap), busy %s, idle %s: host-bound %s, sync %s, copy wait %s, other %s",
        d.device, format_ns(static_cast<double>(d.window_ns)).c_str(),
        format_ns(static_cast<double>(d.kernel_ns)).c_str(), format_ns(static_cast<double>(d.memcpy_ns)).c_str(),
        format_ns(static_cast<double>(d.memset_ns)).c_str(), format_ns(static_cast<double>(d.busy_ns)).c_str(),
        format_ns(static_cast<double>(d.idle_ns)).c_str(), format_ns(static_cast<double>(d.idle_host_bound_ns)).c_str(),
        format_ns(static_cast<double>(d.idle_sync_ns)).c_str(),
        format_ns(static_cast<double>(d.idle_copy_wait_ns)).c_str(),
        format_ns(static_cast<double>(d.idle_other_ns)).c_str());
  ImGui::TextDisabled("GPU %d: %s window, idle %.0f%% (%s), %lld kernels on %lld stream%s", d.device,
                      format_ns(static_cast<double>(d.window_ns)).c_str(), 100 * d.idle_fraction(),
                      format_ns(static_cast<double>(d.idle_ns)).c_str(), static_cast<long long>(d.kernel_count),
                      static_cast<long long>(d.streams), d.streams == 1 ? "" : "s");
}

// A phase's op table (profiler/phases.h: Phase::kernels) as kernel rows, each with its share of
// the phase's kernel time; `phase` "" merges every phase's.
std::vector<profiler::KernelGroup> phase_groups(const profiler::Phases& phases,
                                                const std::string& phase) {
  std::map<std::string, profiler::KernelGroup> by;
  int64_t total = 0;
  for (const profiler::Phase& p : phases.phases) {
    if (!phase.empty() && p.name != phase) continue;
    total += p.kernel_ns;
    for (const profiler::PhaseKernel& k : p.kernels) {
      profiler::KernelGroup& g = by[k.name];
      g.key = k.name;
      g.count += k.count;
      g.total_ns += k.total_ns;
    }
  }
  std::vector<profiler::KernelGroup> out;
  for (auto& [name, g] : by) {
    g.mean_ns =
        static_cast<double>(g.total_ns) / static_cast<double>(std::max<int64_t>(1, g.count));
    g.share = total > 0 ? static_cast<double>(g.total_ns) / static_cast<double>(total) : 0;
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const profiler::KernelGroup& a, const profiler::KernelGroup& b) {
              return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.key < b.key;
            });
  return out;
}

std::string ns_text(int64_t ns) {
  return format_ns(static_cast<double>(ns));
}

}  // namespace

// Graph replays, captures, communication and serving phases: one line each where the trace has
// them (the CLI prints the tables).
void GpuTable::level_lines(const profiler::GpuAnalysis& a) {
  const profiler::GraphReplays& g = a.graphs;
  auto line = [&](const std::string& text) {
    ImGui::Bullet();
    ImGui::TextWrapped("%s", text.c_str());
    ++drawn.level_lines;
  };
  if (g.replays > 0)
    line("graph replays: " + std::to_string(g.replays) + " launches ran " +
         std::to_string(g.kernels) + " kernels (" + ns_text(g.kernel_ns) + " of GPU time, " +
         ns_text(static_cast<int64_t>(g.host_ns_per_kernel)) + " of host time a kernel); outside the graphs " +
         std::to_string(g.outside_kernels) + " kernels, " + ns_text(g.outside_kernel_ns));
  if (g.captures > 0)
    line("graph capture: " + std::to_string(g.captured_launch_calls) +
         " launch calls recorded into graphs (they ran nothing), " + std::to_string(g.instantiations) +
         " instantiations, " + ns_text(g.instantiate_ns));
  if (a.comm.kernel_count > 0) {
    std::string groups;
    for (const profiler::CommGroup& c : a.collectives)
      groups += (groups.empty() ? "" : ", ") + c.collective + " " + ns_text(c.total_ns) +
                (c.sized ? " (busbw " + std::to_string(static_cast<int>(c.busbw_gbs + 0.5)) + " GB/s)" : "");
    line("communication: " + std::to_string(a.comm.kernel_count) + " kernels, " +
         ns_text(a.comm.kernel_ns) + ", " + ns_text(a.comm.exposed_ns) + " exposed (" +
         std::to_string(static_cast<int>(100 * a.comm.overlap_fraction() + 0.5)) +
         "% overlapped): " + groups);
  }
  const bool cpu = a.phases.work == "cpu";
  for (const profiler::Phase& p : a.phases.phases)
    line(p.name + ": " + std::to_string(p.steps) + (p.steps == 1 ? " step, " : " steps, ") +
         ns_text(p.step_ns / std::max<int64_t>(1, p.steps)) + " a step, " +
         (cpu ? "ops " + ns_text(p.kernel_ns) +
                    (a.phases.kv_writes_told ? ", KV-cache writes " + ns_text(p.kv_write_ns) : "") +
                    (p.kernels.empty() ? "" : ", most " + p.kernels[0].name)
              : "GPU " + ns_text(p.kernel_ns) + ", KV-cache writes " + ns_text(p.kv_write_ns)) +
         (p.tokens >= 0
              ? ", " + std::to_string(static_cast<long long>(p.tokens_per_s + 0.5)) + " tokens/s"
              : ""));
}

// Several ranks: each one's figures over the common steps (profiler/ranks.h), the straggler
// marked, the verdict, and whose analysis the rest of the panel shows.
void GpuTable::rank_rows(const workbench::OpenedTrace& trace) {
  const profiler::RankAnalysis& ra = *trace.ranks;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("ranks", 7, flags)) {
    for (const char* c : {"rank", "step", "compute", "communication", "exposed", "idle", "waits"})
      ImGui::TableSetupColumn(c);
    ImGui::TableHeadersRow();
    const double steps = static_cast<double>(std::max<size_t>(1, ra.steps.size()));
    for (const profiler::RankSummary& r : ra.ranks) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", r.rank);
      for (int64_t v : {r.step_ns, r.compute_ns, r.comm_ns, r.comm_exposed_ns, r.idle_ns}) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(ns_text(static_cast<int64_t>(static_cast<double>(v) / steps)).c_str());
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.rank == ra.straggler ? "straggler" : ns_text(static_cast<int64_t>(static_cast<double>(r.wait_ns) / steps)).c_str());
      ++drawn.ranks;
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled("per step, the mean over the %zu common steps; waits: for the straggler", ra.steps.size());
  ImGui::TextWrapped("%s", ra.verdict.c_str());
  ImGui::Separator();
  ImGui::Text("below: rank %d's own analysis", trace.slices.at(trace.shown_rank).rank);
}

// The fine-grained level of one kernel: its profiled launch's Speed Of Light as bars, the unit at
// its limit, occupancy and its limiter, then everything else ncu's report holds, as text.
void GpuTable::kernel_figures(const workbench::KernelLevel& level, const profiler::KernelLink& link) {
  const profiler::KernelFigures& f = level.figures_of(link);
  ImGui::Separator();
  ImGui::Text("kernel level: %s", link.name.c_str());
  ImGui::TextDisabled("ncu launch %s of %s (%s match%s)", level.ncu.kernels[link.ncu.front()].id.c_str(),
                      level.ncu.kernels[link.ncu.front()].file.c_str(), link.match.c_str(),
                      link.match == "name" ? (", profiled at grid " + f.grid + ", block " + f.block).c_str() : "");
  const struct {
    const char* unit;
    const std::optional<double>& pct;
  } bars[] = {{"SM (compute)", f.sm_throughput_pct}, {"memory", f.memory_throughput_pct},
              {"L1/TEX", f.l1_throughput_pct},      {"L2", f.l2_throughput_pct},
              {"DRAM", f.dram_throughput_pct}};
  const float label_w = ImGui::CalcTextSize("SM (compute)  ").x;
  for (const auto& b : bars) {
    ImGui::TextUnformatted(b.unit);
    ImGui::SameLine(label_w);
    if (b.pct) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f%% of peak", *b.pct);
      ImGui::ProgressBar(static_cast<float>(std::clamp(*b.pct / 100.0, 0.0, 1.0)), ImVec2(-1, 0), text);
    } else {
      ImGui::TextDisabled("not in this report (needs section SpeedOfLight)");
    }
  }
  ImGui::TextUnformatted("FP32 roof");
  ImGui::SameLine(label_w);
  if (const profiler::GpuRoofline& r = f.roofline; r.pct_of_roof) {
    char text[96];
    std::snprintf(text, sizeof text, "%.1f%% of the roof at %.3g FLOP/byte (%s-bound)", *r.pct_of_roof, *r.intensity,
                  r.bound.c_str());
    ImGui::ProgressBar(static_cast<float>(std::clamp(*r.pct_of_roof / 100.0, 0.0, 1.0)), ImVec2(-1, 0), text);
  } else {
    ImGui::TextDisabled("%s", r.note.c_str());
  }
  ++drawn.kernel_figures;
  // The fine-grained list first (what to look at, by estimated gain), then the report's figures.
  ImGui::TextUnformatted("fine-grained, by estimated gain (definitions: profiler/kernel_findings.h)");
  std::string untold;
  for (const profiler::KernelFinding& x : f.findings) {
    if (!x.measured) {
      untold += (untold.empty() ? "" : ", ") + x.item;
      continue;
    }
    ImGui::Bullet();
    if (x.gain_pct)
      ImGui::TextWrapped("%s: %s [est. %.1f%%, %s]", x.item.c_str(), x.text.c_str(), *x.gain_pct, x.gain_source.c_str());
    else
      ImGui::TextWrapped("%s: %s", x.item.c_str(), x.text.c_str());
    ++drawn.kernel_findings;
  }
  if (!untold.empty()) {
    ImGui::TextDisabled("not in this report: %s", untold.c_str());
    if (ImGui::IsItemHovered()) {
      std::string needs;
      for (const profiler::KernelFinding& x : f.findings)
        if (!x.measured) needs += x.item + ": " + x.needs + "\n";
      ImGui::SetTooltip("%s", needs.c_str());
    }
  }
  ImGui::TextWrapped("%s", profiler::kernel_figures_text(f, false).c_str());
}

void GpuTable::phase_picker(const Frame& frame, const profiler::Phases& phases) {
  if (phases.phases.empty()) return;
  ImGui::TextUnformatted("phase:");
  auto choice = [&](const std::string& label, const std::string& value) {
    ImGui::SameLine();
    if (ImGui::RadioButton(label.c_str(), phase == value))
      frame.command("ops.phase=" + (value.empty() ? "all" : value));
    ++drawn.phase_choices;
  };
  choice("all", "");
  for (const profiler::Phase& p : phases.phases) choice(p.name, p.name);
  if (!phase.empty() && std::none_of(phases.phases.begin(), phases.phases.end(),
                                     [&](const profiler::Phase& p) { return p.name == phase; })) {
    ImGui::SameLine();
    ImGui::TextDisabled("(no %s steps in this trace)", phase.c_str());
  }
}

void GpuTable::kernel_table(const Frame& frame, const std::vector<profiler::KernelGroup>& groups,
                            const char* header, bool selectable) {
  // The kernel level beside the trace: each kernel row's limiter, and the selected one's figures.
  const workbench::KernelLevel* level = frame.kernels;
  const bool limiters = level && selectable;
  const profiler::KernelLink* chosen = level && !frame.selection.kernel.empty() ? level->by_name(frame.selection.kernel)
                                                                                  : nullptr;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_ScrollY;
  const float table_h = std::max(ImGui::GetContentRegionAvail().y * (chosen ? 0.22f : 0.6f), ImGui::GetFontSize() * 6);
  if (ImGui::BeginTable("gpu_kernels", limiters ? 6 : 5, flags, ImVec2(0, table_h))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn(header, ImGuiTableColumnFlags_WidthStretch);
    for (const char* c : {"count", "total", "mean", "share"}) ImGui::TableSetupColumn(c, ImGuiTableColumnFlags_WidthFixed);
    if (limiters) ImGui::TableSetupColumn("limiter (ncu)", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    for (const profiler::KernelGroup& g : groups) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (!selectable) {
        ImGui::TextUnformatted(g.key.c_str());
      } else if (ImGui::Selectable(
                     g.key.c_str(), g.key == frame.selection.kernel,
                     ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap)) {
        frame.command("kernel=" + (g.key == frame.selection.kernel ? std::string() : g.key));
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", g.key.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(g.count));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_ns(static_cast<double>(g.total_ns)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_ns(g.mean_ns).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.1f%%", 100 * g.share);
      if (limiters) {
        ImGui::TableNextColumn();
        if (const profiler::KernelLink* link = level->by_name(g.key)) {
          const profiler::KernelFigures& f = level->figures_of(*link);
          ImGui::TextUnformatted(f.limiter.empty() ? "no SOL" : f.limiter.c_str());
          ++drawn.kernel_limiters;
        } else {
          ImGui::TextDisabled("-");
        }
      }
      ++drawn.kernel_rows;
    }
    ImGui::EndTable();
  }
}

void GpuTable::draw(const Frame& frame, const workbench::OpenedTrace& trace) {
  drawn = {};
  const profiler::GpuAnalysis& a = trace.analysis;
  ImGui::TextUnformatted(trace.summary().c_str());
  if (trace.ranks) rank_rows(trace);
  if (!a.has_gpu) {
    ImGui::TextDisabled(a.phases.phases.empty() ? "no GPU activity in this trace (no kernels, copies or memsets)"
                                                : "no GPU activity: each step's work is its CPU ops");
    level_lines(a);  // a CPU recording's phases (fusebox generate --out): its ops are the work
    if (a.phases.phases.empty()) return;
    phase_picker(frame, a.phases);
    kernel_table(frame, phase_groups(a.phases, phase),
                 phase.empty() ? "op, every phase" : ("op in " + phase).c_str(), false);
    return;
  }
  for (const profiler::DeviceSplit& d : a.devices) device_bar(d);
  for (const std::string& w : a.warnings) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("warning: %s", w.c_str());
    ImGui::PopStyleColor();
    ++drawn.warnings;
  }

  if (ImGui::CollapsingHeader("findings, by time lost", ImGuiTreeNodeFlags_DefaultOpen)) {
    for (const profiler::GpuFinding& f : a.findings) {
      ImGui::Bullet();
      ImGui::TextWrapped("%s", f.sentence.c_str());
      ++drawn.findings;
    }
    if (a.findings.empty()) ImGui::TextDisabled("no findings");
  }
  level_lines(a);

  if (ImGui::RadioButton("kernels by name", !by_launcher)) frame.command("ops.group=type");
  ImGui::SameLine();
  if (ImGui::RadioButton("by launching host range", by_launcher)) frame.command("ops.group=node");
  item_tooltip(
      "The innermost host op or NVTX range on the launching thread around each launch call.");
  phase_picker(frame, a.phases);
  const workbench::KernelLevel* level = frame.kernels;
  if (level) {
    ImGui::TextDisabled("kernel level: %s: %s", level->path.c_str(), level->summary().c_str());
    ++drawn.kernel_level_lines;
  }
  // A phase picked: the kernels its steps launched, by name; else all, by name or by launcher.
  if (!phase.empty() && !a.phases.phases.empty()) {
    kernel_table(frame, phase_groups(a.phases, phase), ("kernel in " + phase).c_str(), true);
  } else {
    kernel_table(frame, by_launcher ? a.kernels_by_launcher : a.kernels_by_name,
                 by_launcher ? "launched by" : "kernel", !by_launcher);
  }
  const profiler::KernelLink* chosen =
      level && !frame.selection.kernel.empty() ? level->by_name(frame.selection.kernel) : nullptr;
  if (chosen) kernel_figures(*level, *chosen);
  else if (level && !frame.selection.kernel.empty())
    ImGui::TextDisabled("%s: no profiled launch of this kernel in %s", frame.selection.kernel.c_str(), level->path.c_str());
  if (!a.copies.empty() && ImGui::BeginTable("gpu_copies", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    for (const char* c : {"copy", "count", "bytes", "time", "GB/s"}) ImGui::TableSetupColumn(c);
    ImGui::TableHeadersRow();
    for (const profiler::CopyGroup& c : a.copies) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (c.pageable) ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
      ImGui::Text("%s %s -> %s%s", c.direction.c_str(), c.src.c_str(), c.dst.c_str(), c.pageable ? " (pageable)" : "");
      if (c.pageable) ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(c.count));
      ImGui::TableNextColumn();
      // No sized copy (the trace left the size off): "-", as the text report says it.
      ImGui::TextUnformatted(c.sized ? format_bytes(static_cast<double>(c.bytes)).c_str() : "-");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_ns(static_cast<double>(c.total_ns)).c_str());
      ImGui::TableNextColumn();
      if (c.sized) ImGui::Text("%.1f", c.gbs);
      else ImGui::TextUnformatted("-");
      ++drawn.copy_rows;
    }
    ImGui::EndTable();
  }
}

}  // namespace fusebox::ui
