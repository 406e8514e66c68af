// Settings: the table of fields (fields()) and everything derived from it: JSON in and out,
// KEY=VALUE, CLI flags, printing and help. Every way in converts through the field's from_text
// (a JSON value is first checked for its type, then read as text), so a value means the same
// and fails with the same message wherever it was given; only the "where" in front differs.
#include "app/workbench/settings.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

#include "app/workbench/backends.h"
#include "core/backend/backend.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/exec/executor.h"
#include "core/models/builtin_models.h"
#include "core/passes/fusion_patterns.h"
#include "core/passes/pass_manager.h"
#include "core/planner/plan.h"
#include "core/planner/strategies.h"
#include "ops/cpu/isa.h"

namespace fusebox::workbench {

namespace {

using nlohmann::json;
using Names = std::function<std::vector<std::string>()>;

// ---- Names the registries know ----------------------------------------------------------------

std::vector<std::string> pass_names() {
  return passes::PassRegistry::instance().names();
}

std::vector<std::string> pattern_names() {
  std::vector<std::string> names;
  for (const auto& p : passes::FusionRegistry::instance().entries()) names.push_back(p.name);
  return names;
}

std::vector<std::string> planner_names() {
  std::vector<std::string> names = planner::strategies().names();
  names.push_back(planner::kBestPlanner);
  return names;
}

// Every registered backend, the unavailable ones included: whether one can run here is the
// pipeline's question (it says why not), not a property of the setting.
std::vector<std::string> backend_names() {
  register_backends();
  return exec::BackendRegistry::instance().known();
}

// ---- Message pieces ---------------------------------------------------------------------------

std::string quoted(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);  // argv is bytes
}

bool looks_like_integer(const std::string& text) {
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return i < text.size() && std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(),
                                        [](char c) { return c >= '0' && c <= '9'; });
}

// Text given for a value, for "got ...": numbers as they are, anything else quoted.
std::string shown_text(const std::string& text) {
  return looks_like_integer(text) ? text : quoted(text);
}

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  throw Error(where.empty() ? message : where + ": " + message);
}

[[noreturn]] void fail_expected(const std::string& where, const std::string& expected,
                                const std::string& got) {
  fail(where, "expected " + expected + ", got " + got);
}

std::string unknown_name(const std::string& what, const std::string& name,
                         const std::vector<std::string>& names) {
  const std::string guess = closest(name, names);
  return "unknown " + what + " '" + name + "' (" +
         (guess.empty() ? "" : "did you mean '" + guess + "'? ") + "valid: " + join(names, ", ") +
         ")";
}

void check_name(const std::string& what, const std::string& name,
                const std::vector<std::string>& names, const std::string& where) {
  if (std::find(names.begin(), names.end(), name) == names.end())
    fail(where, unknown_name(what, name, names));
}

// RFC 6901: '~' and '/' inside a key are escaped so the path still splits at '/'.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

// ---- Value converters, shared by the fields ---------------------------------------------------

template <typename T>
std::string range_text(T lo, T hi) {
  return hi == std::numeric_limits<T>::max()
             ? ">= " + std::to_string(lo)
             : "in " + std::to_string(lo) + ".." + std::to_string(hi);
}

template <typename T>
T integer_in(const std::string& text, T lo, T hi, const std::string& where) {
  T v{};
  const char* end = text.data() + text.size();
  // from_chars takes no '+', and fails (rather than wraps) outside T, e.g. -1 for a uint64_t.
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < lo || v > hi)
    fail_expected(where, "an integer " + range_text(lo, hi), shown_text(text));
  return v;
}

constexpr const char* kSwitchValues = "on | off | true | false | 1 | 0";

bool switch_of(const std::string& text, const std::string& where) {
  if (text == "on" || text == "true" || text == "1") return true;
  if (text == "off" || text == "false" || text == "0") return false;
  fail_expected(where, kSwitchValues, quoted(text));
}

// "all" | "none" | "a,b" (the names on) -> the names off.
std::set<std::string> off_from_list(const std::string& text, const std::vector<std::string>& names,
                                    const std::string& what, const std::string& where) {
  const std::string whole = trim(text);
  if (whole == "all") return {};
  if (whole == "none") return {names.begin(), names.end()};
  std::set<std::string> on;
  for (const auto& part : split(whole, ',')) {
    const std::string name = trim(part);
    if (name.empty())
      fail_expected(where, "all | none | comma-separated " + what + " names", quoted(text));
    check_name(what, name, names, where);
    on.insert(name);
  }
  std::set<std::string> off;
  for (const auto& n : names)
    if (!on.count(n)) off.insert(n);
  return off;
}

