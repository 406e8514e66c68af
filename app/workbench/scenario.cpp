#include "app/workbench/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/ir/op_schema.h"
#include "core/models/builtin_models.h"

namespace fusebox::workbench {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The panels a step may look at: the UI's PanelId names but its own (tests/ui keeps the two in step).
const std::vector<std::string> kPanels = {"graph", "arena", "trace", "ops", "compare", "passes"};

// One check kind: its parameters, which are required, and whether timing decides it.
struct CheckDef {
  std::string kind;
  std::vector<std::string> required, optional;
  bool measured = false;
  std::string help;
};

const std::vector<CheckDef>& check_defs() {
  static const std::vector<CheckDef> defs = {
      {"node_count", {}, {"equals", "at_most", "at_least"}, false, "the graph has this many nodes"},
      {"op_present", {"op"}, {}, false, "a node of this op type is in the graph"},
      {"op_absent", {"op"}, {}, false, "no node of this op type is in the graph"},
      {"arena_within_bound", {"percent"}, {}, false, "the arena is within percent% of its lower bound"},
      {"arena_at_most", {"step"}, {"ratio"}, false, "the arena is at most ratio x that step's arena"},
      {"pass_changed", {"pass"}, {"changed"}, false, "the pass changed the graph (or, changed: false, did not)"},
      {"outputs_match_previous", {}, {"tolerance"}, false,
       "the outputs equal the previous step's, within tolerance x the largest |value|"},
      {"faster_than", {"step"}, {"ratio"}, true, "the median latency is at least ratio x lower than that step's"},
      {"op_bound", {"bound"}, {"op", "node"}, true, "the op (or node) is compute-, memory- or overhead-bound"},
  };
  return defs;
}

const CheckDef* find_check(const std::string& kind) {
  for (const auto& d : check_defs())
    if (d.kind == kind) return &d;
  return nullptr;
}

// Where an error is: "<file>: <pointer>: ".
struct Where {
  std::string file;
  std::string pointer;
  Where at(const std::string& key) const { return {file, pointer + "/" + key}; }
  Where at(size_t i) const { return {file, pointer + "/" + std::to_string(i)}; }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(file + ": " + (pointer.empty() ? "" : pointer + ": ") + what);
  }
};

void unknown_key(const Where& w, const std::string& key, const std::vector<std::string>& valid) {
  w.at(key).fail("unknown key '" + key + "' (" + suggest(key, valid) + ")");
}

void check_keys(const json& j, const Where& w, const std::vector<std::string>& valid) {
  if (!j.is_object()) w.fail("expected an object, got " + shown(j));
  for (const auto& [key, v] : j.items()) {
    (void)v;
    if (std::find(valid.begin(), valid.end(), key) == valid.end()) unknown_key(w, key, valid);
  }
}

std::string get_string(const json& j, const Where& w) {
  if (!j.is_string()) w.fail("expected a string, got " + shown(j));
  return j.get<std::string>();
}

