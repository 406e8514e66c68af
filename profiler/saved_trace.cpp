// saved_trace: the compact form of an imported trace (saved_trace.h).
#include "profiler/saved_trace.h"

#include <zstd.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/atomic_file.h"
#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/base/machine.h"
#include "core/base/strings.h"

namespace fusebox::profiler {

namespace {

constexpr size_t kMagicBytes = sizeof kSavedTraceMagic - 1;
constexpr size_t kHeaderBytes = kMagicBytes + sizeof(uint32_t);

// ---- writing -----------------------------------------------------------------------------------

class PayloadWriter {
 public:
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void text(std::string_view s) {
    put(static_cast<uint64_t>(s.size()));
    out_.append(s);
  }
  // One field of every element of `items`, in order: a column.
  template <typename T, typename Item, typename Field>
  void column(const std::vector<Item>& items, Field field) {
    for (const Item& item : items) put(static_cast<T>(field(item)));
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

// Every distinct name once, in first-seen order.
class NameTable {
 public:
  uint32_t id(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<uint32_t>(table_.size()));
    if (fresh) table_.push_back(&it->first);
    return it->second;
  }
  const std::vector<const std::string*>& table() const { return table_; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<const std::string*> table_;
};

// The recording without its per-event arrays (those go in columns).
Recording small_fields(const Recording& r) {
  Recording m;
  m.source = r.source;
  m.model = r.model;
  m.label = r.label;
  m.backend = r.backend;
  m.executor = r.executor;
  m.passes = r.passes;
  m.planner = r.planner;
  m.threads = r.threads;
  m.pid = r.pid;
  m.main_tid = r.main_tid;
  m.thread_names = r.thread_names;
  m.origin_ns = r.origin_ns;
  m.origin_utc_ns = r.origin_utc_ns;
  m.arena_bytes = r.arena_bytes;
  m.node_count = r.node_count;
  m.counter_tracks = r.counter_tracks;
  m.nodes = r.nodes;
  m.gpus = r.gpus;
  m.rank = r.rank;
  m.world_size = r.world_size;
  return m;
}

std::string payload_of(const Recording& r, const ImportReport& report) {
  nlohmann::json meta = {{"recording", small_fields(r).to_json()},
                         {"report",
                          {{"format", report.format},
                           {"events", report.events},
                           {"skipped", report.skipped},
                           {"warnings", report.warnings}}}};
  NameTable names;
  std::vector<uint32_t> span_names, device_names, collective_names, dtype_names;
  span_names.reserve(r.spans.size());
  for (const Span& s : r.spans) span_names.push_back(names.id(s.name));
  device_names.reserve(r.device.size());
  for (const exec::DeviceActivity& a : r.device) device_names.push_back(names.id(a.name));
  for (const CollectiveArgs& c : r.collectives) {
    collective_names.push_back(names.id(c.collective));
    dtype_names.push_back(names.id(c.dtype));
  }
  PayloadWriter w;
  w.text(meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  w.put(static_cast<uint64_t>(names.table().size()));
  for (const std::string* s : names.table()) w.text(*s);

  w.put(static_cast<uint64_t>(r.spans.size()));
  w.column<uint8_t>(r.spans, [](const Span& s) { return static_cast<uint8_t>(s.kind); });
  for (uint32_t id : span_names) w.put(id);
  w.column<int64_t>(r.spans, [](const Span& s) { return s.start_ns; });
  w.column<int64_t>(r.spans, [](const Span& s) { return s.end_ns; });
  w.column<int32_t>(r.spans, [](const Span& s) { return s.tid; });
  w.column<int64_t>(r.spans, [](const Span& s) { return s.run; });
  w.column<int32_t>(r.spans, [](const Span& s) { return s.node; });
  w.column<int32_t>(r.spans, [](const Span& s) { return s.depth; });

  w.put(static_cast<uint64_t>(r.counters.size()));
  w.column<int64_t>(r.counters, [](const CounterSample& c) { return c.t_ns; });
  w.column<int32_t>(r.counters, [](const CounterSample& c) { return c.tid; });
  w.column<int32_t>(r.counters, [](const CounterSample& c) { return c.track; });
  w.column<double>(r.counters, [](const CounterSample& c) { return c.value; });

  using exec::DeviceActivity;
  w.put(static_cast<uint64_t>(r.device.size()));
  w.column<uint8_t>(r.device, [](const DeviceActivity& a) { return static_cast<uint8_t>(a.kind); });
  for (uint32_t id : device_names) w.put(id);
  w.column<int64_t>(r.device, [](const DeviceActivity& a) { return a.start_ns; });
  w.column<int64_t>(r.device, [](const DeviceActivity& a) { return a.end_ns; });
  w.column<int32_t>(r.device, [](const DeviceActivity& a) { return a.device; });
  w.column<int32_t>(r.device, [](const DeviceActivity& a) { return a.stream; });
  w.column<uint32_t>(r.device, [](const DeviceActivity& a) { return a.correlation_id; });
  w.column<uint32_t>(r.device, [](const DeviceActivity& a) { return a.thread_id; });
  for (int i = 0; i < 3; ++i) w.column<int32_t>(r.device, [i](const DeviceActivity& a) { return a.grid[i]; });
  for (int i = 0; i < 3; ++i) w.column<int32_t>(r.device, [i](const DeviceActivity& a) { return a.block[i]; });
  w.column<int32_t>(r.device, [](const DeviceActivity& a) { return a.shared_memory; });
  w.column<int32_t>(r.device, [](const DeviceActivity& a) { return a.registers; });
  w.column<uint64_t>(r.device, [](const DeviceActivity& a) { return a.bytes; });
  w.column<uint8_t>(r.device, [](const DeviceActivity& a) { return a.copy_kind; });
  w.column<uint8_t>(r.device, [](const DeviceActivity& a) { return a.src_kind; });
  w.column<uint8_t>(r.device, [](const DeviceActivity& a) { return a.dst_kind; });
  w.column<int32_t>(r.device, [](const DeviceActivity& a) { return a.node_index; });

  w.put(static_cast<uint64_t>(r.collectives.size()));
  w.column<uint64_t>(r.collectives, [](const CollectiveArgs& c) { return c.activity; });
  for (uint32_t id : collective_names) w.put(id);
  w.column<int64_t>(r.collectives, [](const CollectiveArgs& c) { return c.in_nelems; });
  w.column<int64_t>(r.collectives, [](const CollectiveArgs& c) { return c.out_nelems; });
  w.column<int64_t>(r.collectives, [](const CollectiveArgs& c) { return c.group_size; });
  for (uint32_t id : dtype_names) w.put(id);
  return std::move(w.bytes());
}

// ---- reading -----------------------------------------------------------------------------------

// A cursor over the payload: every read checked against its end.
class PayloadReader {
 public:
  PayloadReader(const std::string& path, std::string_view bytes) : path_(path), bytes_(bytes) {}

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T), "a value");
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string_view text(const char* what) {
    const uint64_t n = get<uint64_t>();
    need(n, what);
    std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  // An array's length, checked against what is left before anything is allocated for it: each
  // element takes `row_bytes` of the file.
  size_t count(size_t row_bytes, const char* what) {
    const uint64_t n = get<uint64_t>();
    const auto bytes = checked_mul(n, static_cast<uint64_t>(row_bytes));
    if (!bytes || *bytes > bytes_.size() - at_)
      fail("it claims " + std::to_string(n) + " " + what + " but holds " + std::to_string(bytes_.size() - at_) +
           " bytes more");
    return static_cast<size_t>(n);
  }
  // One column: `field(item) = value` for each of `items`.
  template <typename T, typename Item, typename Field>
  void column(std::vector<Item>& items, Field field) {
    for (Item& item : items) field(item, get<T>());
  }
  bool done() const { return at_ == bytes_.size(); }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path_ + ": not a saved trace we can read: " + what);
  }