// The inverse: "all", "none" or the names on, in registry order.
std::string list_text(const std::vector<std::string>& names, const std::set<std::string>& off) {
  std::vector<std::string> on;
  for (const auto& n : names)
    if (!off.count(n)) on.push_back(n);
  if (on.size() == names.size()) return "all";
  if (on.empty()) return "none";
  return join(on, ",");
}

// ---- The field table --------------------------------------------------------------------------

enum class JsonKind { Integer, String, Bool };

// The text a JSON value of `kind` stands for, or nothing when it has another type.
std::optional<std::string> json_text(const json& v, JsonKind kind) {
  switch (kind) {
    case JsonKind::Integer:
      if (v.is_number_integer()) return v.dump();
      break;
    case JsonKind::String:
      if (v.is_string()) return v.get<std::string>();
      break;
    case JsonKind::Bool:
      if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
      break;
  }
  return std::nullopt;
}

struct FieldDef {
  std::string key;      // JSON key, KEY of KEY=VALUE, name in printouts and in `omit`
  std::string flag;     // "--threads"; "model" is the positional MODEL
  std::string metavar;  // the flag's value in --help
  std::string help;
  std::function<std::string()> hint;  // value syntax: "an integer in 1..256", "eager | compiled"
  std::function<std::string()> flag_help;  // the flag's --help text
  Names choices;                           // name-valued fields: the valid names (else null)
  SettingField::Kind kind = SettingField::Kind::Name;
  std::optional<int64_t> min, max;         // integers (a map's values): the range
  std::function<int64_t()> suggested_max;  // a narrower span a control may offer (else null)
  std::string sub_hint;                    // sub-key syntax ("passes.NAME=on|off"); "" when none

  // JSON: a value of json_kind is read as text by from_text; an object's entries (fields with
  // sub-keys) each of entry_kind by from_sub_text. `expected` words the accepted forms.
  std::optional<JsonKind> json_kind;
  JsonKind entry_kind = JsonKind::String;
  std::function<std::string()> expected;
  std::string entry_expected;

  // `where` starts every message ("s.json: /threads", "--threads", "--a: passes.dce").
  std::function<void(Settings&, const std::string& text, const std::string& where)> from_text;
  std::function<void(Settings&, const std::string& name, const std::string& text,
                     const std::string& where)>
      from_sub_text;
  // Repeatable flags (--input, --dim): one NAME=VALUE item, merged into the map.
  std::function<void(Settings&, const std::string& item, const std::string& where)> from_item;
  std::function<json(const Settings&)> to_json;
  std::function<std::string(const Settings&)> to_text;
};

// What every field starts from: its names, kind and help.
FieldDef base_field(std::string key, std::string flag, std::string metavar, std::string help,
                    SettingField::Kind kind) {
  FieldDef f;
  f.key = std::move(key);
  f.flag = std::move(flag);
  f.metavar = std::move(metavar);
  f.help = std::move(help);
  f.kind = kind;
  return f;
}

// The range as SettingField gives it: a bound at the type's limit is no bound.
template <typename T>
void set_range(FieldDef& f, T lo, T hi) {
  f.min = static_cast<int64_t>(lo);
  if (hi != std::numeric_limits<T>::max()) f.max = static_cast<int64_t>(hi);
}

template <typename T>
FieldDef integer_field(std::string key, std::string flag, std::string help, T Settings::*member,
                       T lo, T hi, std::function<int64_t()> suggested_max = nullptr) {
  FieldDef f = base_field(std::move(key), std::move(flag), "INT", std::move(help),
                          SettingField::Kind::Integer);
  set_range(f, lo, hi);
  f.suggested_max = std::move(suggested_max);
  const std::string range = range_text(lo, hi);
  f.hint = [range] { return "an integer " + range; };
  const std::string bare = range.rfind("in ", 0) == 0 ? range.substr(3) : range;  // "1..256"
  f.flag_help = [help = f.help, bare] { return help + ": " + bare; };
  f.json_kind = JsonKind::Integer;
  f.expected = f.hint;
  f.from_text = [member, lo, hi](Settings& s, const std::string& text, const std::string& where) {
    s.*member = integer_in<T>(text, lo, hi, where);
  };
  f.to_json = [member](const Settings& s) { return json(s.*member); };
  f.to_text = [member](const Settings& s) { return std::to_string(s.*member); };
  return f;
}