double get_number(const json& j, const Where& w, double lo, double hi) {
  if (!j.is_number()) w.fail("expected a number, got " + shown(j));
  const double v = j.get<double>();
  if (!(v >= lo && v <= hi)) w.fail("expected a number in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + shown(j));
  return v;
}

int64_t get_int(const json& j, const Where& w, int64_t lo, int64_t hi) {
  if (!j.is_number_integer()) w.fail("expected an integer, got " + shown(j));
  const int64_t v = j.get<int64_t>();
  if (v < lo || v > hi) w.fail("expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + shown(j));
  return v;
}

// A model or input path given relative to the scenario file, made relative to the working
// directory (builtin specs stay as they are). A file that is not there is an error here, not
// when the step runs.
std::string resolve_file(const std::string& value, const std::string& scenario_path, const Where& w, bool model) {
  if (model && models::is_builtin_model_spec(value)) return value;
  fs::path p(value);
  if (p.is_relative()) p = fs::path(scenario_path).parent_path() / p;
  p = p.lexically_normal();
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    std::string msg = "no such file '" + value + "'";
    if (p.string() != value) msg += " (looked for " + p.string() + ")";
    if (model) {
      const std::string guess = closest(value, models::builtin_model_names());
      msg += guess.empty() ? "; builtin models: " + join(models::builtin_model_names(), ", ")
                           : "; did you mean the builtin model '" + guess + "'?";
    }
    w.fail(msg);
  }
  return p.string();
}

// Applies a settings object (the top level's `settings` or a step's `set`), resolving a model or
// input file it names against the scenario's folder.
void apply_settings(Settings& s, const json& j, const Where& w) {
  const Settings before = s;
  apply_json(s, j, w.file, w.pointer);
  if (j.contains("model") && s.model != before.model) s.model = resolve_file(s.model, w.file, w.at("model"), true);
  if (j.contains("inputs")) {
    for (auto& [name, file] : s.inputs) {
      auto old = before.inputs.find(name);
      if (old == before.inputs.end() || old->second != file) file = resolve_file(file, w.file, w.at("inputs").at(name), false);
    }
  }
}

std::vector<std::string> op_names() { return ir::OpRegistry::instance().names(); }

std::string valid_op(const std::string& op, const Where& w) {
  const auto names = op_names();
  if (std::find(names.begin(), names.end(), op) != names.end()) return op;
  const std::string guess = closest(op, names);
  w.fail("unknown op '" + op + "' (" + (guess.empty() ? "not an op fusebox knows" : "did you mean '" + guess + "'?") + ")");
}

Check parse_check(const json& j, const Where& w, size_t step_index) {
  if (!j.is_object()) w.fail("expected a check object {\"check\": \"node_count\", ...}, got " + shown(j));
  if (!j.contains("check")) w.fail("missing \"check\" (one of: " + join(check_kinds(), ", ") + ")");
  Check c;
  c.pointer = w.pointer;
  c.kind = get_string(j["check"], w.at("check"));
  const CheckDef* def = find_check(c.kind);
  if (!def) {
    w.at("check").fail("unknown check '" + c.kind + "' (" + suggest(c.kind, check_kinds()) + ")");
  }
  std::vector<std::string> keys = {"check"};
  keys.insert(keys.end(), def->required.begin(), def->required.end());
  keys.insert(keys.end(), def->optional.begin(), def->optional.end());
  check_keys(j, w, keys);
  for (const auto& r : def->required)
    if (!j.contains(r)) w.fail(c.kind + " needs \"" + r + "\"");
  for (const auto& [key, v] : j.items()) {
    const Where at = w.at(key);
    if (key == "equals") c.equals = get_int(v, at, 0, 1 << 30);
    else if (key == "at_most") c.at_most = get_int(v, at, 0, 1 << 30);
    else if (key == "at_least") c.at_least = get_int(v, at, 0, 1 << 30);
    else if (key == "op") c.op = valid_op(get_string(v, at), at);
    else if (key == "node") c.node = get_string(v, at);
    else if (key == "pass") {
      c.pass = get_string(v, at);
      Settings probe;  // the pass name goes through the settings' own validation
      apply_json(probe, json{{"passes", json{{c.pass, true}}}}, w.file, w.pointer);
    } else if (key == "bound") {
      c.bound = get_string(v, at);
      const std::vector<std::string> bounds = {"compute", "memory", "overhead"};
      if (std::find(bounds.begin(), bounds.end(), c.bound) == bounds.end())
        at.fail("expected one of compute, memory, overhead, got " + shown(v));
    } else if (key == "changed") {
      if (!v.is_boolean()) at.fail("expected true or false, got " + shown(v));
      c.changed = v.get<bool>();
    } else if (key == "percent") c.percent = get_number(v, at, 0, 1e6);
    else if (key == "tolerance") c.tolerance = get_number(v, at, 0, 1);
    else if (key == "ratio") c.ratio = get_number(v, at, 0, 1e6);
    else if (key == "step") {
      c.step = static_cast<int>(get_int(v, at, 0, 1 << 20));
      if (static_cast<size_t>(c.step) >= step_index)
        at.fail("step " + std::to_string(c.step) + " is not an earlier step (this is step " + std::to_string(step_index) + ", counting from 0)");
    }
  }
  if (c.kind == "node_count" && !c.equals && !c.at_most && !c.at_least) w.fail("node_count needs equals, at_most or at_least");
  if (c.kind == "op_bound" && c.op.empty() == c.node.empty()) w.fail("op_bound needs exactly one of \"op\" and \"node\"");
  if (c.kind == "outputs_match_previous" && step_index == 0) w.fail("outputs_match_previous needs a previous step");
  return c;
}

const passes::PassLogEntry* log_entry(const RunResult& r, const std::string& pass) {
  for (const auto& e : r.optimized->log.entries)
    if (e.pass == pass) return &e;
  return nullptr;
}

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

[[noreturn]] void no_node(const Scenario& sc, const std::string& pointer, const std::string& node, const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  const std::string guess = closest(node, names);
  throw Error(sc.path + ": " + pointer + ": no node '" + node + "' in this step's graph (" +
              (guess.empty() ? std::to_string(names.size()) + " nodes" : "did you mean '" + guess + "'?") + ")");
}

bool has_node(const ir::Graph& g, const std::string& name) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.name == name; });
}

