#include "app/workbench/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "app/workbench/checks.h"
#include "app/workbench/kernel_level.h"
#include "app/workbench/noise.h"
#include "app/workbench/opened_trace.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/base/utf8.h"
#include "core/ir/op_schema.h"
#include "core/models/builtin_models.h"
#include "profiler/kernel_findings.h"

namespace fusebox::workbench {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The panels a step may look at: the UI's PanelId names but its own (tests/ui keeps the two in step).
const std::vector<std::string> kPanels = {"graph", "arena", "trace", "ops", "compare", "passes", "details"};

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

// A name or a title (the schema's minLength 1): "" would show as nothing.
std::string get_nonempty_string(const json& j, const Where& w) {
  std::string s = get_string(j, w);
  if (s.empty()) w.fail("expected a non-empty string, got \"\"");
  return s;
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

// A trace scenario's trace: a file, or a folder holding the rank traces of one job.
std::string resolve_trace(const std::string& value, const std::string& scenario_path, const Where& w) {
  fs::path p(value);
  if (p.is_relative()) p = fs::path(scenario_path).parent_path() / p;
  p = p.lexically_normal();
  std::error_code ec;
  if (fs::is_directory(p, ec)) return p.string();
  return resolve_file(value, scenario_path, w, false);
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

// A serving phase's name, as profiler/phases.h names them.
std::string serving_phase(const json& v, const Where& w) {
  const std::string phase = get_string(v, w);
  const std::vector<std::string> phases = {"prefill", "decode", "mixed", "idle"};
  if (std::find(phases.begin(), phases.end(), phase) == phases.end())
    w.fail("unknown phase '" + phase + "' (" + suggest(phase, phases) + ")");
  return phase;
}

Check parse_check(const json& j, const Where& w, size_t step_index, bool trace_scenario) {
  if (!j.is_object()) w.fail("expected a check object {\"check\": \"node_count\", ...}, got " + shown(j));
  if (!j.contains("check")) w.fail("missing \"check\" (one of: " + join(check_kinds(), ", ") + ")");
  Check c;
  c.pointer = w.pointer;
  c.kind = get_string(j["check"], w.at("check"));
  const CheckKind* def = check_kinds_registry().find(c.kind);
  if (!def) {
    w.at("check").fail("unknown check '" + c.kind + "' (" + suggest(c.kind, check_kinds()) + ")");
  }
  if (def->trace != trace_scenario) {
    std::vector<std::string> fitting;
    for (const auto& name : check_kinds())
      if (check_kinds_registry().get(name).trace == trace_scenario) fitting.push_back(name);
    w.at("check").fail(c.kind + (def->trace ? " checks a recorded trace, and this scenario runs a model"
                                            : " checks a model run, and this scenario replays a trace") +
                       " (checks here: " + join(fitting, ", ") + ")");
  }
  std::vector<std::string> keys = {"check"};
  keys.insert(keys.end(), def->required.begin(), def->required.end());
  keys.insert(keys.end(), def->optional.begin(), def->optional.end());
  check_keys(j, w, keys);
  for (const auto& r : def->required)
    if (!j.contains(r)) w.fail(c.kind + " needs \"" + r + "\"");
  for (const auto& [key, v] : j.items()) {
    const Where at = w.at(key);
    if (key == "equals" && def->trace) c.value = get_number(v, at, 0, 1e18);
    else if (key == "equals") c.equals = get_int(v, at, 0, 1 << 30);
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
      const std::vector<std::string> bounds = {"compute", "memory", "overhead", "below"};
      if (std::find(bounds.begin(), bounds.end(), c.bound) == bounds.end())
        at.fail("expected one of compute, memory, overhead, below, got " + shown(v));
    } else if (key == "level") {
      c.level = get_string(v, at);
      const std::vector<std::string> levels = {"L1", "L2", "L3", "DRAM"};
      if (std::find(levels.begin(), levels.end(), c.level) == levels.end())
        at.fail("unknown memory level '" + c.level + "' (" + suggest(c.level, levels) + ")");
    } else if (key == "changed") {
      if (!v.is_boolean()) at.fail("expected true or false, got " + shown(v));
      c.changed = v.get<bool>();
    } else if (key == "percent") c.percent = get_number(v, at, 0, 1e6);
    else if (key == "tolerance") c.tolerance = get_number(v, at, 0, 1);
    else if (key == "ratio") c.ratio = get_number(v, at, 0, 1e6);
    else if (key == "kind") {
      c.finding = get_string(v, at);
      const auto& kinds = finding_kinds();
      if (std::find(kinds.begin(), kinds.end(), c.finding) == kinds.end())
        at.fail("unknown finding kind '" + c.finding + "' (" + suggest(c.finding, kinds) + ")");
    } else if (key == "rank_at_most") c.rank_at_most = get_int(v, at, 1, 1000);
    else if (key == "time_lost_ms") c.time_lost_ms = get_number(v, at, 0, 1e12);
    else if (key == "key") {
      c.key = get_string(v, at);
      const auto& keys_ok = c.kind == "kernel_figure" ? kernel_figure_keys()
                            : c.kind == "phase_total" ? phase_total_keys()
                            : c.kind == "counter"     ? counter_keys()
                                                      : trace_total_keys();
      const std::string what = c.kind == "kernel_figure" ? "kernel figure"
                               : c.kind == "phase_total" ? "phase total"
                               : c.kind == "counter"     ? "counter figure"
                                                         : "trace total";
      if (std::find(keys_ok.begin(), keys_ok.end(), c.key) == keys_ok.end())
        at.fail("unknown " + what + " '" + c.key + "' (" + suggest(c.key, keys_ok) + ")");
    } else if (key == "kernel") {
      c.kernel = get_nonempty_string(v, at);
    } else if (key == "item") {
      c.item = get_string(v, at);
      const auto& items = profiler::kernel_finding_items();
      if (std::find(items.begin(), items.end(), c.item) == items.end())
        at.fail("unknown fine-grained item '" + c.item + "' (" + suggest(c.item, items) + ")");
    } else if (key == "unit") {
      c.unit = get_string(v, at);
      const std::vector<std::string> units = {"SM", "L1/TEX", "L2", "DRAM"};
      if (std::find(units.begin(), units.end(), c.unit) == units.end())
        at.fail("unknown unit '" + c.unit + "' (" + suggest(c.unit, units) + ")");
    } else if (key == "phase") {
      c.phase = serving_phase(v, at);
    } else if (key == "top_kernel")
      c.top_kernel = get_nonempty_string(v, at);
    else if (key == "counter")
      c.counter = get_nonempty_string(v, at);
    else if (key == "gap")
      c.gap = static_cast<int>(get_int(v, at, 0, 1000));
    else if (key == "cause") {
      c.cause = get_string(v, at);
      const std::vector<std::string> causes = {"host_bound", "sync", "copy_wait", "other"};
      if (std::find(causes.begin(), causes.end(), c.cause) == causes.end())
        at.fail("unknown idle cause '" + c.cause + "' (" + suggest(c.cause, causes) + ")");
    } else if (key == "host") c.host = get_string(v, at);
    else if (key == "step") {
      c.step = static_cast<int>(get_int(v, at, 0, 1 << 20));
      if (static_cast<size_t>(c.step) >= step_index)
        at.fail("step " + std::to_string(c.step) + " is not an earlier step (this is step " + std::to_string(step_index) + ", counting from 0)");
    }
  }
  if (const std::string why = def->validate(c, step_index); !why.empty()) w.fail(why);
  return c;
}

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

CheckResult evaluate(const Scenario& sc, const Check& c,
                     const std::vector<std::shared_ptr<const RunResult>>& results, size_t step,
                     const OpenedTrace* trace, const KernelLevel* kernels) {
  const std::string at = sc.path + ": " + c.pointer + ": ";
  if (c.trace()) {
    if (!trace) throw Error(at + "the trace is not open");
    if (!c.kernel.empty() && !kernels) throw Error(at + "the kernel level (" + sc.kernels + ") is not open");
    return check_kinds_registry().get(c.kind).evaluate(CheckInput{sc, c, nullptr, results, step, trace, kernels});
  }
  if (step >= results.size() || !results[step]) throw Error(at + "step " + std::to_string(step) + " has no result");
  const CheckKind& kind = check_kinds_registry().get(c.kind);
  CheckResult out = kind.evaluate(CheckInput{sc, c, results[step].get(), results, step, nullptr});
  if (!kind.measured || out.passed) return out;
  // A timing claim that failed on a busy machine says nothing about the model: not measurable.
  // The runs it read: this step's, and the earlier step a comparison names.
  std::string busy = machine_busy(*results[step]);
  const bool compares = std::find(kind.required.begin(), kind.required.end(), "step") != kind.required.end();
  if (busy.empty() && compares && c.step >= 0 && static_cast<size_t>(c.step) < results.size() && results[c.step])
    if (std::string earlier = machine_busy(*results[c.step]); !earlier.empty())
      busy = "step " + std::to_string(c.step) + ": " + earlier;
  if (!busy.empty()) out.not_measurable = "machine busy (" + busy + ")";
  return out;
}

const std::vector<std::string> kTracePanels = {"trace", "ops"};

}  // namespace

std::vector<std::string> check_kinds() { return check_kinds_registry().names(); }

bool Check::trace() const {
  const CheckKind* k = check_kinds_registry().find(kind);
  return k && k->trace;
}

bool Check::measured() const {
  const CheckKind* k = check_kinds_registry().find(kind);
  return k && k->measured;
}

std::string Check::describe() const {
  const CheckKind* k = check_kinds_registry().find(kind);
  return kind + (k ? k->describe(*this) : "");
}

Scenario parse_scenario(const json& j, const std::string& path) {
  const Where top{path, ""};
  check_keys(j, top, {"$schema", "name", "description", "model", "trace", "kernels", "inputs", "settings", "steps"});
  Scenario sc;
  sc.path = path;
  if (!j.contains("name")) top.fail("missing \"name\"");
  if (!j.contains("model") && !j.contains("trace"))
    top.fail("missing \"model\" (a builtin model such as transformer, or an .onnx file) or \"trace\" (a recorded GPU trace: kineto .json[.gz] or nsys .sqlite)");
  if (j.contains("model") && j.contains("trace"))
    top.at("trace").fail("give either \"model\" or \"trace\", not both (a trace scenario runs no model)");
  sc.name = get_nonempty_string(j["name"], top.at("name"));
  if (j.contains("description")) sc.description = get_string(j["description"], top.at("description"));
  const bool is_trace = j.contains("trace");
  if (is_trace) {
    for (const char* k : {"inputs", "settings"})
      if (j.contains(k)) top.at(k).fail(std::string("a trace scenario runs nothing, so it takes no ") + k);
    sc.trace = resolve_trace(get_string(j["trace"], top.at("trace")), path, top.at("trace"));
    if (j.contains("kernels")) sc.kernels = resolve_trace(get_string(j["kernels"], top.at("kernels")), path, top.at("kernels"));
  } else if (j.contains("kernels")) {
    top.at("kernels").fail("\"kernels\" (an Nsight Compute export) goes with a \"trace\": its launches are matched to the trace's kernels");
  }
  json base = json::object();
  if (!is_trace) {
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
      step.title = get_nonempty_string(js["title"], w.at("title"));
      if (js.contains("text")) step.text = get_string(js["text"], w.at("text"));
      if (js.contains("set")) {
        if (is_trace) w.at("set").fail("a trace scenario's steps change no settings: there is nothing to run (look_at and checks only)");
        step.set = js["set"];
        apply_settings(current, js["set"], w.at("set"));
      }
      step.settings = current;
      if (js.contains("look_at")) {
        const Where wl = w.at("look_at");
        check_keys(js["look_at"], wl, {"panel", "node", "op", "gap", "group", "kernel", "phase"});
        const json& l = js["look_at"];
        if (l.contains("panel")) {
          step.look_at.panel = get_string(l["panel"], wl.at("panel"));
          if (std::find(kPanels.begin(), kPanels.end(), step.look_at.panel) == kPanels.end()) {
            wl.at("panel").fail("unknown panel '" + step.look_at.panel + "' (" +
                                suggest(step.look_at.panel, kPanels) + ")");
          }
          if (is_trace && std::find(kTracePanels.begin(), kTracePanels.end(), step.look_at.panel) == kTracePanels.end())
            wl.at("panel").fail("a recorded trace has no graph: look at the trace or ops panel, not " + step.look_at.panel);
        }
        for (const char* k : {"node", "op"})
          if (is_trace && l.contains(k)) wl.at(k).fail(std::string("a recorded trace has no graph, so no ") + k + " to select (gap and group do)");
        for (const char* k : {"gap", "group", "phase"})
          if (!is_trace && l.contains(k))
            wl.at(k).fail(std::string(k) +
                          " is for a trace scenario (\"trace\": FILE): a model run has no idle "
                          "gaps, kernel groups or serving phases");
        if (l.contains("gap")) step.look_at.gap = static_cast<int>(get_int(l["gap"], wl.at("gap"), 0, 1000));
        if (l.contains("group")) {
          step.look_at.group = get_string(l["group"], wl.at("group"));
          const std::vector<std::string> groups = {"name", "launcher"};
          if (std::find(groups.begin(), groups.end(), step.look_at.group) == groups.end())
            wl.at("group").fail("unknown group '" + step.look_at.group + "' (" + suggest(step.look_at.group, groups) + ")");
        }
        if (l.contains("kernel")) {
          if (sc.kernels.empty()) wl.at("kernel").fail("a kernel to select needs the scenario's \"kernels\" (an Nsight Compute export)");
          step.look_at.kernel = get_nonempty_string(l["kernel"], wl.at("kernel"));
        }
        if (l.contains("phase")) step.look_at.phase = serving_phase(l["phase"], wl.at("phase"));
        if (l.contains("node")) step.look_at.node = get_string(l["node"], wl.at("node"));
        if (l.contains("op")) step.look_at.op = valid_op(get_string(l["op"], wl.at("op")), wl.at("op"));
      }
      if (js.contains("checks")) {
        const Where wc = w.at("checks");
        if (!js["checks"].is_array()) wc.fail("expected an array of checks, got " + shown(js["checks"]));
        for (size_t k = 0; k < js["checks"].size(); ++k) {
          step.checks.push_back(parse_check(js["checks"][k], wc.at(k), i, is_trace));
          if (!step.checks.back().kernel.empty() && sc.kernels.empty())
            wc.at(k).at("check").fail(step.checks.back().kind + " reads the scenario's \"kernels\" (an Nsight Compute export), and it names none");
        }
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

namespace {

// A path JSON cannot hold as it is (not UTF-8) would come back as another file: refuse it.
void require_utf8(const std::string& text, const std::string& what) {
  if (!is_valid_utf8(text))
    throw Error(what + " \"" + valid_utf8(text) +
                "\" is not valid UTF-8: a JSON scenario cannot name it (rename the file)");
}

}  // namespace

json scenario_json(const std::string& name, const Settings& settings) {
  require_utf8(name, "scenario name");
  require_utf8(settings.model, "model");
  for (const auto& [input, path] : settings.inputs) require_utf8(input + "=" + path, "input");
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
  if (!l.node.empty() && !has_node(result.graph(), l.node)) throw_no_node(scenario, at + "/node", l.node, result.graph());
  if (!l.op.empty() && std::none_of(result.graph().nodes.begin(), result.graph().nodes.end(),
                                    [&](const ir::Node& n) { return n.op == l.op; })) {
    throw Error(scenario.path + ": " + at + "/op: no " + l.op + " node in this step's graph");
  }
}

void validate_look_at(const Scenario& scenario, size_t step, const OpenedTrace& trace) {
  const LookAt& l = scenario.steps.at(step).look_at;
  if (!l.kernel.empty() && trace_kernel_named(trace, l.kernel).empty())
    throw Error(scenario.path + ": /steps/" + std::to_string(step) + "/look_at/kernel: no kernel of " + trace.path +
                " has '" + l.kernel + "' in its name");
  if (!l.phase.empty()) {
    std::vector<std::string> names;
    for (const auto& p : trace.analysis.phases.phases) names.push_back(p.name);
    if (std::find(names.begin(), names.end(), l.phase) == names.end())
      throw Error(scenario.path + ": /steps/" + std::to_string(step) + "/look_at/phase: no " +
                  l.phase + " phase in " + trace.path + " (" +
                  (names.empty() ? "it has none" : "it has " + join(names, ", ")) + ")");
  }
  if (l.gap < 0) return;
  size_t gaps = 0;
  for (const auto& d : trace.analysis.devices) gaps += d.longest_gaps.size();
  if (static_cast<size_t>(l.gap) >= gaps)
    throw Error(scenario.path + ": /steps/" + std::to_string(step) + "/look_at/gap: no gap " + std::to_string(l.gap) +
                " in " + trace.path + " (" + (gaps == 0 ? "it lists no idle gaps" : "valid: 0.." + std::to_string(gaps - 1)) + ")");
}

std::vector<CheckResult> evaluate_checks(const Scenario& scenario, size_t step,
                                         const std::vector<std::shared_ptr<const RunResult>>& results,
                                         const OpenedTrace* trace, const KernelLevel* kernels) {
  std::vector<CheckResult> out;
  for (const Check& c : scenario.steps.at(step).checks) out.push_back(evaluate(scenario, c, results, step, trace, kernels));
  return out;
}

CheckResult evaluate_check(const Scenario& scenario, size_t step, size_t index,
                           const std::vector<std::shared_ptr<const RunResult>>& results, const OpenedTrace* trace,
                           const KernelLevel* kernels) {
  return evaluate(scenario, scenario.steps.at(step).checks.at(index), results, step, trace, kernels);
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
      if (c.check->measured() && !c.passed && c.not_measurable.empty()) return false;
  return true;
}

size_t ScenarioRun::not_measurable() const {
  size_t n = 0;
  for (const auto& s : steps)
    for (const auto& c : s.checks) n += !c.not_measurable.empty();
  return n;
}

std::string ScenarioRun::to_text() const {
  std::string out = "scenario \"" + scenario->name + "\" (" + scenario->path + "): " +
                    std::to_string(steps.size()) + " step" + (steps.size() == 1 ? "" : "s") + "\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    const ScenarioStep& def = scenario->steps[i];
    out += fmt("\nstep %.0f: ", static_cast<double>(i)) + def.title + "\n  ";
    if (s.result) {
      out += s.result->settings.label() +
             fmt("\n  median %.1f us, %.0f nodes, arena ", s.result->latency.median_us,
                 static_cast<double>(s.result->graph().nodes.size())) +
             format_bytes(static_cast<double>(s.result->plan->arena_bytes)) + "\n";
      if (const std::string busy = machine_busy(*s.result); !busy.empty())
        out += "  warning: the machine was busy while this step measured (" + busy + ")\n";
    } else {
      out += (trace ? trace->summary() : std::string("recorded trace")) + "\n";
    }
    for (const auto& c : s.checks) {
      char line[512];
      const std::string figures = c.not_measurable.empty() ? c.figures : "not measurable: " + c.not_measurable + "; " + c.figures;
      std::snprintf(line, sizeof line, "  %-4s %-8s %-52s %s\n",
                    c.passed ? "ok" : c.not_measurable.empty() ? "FAIL" : "BUSY",
                    c.check->measured() ? "measured" : "exact", c.check->describe().c_str(), figures.c_str());
      out += line;
    }
  }
  out += std::string("\nstructural checks: ") + (structural_ok() ? "all hold" : "FAILED") +
         "; measured checks: " + (measured_ok() ? "all hold" : "some did not hold (they fail only with --strict)") +
         (not_measurable() ? "; " + std::to_string(not_measurable()) +
                                 " not measurable: the machine was busy (run again on a quiet one)"
                           : std::string()) +
         "\n";
  return out;
}

json ScenarioRun::to_json() const {
  json j;
  j["scenario"] = scenario->name;
  j["path"] = scenario->path;
  if (trace) j["trace"] = trace->path;
  j["structural_ok"] = structural_ok();
  j["measured_ok"] = measured_ok();
  j["steps"] = json::array();
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    json js;
    js["title"] = scenario->steps[i].title;
    if (s.result) {
      js["settings"] = s.result->settings.label();
      js["median_us"] = s.result->latency.median_us;
      js["nodes"] = s.result->graph().nodes.size();
      js["arena_bytes"] = s.result->plan->arena_bytes;
      js["machine_busy"] = machine_busy(*s.result);  // "" when quiet
      if (s.result->load.other_cores >= 0) js["other_cores"] = s.result->load.other_cores;
    } else if (trace) {
      js["trace"] = trace->summary();
    }
    js["checks"] = json::array();
    for (const auto& c : s.checks) {
      js["checks"].push_back({{"check", c.check->describe()}, {"pointer", c.check->pointer},
                              {"measured", c.check->measured()}, {"passed", c.passed}, {"figures", c.figures},
                              {"not_measurable", c.not_measurable}});
    }
    j["steps"].push_back(js);
  }
  return j;
}

}  // namespace fusebox::workbench
