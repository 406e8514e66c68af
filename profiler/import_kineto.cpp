// import_kineto: PyTorch profiler (kineto) Chrome-trace JSON, plain or gzip'd (by content: the
// gzip magic 1f 8b), into a Recording. Each event is read by its "cat", so these layouts, and
// files mixing them, are read:
//   - kineto 2.x (PyTorch 1.13 on): cpu_op, user_annotation, python_function, cuda_runtime,
//     cuda_driver, kernel, gpu_memcpy, gpu_memset, cuda_sync; args "correlation", "device",
//     "stream", "grid", "block", "bytes"; ac2g flows; top-level "deviceProperties".
//   - kineto 1.x (PyTorch 1.8 to 1.12): Operator, Runtime, Kernel, Memcpy, Memset; async_gpu
//     flows; args "external id".
//   - our own export (chrome_trace.cpp): process_name "fusebox <model>", process_labels, cpu_op
//     args naming the node ("Node Index", "Op Type", shapes, costs, arena offsets), annotation
//     args "Kind" (stage, run, op, range), the counter "arena live bytes", copies' "src kind" and
//     "dst kind". It reads back to the recording it was written from (source "fusebox", its
//     model, label and node table), so exporting it again writes the same file.
// Skipped, and counted per kind in the report's warnings: the "Trace" span (the whole profile's
// envelope), cuda_profiler_range (CUPTI range-profiler kernel replays with counters, on the GPU's
// pid: not a timeline), other categories, instant events but PyTorch's "[memory]" (counter tracks
// of allocated and reserved memory per device), counters without numeric args, events without a
// usable ts or dur (missing, negative, not finite, beyond int64 nanoseconds) and malformed events.
//
// Times: ts and dur are microseconds, integers or fractions; they become integer nanoseconds
// exactly (integer part * 1000 plus the rounded fraction: kineto's epoch microseconds times 1000
// do not fit a double). origin_ns = 0 keeps the file's time base, so our own exports (which count
// from the recording's origin) read back unchanged.
//
// Host spans nest per thread (sorted by start, longer first). A span that overlaps its parent's
// end (microsecond rounding in the file) is clamped to that end and counted in a warning, so the
// result always passes check_recording. A GPU event without args "correlation" takes its launch's
// correlation through the flow pair (s on the runtime call, f on the GPU event, same id); one with
// neither keeps correlation 0 and is counted in a warning.
//
// A copy or memset without args "bytes" takes the size its runtime call carries (a *Memcpy* or
// *Memset* call's args "bytes" or "size", a number or one in a string), joined by correlation id.
// kineto's ROCm logger writes a copy's size on its hipMemcpy* call only ("size" in older
// releases, which write none on the GPU record); newer ones make this same join themselves
// (RoctracerActivity_inl.h: correlationToSize) and write "bytes" on both.
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/base/sorted.h"
#include "profiler/kineto_json.h"
#include "profiler/trace_import.h"