// A string that must be one of `choices` ("unknown executor 'compild' (did you mean ...").
FieldDef name_field(std::string key, std::string help, std::string Settings::*member,
                    std::string what, Names choices) {
  FieldDef f = base_field(key, "--" + key, "NAME", std::move(help), SettingField::Kind::Name);
  f.choices = choices;
  f.hint = [choices] { return join(choices(), " | "); };
  f.flag_help = [hint = f.hint, help = f.help] { return hint() + ": " + help; };
  f.json_kind = JsonKind::String;
  f.expected = [choices] { return "a string (" + join(choices(), " | ") + ")"; };
  f.from_text = [member, what, choices](Settings& s, const std::string& text,
                                        const std::string& where) {
    check_name(what, text, choices(), where);
    s.*member = text;
  };
  f.to_json = [member](const Settings& s) { return json(s.*member); };
  f.to_text = [member](const Settings& s) { return s.*member; };
  return f;
}

// One switch: on | off | true | false | 1 | 0 as text, a boolean in JSON.
FieldDef switch_field(std::string key, std::string help, bool Settings::*member) {
  FieldDef f =
      base_field(key, "--" + key, "on|off", std::move(help), SettingField::Kind::Switch);
  f.hint = [] { return std::string(kSwitchValues); };
  f.flag_help = [help = f.help] { return std::string(kSwitchValues) + ": " + help; };
  f.json_kind = JsonKind::Bool;
  f.expected = [] { return std::string("true or false"); };
  f.from_text = [member](Settings& s, const std::string& text, const std::string& where) {
    s.*member = switch_of(text, where);
  };
  f.to_json = [member](const Settings& s) { return json(s.*member); };
  f.to_text = [member](const Settings& s) { return std::string(s.*member ? "on" : "off"); };
  return f;
}

// Switches over a registry's names, stored as the set switched off: "all" | "none" | "a,b" (the
// ones on) as a whole, NAME=on|off one at a time, {name: bool} in JSON.
FieldDef switches_field(std::string key, std::string help, std::set<std::string> Settings::*off,
                        std::string what, Names names) {
  FieldDef f = base_field(key, "--" + key, "LIST", std::move(help), SettingField::Kind::Switches);
  f.choices = names;
  f.hint = [what] { return "all | none | comma-separated " + what + " names"; };
  f.flag_help = [hint = f.hint, help = f.help] { return hint() + ": " + help; };
  f.sub_hint = key + ".NAME=" + kSwitchValues;
  f.json_kind = JsonKind::String;
  f.entry_kind = JsonKind::Bool;
  f.expected = [what] {
    return "an object {\"" + what + "\": true | false} or a string (all | none | comma-separated " +
           what + " names)";
  };
  f.entry_expected = "true or false";
  f.from_text = [off, what, names](Settings& s, const std::string& text, const std::string& where) {
    s.*off = off_from_list(text, names(), what, where);
  };
  f.from_sub_text = [off, what, names](Settings& s, const std::string& name,
                                       const std::string& text, const std::string& where) {
    check_name(what, name, names(), where);
    if (switch_of(text, where))
      (s.*off).erase(name);
    else
      (s.*off).insert(name);
  };
  f.to_json = [off, names](const Settings& s) {
    json j = json::object();
    for (const auto& n : names()) j[n] = !(s.*off).count(n);
    // A name no longer registered stays visible (and fails when read back) instead of vanishing.
    for (const auto& n : s.*off)
      if (!j.contains(n)) j[n] = false;
    return j;
  };
  f.to_text = [off, names](const Settings& s) { return list_text(names(), s.*off); };
  return f;
}

// A map NAME -> value: NAME=VALUE per flag (--dim batch=4), dims.batch=4 per key,
// "batch=4,seq=8" as a whole (replacing the map), {"batch": 4} in JSON (merging).
template <typename V>
FieldDef map_field(std::string key, std::string flag, std::string metavar, std::string help,
                   std::map<std::string, V> Settings::*member, JsonKind entry_kind,
                   std::string entry_expected,
                   std::function<V(const std::string& text, const std::string& where)> value_of,
                   std::function<std::string(const V&)> value_text) {
  FieldDef f = base_field(key, std::move(flag), metavar, std::move(help), SettingField::Kind::Map);
  f.hint = [metavar] { return metavar + ",..."; };
  f.flag_help = [metavar, help = f.help] {
    return metavar + ": " + help + " (repeatable, or several joined by commas)";
  };
  f.sub_hint = key + "." + metavar;
  f.entry_kind = entry_kind;
  f.expected = [entry_expected] { return "an object {\"NAME\": " + entry_expected + "}"; };
  f.entry_expected = entry_expected;
  f.from_sub_text = [member, value_of](Settings& s, const std::string& name,
                                       const std::string& text, const std::string& where) {
    if (name.empty()) fail(where, "expected a name, got \"\"");
    (s.*member)[name] = value_of(text, where);
  };
  // NAME=VALUE, where `sep` joins `where` and NAME in messages ("--dim batch", "--a: dims.batch").
  auto set_item = [metavar, set = f.from_sub_text](Settings& s, const std::string& item,
                                                   const std::string& where, const char* sep) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) fail_expected(where, metavar, quoted(item));
    const std::string name = item.substr(0, eq);
    set(s, name, item.substr(eq + 1), where + sep + name);
  };
  // --input x=a.npy,y=b.npy as the whole value (inputs=x=a.npy,y=b.npy) takes it: each item.
  f.from_item = [set_item](Settings& s, const std::string& item, const std::string& where) {
    for (const auto& one : split(item, ',')) set_item(s, one, where, " ");
  };
  f.from_text = [member, set_item](Settings& s, const std::string& text, const std::string& where) {
    // Built aside, so a bad item leaves the map as it was.
    Settings fresh;
    fresh.*member = {};
    if (!text.empty())
      for (const auto& item : split(text, ',')) set_item(fresh, item, where, ".");
    s.*member = std::move(fresh.*member);
  };
  f.to_json = [member](const Settings& s) {
    json j = json::object();
    for (const auto& [name, v] : s.*member) j[name] = v;
    return j;
  };
  f.to_text = [member, value_text](const Settings& s) {
    std::vector<std::string> items;
    for (const auto& [name, v] : s.*member) items.push_back(name + "=" + value_text(v));
    return join(items, ",");
  };
  return f;
}

