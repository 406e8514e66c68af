#pragma once
// Settings: everything a run depends on, and the one table of field definitions (settings.cpp)
// that every way of giving them goes through: JSON files, KEY=VALUE assignments ("passes=none;
// threads=2", `--set`, compare's --a/--b), command-line flags, printing and `fusebox settings`.
// A new setting is one member here and one entry in that table; its flag, JSON key, converter,
// error messages and help follow from the entry, and what the settings bar draws (its choices and
// range: setting_fields()). scenarios/scenario.schema.json is written by hand; its entry for the
// field is checked against the table by tests/workbench/schema_test.cpp.
//
// Errors are fusebox::Error naming where the value came from and suggesting the closest valid
// name: "s.json: /passes/fuse_patern: unknown pass 'fuse_patern' (did you mean 'fuse_patterns'?
// valid: absorb_matmul, ...)", "--threads: expected an integer in 1..256, got \"x\"".
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace fusebox::workbench {

// Everything a run depends on. Defaults are the CLI's defaults.
struct Settings {
  std::string model = "transformer";  // builtin spec ("mlp:dims=64-32-10,batch=8") or a .onnx path
  std::map<std::string, int64_t> dims;  // dynamic dims of a .onnx model (--dim NAME=VALUE)
  uint64_t seed = 1;                    // weights and random inputs
  // Input name -> .npy file (--input NAME=FILE.npy); the other inputs are seeded random.
  std::map<std::string, std::string> inputs;
  // Input name -> a .npy file or a number (--const NAME=FILE.npy|VALUE): the input becomes a
  // constant before the passes, so constant folding and If inlining use it (load_model).
  std::map<std::string, std::string> consts;
  std::string backend = "cpu";         // exec::BackendRegistry names (unavailable ones included)
  std::string executor = "compiled";   // exec::executors().names()
  int threads = 1;                     // 1..256
  // CPU instruction-set level (ops/cpu/isa.h): auto | avx512 | avx2 | portable. A level this
  // machine cannot run is refused when a run starts, naming the ones it can.
  std::string isa = "auto";
  // Float GEMM precision: fp32 | tf32 (TF32 tensor cores, CUDA only). The CPU has no TF32: a run
  // asking it for tf32 is refused when it starts, saying so.
  std::string precision = "fp32";
  // The MatMul family's GEMMs: auto (the backend's own kernels; on the CPU, micro-kernels on
  // weights packed at compile time) | blas (OpenBLAS on the weight as stored; CPU only).
  std::string gemm = "auto";
  std::set<std::string> passes_off;    // passes::PassRegistry names switched off (empty: all on)
  std::set<std::string> patterns_off;  // passes::FusionRegistry pattern names switched off
  std::string planner = "greedy_by_size";  // planner::strategies().names() or planner::kBestPlanner
  // Capture one run and replay it (CUDA graphs): the compiled executor on a backend that can;
  // elsewhere the result says why it does not apply (RunResult::capture_note).
  bool capture = false;
  int warmup = 10;                         // 0..1000000
  int iters = 100;                         // 1..1000000
  int profile_runs = 10;                   // recorded runs for the trace and op table, 0..100000

  bool operator==(const Settings&) const = default;
  bool pass_on(const std::string& pass) const;
  bool pattern_on(const std::string& pattern) const;
  // The enabled passes, in pipeline order (what exec::OptimizeOptions::passes takes).
  std::vector<std::string> passes_on() const;
  // "all", "none" or "absorb_matmul,dce" (the enabled ones, in pipeline order).
  std::string passes_text() const;
  // One line: "passes=all executor=compiled threads=1 planner=greedy_by_size backend=cpu", plus
  // " isa=avx2" when it is not auto, " precision=tf32" when it is not fp32, " gemm=blas" when it is
  // not auto, " patterns_off=attention,gelu" when any pattern is off and
  // " capture=on" when it is on.
  std::string label() const;
};

// One field of the table as a front end sees it: what the settings bar draws its combos and
// ranges from and what the scenario schema's enums and bounds are checked against, so neither
// repeats the table's names or numbers.
struct SettingField {
  enum class Kind {
    Model,     // the builtin spec or .onnx file
    Name,      // one of `choices`
    Integer,   // in min..max
    Switch,    // on | off
    Switches,  // a set of `choices` switched on or off
    Map,       // NAME -> value (dims: integers in min..max; inputs: .npy files)
  };
  std::string key;   // "threads"
  std::string flag;  // "--threads"; "model" for the positional MODEL
  std::string help;      // what it does ("intra-op threads (one pool shared with BLAS)")
  std::string hint;      // the value's syntax ("an integer in 1..256", "eager | compiled")
  std::string sub_hint;  // one at a time ("passes.NAME=on | off ..."); "" when none
  Kind kind = Kind::Name;
  std::vector<std::string> choices;  // Name and Switches: the valid names (registries, now)
  std::optional<int64_t> min, max;   // Integer, and a Map of integers; no max: unbounded
  // A narrower span a control may offer (threads: this machine's cores); any value in
  // min..max is still valid when typed.
  std::optional<int64_t> suggested_max;

  // `value` brought into min..max.
  int64_t clamp(int64_t value) const;
};

// The fields in table order; setting_field throws fusebox::Error for an unknown key.
std::vector<SettingField> setting_fields();
SettingField setting_field(const std::string& key);

// The field keys in table order: "model", "backend", "executor", "threads", "isa", "precision",
// "gemm", "passes", "patterns", "planner", "capture", "seed", "warmup", "iters", "profile_runs", "inputs",
// "dims", "consts". They are the JSON keys, the KEY of KEY=VALUE and the names SettingsFlags'
// `omit` takes.
std::vector<std::string> settings_keys();

// JSON. to_json writes every field: `passes` and `patterns` as {name: on} for every registered
// one, `dims` and `inputs` as objects. Reading starts from `base` (from_json: the defaults) and
// changes only the keys given; `passes` and `patterns` also take a string "all" | "none" | "a,b"
// (the ones on, as --passes), and as objects change only the names given. `source` (a file
// name) starts every message; paths are JSON Pointers ("/passes/dce").
nlohmann::json to_json(const Settings& settings);
Settings settings_from_json(const nlohmann::json& json, const std::string& source);
// `pointer` (a JSON Pointer, "/steps/3/set") is where `json` sits in its file: paths in messages
// start with it.
void apply_json(Settings& settings, const nlohmann::json& json, const std::string& source,
                const std::string& pointer = "");
// A JSON value as the user wrote it, for "got ...": containers by kind, long text cut.
std::string shown(const nlohmann::json& value);

// The largest settings or scenario file read: far beyond any real one, small enough to hold.
inline constexpr size_t kMaxJsonFileBytes = size_t{16} << 20;
// Reads a JSON file of at most kMaxJsonFileBytes. A missing, unreadable, oversized or not regular
// file (a FIFO, /dev/zero), malformed JSON or a number past double's range (both with line and
// column), a NUL byte in a string or key or nesting deeper than 64 levels (both with the JSON
// Pointer) throws fusebox::Error naming the path and `what` it was meant to be ("settings file").
nlohmann::json read_json_file(const std::string& path, const std::string& what);
// Reads a JSON settings file over `base`. A missing or unreadable file, malformed JSON (with
// line and column) or a bad field throws fusebox::Error naming the file.
Settings load_settings_file(const std::string& path, const Settings& base = {});

// KEY=VALUE. Keys are the field keys; `passes`, `patterns`, `dims` and `inputs` also take
// sub-keys: passes.fuse_patterns=off (on | off | true | false | 1 | 0), patterns.attention=off,
// dims.batch=4, inputs.x=x.npy. Whole values: passes=all | none | a,b (the ones on; patterns
// likewise), dims=batch=4,seq=8 and inputs=x=x.npy,y=y.npy (replace the map; empty clears it).
// `where` starts every message: "--a: passes.fuse_patern: unknown pass ...".
void apply(Settings& settings, const std::string& assignment, const std::string& where);
// One whole value of field `key` converted by its entry (as its flag is): `where` starts every
// message ("--backend: unknown backend 'nope' (valid: cpu, cuda)"). For a command that takes one
// setting without the rest of SettingsFlags (selftest and machine: --backend).
void set_field(Settings& settings, const std::string& key, const std::string& text,
               const std::string& where);
// Assignments separated by ';' or whitespace: "passes=none; threads=2 planner=first_fit".
void apply_all(Settings& settings, const std::string& text, const std::string& where);

// Printing: one aligned "key  value" line per field, values as KEY=VALUE takes them.
std::string to_text(const Settings& settings);
// `fusebox settings`: every field with its value syntax, default and meaning, and the ways to
// set it (flag, --set, JSON).
std::string settings_help();

// The fields as CLI11 options on a command: positional MODEL (required unless the --settings
// file or a --set gives it), --backend, --executor,
// --threads, --passes, --patterns, --planner, --capture, --seed, --warmup, --iters, --profile-runs,
// --input NAME=FILE.npy and --dim NAME=VALUE (repeatable), plus --settings FILE.json and
// --set KEY=VALUE (repeatable). Values are taken as text and converted by the field table, so a
// flag, a --set and a JSON key share one converter and one set of messages.
class SettingsFlags {
 public:
  // `omit`: field keys this command has no flag for (e.g. {"executor", "iters"}); a settings
  // file or --set may still give them. `defaults`: where resolve() starts, and what help shows.
  // CLI11 writes the flags' text into this object, so it must live as long as `app` parses.
  // Throws fusebox::Error for an unknown key in `omit`. `model_optional`: MODEL may be left
  // out (the defaults' model is used), as fusebox-ui allows.
  explicit SettingsFlags(CLI::App* app, const std::set<std::string>& omit = {},
                         Settings defaults = {}, bool model_optional = false);
  ~SettingsFlags();
  SettingsFlags(const SettingsFlags&) = delete;
  SettingsFlags& operator=(const SettingsFlags&) = delete;

  // After app->parse: the defaults, then the --settings file, then every flag the user gave (in
  // table order; a flag not given keeps the file's value), then each --set in order. Errors name
  // the flag or file ("--threads: expected an integer in 1..256, got \"x\"").
  Settings resolve() const;

  // An error met while running what the last resolve() of any SettingsFlags returned, in the
  // terms the user typed: errors raised by the workbench and core name the setting ("dims: ...",
  // "inputs.x: ...", since the value may have come from a JSON file or the window); where that
  // field's value came from its flag, the message starts with the flag instead ("--dim: ...",
  // "--input x: ..."). Anything else comes back as it was. For a front end's top-level catch.
  static std::string in_flag_terms(const std::string& message);

 private:
  struct Bound;  // one field's option and the raw text CLI11 collected for it
  std::vector<std::unique_ptr<Bound>> bound_;
  std::unique_ptr<Bound> settings_file_, set_;
  Settings defaults_;
  bool model_required_ = false;  // MODEL positional, not optional: resolve() insists on a model
};

}  // namespace fusebox::workbench