 private:
  void need(uint64_t n, const char* what) {
    if (n > bytes_.size() - at_) fail(std::string("cut short in ") + what + " at byte " + std::to_string(at_));
  }
  const std::string& path_;
  std::string_view bytes_;
  size_t at_ = 0;
};

std::string inflate_payload(const std::string& path, std::string_view frame) {
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
    throw Error(path + ": not a saved trace we can read: no zstd frame with its size after the header");
  const MemoryBudget budget = memory_budget();
  if (size > budget.bytes / 2 || size > std::numeric_limits<size_t>::max() / 2)
    throw Error(path + ": its saved trace inflates to " + format_bytes(static_cast<double>(size)) +
                ", past half the memory budget of " + format_bytes(static_cast<double>(budget.bytes)) + " (" +
                budget.source + ")");
  std::string out(static_cast<size_t>(size), '\0');
  const size_t got = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(got)) throw Error(path + ": corrupt saved trace: " + ZSTD_getErrorName(got));
  if (got != out.size()) throw Error(path + ": corrupt saved trace: it inflates short of its stated size");
  return out;
}

template <typename Enum>
Enum saved_kind(uint8_t v, uint8_t last, PayloadReader& in, const char* what) {
  if (v > last) in.fail(std::string(what) + " kind " + std::to_string(v) + " is not one we write");
  return static_cast<Enum>(v);
}

}  // namespace

