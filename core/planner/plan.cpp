#include "core/planner/plan.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <queue>
#include <sstream>
#include <utility>
#include <vector>

#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/planner/strategies.h"

namespace fusebox::planner {

namespace {

size_t arena_of(const std::vector<Buffer>& buffers, const std::vector<size_t>& offsets) {
  size_t arena = 0;
  for (size_t i = 0; i < buffers.size(); ++i) arena = std::max(arena, offsets[i] + buffers[i].bytes);
  return arena;
}

}  // namespace

ExecutionPlan make_plan(const ir::Graph& graph, const std::string& strategy_name, const MemoryRules& rules) {
  const bool best = strategy_name == kBestPlanner;
  const Strategy* strategy = best ? nullptr : strategies().find(strategy_name);
  if (!best && !strategy)
    throw Error("unknown planner '" + strategy_name + "' (valid: " + join(strategies().names(), ", ") +
                ", " + kBestPlanner + ")");
  Lifetimes lt = analyze_lifetimes(graph, rules);
  ExecutionPlan plan;
  plan.alignment = rules.alignment;
  std::vector<size_t> offsets;
  if (best) {
    if (strategies().empty()) throw Error("planner 'best': no strategy is registered");
    size_t smallest = 0;
    for (const Strategy& s : strategies().entries()) {
      if (s.name != "naive" && lt.buffers.size() > kMaxGapSearchBuffers) continue;  // it would refuse
      std::vector<size_t> o = s.place(lt.buffers);
      const size_t arena = arena_of(lt.buffers, o);
      plan.tried.emplace_back(s.name, arena);
      if (plan.tried.size() == 1 || arena < smallest) {
        smallest = arena;
        offsets = std::move(o);
        strategy = &s;
      }
    }
  } else {
    offsets = strategy->place(lt.buffers);
  }
  plan.strategy = strategy->name;
  plan.lower_bound_bytes = lt.lower_bound;
  plan.live_bytes = lt.live_bytes;
  plan.scratch_of_step.assign(graph.nodes.size(), -1);
  std::unordered_map<std::string, size_t> offset_of;
  for (size_t i = 0; i < lt.buffers.size(); ++i) {
    plan.placements.push_back({lt.buffers[i], offsets[i]});
    plan.arena_bytes = std::max(plan.arena_bytes, offsets[i] + lt.buffers[i].bytes);
    if (lt.buffers[i].scratch)
      plan.scratch_of_step[lt.buffers[i].step_of_scratch] = static_cast<int>(i);
    else
      offset_of[lt.buffers[i].name] = offsets[i];
  }
  auto locate = [&](const std::string& tensor) {
    auto it = lt.alias_root.find(tensor);
    std::string root = it == lt.alias_root.end() ? tensor : it->second;
    Location loc;
    loc.root = root;
    if (graph.is_weight(root)) {
      loc.storage = Storage::Weight;
    } else {
      auto off = offset_of.find(root);
      if (off == offset_of.end()) throw Error("planner: tensor '" + tensor + "' has no buffer");
      loc.offset = off->second;
    }
    plan.locations[tensor] = loc;
  };
  for (const auto& in : graph.inputs) locate(in);
  for (const auto& node : graph.nodes) {
    for (const auto& t : node.inputs) locate(t);
    for (const auto& t : node.outputs) locate(t);
  }
  for (const auto& t : graph.outputs) locate(t);
  std::string clash = check_plan(plan);
  if (!clash.empty()) throw Error("planner '" + strategy_name + "' produced an invalid plan: " + clash);
  return plan;
}

std::string check_plan(const ExecutionPlan& plan) {
  const auto& p = plan.placements;
  for (size_t i = 0; i < p.size(); ++i) {
    if (plan.alignment == 0 || p[i].offset % plan.alignment != 0)
      return p[i].buffer.name + " at offset " + std::to_string(p[i].offset) + " is not " +
             std::to_string(plan.alignment) + "-byte aligned";
    const auto end = checked_add(p[i].offset, p[i].buffer.bytes);
    if (!end || *end > plan.arena_bytes) return p[i].buffer.name + " ends past the arena";
  }
  // Two buffers clash when their steps overlap (inclusive) and their bytes do. A sweep over steps
  // finds that in n log n (pairwise it was n^2: minutes at 100,000 buffers): while no clash is
  // found, the buffers live at a step are disjoint in the arena, so a new one can only overlap
  // its neighbours in offset order. A zero-byte buffer is a point: it clashes with a buffer that
  // holds its offset past its first byte (the pairwise rule's reading of an empty range).
  auto clash = [&](size_t i, size_t j) {
    if (j < i) std::swap(i, j);
    const Buffer &a = p[i].buffer, &b = p[j].buffer;
    return a.name + " [" + std::to_string(p[i].offset) + "+" + std::to_string(a.bytes) + ", steps " +
           std::to_string(a.first) + ".." + std::to_string(a.last) + "] overlaps " + b.name + " [" +
           std::to_string(p[j].offset) + "+" + std::to_string(b.bytes) + ", steps " +
           std::to_string(b.first) + ".." + std::to_string(b.last) + "]";
  };
  std::vector<size_t> order(p.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::pair(p[x].buffer.first, x) < std::pair(p[y].buffer.first, y);
  });
  std::map<size_t, size_t> spans;          // offset -> placement, buffers of some bytes
  std::multimap<size_t, size_t> points;    // offset -> placement, zero-byte buffers
  using Expiry = std::pair<int, size_t>;   // (last step, placement)
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> live;
  for (size_t i : order) {
    const size_t o = p[i].offset, n = p[i].buffer.bytes;
    for (; !live.empty() && live.top().first < p[i].buffer.first; live.pop()) {
      const size_t k = live.top().second;
      if (p[k].buffer.bytes > 0) {
        spans.erase(p[k].offset);
      } else {
        auto [lo, hi] = points.equal_range(p[k].offset);
        for (auto it = lo; it != hi; ++it)
          if (it->second == k) {
            points.erase(it);
            break;
          }
      }
    }
    auto next = spans.lower_bound(o);
    if (next != spans.begin()) {  // the span starting below o: does it reach past o?
      const size_t k = std::prev(next)->second;
      if (p[k].offset + p[k].buffer.bytes > o) return clash(k, i);
    }
    if (n > 0) {
      if (next != spans.end() && next->first < o + n) return clash(next->second, i);
      auto inside = points.upper_bound(o);
      if (inside != points.end() && inside->first < o + n) return clash(inside->second, i);
      spans.emplace(o, i);
    } else {
      points.emplace(o, i);
    }
    live.push({p[i].buffer.last, i});
  }
  return "";
}