FieldDef model_field() {
  FieldDef f = base_field("model", "model", "MODEL",
                          "builtin model spec: mlp | transformer | stack, with options such as "
                          "transformer:seq=128,d=256,heads=4,ffn=1024,batch=1, or a .onnx file",
                          SettingField::Kind::Model);
  f.hint = [] { return "a builtin spec or a .onnx file"; };
  f.flag_help = [help = f.help] { return help; };
  f.json_kind = JsonKind::String;
  f.expected = [] { return "a string (a builtin model spec or a .onnx file)"; };
  // The spec itself is checked where it is built (models::parse_model_spec, the importer), which
  // knows each kind's options; here only that there is one.
  f.from_text = [](Settings& s, const std::string& text, const std::string& where) {
    if (trim(text).empty())
      fail_expected(where, "a builtin model spec or a .onnx file", quoted(text));
    s.model = text;
  };
  f.to_json = [](const Settings& s) { return json(s.model); };
  f.to_text = [](const Settings& s) { return s.model; };
  return f;
}

// The table, in the order flags, printouts and help list the fields: what runs, how, then how
// it is measured, then a .onnx model's extras.
const std::vector<FieldDef>& fields() {
  static const std::vector<FieldDef> table = [] {
    std::vector<FieldDef> t;
    t.push_back(model_field());
    t.push_back(
        name_field("backend", "device to run on", &Settings::backend, "backend", backend_names));
    t.push_back(name_field("executor", "how ops are dispatched", &Settings::executor, "executor",
                           [] { return exec::executors().names(); }));
    t.push_back(integer_field<int>("threads", "--threads",
                                   "intra-op threads (one pool shared with BLAS)",
                                   &Settings::threads, 1, 256, [] {
                                     // This machine's cores (at least 2, so a slider moves).
                                     const int64_t cores = std::thread::hardware_concurrency();
                                     return std::clamp<int64_t>(cores, 2, 256);
                                   }));
    t.push_back(name_field("isa",
                           "CPU instruction-set level of the kernels (auto: the best this CPU runs)",
                           &Settings::isa, "isa", [] {
                             std::vector<std::string> names = cpu::isa_names();
                             names.insert(names.begin(), "auto");
                             return names;
                           }));
    t.push_back(name_field("precision",
                           "float GEMM precision: fp32, or tf32 (TF32 tensor cores, faster, about 1e-3 "
                           "relative error; cuda backend only)",
                           &Settings::precision, "precision",
                           [] { return std::vector<std::string>{"fp32", "tf32"}; }));
    t.push_back(name_field("gemm",
                           "the MatMul family's GEMMs: auto (the backend's own kernels; on the CPU, "
                           "micro-kernels on weights packed at compile time, bias and activation in "
                           "registers) or blas (OpenBLAS on the weight as stored; CPU only)",
                           &Settings::gemm, "gemm",
                           [] { return std::vector<std::string>{"auto", "blas"}; }));
    t.push_back(switches_field("passes", "the passes that run (see `fusebox passes`)",
                               &Settings::passes_off, "pass", pass_names));
    t.push_back(switches_field("patterns", "the fusion patterns fuse_patterns tries",
                               &Settings::patterns_off, "pattern", pattern_names));
    t.push_back(name_field("planner",
                           "memory planner strategy (best: try each, keep the smallest arena)",
                           &Settings::planner, "planner", planner_names));
    t.push_back(switch_field("capture",
                             "capture one run and replay it (CUDA graphs): compiled executor, on a "
                             "backend that can capture",
                             &Settings::capture));
    t.push_back(integer_field<uint64_t>("seed", "--seed", "seed for weights and random inputs",
                                        &Settings::seed, 0, std::numeric_limits<uint64_t>::max()));
    t.push_back(integer_field<int>("warmup", "--warmup", "untimed runs first", &Settings::warmup, 0,
                                   1000000));
    t.push_back(integer_field<int>("iters", "--iters", "timed runs", &Settings::iters, 1, 1000000));
    t.push_back(integer_field<int>("profile_runs", "--profile-runs",
                                   "recorded runs for the trace and the op table",
                                   &Settings::profile_runs, 0, 100000));
    t.push_back(map_field<std::string>(
        "inputs", "--input", "NAME=FILE.npy",
        "feed input NAME from a .npy file (f32 or i64), whose shape sets the input's dynamic dims; "
        "other inputs are seeded random",
        &Settings::inputs, JsonKind::String, "a string (a .npy file)",
        [](const std::string& text, const std::string& where) {
          if (text.empty()) fail_expected(where, "a .npy file", "\"\"");
          return text;
        },
        [](const std::string& v) { return v; }));
    t.push_back(map_field<int64_t>(
        "dims", "--dim", "NAME=VALUE", "value of a dynamic dim of a .onnx model", &Settings::dims,
        JsonKind::Integer, "an integer " + range_text<int64_t>(0, models::kMaxModelDim),
        [](const std::string& text, const std::string& where) {
          return integer_in<int64_t>(text, 0, models::kMaxModelDim, where);
        },
        [](const int64_t& v) { return std::to_string(v); }));
    set_range<int64_t>(t.back(), 0, models::kMaxModelDim);
    t.push_back(map_field<std::string>(
        "consts", "--const", "NAME=FILE.npy|VALUE",
        "make input NAME a constant (a .npy file, or one number for every element), so constant "
        "folding and If inlining use its value",
        &Settings::consts, JsonKind::String, "a string (a .npy file or a number)",
        [](const std::string& text, const std::string& where) {
          if (text.empty()) fail_expected(where, "a .npy file or a number", "\"\"");
          return text;
        },
        [](const std::string& v) { return v; }));
    return t;
  }();
  return table;
}