CheckResult evaluate(const Scenario& sc, const Check& c, const RunResult& r,
                     const std::vector<std::shared_ptr<const RunResult>>& results, size_t step) {
  CheckResult out{&c, false, ""};
  const ir::Graph& g = r.graph();
  auto earlier = [&](int s) -> const RunResult& {
    if (s < 0 || static_cast<size_t>(s) >= results.size() || !results[s])
      throw Error(sc.path + ": " + c.pointer + ": step " + std::to_string(s) + " has no result");
    return *results[s];
  };
  if (c.kind == "node_count") {
    const auto n = static_cast<int64_t>(g.nodes.size());
    out.passed = (!c.equals || n == *c.equals) && (!c.at_most || n <= *c.at_most) && (!c.at_least || n >= *c.at_least);
    out.figures = std::to_string(n) + " nodes";
  } else if (c.kind == "op_present" || c.kind == "op_absent") {
    const auto n = std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& x) { return x.op == c.op; });
    out.passed = c.kind == "op_present" ? n > 0 : n == 0;
    out.figures = std::to_string(n) + " " + c.op + " node" + (n == 1 ? "" : "s");
  } else if (c.kind == "arena_within_bound") {
    const double ratio = r.plan->ratio();
    out.passed = static_cast<double>(r.plan->arena_bytes) <= r.plan->lower_bound_bytes * (1 + c.percent / 100) + 0.5;
    out.figures = "arena " + format_bytes(static_cast<double>(r.plan->arena_bytes)) + " = " + fmt("%.3fx", ratio) +
                  " the lower bound " + format_bytes(static_cast<double>(r.plan->lower_bound_bytes)) + " (" + r.plan->strategy + ")";
  } else if (c.kind == "arena_at_most") {
    const RunResult& other = earlier(c.step);
    const double a = static_cast<double>(r.plan->arena_bytes), b = static_cast<double>(other.plan->arena_bytes);
    out.passed = a <= c.ratio * b + 0.5;
    out.figures = "arena " + format_bytes(a) + " vs " + format_bytes(b) + " at step " + std::to_string(c.step) + fmt(" (%.3fx)", b > 0 ? a / b : 0);
  } else if (c.kind == "pass_changed") {
    const auto* e = log_entry(r, c.pass);
    const bool changed = e && e->enabled && e->changed;
    out.passed = changed == c.changed;
    out.figures = !e || !e->enabled ? c.pass + " is off"
                  : changed ? c.pass + fmt(" changed the graph: %.0f -> %.0f nodes", static_cast<double>(e->nodes_before), static_cast<double>(e->nodes_after))
                            : c.pass + " did not change the graph";
  } else if (c.kind == "outputs_match_previous") {
    const RunResult& prev = earlier(static_cast<int>(step) - 1);
    if (prev.outputs.size() != r.outputs.size()) {
      out.figures = std::to_string(r.outputs.size()) + " outputs vs " + std::to_string(prev.outputs.size());
    } else {
      double max_diff = 0, max_abs = 0;
      bool shapes = true;
      for (size_t o = 0; o < r.outputs.size(); ++o) {
        const ir::Tensor& a = r.outputs[o];
        const ir::Tensor& b = prev.outputs[o];
        if (a.shape() != b.shape()) {
          shapes = false;
          break;
        }
        for (int64_t i = 0; i < a.numel(); ++i) {
          const double x = a.data<float>()[i], y = b.data<float>()[i];
          max_diff = std::max(max_diff, std::isnan(x) != std::isnan(y) ? INFINITY : std::fabs(x - y));
          max_abs = std::max(max_abs, std::fabs(y));
        }
      }
      out.passed = shapes && max_diff <= c.tolerance * std::max(1.0, max_abs);
      out.figures = shapes ? fmt("max |diff| %.3g, largest |value| %.3g", max_diff, max_abs) : "output shapes differ";
    }
  } else if (c.kind == "faster_than") {
    const RunResult& other = earlier(c.step);
    const double speedup = r.latency.median_us > 0 ? other.latency.median_us / r.latency.median_us : 0;
    out.passed = speedup >= c.ratio;
    out.figures = fmt("%.2fx faster than step %.0f", speedup, c.step) + " (" +
                  fmt("%.1f us vs %.1f us)", r.latency.median_us, other.latency.median_us);
  } else if (c.kind == "op_bound") {
    if (!r.analysis) {
      out.figures = "no recorded runs (profile_runs = 0)";
      return out;
    }
    if (!c.node.empty() && !has_node(g, c.node)) no_node(sc, c.pointer + "/node", c.node, g);
    const auto& rows = c.node.empty() ? r.analysis->by_type : r.analysis->by_node;
    const std::string key = c.node.empty() ? c.op : c.node;
    auto it = std::find_if(rows.begin(), rows.end(), [&](const profiler::OpRow& row) { return row.key == key; });
    if (it == rows.end()) {
      out.figures = "no " + key + " in the recorded runs";
      return out;
    }
    const std::string got = profiler::bound_name(it->bound);
    out.passed = got.rfind(c.bound, 0) == 0;
    out.figures = key + " is " + got + ": " + it->why;
  }
  return out;
}

}  // namespace

