#include "app/ui/details_panel.h"

#include <imgui.h>

#include <algorithm>
#include <map>
#include <set>

#include "app/ui/widgets.h"
#include "core/base/strings.h"
#include "core/ir/op_schema.h"

namespace fusebox::ui {
namespace {

std::string type_of(const ir::TensorInfo& t) {
  return std::string(ir::dtype_name(t.dtype)) + ir::shape_str(t.shape);
}

// Whether `tensor` is an in-place update's output (OpSchema::in_place), not a view.
bool made_in_place(const ir::Graph& g, const std::string& tensor) {
  for (const ir::Node& n : g.nodes)
    if (!n.outputs.empty() && n.outputs[0] == tensor) return ir::OpRegistry::instance().get(n.op).in_place;
  return false;
}

// Where a tensor's bytes live while the graph runs.
std::string where_of(const workbench::RunResult& r, const std::string& tensor) {
  const ir::Graph& g = r.graph();
  if (g.is_weight(tensor)) return "weight";
  const auto it = r.plan->locations.find(tensor);
  std::string s;
  if (std::find(g.inputs.begin(), g.inputs.end(), tensor) != g.inputs.end()) s = "graph input";
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (it != r.plan->locations.end()) {
    const planner::Location& l = it->second;
    if (l.storage == planner::Storage::Weight) {
      add("view of weight " + l.root);
    } else {
      add("arena @ " + std::to_string(l.offset));
      if (l.root != tensor && !l.root.empty())
        add((made_in_place(g, tensor) ? "written in place over " : "view of ") + l.root);
    }
  }
  if (g.is_output(tensor)) add("graph output");
  return s;
}

std::vector<TensorDetail> tensors(const workbench::RunResult& r,
                                  const std::vector<std::string>& names) {
  std::vector<TensorDetail> out;
  for (const std::string& n : names) {
    if (n.empty()) {  // an omitted optional input
      out.push_back({"(none)", "", ""});
      continue;
    }
    const ir::Graph& g = r.graph();
    out.push_back({n, g.has_tensor(n) ? type_of(g.tensor(n)) : "?", where_of(r, n)});
  }
  return out;
}

// The rewrites that led to `node`, in pass order (those that edited or replaced the nodes it was
// made from too), and the loaded model's nodes it came from: every rewrite maps what it removed
// to what it added (or, when it only edited nodes, into those), so following the log forwards
// carries each node's origins and history along (a node no rewrite touched is its own origin).
void provenance(const workbench::RunResult& r, const std::string& node, NodeDetails& d) {
  std::map<std::string, std::vector<std::string>> origins;  // node -> loaded nodes it came from
  std::map<std::string, std::vector<RewriteDetail>> history;  // node -> rewrites that led to it
  auto origins_of = [&](const std::string& n) {
    const auto it = origins.find(n);
    return it != origins.end() ? it->second : std::vector<std::string>{n};
  };
  auto merge = [](std::vector<std::string>& into, const std::vector<std::string>& from) {
    for (const std::string& o : from)
      if (std::find(into.begin(), into.end(), o) == into.end()) into.push_back(o);
  };
  for (const passes::PassLogEntry& e : r.optimized->log.entries) {
    for (const passes::Rewrite& w : e.rewrites) {
      const RewriteDetail here{e.pass, w.pattern, w.text, w.added};
      std::vector<std::string> from;
      std::vector<RewriteDetail> past;
      for (const std::string& removed : w.removed) {
        merge(from, origins_of(removed));
        for (const RewriteDetail& h : history[removed]) past.push_back(h);
      }
      for (const std::string& added : w.added) {
        if (!from.empty()) origins[added] = from;
        history[added] = past;
        history[added].push_back(here);
      }
      // An edited node absorbed what the rewrite removed (a Transpose folded into its flags).
      for (const std::string& changed : w.changed) {
        std::vector<std::string> all = origins_of(changed);
        merge(all, from);
        origins[changed] = all;
        history[changed].push_back(here);
      }
    }
  }
  d.origins = origins_of(node);
  d.rewrites = history[node];
}

// The rewrite that removed `node` (the last one, when a name was reused), if any.
std::optional<RewriteDetail> removed_by(const workbench::RunResult& r, const std::string& node) {
  std::optional<RewriteDetail> found;
  for (const passes::PassLogEntry& e : r.optimized->log.entries)
    for (const passes::Rewrite& w : e.rewrites)
      if (std::find(w.removed.begin(), w.removed.end(), node) != w.removed.end())
        found = RewriteDetail{e.pass, w.pattern, w.text, w.added};
  return found;
}

// The loaded model or a pass's snapshot has this node (the select command takes any of them).
const ir::Node* node_in_any_graph(const workbench::RunResult& r, const std::string& name) {
  auto find = [&](const ir::Graph& g) -> const ir::Node* {
    for (const ir::Node& n : g.nodes)
      if (n.name == name) return &n;
    return nullptr;
  };
  if (r.model)
    if (const ir::Node* n = find(r.model->graph)) return n;
  for (const passes::PassLogEntry& e : r.optimized->log.entries)
    if (e.snapshot)
      if (const ir::Node* n = find(*e.snapshot)) return n;
  return nullptr;
}

void buffers(const workbench::RunResult& r, NodeDetails& d) {
  if (!r.plan_index || d.index < 0 ||
      static_cast<size_t>(d.index) >= r.plan_index->buffers_of_node.size())
    return;
  for (int b : r.plan_index->buffers_of_node[static_cast<size_t>(d.index)]) {
    const planner::Placement& p = r.plan->placements.at(static_cast<size_t>(b));
    const planner::BufferUse& use = r.plan_index->buffers.at(static_cast<size_t>(b));
    const bool writes =
        std::find(use.producers.begin(), use.producers.end(), d.index) != use.producers.end();
    std::string role = p.buffer.scratch ? "scratch" : writes ? "writes" : "reads";
    d.buffers.push_back({p.buffer.name, role, p.offset, p.buffer.bytes, p.buffer.first,
                         p.buffer.last});
  }
}

void section(const char* title) {
  ImGui::Spacing();
  ImGui::TextColored(ImVec4(0.55f, 0.75f, 1.0f, 1.0f), "%s", title);
}

// After a label, node names that select their node when clicked, flowing onto the next line
// where the column ends.
void node_links(const Frame& frame, const char* label, const std::vector<std::string>& names) {
  ImGui::TextDisabled("%s", label);
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  for (const std::string& name : names) {
    const float w = ImGui::CalcTextSize(name.c_str()).x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SameLine();
    if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    ImGui::PushID(name.c_str());
    if (ImGui::SmallButton(name.c_str())) frame.command("select=" + name);
    ImGui::PopID();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("select %s", name.c_str());
  }
}

void dim_wrapped(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, kTextDim);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

// "in 0  f32[1,64,256] x", and below it, dimmed, where it lives.
void tensor_rows(const char* label, const std::vector<TensorDetail>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    ImGui::TextWrapped("%s %zu  %s %s", label, i, v[i].type.c_str(), v[i].name.c_str());
    if (!v[i].where.empty()) {
      ImGui::Indent();
      dim_wrapped(v[i].where);
      ImGui::Unindent();
    }
  }
}

void roofline_rows(const profiler::OpRow& row) {
  ImGui::TextWrapped("AI %.3f FLOP/B (%s FLOP, %s per call)", row.intensity,
                     format_count(row.flops).c_str(), format_bytes(row.bytes).c_str());
  if (row.compute_roof.empty())
    ImGui::TextWrapped("%.1f GFLOP/s: above the FMA peak, so no compute roof fits (its FLOP count overstates it)",
                       row.gflops);
  else
    ImGui::TextWrapped("%.1f GFLOP/s = %.0f%% of the %s roof (%.1f GFLOP/s)", row.gflops, 100 * row.compute_fraction,
                       row.compute_roof.c_str(), row.compute_roof_gflops);
  if (row.memory_level.empty())
    ImGui::TextWrapped("%.1f GB/s: faster than any level its working set fits in, so no memory roof fits (it reads "
                       "less than its byte count)",
                       row.gbs);
  else
    ImGui::TextWrapped("%.1f GB/s = %.0f%% of the %s roof (%.1f GB/s)", row.gbs, 100 * row.memory_fraction,
                       row.memory_level.c_str(), row.memory_roof_gbs);
  ImGui::TextWrapped("%.0f%% of the roof at its intensity (%.1f GFLOP/s)", 100 * row.efficiency,
                     row.roof_gflops);
  ImGui::TextUnformatted("class: ");
  ImGui::SameLine(0, 0);
  ImGui::TextColored(row.bound == profiler::Bound::BelowRoofs ? ImVec4(0.92f, 0.37f, 0.47f, 1)
                                                              : ImVec4(1, 1, 1, 1),
                     "%s", row.label().c_str());
  dim_wrapped(row.why);
}

}  // namespace