const FieldDef* find_field(const std::string& key) {
  for (const auto& f : fields())
    if (f.key == key) return &f;
  return nullptr;
}

std::string unknown_key(const std::string& key) {
  return "unknown key '" + key + "' (" + suggest(key, settings_keys()) + ")";
}

void field_from_json(const FieldDef& f, Settings& s, const json& v, const std::string& where) {
  if (v.is_object() && f.from_sub_text) {
    for (const auto& [name, entry] : v.items()) {
      const std::string at = where + "/" + pointer_token(name);
      std::optional<std::string> text = json_text(entry, f.entry_kind);
      if (!text) fail_expected(at, f.entry_expected, shown(entry));
      f.from_sub_text(s, name, *text, at);
    }
    return;
  }
  std::optional<std::string> text = f.json_kind ? json_text(v, *f.json_kind) : std::nullopt;
  if (!text) fail_expected(where, f.expected(), shown(v));
  f.from_text(s, *text, where);
}

// "line 3, column 11" for the character at `byte` (1-based, as nlohmann counts) of `text`.
std::string line_column(size_t byte, const std::string& text) {
  const size_t at = std::min(byte ? byte - 1 : 0, text.size());  // the offending character
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(at);
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), end, '\n'));
  const size_t newline = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
  const size_t column = at - (newline == std::string::npos ? 0 : newline + 1) + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// "invalid JSON at line 3, column 11: syntax error while parsing ...". The position is counted
// from the error's byte offset: nlohmann's own column reads 0 after it backs up over a newline.
std::string parse_error_text(const json::parse_error& e, const std::string& text) {
  // what(): "[json.exception.parse_error.101] parse error at line 3, column 0: syntax error ..."
  std::string detail = e.what();
  const size_t position = detail.find(", column ");
  const size_t colon = position == std::string::npos ? position : detail.find(": ", position);
  if (colon != std::string::npos) detail = detail.substr(colon + 2);
  return "invalid JSON at " + line_column(e.byte, text) + ": " + detail;
}

// nlohmann's exception text without its "[json.exception.out_of_range.406] " tag.
std::string without_tag(const std::string& what) {
  const size_t tag = what.rfind("[json.exception.", 0) == 0 ? what.find("] ") : std::string::npos;
  return tag == std::string::npos ? what : what.substr(tag + 2);
}