std::vector<std::string> check_kinds() {
  std::vector<std::string> out;
  for (const auto& d : check_defs()) out.push_back(d.kind);
  return out;
}

bool Check::measured() const {
  const CheckDef* d = find_check(kind);
  return d && d->measured;
}

std::string Check::describe() const {
  std::string s = kind;
  auto add = [&](const std::string& k, const std::string& v) { s += " " + k + "=" + v; };
  if (equals) add("equals", std::to_string(*equals));
  if (at_most) add("at_most", std::to_string(*at_most));
  if (at_least) add("at_least", std::to_string(*at_least));
  if (!op.empty()) add("op", op);
  if (!node.empty()) add("node", node);
  if (!pass.empty()) add("pass", pass);
  if (kind == "pass_changed" && !changed) add("changed", "false");
  if (!bound.empty()) add("bound", bound);
  if (kind == "arena_within_bound") add("percent", fmt("%g", percent));
  if (kind == "outputs_match_previous") add("tolerance", fmt("%g", tolerance));
  if (step >= 0) add("step", std::to_string(step));
  if (kind == "faster_than" || kind == "arena_at_most") add("ratio", fmt("%g", ratio));
  return s;
}

Scenario parse_scenario(const json& j, const std::string& path) {
  const Where top{path, ""};
  check_keys(j, top, {"$schema", "name", "description", "model", "inputs", "settings", "steps"});
  Scenario sc;
  sc.path = path;
  if (!j.contains("name")) top.fail("missing \"name\"");
  if (!j.contains("model")) top.fail("missing \"model\" (a builtin model such as transformer, or an .onnx file)");
  sc.name = get_string(j["name"], top.at("name"));
  if (j.contains("description")) sc.description = get_string(j["description"], top.at("description"));
  json base = json::object();
  base["model"] = j["model"];
  if (j.contains("inputs")) base["inputs"] = j["inputs"];
  // The model and inputs first, then the settings (which may not name them again).
  apply_settings(sc.settings, base, top);
  if (j.contains("settings")) {
    const Where w = top.at("settings");
    for (const char* k : {"model", "inputs"})
      if (j["settings"].is_object() && j["settings"].contains(k))
        w.at(k).fail(std::string("give the ") + k + " at the top level (/" + k + "), not in the settings");
    apply_settings(sc.settings, j["settings"], w);
  }
  Settings current = sc.settings;
  if (j.contains("steps")) {
    const Where ws = top.at("steps");
    if (!j["steps"].is_array()) ws.fail("expected an array of steps, got " + shown(j["steps"]));
    if (j["steps"].empty()) ws.fail("expected at least one step (or leave \"steps\" out)");
    for (size_t i = 0; i < j["steps"].size(); ++i) {
      const json& js = j["steps"][i];
      const Where w = ws.at(i);
      check_keys(js, w, {"title", "text", "set", "look_at", "checks"});
      ScenarioStep step;
      if (!js.contains("title")) w.fail("missing \"title\"");
      step.title = get_string(js["title"], w.at("title"));
      if (js.contains("text")) step.text = get_string(js["text"], w.at("text"));
      if (js.contains("set")) {
        step.set = js["set"];
        apply_settings(current, js["set"], w.at("set"));
      }
      step.settings = current;
      if (js.contains("look_at")) {
        const Where wl = w.at("look_at");
        check_keys(js["look_at"], wl, {"panel", "node", "op"});
        const json& l = js["look_at"];
        if (l.contains("panel")) {
          step.look_at.panel = get_string(l["panel"], wl.at("panel"));
          if (std::find(kPanels.begin(), kPanels.end(), step.look_at.panel) == kPanels.end()) {
            wl.at("panel").fail("unknown panel '" + step.look_at.panel + "' (" +
                                suggest(step.look_at.panel, kPanels) + ")");
          }
        }
        if (l.contains("node")) step.look_at.node = get_string(l["node"], wl.at("node"));
        if (l.contains("op")) step.look_at.op = valid_op(get_string(l["op"], wl.at("op")), wl.at("op"));
      }
      if (js.contains("checks")) {
        const Where wc = w.at("checks");
        if (!js["checks"].is_array()) wc.fail("expected an array of checks, got " + shown(js["checks"]));
        for (size_t k = 0; k < js["checks"].size(); ++k) step.checks.push_back(parse_check(js["checks"][k], wc.at(k), i));
      }
      sc.steps.push_back(std::move(step));
    }
  } else {
    ScenarioStep step;
    step.title = sc.name;
    step.text = sc.description;
    step.settings = current;
    sc.steps.push_back(std::move(step));
  }
  return sc;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(read_json_file(path, "scenario file"), path); }