const char* details_state_name(NodeDetails::State s) {
  switch (s) {
    case NodeDetails::State::NoSelection: return "no selection";
    case NodeDetails::State::NotFound: return "not found";
    case NodeDetails::State::Removed: return "removed";
    case NodeDetails::State::Node: return "node";
  }
  return "";
}

NodeDetails node_details(const workbench::RunResult& r, const std::string& node) {
  NodeDetails d;
  d.node = node;
  if (node.empty()) return d;
  const ir::Graph& g = r.graph();
  const ir::Node* n = nullptr;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].name == node) {
      n = &g.nodes[i];
      d.index = static_cast<int>(i);
      break;
    }
  }
  if (!n) {
    const ir::Node* gone = node_in_any_graph(r, node);
    if (!gone) {
      d.state = NodeDetails::State::NotFound;
      return d;
    }
    d.state = NodeDetails::State::Removed;
    d.op = gone->op;
    if (auto w = removed_by(r, node)) d.rewrites.push_back(*w);
    return d;
  }
  d.state = NodeDetails::State::Node;
  d.op = n->op;
  if (const ir::OpSchema* s = ir::OpRegistry::instance().find(n->op)) d.doc = s->doc;
  d.inputs = tensors(r, n->inputs);
  d.outputs = tensors(r, n->outputs);
  for (const auto& [name, value] : n->attrs.all()) {
    ir::Attributes one;
    one.set(name, value);
    d.attributes.emplace_back(name, one.to_string());
  }
  if (r.analysis) {
    for (const profiler::OpRow& row : r.analysis->by_node)
      if (row.key == node) d.row = row;
  }
  buffers(r, d);
  provenance(r, node, d);
  return d;
}