std::string ExecutionPlan::to_text(const ir::Graph& graph, int width) const {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "planner %s: arena %s, lower bound %s, ratio %.3fx, %zu buffers\n",
                strategy.c_str(), format_bytes(static_cast<double>(arena_bytes)).c_str(),
                format_bytes(static_cast<double>(lower_bound_bytes)).c_str(), ratio(), placements.size());
  out << line;
  std::snprintf(line, sizeof line, "  %-4s %10s %10s %6s %6s  %s\n", "#", "offset", "bytes", "first", "last", "tensor");
  out << line;
  for (size_t i = 0; i < placements.size(); ++i) {
    const auto& p = placements[i];
    std::snprintf(line, sizeof line, "  %-4zu %10zu %10zu %6d %6d  %s\n", i, p.offset, p.buffer.bytes,
                  p.buffer.first, p.buffer.last, p.buffer.name.c_str());
    out << line;
  }
  // Chart: one row per step, one column per arena slice; a letter per buffer (cycling), '.' free.
  if (arena_bytes == 0 || graph.nodes.empty()) return out.str();
  width = std::max(8, width);
  double per_col = static_cast<double>(arena_bytes) / width;
  out << "\n  arena chart: steps down, offsets across (1 column = " << format_bytes(per_col)
      << "); letters = buffers in the table above (a=0, b=1, ...), '#' = scratch\n";
  // A row per step costs every buffer: past a few hundred steps the chart is neither legible nor
  // cheap (100,000 steps x 100,000 buffers ran for minutes), so it shows the first ones.
  constexpr int kMaxChartSteps = 400;
  const int steps = static_cast<int>(std::min<size_t>(graph.nodes.size(), kMaxChartSteps));
  for (int step = 0; step < steps; ++step) {
    std::string row(width, '.');
    for (size_t i = 0; i < placements.size(); ++i) {
      const auto& p = placements[i];
      if (step < p.buffer.first || step > p.buffer.last) continue;
      int c0 = static_cast<int>(p.offset / per_col);
      int c1 = std::max(c0 + 1, static_cast<int>((p.offset + p.buffer.bytes) / per_col + 0.5));
      char mark = p.buffer.scratch ? '#' : static_cast<char>(i < 26 ? 'a' + i : (i < 52 ? 'A' + i - 26 : '0' + i % 10));
      for (int c = c0; c < std::min(c1, width); ++c) row[c] = mark;
    }
    std::snprintf(line, sizeof line, "  %4d |%s| %s\n", step, row.c_str(), graph.nodes[step].name.c_str());
    out << line;
  }
  if (graph.nodes.size() > static_cast<size_t>(steps))
    out << "  ... " << graph.nodes.size() - static_cast<size_t>(steps) << " more steps (the chart shows the first "
        << steps << "; the table above lists every buffer)\n";
  return out.str();
}

}  // namespace fusebox::planner