json scenario_json(const std::string& name, const Settings& settings) {
  json s = to_json(settings);
  json j = json::object();
  j["$schema"] = "scenario.schema.json";
  j["name"] = name;
  j["description"] = "Saved from fusebox-ui: " + settings.label();
  j["model"] = settings.model;
  if (!settings.inputs.empty()) j["inputs"] = s["inputs"];
  s.erase("model");
  s.erase("inputs");
  j["settings"] = s;
  return j;
}

void validate_look_at(const Scenario& scenario, size_t step, const RunResult& result) {
  const LookAt& l = scenario.steps.at(step).look_at;
  const std::string at = "/steps/" + std::to_string(step) + "/look_at";
  if (!l.node.empty() && !has_node(result.graph(), l.node)) no_node(scenario, at + "/node", l.node, result.graph());
  if (!l.op.empty() && std::none_of(result.graph().nodes.begin(), result.graph().nodes.end(),
                                    [&](const ir::Node& n) { return n.op == l.op; })) {
    throw Error(scenario.path + ": " + at + "/op: no " + l.op + " node in this step's graph");
  }
}

std::vector<CheckResult> evaluate_checks(const Scenario& scenario, size_t step,
                                         const std::vector<std::shared_ptr<const RunResult>>& results) {
  const RunResult& r = *results.at(step);
  std::vector<CheckResult> out;
  for (const Check& c : scenario.steps.at(step).checks) out.push_back(evaluate(scenario, c, r, results, step));
  return out;
}