void DetailsPanel::draw(const Frame& frame) {
  draw_focus_border(frame, PanelId::Details);
  drawn = {};
  if (!result_or_empty_state(frame, "details")) {
    drawn.note = "no result";
    return;
  }
  const workbench::RunResult& r = *frame.result();
  if (frame.selection.empty()) {
    drawn.note =
        "details: nothing selected. Click a node in the graph, a row of the op table (by node) or "
        "a span in the trace, or type select=NODE.";
    ImGui::PushStyleColor(ImGuiCol_Text, kTextDim);
    ImGui::TextWrapped("%s", drawn.note.c_str());
    ImGui::PopStyleColor();
    return;
  }
  drawn.details = node_details(r, frame.selection.node);
  drawn.empty_state = false;
  draw_node(frame, drawn.details);
}

void DetailsPanel::draw_node(const Frame& frame, const NodeDetails& d) {
  ImGui::BeginChild("details", ImVec2(0, 0), false);
  if (d.state == NodeDetails::State::NotFound) {
    ImGui::TextColored(ImVec4(0.94f, 0.35f, 0.31f, 1), "details: no node '%s' in this run",
                       d.node.c_str());
    ImGui::EndChild();
    return;
  }
  ImGui::Text("%s", d.node.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("%s%s", d.op.c_str(),
                      d.index >= 0 ? (" | step " + std::to_string(d.index)).c_str() : "");
  if (d.state == NodeDetails::State::Removed) {
    ImGui::TextWrapped("not in the graph that ran: a pass removed it.");
    for (const RewriteDetail& w : d.rewrites) {
      ImGui::TextWrapped("%s (%s): %s", w.pass.c_str(), w.pattern.c_str(), w.text.c_str());
      if (!w.added.empty()) node_links(frame, "now:", w.added);
    }
    ImGui::EndChild();
    return;
  }
  if (!d.doc.empty()) dim_wrapped(d.doc);
  // Two columns: what the node is (left), what it did in the runs (right).
  if (ImGui::BeginTable("details_cols", 2, ImGuiTableFlags_SizingStretchSame | ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    section("inputs / outputs");
    tensor_rows("in", d.inputs);
    tensor_rows("out", d.outputs);
    section("attributes");
    if (d.attributes.empty()) ImGui::TextDisabled("none");
    for (const auto& [name, text] : d.attributes) ImGui::TextWrapped("%s", text.c_str());
    section("made by");
    if (d.rewrites.empty()) {
      ImGui::TextDisabled("as loaded: no pass rewrote it");
    } else {
      for (const RewriteDetail& w : d.rewrites)
        ImGui::TextWrapped("%s (%s): %s", w.pass.c_str(), w.pattern.c_str(), w.text.c_str());
      node_links(frame, "from the model's", d.origins);
    }

    ImGui::TableNextColumn();
    section("time over the recorded runs");
    if (!d.row) {
      ImGui::TextDisabled("no recorded runs (profile_runs = 0, or still measuring)");
    } else {
      const profiler::OpRow& row = *d.row;
      ImGui::TextWrapped("per call: min %s, median %s, max %s over %lld calls",
                         format_ns(row.stats.min_ns).c_str(), format_ns(row.stats.median_ns).c_str(),
                         format_ns(row.stats.max_ns).c_str(), static_cast<long long>(row.stats.count));
      dim_wrapped("per run: median " + format_ns(row.run_median_ns) + " (p10 " +
                  format_ns(row.run_p10_ns) + ", p90 " + format_ns(row.run_p90_ns) + ") = " +
                  std::to_string(static_cast<int>(100 * row.run_share + 0.5)) + "% of the median run");
      section("roofline");
      roofline_rows(row);
    }
    section("buffers (arena)");
    if (d.buffers.empty()) ImGui::TextDisabled("none: it touches only weights and inputs, or views");
    for (const BufferDetail& b : d.buffers) {
      ImGui::TextWrapped("%s %s", b.role.c_str(), b.name.c_str());
      ImGui::Indent();
      dim_wrapped("@ " + std::to_string(b.offset) + ", " +
                  format_bytes(static_cast<double>(b.bytes)) + ", live steps " +
                  std::to_string(b.first) + "-" + std::to_string(b.last));
      ImGui::Unindent();
    }
    ImGui::EndTable();
  }
  ImGui::EndChild();
}

}  // namespace fusebox::ui