// A SAX reader that only records where parsing stopped: json::parse's out_of_range (a number
// past double's range, 406) carries no position, the SAX parse_error event does.
struct ErrorPosition : nlohmann::json_sax<json> {
  size_t byte = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  // `position` is just past `token`: point at the token's first character.
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception&) override {
    byte = position > token.size() ? position - token.size() + 1 : position;
    return false;
  }
};

// Far deeper than any settings file or scenario nests; copying a value recurses once a level.
constexpr int kMaxJsonDepth = 64;

// Throws naming the JSON Pointer of the first string or key in `j` holding a NUL byte ("\u0000"
// in the file: it would cut a file name short where it reaches the system) or of a value nested
// deeper than kMaxJsonDepth.
void check_strings_and_depth(const json& j, const std::string& path, const std::string& pointer,
                             int depth) {
  const auto fail_at = [&](const std::string& at, const std::string& what) {
    throw Error(path + ": " + (at.empty() ? "" : at + ": ") + what);
  };
  if (depth > kMaxJsonDepth)
    fail_at(pointer, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  if (j.is_string() && j.get_ref<const std::string&>().find('\0') != std::string::npos)
    fail_at(pointer, "a NUL byte (\\u0000) is not allowed in a string");
  if (j.is_object()) {
    for (const auto& [key, v] : j.items()) {
      std::string shown_key = key;  // the message shows the NUL as the file spells it
      for (size_t p = shown_key.find('\0'); p != std::string::npos; p = shown_key.find('\0', p))
        shown_key.replace(p, 1, "\\u0000");
      const std::string at = pointer + "/" + pointer_token(shown_key);
      if (shown_key != key) fail_at(at, "a NUL byte (\\u0000) is not allowed in a key");
      check_strings_and_depth(v, path, at, depth + 1);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      check_strings_and_depth(j[i], path, pointer + "/" + std::to_string(i), depth + 1);
  }
}

json parse_json_text(const std::string& text, const std::string& path) {
  try {
    json j = json::parse(text);
    check_strings_and_depth(j, path, "", 0);
    return j;
  } catch (const json::parse_error& e) {
    throw Error(path + ": " + parse_error_text(e, text));
  } catch (const json::exception& e) {
    ErrorPosition where;
    json::sax_parse(text, &where);
    const std::string at = where.byte ? " at " + line_column(where.byte, text) : "";
    throw Error(path + ": invalid JSON" + at + ": " + without_tag(e.what()));
  }
}

}  // namespace

std::string shown(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// ---- Settings ---------------------------------------------------------------------------------

bool Settings::pass_on(const std::string& pass) const {
  return !passes_off.count(pass);
}

bool Settings::pattern_on(const std::string& pattern) const {
  return !patterns_off.count(pattern);
}

std::vector<std::string> Settings::passes_on() const {
  std::vector<std::string> on;
  for (const auto& n : pass_names())
    if (!passes_off.count(n)) on.push_back(n);
  return on;
}

std::string Settings::passes_text() const {
  return list_text(pass_names(), passes_off);
}

std::string Settings::label() const {
  std::string s = "passes=" + passes_text() + " executor=" + executor +
                  " threads=" + std::to_string(threads) + " planner=" + planner +
                  " backend=" + backend;
  if (isa != "auto") s += " isa=" + isa;
  if (precision != "fp32") s += " precision=" + precision;
  if (gemm != "auto") s += " gemm=" + gemm;
  if (!patterns_off.empty()) s += " patterns_off=" + join(patterns_off, ",");
  if (capture) s += " capture=on";
  return s;
}

std::vector<SettingField> setting_fields() {
  std::vector<SettingField> out;
  for (const auto& f : fields()) {
    SettingField d;
    d.key = f.key;
    d.flag = f.flag;
    d.help = f.help;
    d.hint = f.hint();
    d.sub_hint = f.sub_hint;
    d.kind = f.kind;
    if (f.choices) d.choices = f.choices();
    d.min = f.min;
    d.max = f.max;
    if (f.suggested_max) d.suggested_max = f.suggested_max();
    out.push_back(std::move(d));
  }
  return out;
}

SettingField setting_field(const std::string& key) {
  if (!find_field(key)) throw Error(unknown_key(key));
  for (auto& d : setting_fields())
    if (d.key == key) return d;
  throw Error(unknown_key(key));
}

int64_t SettingField::clamp(int64_t value) const {
  if (min && value < *min) return *min;
  if (max && value > *max) return *max;
  return value;
}

std::vector<std::string> settings_keys() {
  std::vector<std::string> keys;
  for (const auto& f : fields()) keys.push_back(f.key);
  return keys;
}

// ---- JSON -------------------------------------------------------------------------------------

json to_json(const Settings& settings) {
  json j = json::object();
  for (const auto& f : fields()) j[f.key] = f.to_json(settings);
  return j;
}

void apply_json(Settings& settings, const json& j, const std::string& source, const std::string& pointer) {
  const std::string prefix = source.empty() ? "" : source + ": ";
  if (!j.is_object())
    throw Error(prefix + (pointer.empty() ? "" : pointer + ": ") +
                "expected an object {\"key\": value, ...}" + (pointer.empty() ? " at the top level" : "") +
                ", got " + shown(j));
  for (const auto& [key, v] : j.items()) {
    const std::string at = prefix + pointer + "/" + pointer_token(key);
    const FieldDef* f = find_field(key);
    if (!f) throw Error(at + ": " + unknown_key(key));
    field_from_json(*f, settings, v, at);
  }
}

Settings settings_from_json(const json& j, const std::string& source) {
  Settings s;
  apply_json(s, j, source);
  return s;
}

json read_json_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a " + what);
  std::string text;
  try {
    text = read_file(path, kMaxJsonFileBytes);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  return parse_json_text(text, path);
}

Settings load_settings_file(const std::string& path, const Settings& base) {
  Settings s = base;
  apply_json(s, read_json_file(path, "settings file"), path);
  return s;
}

// ---- KEY=VALUE --------------------------------------------------------------------------------

void apply(Settings& settings, const std::string& assignment, const std::string& where) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) fail_expected(where, "KEY=VALUE", quoted(assignment));
  const std::string key = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  const std::string at = where.empty() ? key : where + ": " + key;
  const size_t dot = key.find('.');
  const std::string base = key.substr(0, dot);
  const FieldDef* f = find_field(base);
  if (!f) fail(at, unknown_key(base));
  if (dot == std::string::npos) {
    f->from_text(settings, value, at);
    return;
  }
  if (!f->from_sub_text) {
    std::vector<std::string> with;
    for (const auto& g : fields())
      if (g.from_sub_text) with.push_back(g.key);
    fail(at, "'" + base + "' has no sub-keys (" + join(with, ", ") + " do)");
  }
  f->from_sub_text(settings, key.substr(dot + 1), value, at);
}