void save_trace(const Recording& r, const ImportReport& report, const std::string& path) {
  const std::string payload = payload_of(r, report);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (!cctx) throw Error(path + ": cannot write the saved trace: zstd could not start");
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::string out(kHeaderBytes + ZSTD_compressBound(payload.size()), '\0');
  std::memcpy(out.data(), kSavedTraceMagic, kMagicBytes);
  const uint32_t version = kSavedTraceVersion;
  std::memcpy(out.data() + kMagicBytes, &version, sizeof version);
  const size_t n = ZSTD_compress2(cctx, out.data() + kHeaderBytes, out.size() - kHeaderBytes, payload.data(),
                                  payload.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) throw Error(path + ": cannot write the saved trace: " + ZSTD_getErrorName(n));
  out.resize(kHeaderBytes + n);
  write_file_atomically(path, out);
}

bool is_saved_trace(const std::string& head) {
  return head.size() >= kMagicBytes && std::memcmp(head.data(), kSavedTraceMagic, kMagicBytes) == 0;
}

Recording load_saved_trace(const std::string& path, ImportReport* report) {
  const std::string file = read_file(path, kMaxTraceBytes);
  if (file.size() < kHeaderBytes || !is_saved_trace(file))
    throw Error(path + ": not a saved trace (no FBXTRACE header)");
  uint32_t version = 0;
  std::memcpy(&version, file.data() + kMagicBytes, sizeof version);
  if (version != kSavedTraceVersion)
    throw Error(path + ": a saved trace of version " + std::to_string(version) + "; this fusebox reads version " +
                std::to_string(kSavedTraceVersion) + " (save it again from the original trace)");
  const std::string payload = inflate_payload(path, std::string_view(file).substr(kHeaderBytes));
  PayloadReader in(path, payload);

  Recording r;
  ImportReport rep;
  try {
    const nlohmann::json meta = nlohmann::json::parse(in.text("the header"));
    r = Recording::from_json(meta.at("recording"));
    const nlohmann::json& j = meta.at("report");
    rep.format = "saved " + j.at("format").get<std::string>();
    rep.events = j.at("events").get<size_t>();
    rep.skipped = j.at("skipped").get<size_t>();
    rep.warnings = j.at("warnings").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    in.fail(std::string("its header: ") + e.what());
  } catch (const Error& e) {
    in.fail(std::string("its header: ") + e.what());
  }

  std::vector<std::string> names(in.count(sizeof(uint64_t), "names"));
  for (std::string& s : names) s = in.text("the names");
  auto name = [&](uint32_t id) -> const std::string& {
    if (id >= names.size()) in.fail("name " + std::to_string(id) + " of " + std::to_string(names.size()));
    return names[id];
  };

  EventBudget budget(path);
  const std::string unit = "events";
  r.spans.resize(in.count(1 + 4 + 8 + 8 + 4 + 8 + 4 + 4, "spans"));
  for (size_t i = 0; i < r.spans.size(); ++i) budget.count(unit);
  in.column<uint8_t>(r.spans, [&](Span& s, uint8_t v) {
    s.kind = saved_kind<SpanKind>(v, static_cast<uint8_t>(SpanKind::Worker), in, "span");
  });
  in.column<uint32_t>(r.spans, [&](Span& s, uint32_t v) { s.name = name(v); });
  in.column<int64_t>(r.spans, [](Span& s, int64_t v) { s.start_ns = v; });
  in.column<int64_t>(r.spans, [](Span& s, int64_t v) { s.end_ns = v; });
  in.column<int32_t>(r.spans, [](Span& s, int32_t v) { s.tid = v; });
  in.column<int64_t>(r.spans, [](Span& s, int64_t v) { s.run = v; });
  in.column<int32_t>(r.spans, [](Span& s, int32_t v) { s.node = v; });
  in.column<int32_t>(r.spans, [](Span& s, int32_t v) { s.depth = v; });

  r.counters.resize(in.count(8 + 4 + 4 + 8, "counter samples"));
  in.column<int64_t>(r.counters, [](CounterSample& c, int64_t v) { c.t_ns = v; });
  in.column<int32_t>(r.counters, [](CounterSample& c, int32_t v) { c.tid = v; });
  in.column<int32_t>(r.counters, [&](CounterSample& c, int32_t v) {
    if (v < 0 || static_cast<size_t>(v) >= r.counter_tracks.size())
      in.fail("counter track " + std::to_string(v) + " of " +
              std::to_string(r.counter_tracks.size()));
    c.track = v;
  });
  in.column<double>(r.counters, [](CounterSample& c, double v) { c.value = v; });

  using exec::DeviceActivity;
  r.device.resize(in.count(1 + 4 + 8 + 8 + 4 * 4 + 4 * 6 + 4 + 4 + 8 + 3 + 4, "device records"));
  for (size_t i = 0; i < r.device.size(); ++i) budget.count(unit);
  in.column<uint8_t>(r.device, [&](DeviceActivity& a, uint8_t v) {
    a.kind = saved_kind<exec::ActivityKind>(v, static_cast<uint8_t>(exec::ActivityKind::Sync), in, "device record");
  });
  in.column<uint32_t>(r.device, [&](DeviceActivity& a, uint32_t v) { a.name = name(v); });
  in.column<int64_t>(r.device, [](DeviceActivity& a, int64_t v) { a.start_ns = v; });
  in.column<int64_t>(r.device, [](DeviceActivity& a, int64_t v) { a.end_ns = v; });
  in.column<int32_t>(r.device, [](DeviceActivity& a, int32_t v) { a.device = v; });
  in.column<int32_t>(r.device, [](DeviceActivity& a, int32_t v) { a.stream = v; });
  in.column<uint32_t>(r.device, [](DeviceActivity& a, uint32_t v) { a.correlation_id = v; });
  in.column<uint32_t>(r.device, [](DeviceActivity& a, uint32_t v) { a.thread_id = v; });
  for (int i = 0; i < 3; ++i) in.column<int32_t>(r.device, [i](DeviceActivity& a, int32_t v) { a.grid[i] = v; });
  for (int i = 0; i < 3; ++i) in.column<int32_t>(r.device, [i](DeviceActivity& a, int32_t v) { a.block[i] = v; });
  in.column<int32_t>(r.device, [](DeviceActivity& a, int32_t v) { a.shared_memory = v; });
  in.column<int32_t>(r.device, [](DeviceActivity& a, int32_t v) { a.registers = v; });
  in.column<uint64_t>(r.device, [](DeviceActivity& a, uint64_t v) { a.bytes = v; });
  in.column<uint8_t>(r.device, [](DeviceActivity& a, uint8_t v) { a.copy_kind = v; });
  in.column<uint8_t>(r.device, [](DeviceActivity& a, uint8_t v) { a.src_kind = v; });
  in.column<uint8_t>(r.device, [](DeviceActivity& a, uint8_t v) { a.dst_kind = v; });
  in.column<int32_t>(r.device, [](DeviceActivity& a, int32_t v) { a.node_index = v; });

  r.collectives.resize(in.count(8 + 4 + 8 + 8 + 8 + 4, "collectives"));
  in.column<uint64_t>(r.collectives, [&](CollectiveArgs& c, uint64_t v) {
    if (v >= r.device.size() || r.device[v].kind != exec::ActivityKind::Kernel)
      in.fail("collective arguments for record " + std::to_string(v) + ", which is not a kernel");
    c.activity = static_cast<size_t>(v);
  });
  in.column<uint32_t>(r.collectives, [&](CollectiveArgs& c, uint32_t v) { c.collective = name(v); });
  in.column<int64_t>(r.collectives, [](CollectiveArgs& c, int64_t v) { c.in_nelems = v; });
  in.column<int64_t>(r.collectives, [](CollectiveArgs& c, int64_t v) { c.out_nelems = v; });
  in.column<int64_t>(r.collectives, [](CollectiveArgs& c, int64_t v) { c.group_size = v; });
  in.column<uint32_t>(r.collectives, [&](CollectiveArgs& c, uint32_t v) { c.dtype = name(v); });
  if (!in.done()) in.fail("bytes after the last column");

  const std::string bad = check_recording(r);
  if (!bad.empty()) in.fail(bad);
  if (report) *report = std::move(rep);
  return r;
}

}  // namespace fusebox::profiler
