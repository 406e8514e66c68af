#include "core/passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <unordered_set>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/ir/op_schema.h"
#include "core/ir/verifier.h"
#include "core/passes/fusion_patterns.h"

namespace fusebox::passes {

// Builtin passes, one file each, in pipeline order: a new pass is its file (which defines
// register_<name>(PassRegistry&)) and a row here.
#define FUSEBOX_BUILTIN_PASSES(X) \
  X(absorb_matmul)                \
  X(constant_fold)                \
  X(fuse_patterns)                \
  X(channels_last)                \
  X(winograd)                     \
  X(absorb_layout)                \
  X(fuse_elementwise)             \
  X(cse)                          \
  X(dce)

#define FUSEBOX_DECLARE_PASS(name) void register_##name(PassRegistry& registry);
FUSEBOX_BUILTIN_PASSES(FUSEBOX_DECLARE_PASS)
#undef FUSEBOX_DECLARE_PASS

PassRegistry& PassRegistry::instance() {
  static PassRegistry* registry = [] {
    auto* r = new PassRegistry();
#define FUSEBOX_REGISTER_PASS(name) register_##name(*r);
    FUSEBOX_BUILTIN_PASSES(FUSEBOX_REGISTER_PASS)
#undef FUSEBOX_REGISTER_PASS
    return r;
  }();
  return *registry;
}

void PassResult::near_miss(std::string pattern, std::string node, std::string text) {
  near_misses.push_back({std::move(pattern), std::move(node), std::move(text)});
}

namespace {

Error unknown_pass(const std::string& name) {
  return Error("unknown pass '" + name +
               "' (valid: " + join(PassRegistry::instance().names(), ", ") + "; or all, or none)");
}

}  // namespace

std::vector<std::string> parse_pass_list(const std::string& text) {
  const PassRegistry& registry = PassRegistry::instance();
  std::string whole = trim(text);
  if (whole == "all") return registry.names();
  if (whole == "none") return {};
  std::set<std::string> wanted;
  for (const auto& part : split(whole, ',')) {
    std::string name = trim(part);
    if (!registry.find(name)) throw unknown_pass(name);
    wanted.insert(name);
  }
  std::vector<std::string> out;
  for (const auto& p : registry.entries())
    if (wanted.count(p.name)) out.push_back(p.name);
  return out;
}

PassLog run_pipeline(ir::Graph& graph, const std::vector<std::string>& enabled,
                     const PassContext& ctx) {
  const PassRegistry& registry = PassRegistry::instance();
  for (const auto& name : enabled)
    if (!registry.find(name)) throw unknown_pass(name);
  const FusionRegistry& fusions = FusionRegistry::instance();
  for (const auto& name : ctx.disabled_patterns)
    if (!fusions.find(name))
      throw Error("unknown fusion pattern '" + name + "' (valid: " + join(fusions.names(), ", ") +
                  ")");

  PassLog log;
  for (const auto& pass : registry.entries()) {
    PassLogEntry entry;
    entry.pass = pass.name;
    entry.enabled = std::find(enabled.begin(), enabled.end(), pass.name) != enabled.end();
    entry.nodes_before = entry.nodes_after = graph.nodes.size();
    if (!entry.enabled) {
      log.entries.push_back(std::move(entry));
      continue;
    }
    const std::string stage = "pass " + pass.name;
    if (ctx.observer) ctx.observer->on_stage_begin(stage);
    auto start = std::chrono::steady_clock::now();
    std::unordered_set<std::string> miss_texts;  // a set, not a scan: 100,000 misses are linear
    for (int iteration = 0; iteration < kMaxFixedPointIterations; ++iteration) {
      PassResult r;
      try {
        r = pass.run(graph, ctx);
      } catch (const Error& e) {
        throw Error("pass '" + pass.name + "' failed: " + e.what());
      }
      entry.changed = entry.changed || r.changed;
      entry.rewrites.insert(entry.rewrites.end(), r.rewrites.begin(), r.rewrites.end());
      // A pass run to a fixed point repeats its near misses each iteration: keep each once.
      for (auto& m : r.near_misses)
        if (miss_texts.insert(m.text).second) entry.near_misses.push_back(std::move(m));
      if (!r.changed || !pass.to_fixed_point) break;
    }
    entry.millis =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ctx.observer) ctx.observer->on_stage_end(stage);
    // A pass that changed the graph is checked whole. One that reports no change promises it
    // left the graph as it found it (already verified): checking it again is linear work per
    // pass that a 100,000-node graph feels (12 s of `fusebox graph` went to it), so only its
    // size is held to that promise here; tests/passes verify every pass's output in full.
    if (entry.changed) {
      try {
        ir::verify(graph);
      } catch (const Error& e) {
        throw Error("internal error: pass '" + pass.name + "' left an invalid graph: " + e.what());
      }
    } else if (graph.nodes.size() != entry.nodes_before) {
      throw Error("internal error: pass '" + pass.name + "' reported no change but left " +
                  std::to_string(graph.nodes.size()) + " nodes of " +
                  std::to_string(entry.nodes_before));
    }
    entry.nodes_after = graph.nodes.size();
    if (entry.changed) entry.snapshot = graph;
    log.entries.push_back(std::move(entry));
  }
  return log;
}

std::string PassLog::to_text() const {
  std::string out;
  char line[160];
  size_t first = entries.empty() ? 0 : entries.front().nodes_before;
  size_t last = entries.empty() ? 0 : entries.back().nodes_after;
  double total_ms = 0;
  for (const auto& e : entries) {
    if (!e.enabled) {
      std::snprintf(line, sizeof line, "%-18s off\n", e.pass.c_str());
      out += line;
      continue;
    }
    total_ms += e.millis;
    std::snprintf(line, sizeof line, "%-18s on   %zu -> %zu nodes  %.3f ms  %s\n", e.pass.c_str(),
                  e.nodes_before, e.nodes_after, e.millis, e.changed ? "changed" : "no change");
    out += line;
    for (const auto& r : e.rewrites) out += "    + " + r.text + "\n";
    for (const auto& m : e.near_misses) out += "    ? " + m.text + "\n";
  }
  std::snprintf(line, sizeof line, "total: %zu -> %zu nodes, %.3f ms\n", first, last, total_ms);
  out += line;
  return out;
}

std::string target_refuses(const PassContext& ctx, const std::string& op,
                           const std::vector<ir::TensorType>& inputs) {
  if (!ctx.target || ctx.target->supports(op, inputs)) return "";
  if (ir::OpRegistry::instance().get(op).view) return "";  // a view runs no kernel anywhere
  std::vector<std::string> types;
  for (const auto& t : inputs) types.push_back(ir::dtype_name(t.dtype) + ir::shape_str(t.shape));
  return "backend '" + ctx.target->name() + "' does not support " + op + " on " + join(types, ", ");
}

}  // namespace fusebox::passes