void set_field(Settings& settings, const std::string& key, const std::string& text,
               const std::string& where) {
  const FieldDef* f = find_field(key);
  if (!f) fail(where, unknown_key(key));
  f->from_text(settings, text, where);
}

void apply_all(Settings& settings, const std::string& text, const std::string& where) {
  std::string item;
  auto flush = [&] {
    if (!item.empty()) apply(settings, item, where);
    item.clear();
  };
  for (char c : text) {
    if (c == ';' || c == ' ' || c == '\t' || c == '\n' || c == '\r')
      flush();
    else
      item += c;
  }
  flush();
}

// ---- Printing ---------------------------------------------------------------------------------

std::string to_text(const Settings& settings) {
  size_t width = 0;
  for (const auto& f : fields()) width = std::max(width, f.key.size());
  std::string out;
  for (const auto& f : fields()) {
    const std::string value = f.to_text(settings);
    out +=
        f.key + std::string(width + 2 - f.key.size(), ' ') + (value.empty() ? "-" : value) + "\n";
  }
  return out;
}

std::string settings_help() {
  const Settings defaults;
  std::string out =
      "Settings: what a run depends on. Give them in a JSON file (--settings FILE.json), with\n"
      "--set KEY=VALUE (repeatable; \"a=1; b=2\" sets several) or with each one's flag. Later\n"
      "wins: defaults, then the file, then the flags given, then each --set.\n"
      "`fusebox settings [flags]` prints the result as a JSON file to start from.\n";
  for (const auto& f : fields()) {
    const std::string value = f.to_text(defaults);
    out += "\n" + f.key + "  (" + (f.flag == "model" ? "MODEL, positional" : f.flag) + ")\n";
    out += "    " + f.help + "\n";
    out += "    value: " + f.hint() + "; default: " + (value.empty() ? "none" : value) + "\n";
    if (!f.sub_hint.empty()) out += "    one at a time: " + f.sub_hint + "\n";
    if (f.choices && f.json_kind && f.from_sub_text)
      out += "    names: " + join(f.choices(), ", ") + "\n";
  }
  return out;
}

// ---- Flags ------------------------------------------------------------------------------------

struct SettingsFlags::Bound {
  const FieldDef* field = nullptr;
  CLI::Option* option = nullptr;
  std::string value;                // a flag given once
  std::vector<std::string> values;  // a repeatable flag, one item per occurrence
};