CheckResult evaluate_check(const Scenario& scenario, size_t step, size_t index,
                           const std::vector<std::shared_ptr<const RunResult>>& results) {
  return evaluate(scenario, scenario.steps.at(step).checks.at(index), *results.at(step), results, step);
}

ScenarioRun run_scenario(const Scenario& scenario, Pipeline& pipeline) {
  ScenarioRun run;
  run.scenario = &scenario;
  std::vector<std::shared_ptr<const RunResult>> results;
  for (size_t i = 0; i < scenario.steps.size(); ++i) {
    std::shared_ptr<const RunResult> r;
    try {
      r = pipeline.run(scenario.steps[i].settings);
    } catch (const Error& e) {
      throw Error(scenario.path + ": /steps/" + std::to_string(i) + ": " + e.what());
    }
    results.push_back(r);
    validate_look_at(scenario, i, *r);
    run.steps.push_back({r, evaluate_checks(scenario, i, results)});
  }
  return run;
}

bool ScenarioRun::structural_ok() const {
  for (const auto& s : steps)
    for (const auto& c : s.checks)
      if (!c.check->measured() && !c.passed) return false;
  return true;
}

bool ScenarioRun::measured_ok() const {
  for (const auto& s : steps)
    for (const auto& c : s.checks)
      if (c.check->measured() && !c.passed) return false;
  return true;
}

std::string ScenarioRun::to_text() const {
  std::string out = "scenario \"" + scenario->name + "\" (" + scenario->path + "): " +
                    std::to_string(steps.size()) + " step" + (steps.size() == 1 ? "" : "s") + "\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    const ScenarioStep& def = scenario->steps[i];
    out += fmt("\nstep %.0f: ", static_cast<double>(i)) + def.title + "\n  " + s.result->settings.label() +
           fmt("\n  median %.1f us, %.0f nodes, arena ", s.result->latency.median_us,
               static_cast<double>(s.result->graph().nodes.size())) +
           format_bytes(static_cast<double>(s.result->plan->arena_bytes)) + "\n";
    for (const auto& c : s.checks) {
      char line[512];
      std::snprintf(line, sizeof line, "  %-4s %-8s %-52s %s\n", c.passed ? "ok" : "FAIL",
                    c.check->measured() ? "measured" : "exact", c.check->describe().c_str(), c.figures.c_str());
      out += line;
    }
  }
  out += std::string("\nstructural checks: ") + (structural_ok() ? "all hold" : "FAILED") +
         "; measured checks: " + (measured_ok() ? "all hold" : "some did not hold (they fail only with --strict)") + "\n";
  return out;
}

json ScenarioRun::to_json() const {
  json j;
  j["scenario"] = scenario->name;
  j["path"] = scenario->path;
  j["structural_ok"] = structural_ok();
  j["measured_ok"] = measured_ok();
  j["steps"] = json::array();
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    json js;
    js["title"] = scenario->steps[i].title;
    js["settings"] = s.result->settings.label();
    js["median_us"] = s.result->latency.median_us;
    js["nodes"] = s.result->graph().nodes.size();
    js["arena_bytes"] = s.result->plan->arena_bytes;
    js["checks"] = json::array();
    for (const auto& c : s.checks) {
      js["checks"].push_back({{"check", c.check->describe()}, {"pointer", c.check->pointer},
                              {"measured", c.check->measured()}, {"passed", c.passed}, {"figures", c.figures}});
    }
    j["steps"].push_back(js);
  }
  return j;
}

}  // namespace fusebox::workbench