namespace fusebox::profiler {

namespace {

using nlohmann::json;

// ---- values ------------------------------------------------------------------------------------
// Events are simdjson elements (kineto_json.h); the top level (header, devices) is nlohmann's.
// Both read numbers through Number, so an event's field and the header's read alike.

using simdjson::dom::element;
using simdjson::dom::element_type;
using Value = std::optional<element>;  // a member, or none when it is not there

// A JSON number as its parser kept it; None for a missing value or one that is not a number.
struct Number {
  enum Kind { None, Unsigned, Signed, Float } kind = None;
  uint64_t u = 0;
  int64_t i = 0;
  double d = 0;
};

Number number(const json* v) {
  Number n;
  if (!v || !v->is_number()) return n;
  if (v->is_number_unsigned()) n.kind = Number::Unsigned, n.u = v->get<uint64_t>();
  else if (v->is_number_integer()) n.kind = Number::Signed, n.i = v->get<int64_t>();
  else n.kind = Number::Float, n.d = v->get<double>();
  return n;
}

Number number(const Value& v) {
  Number n;
  if (!v) return n;
  switch (v->type()) {
    case element_type::UINT64:
      n.kind = Number::Unsigned, n.u = v->get_uint64().value_unsafe();
      break;
    case element_type::INT64:
      n.kind = Number::Signed, n.i = v->get_int64().value_unsafe();
      break;
    case element_type::DOUBLE:
      n.kind = Number::Float, n.d = v->get_double().value_unsafe();
      break;
    default:
      break;
  }
  return n;
}

// Microseconds (an integer or a fraction) -> nanoseconds; nothing when the value is missing, not
// a number, not finite or outside int64 nanoseconds (about +-292 years).
std::optional<int64_t> micros_to_ns(const Number& n) {
  constexpr int64_t kMaxUs = std::numeric_limits<int64_t>::max() / 1000 - 1;
  switch (n.kind) {
    case Number::None:
      return std::nullopt;
    case Number::Unsigned:
      if (n.u > static_cast<uint64_t>(kMaxUs)) return std::nullopt;
      return static_cast<int64_t>(n.u) * 1000;
    case Number::Signed:
      if (n.i > kMaxUs || n.i < -kMaxUs) return std::nullopt;
      return n.i * 1000;
    case Number::Float:
      break;
  }
  if (!std::isfinite(n.d) || std::fabs(n.d) >= 9.2e15) return std::nullopt;
  const double whole = std::floor(n.d);
  return static_cast<int64_t>(whole) * 1000 + std::llround((n.d - whole) * 1000.0);
}

std::optional<int64_t> int_value(const Number& n) {
  switch (n.kind) {
    case Number::None:
      return std::nullopt;
    case Number::Unsigned:
      if (n.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(n.u);
    case Number::Signed:
      return n.i;
    case Number::Float:
      break;
  }
  if (!std::isfinite(n.d) || std::fabs(n.d) >= 9.2e18) return std::nullopt;
  return std::llround(n.d);
}

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The member `key` of an object, the last one where a key repeats (as nlohmann's DOM kept it);
// none when `v` is not an object or has no such member.
Value field(const element& v, std::string_view key) {
  simdjson::dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return std::nullopt;
  Value found;
  for (simdjson::dom::key_value_pair kv : o)
    if (kv.key == key) found = kv.value;
  return found;
}

std::optional<int64_t> int_value(const json* v) { return int_value(number(v)); }
std::optional<int64_t> int_value(const Value& v) { return int_value(number(v)); }

std::optional<int64_t> int_arg(const json& args, const char* key) {
  return int_value(member(args, key));
}
std::optional<int64_t> int_arg(const element& args, const char* key) {
  return int_value(field(args, key));
}

// A field of an event that cannot be used as it is: the event is skipped and counted.
struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An id (pid, tid, device, stream) as int32; CUPTI's unsigned -1 ("all streams", 4294967295)
// reads as -1. Malformed beyond 32 bits.
int32_t id32(int64_t v) {
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max())
    return static_cast<int32_t>(v);
  if (v > 0 && v <= std::numeric_limits<uint32_t>::max())
    return static_cast<int32_t>(static_cast<uint32_t>(v));
  throw Malformed("id " + std::to_string(v) + " does not fit 32 bits");
}

// A correlation id: CUPTI's are 32-bit and never 0; anything else is "none" (0).
uint32_t as_correlation(const Value& v) {
  const int64_t c = int_value(v).value_or(0);
  return c > 0 && c <= std::numeric_limits<uint32_t>::max() ? static_cast<uint32_t>(c) : 0;
}

// An element of a number array ("grid", "block") as an int64, as nlohmann's get<int64_t> read it:
// a fraction truncated, a bool 0 or 1; anything else, or a fraction past int64, is malformed.
int64_t int64_of(const element& v) {
  switch (v.type()) {
    case element_type::INT64:
      return v.get_int64().value_unsafe();
    case element_type::UINT64:
      return static_cast<int64_t>(v.get_uint64().value_unsafe());
    case element_type::DOUBLE: {
      const double d = v.get_double().value_unsafe();
      if (std::isfinite(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
      throw Malformed("a number past int64 where an integer belongs");
    }
    case element_type::BOOL:
      return v.get_bool().value_unsafe() ? 1 : 0;
    default:
      throw Malformed("not a number where an integer belongs");
  }
}

// A field that is a string when it is there ("" when it is not); anything else is malformed.
std::string_view text_field(const Value& v, const char* field) {
  if (!v) return {};
  std::string_view s;
  if (v->get_string().get(s) != simdjson::SUCCESS)
    throw Malformed(std::string("'") + field + "' is not a string");
  return s;
}

std::string string_arg(const json& args, const char* key, const std::string& otherwise) {
  const json* v = member(args, key);
  return v && v->is_string() ? v->get<std::string>() : otherwise;
}
std::string string_arg(const element& args, const char* key, const std::string& otherwise) {
  const Value v = field(args, key);
  std::string_view s;
  return v && v->get_string().get(s) == simdjson::SUCCESS ? std::string(s) : otherwise;
}

// A size as a trace writes it: a non-negative integer, or its decimal digits in a string (kineto's
// ROCm logger quotes a copy call's "size").
std::optional<uint64_t> size_value(const Value& v) {
  if (const std::optional<int64_t> n = int_value(v)) {
    if (*n >= 0) return static_cast<uint64_t>(*n);
    return std::nullopt;
  }
  std::string_view s;
  if (!v || v->get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return std::strtoull(std::string(s).c_str(), nullptr, 10);  // 19 digits fit uint64
}

// An element as a nlohmann document, for the rare fields read whole (our own export's node
// table). simdjson bounds the depth (1024 levels), so the recursion is bounded too.
json to_json(const element& v) {
  switch (v.type()) {
    case element_type::ARRAY: {
      simdjson::dom::array elements;
      json a = json::array();
      if (v.get_array().get(elements) == simdjson::SUCCESS)
        for (element x : elements) a.push_back(to_json(x));
      return a;
    }
    case element_type::OBJECT: {
      simdjson::dom::object members;
      json o = json::object();
      if (v.get_object().get(members) == simdjson::SUCCESS)
        for (simdjson::dom::key_value_pair kv : members) o[std::string(kv.key)] = to_json(kv.value);
      return o;
    }
    case element_type::INT64:
      return v.get_int64().value_unsafe();
    case element_type::UINT64:
      return v.get_uint64().value_unsafe();
    case element_type::DOUBLE:
      return v.get_double().value_unsafe();
    case element_type::STRING:
      return std::string(v.get_string().value_unsafe());
    case element_type::BOOL:
      return v.get_bool().value_unsafe();
    case element_type::NULL_VALUE:
      break;
  }
  return nullptr;
}

// A flow's id, the key that pairs its start with its end, as compact as the id allows: an integer
// as itself (a non-negative one the same whether JSON read it signed or unsigned, as their digits
// are), any other JSON value by its text, interned (kind Text, value its index).
struct FlowKey {
  enum Kind : uint8_t { NonNegative, Negative, Text };
  uint64_t value = 0;
  Kind kind = NonNegative;
  auto operator<=>(const FlowKey&) const = default;
};

// ---- names -------------------------------------------------------------------------------------

bool same_letters(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  const size_t e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// CUPTI's copy kind named by a word of "Memcpy HtoD (Pageable -> Device)", 0 when none is.
uint8_t copy_kind_in(const std::string& name) {
  size_t pos = 0;
  while (pos < name.size()) {
    size_t end = name.find_first_of(" (", pos);
    if (end == std::string::npos) end = name.size();
    const std::string word = name.substr(pos, end - pos);
    for (uint8_t k = 1; k <= 10; ++k)
      if (word == exec::copy_kind_name(k)) return k;
    pos = end + 1;
  }
  return 0;
}

uint8_t memory_kind_named(const std::string& text) {
  for (uint8_t k = 0; k <= 7; ++k)
    if (same_letters(trim(text), exec::memory_kind_name(k))) return k;
  return 0;
}

// Source and destination memory kinds of "Memcpy HtoD (Pageable -> Device)"; unknown (0) when
// the name has no "(src -> dst)".
std::pair<uint8_t, uint8_t> memory_kinds_in(const std::string& name) {
  const size_t open = name.rfind('('), arrow = name.rfind("->"), close = name.rfind(')');
  if (open == std::string::npos || arrow == std::string::npos || close == std::string::npos ||
      !(open < arrow && arrow < close))
    return {0, 0};
  return {memory_kind_named(name.substr(open + 1, arrow - open - 1)),
          memory_kind_named(name.substr(arrow + 2, close - arrow - 2))};
}

// What an X event's category becomes.
enum class Cat {
  HostOp,
  Annotation,
  PythonRange,
  Runtime,
  Kernel,
  Memcpy,
  Memset,
  Sync,
  Envelope,
  Replay,
  Other
};

Cat category(std::string_view cat) {
  static constexpr std::pair<std::string_view, Cat> kTable[] = {{"cpu_op", Cat::HostOp},
                                                                {"Operator", Cat::HostOp},
                                                                {"user_annotation", Cat::Annotation},
                                                                {"python_function", Cat::PythonRange},
                                                                {"cuda_runtime", Cat::Runtime},
                                                                {"Runtime", Cat::Runtime},
                                                                {"cuda_driver", Cat::Runtime},
                                                                {"kernel", Cat::Kernel},
                                                                {"Kernel", Cat::Kernel},
                                                                {"gpu_memcpy", Cat::Memcpy},
                                                                {"Memcpy", Cat::Memcpy},
                                                                {"gpu_memset", Cat::Memset},
                                                                {"Memset", Cat::Memset},
                                                                {"cuda_sync", Cat::Sync},
                                                                {"Trace", Cat::Envelope},
                                                                {"cuda_profiler_range", Cat::Replay}};
  for (const auto& [name, c] : kTable)
    if (name == cat) return c;
  return Cat::Other;
}

exec::ActivityKind activity_kind(Cat c) {
  switch (c) {
    case Cat::Runtime:
      return exec::ActivityKind::Runtime;
    case Cat::Memcpy:
      return exec::ActivityKind::Memcpy;
    case Cat::Memset:
      return exec::ActivityKind::Memset;
    case Cat::Sync:
      return exec::ActivityKind::Sync;
    default:
      return exec::ActivityKind::Kernel;
  }
}

std::string counted(size_t n, const std::string& what) {
  return std::to_string(n) + (n == 1 ? " event " : " events ") + what;
}

// ---- the reader --------------------------------------------------------------------------------

// A host or GPU thread of the file, (pid, tid); the reader numbers them as it meets them, so a
// record or a flow names its thread in 4 bytes.
struct Where {
  int64_t pid = 0, tid = 0;
  auto operator<=>(const Where&) const = default;
};

// Where an event sits: (its thread's number, ts in ns). Flows point at places.
using Place = std::pair<uint32_t, int64_t>;

struct Meta {
  std::string name;  // process_name, process_labels or thread_name
  int64_t pid = 0;
  int32_t tid = 0;
  std::string text;  // args "name" or "labels"
};

class KinetoReader {
 public:
  KinetoReader(std::string path, JsonReader json_reader) : path_(std::move(path)), json_reader_(json_reader) {}

  Recording read(ImportReport* report) {
    size_t events = 0;
    const json top = read_trace_events(
        path_, json_reader_, [this](const element* e) { event(e); }, &events);
    header(top);
    r_.nodes = nodes_.take(path_);
    metadata();
    correlate_through_flows();
    size_copies_by_their_calls();
    separate_processes();
    flows_ = {};  // the flows have said what they could
    flow_start_ = {};
    flow_end_ = {};
    nest_spans();
    keep_device_by_start();
    stable_sort_unless_sorted(
        r_.counters.begin(), r_.counters.end(),
        [](const CounterSample& a, const CounterSample& b) { return a.t_ns < b.t_ns; });
    name_counter_tracks();
    if (dropped_samples_)
      notes_[std::to_string(dropped_samples_) + " counter samples of tracks past the first " +
             std::to_string(kMaxCounterTracks) + ", dropped"] = dropped_samples_;
    pick_main_tid();
    std::string bad = check_recording(r_);
    if (!bad.empty()) throw Error(path_ + ": the trace does not make a valid recording: " + bad);
    if (report) fill(*report, events);
    return std::move(r_);
  }

 private:
  // The device records in start order (file order among equal starts), sorted as indices and
  // permuted in place, cycle by cycle, so each record moves about once and the vector becomes the
  // recording's without a second copy of it (the import's peak memory was here).
  // Collectives follow their kernels, in the same order.
  void keep_device_by_start() {
    where_ = {};
    std::vector<uint32_t> order(acts_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return acts_[a].start_ns < acts_[b].start_ns; });
    std::vector<uint32_t> position(acts_.size());
    for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<uint32_t>(k);
    // Slot k takes the record at order[k]: follow each cycle once, marking done slots in `order`.
    constexpr uint32_t kDone = UINT32_MAX;
    for (size_t k = 0; k < order.size(); ++k) {
      if (order[k] == kDone || order[k] == k) continue;
      exec::DeviceActivity held = std::move(acts_[k]);
      size_t slot = k;
      while (order[slot] != k) {
        const size_t from = order[slot];
        acts_[slot] = std::move(acts_[from]);
        order[slot] = kDone;
        slot = from;
      }
      acts_[slot] = std::move(held);
      order[slot] = kDone;
    }
    order = {};
    r_.device = std::move(acts_);
    acts_ = {};
    for (auto& [activity, c] : collectives_) c.activity = position[activity];
    std::sort(collectives_.begin(), collectives_.end(),
              [](const auto& a, const auto& b) { return a.second.activity < b.second.activity; });
    r_.collectives.reserve(collectives_.size());
    for (auto& [activity, c] : collectives_) r_.collectives.push_back(std::move(c));
  }

  void skip(const std::string& why) {
    ++skipped_;
    ++skips_[why];
  }

  // An event's members, read in one pass; where a key repeats, the last one counts.
  struct Fields {
    Value ph, cat, name, pid, tid, ts, dur, id, args;
  };

  static Fields fields_of(const element& e) {
    Fields f;
    simdjson::dom::object members;
    if (e.get_object().get(members) != simdjson::SUCCESS) return f;
    for (simdjson::dom::key_value_pair kv : members) {
      const std::string_view k = kv.key;
      Value* slot = k == "ph"     ? &f.ph
                    : k == "cat"  ? &f.cat
                    : k == "name" ? &f.name
                    : k == "pid"  ? &f.pid
                    : k == "tid"  ? &f.tid
                    : k == "ts"   ? &f.ts
                    : k == "dur"  ? &f.dur
                    : k == "id"   ? &f.id
                    : k == "args" ? &f.args
                                  : nullptr;
      if (slot) *slot = kv.value;
    }
    return f;
  }

  void event(const element* e) {
    if (!e) return skip("nested deeper than " + std::to_string(kMaxEventDepth) + " levels, skipped");
    if (e->type() != element_type::OBJECT) return skip("not a JSON object, skipped");
    try {
      const Fields f = fields_of(*e);
      const std::string_view ph = text_field(f.ph, "ph");
      if (ph == "X")
        complete(f);
      else if (ph == "M")
        metadata_event(f);
      else if (ph == "C")
        counter(f);
      else if (ph == "s" || ph == "f")
        flow(f, ph == "s");
      else if (ph == "i" || ph == "I")
        instant(f);
      else
        skip("of phase '" + std::string(ph) + "', skipped");
    } catch (const json::exception& x) {
      skip("with malformed fields (" + std::string(x.what()) + "), skipped");
    } catch (const Malformed& x) {
      skip("with malformed fields (" + std::string(x.what()) + "), skipped");
    }
  }

  // pid and tid of an event that is used: integers, else the event is skipped.
  bool place(const Fields& e, int64_t* pid, int64_t* tid) {
    auto p = int_value(e.pid), t = int_value(e.tid);
    if (!p || !t) {
      skip("with a pid or tid that is not an integer, skipped");
      return false;
    }
    *pid = *p;
    *tid = *t;
    return true;
  }

  bool times(const Fields& e, int64_t* start, int64_t* end) {
    auto ts = micros_to_ns(number(e.ts));
    if (!ts) {
      skip("with no usable ts (missing, not a number, or beyond int64 nanoseconds), skipped");
      return false;
    }
    auto dur = micros_to_ns(number(e.dur));
    const auto sum = dur ? checked_add(*ts, *dur) : std::nullopt;
    if (!sum) {
      skip("with no usable dur (missing, not a number, or beyond int64 nanoseconds), skipped");
      return false;
    }
    if (*dur < 0) {
      skip("with a negative dur, skipped");
      return false;
    }
    *start = *ts;
    *end = *sum;
    return true;
  }

  void complete(const Fields& e) {
    const std::string_view cat = text_field(e.cat, "cat");
    const Cat c = category(cat);
    if (c == Cat::Envelope)
      return skip("of category 'Trace' (the whole profile's envelope), skipped");
    if (c == Cat::Replay)
      return skip(
          "of category 'cuda_profiler_range' (CUPTI range-profiler replays, not a timeline), "
          "skipped");
    if (c == Cat::Other) return skip("of category '" + std::string(cat) + "', skipped");
    int64_t pid = 0, tid = 0, start = 0, end = 0;
    if (!place(e, &pid, &tid) || !times(e, &start, &end)) return;
    const element args = e.args && e.args->type() == element_type::OBJECT ? *e.args : empty_args();
    const Name name(text_field(e.name, "name"));  // interned once per distinct text
    if (c == Cat::HostOp || c == Cat::Annotation || c == Cat::PythonRange) {
      ++host_pid_events_[pid];
      return host_span(c, name, args, start, end, id32(tid));
    }
    if (c == Cat::Runtime) ++host_pid_events_[pid];
    activity(c, name, args, start, end, pid, tid);
  }

  // An empty object, for an event without args.
  static element empty_args() {
    static simdjson::dom::parser parser;
    static const element empty = parser.parse(std::string_view("{}")).value_unsafe();
    return empty;
  }

  void host_span(Cat c, Name name, const element& args, int64_t start, int64_t end, int32_t tid) {
    Span s;
    s.name = name;
    s.start_ns = start;
    s.end_ns = end;
    s.tid = tid;
    s.kind = c == Cat::HostOp ? SpanKind::Op : SpanKind::Range;
    if (c == Cat::Annotation) {
      const std::string kind = string_arg(args, "Kind", "range");  // ours: stage, run, op, range
      s.kind = kind == "stage"    ? SpanKind::Stage
               : kind == "run"    ? SpanKind::Run
               : kind == "op"     ? SpanKind::Op
               : kind == "worker" ? SpanKind::Worker
                                  : SpanKind::Range;
      if (s.kind == SpanKind::Run || s.kind == SpanKind::Worker)
        s.run = int_arg(args, "Run").value_or(-1);
      if (s.kind == SpanKind::Worker) {
        // A worker's busy span of our own export: the op (node) whose region it ran.
        const int64_t node = int_arg(args, "Node Index").value_or(-1);
        if (node < -1 || node >= (int64_t{1} << 24))
          throw Malformed("Node Index " + std::to_string(node) + " out of range");
        s.node = static_cast<int32_t>(node);
      }
    }
    if (c == Cat::HostOp && field(args, "Node Index")) own_op(to_json(args), &s);
    spans_.push_back(std::move(s));
  }

  // A cpu_op of our own export: its node, run, and the node table entry it describes.
  void own_op(const json& args, Span* s) {
    const int64_t node = args.at("Node Index").get<int64_t>();
    if (node < 0 || node >= (int64_t{1} << 24))
      throw Malformed("Node Index " + std::to_string(node) + " out of range");
    s->node = static_cast<int32_t>(node);
    s->run = int_arg(args, "Run").value_or(-1);
    const size_t i = static_cast<size_t>(node);
    if (nodes_.has(i)) return;
    NodeInfo n;  // whole before it is kept: a missing field throws Malformed
    n.op = args.at("Op Type").get<std::string>();
    n.name = args.at("Node").get<std::string>();
    n.input_shapes = args.at("Input Dims").get<std::vector<std::vector<int64_t>>>();
    n.output_shapes = args.at("Output Dims").get<std::vector<std::vector<int64_t>>>();
    n.flops = args.at("FLOPs").get<double>();
    n.bytes = args.at("Bytes").get<double>();
    n.output_offsets = args.at("Arena Offsets").get<std::vector<int64_t>>();
    n.live_bytes = args.at("Arena Live Bytes").get<size_t>();
    n.kv_cache_write = args.value("KV Cache Write", false);
    nodes_.at(i) = std::move(n);
  }

  void activity(Cat c, Name name, const element& args, int64_t start, int64_t end, int64_t pid,
                int64_t tid) {
    exec::DeviceActivity a;
    a.kind = activity_kind(c);
    a.name = name;
    a.start_ns = start;
    a.end_ns = end;
    a.correlation_id = as_correlation(field(args, "correlation"));
    a.node_index = static_cast<int32_t>(
        std::clamp<int64_t>(int_arg(args, "Node Index").value_or(-1), -1, INT32_MAX));
    if (c == Cat::Runtime) {
      a.thread_id = static_cast<uint32_t>(id32(tid));
      const std::string_view call = name.view();
      if (a.correlation_id &&
          (call.find("Memcpy") != std::string_view::npos || call.find("Memset") != std::string_view::npos)) {
        std::optional<uint64_t> size = size_value(field(args, "bytes"));
        if (!size) size = size_value(field(args, "size"));
        if (size) call_bytes_.try_emplace(a.correlation_id, *size);
      }
    } else {
      a.device = id32(int_arg(args, "device").value_or(pid));
      a.stream = id32(int_arg(args, "stream").value_or(c == Cat::Sync ? -1 : tid));
      gpu_details(c, args, &a);
      if (c == Cat::Kernel && field(args, "Collective name"))
        collectives_.emplace_back(acts_.size(), collective_args(args));
    }
    acts_.push_back(std::move(a));
    where_.push_back(thread(pid, tid));
  }

  // PyTorch's record of a collective with its kernel; a size it cannot read is left 0.
  static CollectiveArgs collective_args(const element& args) {
    CollectiveArgs c;
    c.collective = string_arg(args, "Collective name", "");
    c.in_nelems = std::max<int64_t>(0, int_arg(args, "In msg nelems").value_or(0));
    c.out_nelems = std::max<int64_t>(0, int_arg(args, "Out msg nelems").value_or(0));
    c.group_size = std::max<int64_t>(0, int_arg(args, "Group size").value_or(0));
    c.dtype = string_arg(args, "dtype", "");
    return c;
  }

  static void geometry(const element& args, const char* key, int32_t out[3]) {
    const Value v = field(args, key);
    simdjson::dom::array a;
    if (!v || v->get_array().get(a) != simdjson::SUCCESS) return;
    size_t i = 0;
    for (element x : a) {
      if (i == 3) break;
      out[i++] = id32(int64_of(x));
    }
  }

  static void gpu_details(Cat c, const element& args, exec::DeviceActivity* a) {
    if (c == Cat::Kernel) {
      geometry(args, "grid", a->grid);
      geometry(args, "block", a->block);
      a->registers = id32(int_arg(args, "registers per thread").value_or(0));
      a->shared_memory = id32(int_arg(args, "shared memory").value_or(0));
    } else if (c == Cat::Sync) {
      a->name = string_arg(args, "cuda_sync_kind", a->name);
    } else {
      a->bytes = static_cast<uint64_t>(std::max<int64_t>(int_arg(args, "bytes").value_or(0), 0));
      a->copy_kind =
          static_cast<uint8_t>(int_arg(args, "copy kind").value_or(copy_kind_in(a->name)));
      if (c == Cat::Memcpy) {
        auto [src, dst] = memory_kinds_in(a->name);
        a->src_kind = static_cast<uint8_t>(int_arg(args, "src kind").value_or(src));
        a->dst_kind = static_cast<uint8_t>(int_arg(args, "dst kind").value_or(dst));
      }
    }
  }

  // A counter event ("ph": "C"): each numeric member of its args is a series, on a track named
  // for the event ("bytes": the event's name, in bytes; "value": the event's name, a number; any
  // other key: "<name> <key>", a number), as Chrome's trace viewer draws them.
  void counter(const Fields& e) {
    const std::string name(text_field(e.name, "name"));
    int64_t pid = 0, tid = 0;
    if (!place(e, &pid, &tid)) return;
    const auto t = micros_to_ns(number(e.ts));
    simdjson::dom::object args;
    if (!t || !e.args || e.args->get_object().get(args) != simdjson::SUCCESS)
      return skip("of a counter without ts or args, skipped");
    bool any = false;
    for (simdjson::dom::key_value_pair kv : args) {
      const std::optional<double> v = as_double(number(Value(kv.value)));
      if (!v) continue;
      const std::string_view key = kv.key;
      const bool bytes = key == "bytes";
      sample(bytes || key == "value" ? name : name + " " + std::string(key), bytes, *t, pid, tid,
             *v);
      any = true;
    }
    if (!any) skip("of a counter with no numeric series, skipped");
  }

  // PyTorch's memory events (profile_memory=True: instant events named "[memory]", one per
  // allocation or free, args "Total Allocated" and "Total Reserved" after it, "Device Type" as
  // c10::DeviceType and "Device Id"): counter tracks "memory allocated (<device>)" and, but for
  // the CPU, "memory reserved (<device>)", in bytes. Other instant events are skipped.
  void instant(const Fields& e) {
    if (text_field(e.name, "name") != "[memory]")
      return skip("of phase 'i' (instant events: markers), skipped");
    int64_t pid = 0, tid = 0;
    if (!place(e, &pid, &tid)) return;
    const char* const incomplete =
        "of a memory event without ts, Device Type or Total Allocated, skipped";
    if (!e.args) return skip(incomplete);
    const std::optional<int64_t> t = micros_to_ns(number(e.ts));
    const std::optional<int64_t> type = int_arg(*e.args, "Device Type");
    const std::optional<double> allocated = as_double(number(field(*e.args, "Total Allocated")));
    if (!t || !type || !allocated) return skip(incomplete);
    const int64_t device_type = type.value(), at = t.value();
    const std::string device =
        device_label(device_type, int_arg(*e.args, "Device Id").value_or(-1));
    sample("memory allocated (" + device + ")", true, at, pid, tid, allocated.value());
    const std::optional<double> reserved = as_double(number(field(*e.args, "Total Reserved")));
    if (reserved && device_type != 0)  // the CPU allocator caches nothing: PyTorch writes 0
      sample("memory reserved (" + device + ")", true, at, pid, tid, reserved.value());
  }

  // c10::DeviceType as PyTorch prints a device: cpu, cuda:0, hip:0 (ROCm), else its number.
  static std::string device_label(int64_t type, int64_t id) {
    const std::string index = id >= 0 ? ":" + std::to_string(id) : "";
    switch (type) {
      case 0:
        return "cpu";
      case 1:
        return "cuda" + index;
      case 6:
        return "hip" + index;
      default:
        return "device type " + std::to_string(type) + index;
    }
  }

  static std::optional<double> as_double(const Number& n) {
    switch (n.kind) {
      case Number::Unsigned:
        return static_cast<double>(n.u);
      case Number::Signed:
        return static_cast<double>(n.i);
      case Number::Float:
        if (std::isfinite(n.d)) return n.d;
        return std::nullopt;
      case Number::None:
        break;
    }
    return std::nullopt;
  }

  // A track per counter name and process: two processes' totals of one device are two tracks
  // (named apart by name_counter_tracks). At most kMaxCounterTracks: a real trace has a few,
  // and each is a row of the window; the samples of any more are dropped and counted (one event
  // can give two samples).
  static constexpr size_t kMaxCounterTracks = 1024;
  void sample(const std::string& track, bool bytes, int64_t t, int64_t pid, int64_t tid, double v) {
    const std::pair<std::string, int64_t> key{track, pid};
    auto it = counter_track_.find(key);
    if (it == counter_track_.end()) {
      if (r_.counter_tracks.size() >= kMaxCounterTracks) {
        ++dropped_samples_;
        return;
      }
      it = counter_track_.emplace(key, static_cast<int32_t>(r_.counter_tracks.size())).first;
      r_.counter_tracks.push_back({track, bytes});
    }
    r_.counters.push_back({t, id32(tid), it->second, v});
  }

  // A name that more than one process's tracks have gets the process: "<name>, pid <pid>".
  void name_counter_tracks() {
    std::map<std::string, int> processes;
    for (const auto& [key, index] : counter_track_) ++processes[key.first];
    for (const auto& [key, index] : counter_track_)
      if (processes[key.first] > 1)
        r_.counter_tracks[static_cast<size_t>(index)].name =
            key.first + ", pid " + std::to_string(key.second);
  }

  // Flow ends of the launch -> GPU arrows (ac2g in kineto 2.x, async_gpu in 1.x); other flows
  // (fwdbwd...) say nothing we keep.
  void flow(const Fields& e, bool start) {
    const std::string_view cat = text_field(e.cat, "cat");
    if (cat != "ac2g" && cat != "async_gpu") return;
    auto pid = int_value(e.pid), tid = int_value(e.tid);
    auto ts = micros_to_ns(number(e.ts));
    if (!pid || !tid || !ts || !e.id) return;
    const FlowKey key = flow_key(*e.id);
    flows_.push_back(
        {*ts, key.value, thread(*pid, *tid), start ? 0 : as_correlation(e.id), key.kind, start});
  }

  void header(const json& top) {
    r_.origin_ns = 0;
    r_.origin_utc_ns = int_value(member(top, "baseTimeNanoseconds")).value_or(0);
    const json* name = member(top, "traceName");
    own_trace_ = name && name->is_string() && name->get<std::string>().rfind("fusebox ", 0) == 0;
    const json* dist = member(top, "distributedInfo");
    if (dist) {
      r_.backend = string_arg(*dist, "backend", "");
      // A rank or world size out of range says nothing we can use: left unknown, with a note.
      const auto rank = int_arg(*dist, "rank"), world = int_arg(*dist, "world_size");
      if (rank && *rank >= 0 && *rank < (int64_t{1} << 24)) r_.rank = static_cast<int32_t>(*rank);
      else if (rank) ++notes_["distributedInfo rank " + std::to_string(*rank) + " out of range, left unknown"];
      if (world && *world >= 1 && *world <= (int64_t{1} << 24))
        r_.world_size = static_cast<int32_t>(*world);
      else if (world) ++notes_["distributedInfo world_size " + std::to_string(*world) + " out of range, left unknown"];
    }
    if (const json* props = member(top, "deviceProperties"); props && props->is_array())
      for (const json& p : *props) gpu(p);
  }

  void gpu(const json& p) {
    try {
      GpuInfo g;
      g.device = id32(int_arg(p, "id").value_or(0));
      g.name = string_arg(p, "name", "");
      g.sm_count = id32(int_arg(p, "numSms").value_or(0));
      g.compute_major = id32(int_arg(p, "computeMajor").value_or(0));
      g.compute_minor = id32(int_arg(p, "computeMinor").value_or(0));
      g.memory_bytes =
          static_cast<uint64_t>(std::max<int64_t>(int_arg(p, "totalGlobalMem").value_or(0), 0));
      if (const json* bw = member(p, "memoryBandwidthBytesPerSecond"); bw && bw->is_number())
        g.memory_bandwidth_bps = bw->get<double>();
      r_.gpus.push_back(std::move(g));
    } catch (const std::exception& x) {  // json::exception or Malformed
      ++notes_["deviceProperties entry malformed (" + std::string(x.what()) + "), left out"];
    }
  }

  // Process and thread names, read once every event has been seen: the host process is ours
  // ("fusebox <model>") or the pid with the most host events.
  // Process and thread names and our labels; sort indices are presentation only. Kineto's
  // pseudo-processes ("Spans", "Traces") have string pids: not ours to read.
  void metadata_event(const Fields& e) {
    const std::string_view name = text_field(e.name, "name");
    if (name != "process_name" && name != "process_labels" && name != "thread_name") return;
    auto pid = int_value(e.pid), tid = int_value(e.tid);
    if (!pid || !tid) return;
    const char* key = name == "process_labels" ? "labels" : "name";
    meta_.push_back({std::string(name), *pid, id32(*tid), e.args ? string_arg(*e.args, key, "") : ""});
  }

  // Read once every event has been seen: the host process is ours (a trace named "fusebox ..."
  // with a process "fusebox <model>") or else the pid with the most host events.
  void metadata() {
    std::optional<int64_t> own_pid;
    for (const Meta& m : meta_)
      if (own_trace_ && !own_pid && m.name == "process_name" && m.text.rfind("fusebox ", 0) == 0) {
        own_pid = m.pid;
        r_.model = m.text.substr(8);
      }
    const int64_t host = own_pid.value_or(busiest_host_pid());
    r_.pid = id32(host);
    r_.source = own_pid ? "fusebox" : "kineto";
    if (!own_pid) r_.model = path_;
    for (const Meta& m : meta_)
      if (m.pid == host) host_metadata(m, own_pid.has_value());
    if (own_pid) configuration_from_label();
  }

  int64_t busiest_host_pid() const {
    int64_t best = 0;
    size_t most = 0;
    for (const auto& [pid, n] : host_pid_events_)
      if (n > most) {
        best = pid;
        most = n;
      }
    return best;
  }

  void host_metadata(const Meta& m, bool own) {
    if (m.name == "thread_name") {
      const bool known = std::any_of(r_.thread_names.begin(), r_.thread_names.end(),
                                     [&](const auto& tn) { return tn.first == m.tid; });
      if (!known) r_.thread_names.push_back({m.tid, m.text});  // kineto names threads twice
    } else if (m.name == "process_labels" && own) {
      r_.label = m.text;
    }
  }

  // Our label is "passes=... executor=... planner=... threads=N backend=...".
  void configuration_from_label() {
    size_t pos = 0;
    const std::string& l = r_.label;
    while (pos < l.size()) {
      size_t end = l.find(' ', pos);
      if (end == std::string::npos) end = l.size();
      const std::string word = l.substr(pos, end - pos);
      pos = end + 1;
      const size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "passes")
        r_.passes = value;
      else if (key == "executor")
        r_.executor = value;
      else if (key == "planner")
        r_.planner = value;
      else if (key == "backend" && r_.backend.empty())
        r_.backend = value;
      else if (key == "threads")
        r_.threads = std::max(1, std::atoi(value.c_str()));
    }
    r_.node_count = r_.nodes.size();
  }

  // Copies and memsets the file gives no size: their call's, where it gives one (the header).
  void size_copies_by_their_calls() {
    if (call_bytes_.empty()) return;
    for (exec::DeviceActivity& a : acts_) {
      if ((a.kind != exec::ActivityKind::Memcpy && a.kind != exec::ActivityKind::Memset) || a.bytes) continue;
      if (const auto it = call_bytes_.find(a.correlation_id); it != call_bytes_.end()) a.bytes = it->second;
    }
    call_bytes_ = {};
  }

  // GPU events without args "correlation": the flow ending at them starts at their launch.
  void correlate_through_flows() {
    std::set<Place> uncorrelated;
    for (size_t i = 0; i < acts_.size(); ++i)
      if (acts_[i].kind != exec::ActivityKind::Runtime && !acts_[i].correlation_id)
        uncorrelated.insert(place(i));
    if (uncorrelated.empty()) return;
    const std::map<Place, size_t> runtime_at = index_flows(uncorrelated);
    size_t orphans = 0;
    for (size_t i = 0; i < acts_.size(); ++i) {
      exec::DeviceActivity& a = acts_[i];
      if (a.kind == exec::ActivityKind::Runtime || a.correlation_id) continue;
      a.correlation_id = correlation_by_flow(i, runtime_at);
      if (!a.correlation_id && a.kind != exec::ActivityKind::Sync) ++orphans;
    }
    if (orphans)
      ++notes_[counted(
          orphans, "on the GPU with no correlation id and no flow from a launch: correlation 0")];
  }

  uint32_t correlation_by_flow(size_t i, const std::map<Place, size_t>& runtime_at) {
    auto f = flow_end_.find(place(i));
    if (f == flow_end_.end()) return 0;
    const uint32_t id = f->second.correlation;
    auto s = flow_start_.find(f->second.key);
    if (s == flow_start_.end()) return 0;
    auto rt = runtime_at.find(s->second);
    if (rt == runtime_at.end()) return id;
    exec::DeviceActivity& call = acts_[rt->second];
    if (!call.correlation_id) call.correlation_id = id;
    return call.correlation_id;
  }

  // CUPTI numbers correlation ids per process, so a file holding several processes (ranks
  // merged into one trace) can hold one id on several launch calls; a hand-merged or hostile
  // file can even hold one id on several calls of one process (threads driving different GPUs).
  // A kernel is then tied to its own launch call, by the first of these that settles it:
  //   - its flow (kineto's ac2g pair) starts at that call;
  //   - its process is settled (only one process has a call with the id that started before the
  //     kernel did, since a kernel cannot start before its launch; or its device's other kernels,
  //     tied by an id only one process uses or by these rules, were all launched by one process),
  //     and that process made only one call with the id.
  // Each such call then gets an id of its own. A GPU event none of these settles keeps none (0),
  // counted in a warning: never tied to another process's call, nor to another GPU's.
  void separate_processes() {
    {  // The common case first, without a map: no id on two launch calls.
      std::vector<uint32_t> ids;
      for (const exec::DeviceActivity& a : acts_)
        if (a.kind == exec::ActivityKind::Runtime && a.correlation_id)
          ids.push_back(a.correlation_id);
      std::sort(ids.begin(), ids.end());
      if (std::adjacent_find(ids.begin(), ids.end()) == ids.end()) return;
    }
    std::map<uint32_t, std::vector<size_t>> calls;  // id -> the launch calls (indices into acts_)
    for (size_t i = 0; i < acts_.size(); ++i)
      if (acts_[i].kind == exec::ActivityKind::Runtime && acts_[i].correlation_id)
        calls[acts_[i].correlation_id].push_back(i);
    std::set<uint32_t> shared;
    bool one_process = true;  // every shared id's calls are in one process
    for (const auto& [id, c] : calls) {
      if (c.size() < 2) continue;
      shared.insert(id);
      for (size_t k : c) one_process = one_process && pid(k) == pid(c.front());
    }
    std::set<Place> sharing;  // where the GPU events with a shared id sit
    for (size_t i = 0; i < acts_.size(); ++i)
      if (acts_[i].kind != exec::ActivityKind::Runtime && shared.count(acts_[i].correlation_id))
        sharing.insert(place(i));
    const std::map<Place, size_t> runtime_at = index_flows(sharing);
    // The launch call, or else the launching process, of each GPU event with a shared id.
    std::vector<std::optional<size_t>> call_of(acts_.size());
    std::vector<std::optional<int64_t>> launcher(acts_.size());
    std::map<int32_t, std::set<int64_t>> device_callers;
    for (size_t i = 0; i < acts_.size(); ++i) {
      const exec::DeviceActivity& g = acts_[i];
      if (g.kind == exec::ActivityKind::Runtime || !g.correlation_id) continue;
      const auto c = calls.find(g.correlation_id);
      if (c == calls.end()) continue;
      if (!shared.count(g.correlation_id)) {
        launcher[i] = pid(c->second.front());
      } else if (auto by_flow = call_by_flow(i, runtime_at);
                 by_flow && acts_[*by_flow].correlation_id == g.correlation_id) {
        call_of[i] = by_flow;
        launcher[i] = pid(*by_flow);
      } else {
        std::set<int64_t> before;
        for (size_t k : c->second)
          if (acts_[k].start_ns <= g.start_ns) before.insert(pid(k));
        if (before.size() == 1) launcher[i] = *before.begin();
      }
      if (launcher[i]) device_callers[g.device].insert(*launcher[i]);
    }
    uint64_t next = 0;
    for (const exec::DeviceActivity& g : acts_) next = std::max<uint64_t>(next, g.correlation_id);
    std::vector<uint32_t> fresh(acts_.size(), 0);  // each shared id's call: an id of its own
    for (uint32_t id : shared)
      for (size_t k : calls[id])
        fresh[k] = ++next <= std::numeric_limits<uint32_t>::max() ? static_cast<uint32_t>(next) : 0;
    size_t unsettled = 0;
    for (size_t i = 0; i < acts_.size(); ++i) {
      exec::DeviceActivity& g = acts_[i];
      if (!shared.count(g.correlation_id) || g.kind == exec::ActivityKind::Runtime) continue;
      std::optional<size_t> call = call_of[i];
      std::optional<int64_t> process = launcher[i];
      if (const auto d = device_callers.find(g.device);
          !process && d != device_callers.end() && d->second.size() == 1)
        process = *d->second.begin();
      if (!call && process) {  // the process's only call with the id
        size_t found = 0;
        for (size_t k : calls[g.correlation_id])
          if (pid(k) == *process) call = found++ == 0 ? std::optional<size_t>(k) : std::nullopt;
        if (found != 1) call.reset();
      }
      if (call) {
        g.correlation_id = fresh[*call];
      } else {
        g.correlation_id = 0;
        ++unsettled;
      }
    }
    for (size_t i = 0; i < acts_.size(); ++i)
      if (acts_[i].kind == exec::ActivityKind::Runtime && shared.count(acts_[i].correlation_id))
        acts_[i].correlation_id = fresh[i];
    ++notes_[std::to_string(shared.size()) +
             (shared.size() == 1 ? " correlation id" : " correlation ids") +
             " used by several launch calls" +
             (one_process ? " of one process" : " of several processes") +
             ": each kernel tied to its own call" +
             (unsettled ? " (" + counted(unsettled, "on the GPU not settled, left untied") + ")"
                        : "")];
  }

  // The launch call (index into acts_) the flow ending at record `i` starts at, if any.
  std::optional<size_t> call_by_flow(size_t i, const std::map<Place, size_t>& runtime_at) {
    auto f = flow_end_.find(place(i));
    if (f == flow_end_.end()) return std::nullopt;
    auto s = flow_start_.find(f->second.key);
    if (s == flow_start_.end()) return std::nullopt;
    auto rt = runtime_at.find(s->second);
    if (rt == runtime_at.end()) return std::nullopt;
    return rt->second;
  }

  // Spans by start (a parent before the children starting with it), depth by nesting per
  // thread, children overlapping their parent's end clamped to it.
  void nest_spans() {
    std::stable_sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
    });
    std::map<int32_t, std::vector<const Span*>> stacks;
    size_t clamped = 0;
    for (Span& s : spans_) {
      auto& stack = stacks[s.tid];
      while (!stack.empty() && s.start_ns >= stack.back()->end_ns) stack.pop_back();
      if (!stack.empty() && s.end_ns > stack.back()->end_ns) {
        s.end_ns = stack.back()->end_ns;
        ++clamped;
      }
      s.depth = static_cast<int32_t>(stack.size());
      stack.push_back(&s);
    }
    if (clamped)
      ++notes_[counted(
          clamped, "on host threads overlapping the end of the span they start in: clamped to it")];
    r_.spans = std::move(spans_);
  }

  // The thread with the most host spans (the first of them on a tie), else with the most
  // runtime calls, else the process.
  void pick_main_tid() {
    std::map<int32_t, size_t> count;
    std::vector<int32_t> order;
    auto add = [&](int32_t tid) {
      if (count[tid]++ == 0) order.push_back(tid);
    };
    for (const Span& s : r_.spans) add(s.tid);
    if (order.empty())
      for (const exec::DeviceActivity& a : r_.device)
        if (a.kind == exec::ActivityKind::Runtime) add(static_cast<int32_t>(a.thread_id));
    r_.main_tid = r_.pid;
    size_t most = 0;
    for (int32_t tid : order)
      if (count[tid] > most) {
        most = count[tid];
        r_.main_tid = tid;
      }
  }

  void fill(ImportReport& report, size_t events) const {
    report.format = "kineto";
    report.events = events;
    report.skipped = skipped_;
    report.warnings.clear();
    for (const auto& [why, n] : skips_) report.warnings.push_back(counted(n, why));
    for (const auto& [what, n] : notes_) {
      (void)n;
      report.warnings.push_back(what);
    }
  }

  std::string path_;
  JsonReader json_reader_;
  Recording r_;
  std::vector<Span> spans_;
  std::vector<exec::DeviceActivity> acts_;  // file order until keep_device_by_start
  std::unordered_map<uint32_t, uint64_t> call_bytes_;  // a copy call's size by correlation id (the header)
  std::vector<uint32_t> where_;             // parallel to acts_: its thread (index into threads_)
  std::vector<Where> threads_;              // the file's threads, numbered as met
  std::map<Where, uint32_t> thread_numbers_;
  uint32_t last_thread_ = 0;  // index of the thread thread() returned last
  uint32_t thread(int64_t pid, int64_t tid) {
    // Events come in runs on one thread: the last one asked for first, then the map.
    if (!threads_.empty() && threads_[last_thread_].pid == pid && threads_[last_thread_].tid == tid)
      return last_thread_;
    const auto [it, fresh] =
        thread_numbers_.try_emplace(Where{pid, tid}, static_cast<uint32_t>(threads_.size()));
    if (fresh) threads_.push_back(Where{pid, tid});
    return last_thread_ = it->second;
  }
  Place place(size_t i) const { return {where_[i], acts_[i].start_ns}; }  // of device record i
  int64_t pid(size_t i) const { return threads_[where_[i]].pid; }         // of device record i
  std::vector<std::pair<size_t, CollectiveArgs>> collectives_;  // (index into acts_, its arguments)
  NodeTable nodes_;                                             // our own export's nodes, by index
  std::vector<Meta> meta_;
  bool own_trace_ = false;  // traceName "fusebox ...": our own export
  std::map<int64_t, size_t> host_pid_events_;
  FlowKey flow_key(const element& v) {
    if (v.type() == element_type::UINT64) return {v.get_uint64().value_unsafe(), FlowKey::NonNegative};
    if (v.type() == element_type::INT64) {
      const int64_t i = v.get_int64().value_unsafe();
      return {static_cast<uint64_t>(i), i < 0 ? FlowKey::Negative : FlowKey::NonNegative};
    }
    auto [it, fresh] = flow_texts_.try_emplace(to_json(v).dump(), flow_texts_.size());
    return {it->second, FlowKey::Text};
  }
  std::map<std::string, uint64_t> flow_texts_;  // a non-integer flow id's JSON text -> its index

  // A flow end's id: its key and the correlation id it reads as.
  struct FlowId {
    FlowKey key;
    uint32_t correlation = 0;
  };
  // The flow events as read: 32 bytes each, as a trace holds two per kernel. Only the few a GPU
  // event needs are indexed (most kineto 2.x events carry their correlation id in args).
  struct Flow {
    int64_t ts = 0;
    uint64_t key_value = 0;    // flow_key of its id, in two fields to keep the record small
    uint32_t thread = 0;       // index into threads_
    uint32_t correlation = 0;  // an end's id read as a correlation id
    FlowKey::Kind key_kind = FlowKey::NonNegative;
    bool start = false;
    Place at() const { return {thread, ts}; }
    FlowKey key() const { return {key_value, key_kind}; }
  };
  static_assert(sizeof(Flow) == 32, "a flow's size is a budget: see above");
  std::vector<Flow> flows_;
  // Indexes the flows ending at `ends` and the starts of their ids (the last start of an id
  // counts, the first end at a place), and returns where the launch calls at those starts sit.
  // Called again with other places, it adds theirs: the answer is the same as one index of all.
  std::map<Place, size_t> index_flows(const std::set<Place>& ends) {
    std::set<FlowKey> keys;
    for (const Flow& f : flows_)
      if (!f.start && ends.count(f.at()) &&
          flow_end_.emplace(f.at(), FlowId{f.key(), f.correlation}).second)
        keys.insert(f.key());
    for (const Flow& f : flows_)
      if (f.start && keys.count(f.key())) flow_start_[f.key()] = f.at();
    std::set<Place> starts;
    for (const auto& [key, at] : flow_start_) starts.insert(at);
    std::map<Place, size_t> runtime_at;  // where a launch call sits -> its index
    for (size_t i = 0; i < acts_.size(); ++i)
      if (acts_[i].kind == exec::ActivityKind::Runtime && starts.count(place(i)))
        runtime_at.emplace(place(i), i);
    return runtime_at;
  }
  std::map<FlowKey, Place> flow_start_;      // flow id -> where it starts
  std::map<Place, FlowId> flow_end_;         // where a flow ends -> its id
  std::map<std::pair<std::string, int64_t>, int32_t> counter_track_;  // (name, pid) -> track
  size_t dropped_samples_ = 0;               // of counter tracks past kMaxCounterTracks
  std::map<std::string, size_t> skips_;      // why -> how many events
  std::map<std::string, size_t> notes_;      // warnings about events that were kept
  size_t skipped_ = 0;
};

}  // namespace

// The fast JSON reader first; text it leaves to the strict one is read again from the start
// (kineto_json.h), so a file reads the same whichever reader took it.
Recording import_kineto(const std::string& path, ImportReport* report) {
  try {
    try {
      return KinetoReader(path, JsonReader::Fast).read(report);
    } catch (const NotFast&) {
      return KinetoReader(path, JsonReader::Strict).read(report);
    }
  } catch (const json::exception& e) {
    throw Error(path + ": " + e.what());
  } catch (const Malformed& e) {  // e.g. a host pid beyond 32 bits
    throw Error(path + ": " + e.what());
  }
}

}  // namespace fusebox::profiler