SettingsFlags::SettingsFlags(CLI::App* app, const std::set<std::string>& omit, Settings defaults,
                             bool model_optional)
    : defaults_(std::move(defaults)) {
  for (const auto& key : omit)
    if (!find_field(key)) throw Error("SettingsFlags: cannot omit " + unknown_key(key));
  for (const auto& f : fields()) {
    if (omit.count(f.key)) continue;
    auto b = std::make_unique<Bound>();
    b->field = &f;
    if (f.flag == "model") {
      // Not CLI11-required: a --settings file or --set may name the model (resolve() checks).
      b->option = app->add_option("model", b->value, f.flag_help());
      model_required_ = !model_optional;
    } else if (f.from_item) {
      // One item per occurrence, so `--dim batch=4 model.onnx` leaves the model positional.
      b->option =
          app->add_option(f.flag, b->values, f.flag_help())->allow_extra_args(false)->take_all();
    } else {
      b->option =
          app->add_option(f.flag, b->value, f.flag_help())->default_str(f.to_text(defaults_));
    }
    b->option->type_name(f.metavar);
    bound_.push_back(std::move(b));
  }
  settings_file_ = std::make_unique<Bound>();
  settings_file_->option =
      app->add_option("--settings", settings_file_->value,
                      "settings to start from (see `fusebox settings`); flags given win")
          ->type_name("FILE.json");
  set_ = std::make_unique<Bound>();
  set_->option = app->add_option("--set", set_->values,
                                 "KEY=VALUE: one setting, applied after the file and the flags "
                                 "(repeatable; e.g. passes.dce=off, threads=2)")
                     ->allow_extra_args(false)
                     ->take_all()
                     ->type_name("KEY=VALUE");
}

namespace {
// The SettingsFlags whose resolve() ran last (one command runs per process), for in_flag_terms.
const SettingsFlags* last_resolved = nullptr;
}  // namespace

SettingsFlags::~SettingsFlags() {
  if (last_resolved == this) last_resolved = nullptr;
}

std::string SettingsFlags::in_flag_terms(const std::string& message) {
  if (!last_resolved) return message;
  for (const auto& b : last_resolved->bound_) {
    const FieldDef& f = *b->field;
    if (!b->option->count() || f.flag == "model") continue;
    // "dims: ..." -> "--dim: ..."; "dims.batch..." -> "--dim batch..." (as the flag's items).
    if (message.rfind(f.key + ":", 0) == 0) return f.flag + message.substr(f.key.size());
    if (f.from_item && message.rfind(f.key + ".", 0) == 0)
      return f.flag + " " + message.substr(f.key.size() + 1);
  }
  // Not from a flag: from the --settings file where one was given, named with the JSON pointer
  // of its key ("s.json: /inputs/x: cannot read ..."; "s.json: /model: unknown model ...").
  const Bound& file = *last_resolved->settings_file_;
  if (!file.option->count()) return message;
  for (const auto& b : last_resolved->bound_) {
    const FieldDef& f = *b->field;
    if (f.flag == "model" && b->option->count()) continue;  // MODEL was typed
    if (f.flag == "model" && message.rfind("unknown model '", 0) == 0) return file.value + ": /model: " + message;
    if (message.rfind(f.key + ":", 0) == 0) return file.value + ": /" + f.key + message.substr(f.key.size());
    if (f.from_item && message.rfind(f.key + ".", 0) == 0) {
      // "inputs.x=a.npy: ..." -> "/inputs/x: ..." (the value is in the file, at that pointer).
      const size_t name_end = message.find_first_of("=:", f.key.size() + 1);
      const size_t rest = message.find(": ", f.key.size() + 1);
      if (name_end == std::string::npos || rest == std::string::npos) continue;
      return file.value + ": /" + f.key + "/" + message.substr(f.key.size() + 1, name_end - f.key.size() - 1) +
             message.substr(rest);
    }
  }
  return message;
}

Settings SettingsFlags::resolve() const {
  last_resolved = this;
  Settings s = defaults_;
  // A required model starts out empty, which no way of giving one accepts: still empty at the
  // end, none was given.
  if (model_required_) s.model.clear();
  if (settings_file_->option->count()) s = load_settings_file(settings_file_->value, s);
  for (const auto& b : bound_) {
    if (!b->option->count()) continue;
    if (b->field->from_item) {
      for (const auto& item : b->values) b->field->from_item(s, item, b->field->flag);
    } else {
      b->field->from_text(s, b->value, b->field->flag);
    }
  }
  for (const auto& item : set_->values) apply_all(s, item, "--set");
  if (model_required_ && s.model.empty())
    throw Error(
        "model is required: give MODEL, \"model\" in the --settings file or --set model=...");
  return s;
}

}  // namespace fusebox::workbench
