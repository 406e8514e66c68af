// kineto_json: the fast and the strict reader of a trace's events (kineto_json.h).
#include "profiler/kineto_json.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/base/atomic_file.h"
#include "core/base/bounded_queue.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "profiler/trace_import.h"

namespace fusebox::profiler {

namespace {

using nlohmann::json;

// ---- the text ------------------------------------------------------------------------------------

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// The text of a trace, a chunk at a time: the file's bytes as they are, or inflated from gzip
// (every member, concatenated, as gunzip does), at most kMaxTraceBytes of text. The fast reader
// takes chunks (next()); the strict one pulls characters through `Iterator`. Either way an
// inflated trace is never whole in memory.
//
// Inflating is a third of the import of a large trace (4 of 8 s for the 1.2 GB of text of the
// 10M-event benchmark trace), so a thread of its own inflates ahead of the reader, into kChunks
// buffers of kChunkBytes that the two hand back and forth: the reader parses one chunk while the
// next ones are inflated. An error the inflater meets (corrupt or truncated gzip, the size or
// ratio limits below) is thrown by next() after the chunks inflated before it, where a reader
// inflating for itself would have met it. Where no thread can be started (a process at its
// RLIMIT_NPROC), the reader inflates each chunk itself.
//
// A stream that, past kRatioAfter, has inflated more than kMaxInflateRatio times the gzip bytes
// it read is refused as a decompression bomb at once: Apache POI's ZipSecureFile rule (a minimum
// inflate ratio of 0.01). Real kineto traces inflate 10-19 times (the gzip'd recordings in
// shared/traces); a run of spaces or of one repeated event, 250-1000 times, which zlib would
// otherwise take seconds to inflate to the 4 GiB limit. A stream of a real trace's ratio that
// inflates past kMaxTraceBytes (a 10 GB recording) is refused when the inflater gets there; what
// the reader built from the text before it is bounded by the event budget (EventBudget).
class TextSource {
 public:
  static constexpr size_t kRatioAfter = size_t{64} << 20;
  static constexpr size_t kMaxInflateRatio = 100;
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  static constexpr size_t kChunks = 8;

  TextSource(std::string path, std::string bytes) : path_(std::move(path)), in_(std::move(bytes)) {
    gzip_ = is_gzip(in_);
    if (!gzip_) return;
    if (inflateInit2(&z_.z, 16 + MAX_WBITS) != Z_OK) throw Error("zlib: inflateInit2 failed");
    buffers_.resize(kChunks);
    for (std::vector<char>& b : buffers_) {
      b.resize(kChunkBytes);
      free_.push(&b);
    }
    try {
      inflater_ = std::thread([this] {
        while (inflate_one()) {
        }
      });
    } catch (const std::system_error&) {
      inline_ = true;  // no thread to be had: next() inflates each chunk itself
    }
  }
  ~TextSource() {
    free_.cancel();
    ready_.cancel();
    if (inflater_.joinable()) inflater_.join();
    if (gzip_) inflateEnd(&z_.z);
  }
  TextSource(const TextSource&) = delete;
  TextSource& operator=(const TextSource&) = delete;

  // The next chunk of text, [begin, end), valid until the next call; empty at the end. Throws
  // Error naming the file for corrupt or truncated gzip, or text past kMaxTraceBytes.
  std::pair<const char*, const char*> next() {
    if (!gzip_) {
      if (done_) return {nullptr, nullptr};
      done_ = true;
      return {in_.data(), in_.data() + in_.size()};
    }
    if (held_) free_.push(std::exchange(held_, nullptr));
    if (inline_ && !inflated_all_) inflated_all_ = !inflate_one();
    const std::optional<Chunk> c = ready_.pop();
    if (!c) return {nullptr, nullptr};
    held_ = c->buffer;
    return {c->buffer->data(), c->buffer->data() + c->size};
  }

  // An input iterator over the characters (what nlohmann's iterator input adapter reads).
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;
    Iterator() = default;  // the end
    explicit Iterator(TextSource* s) : s_(s) { fill(); }
    const char& operator*() const { return *at_; }
    Iterator& operator++() {
      if (++at_ == end_) fill();
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const Iterator& o) const { return at_ == o.at_; }
    bool operator!=(const Iterator& o) const { return at_ != o.at_; }

   private:
    void fill() {
      std::tie(at_, end_) = s_->next();
      if (at_ == end_) at_ = end_ = nullptr;
    }
    TextSource* s_ = nullptr;
    const char* at_ = nullptr;
    const char* end_ = nullptr;
  };

 private:
  struct Inflater {
    z_stream z{};
    size_t fed = 0;  // bytes of in_ handed to zlib
  };
  struct Chunk {
    std::vector<char>* buffer;
    size_t size;
  };

  // Inflates the next chunk into a free buffer and queues it for next(). False when there is no
  // more to do: the stream's end (the queue closed), an error (the queue failed with it, for
  // next() to throw after the chunks before it), or the reader gone (the queues cancelled). Runs
  // on one thread only, the inflater's or, when inline_, the reader's: the zlib state and text_
  // are that thread's alone.
  bool inflate_one() {
    const std::optional<std::vector<char>*> buffer = free_.pop();
    if (!buffer) return false;
    try {
      size_t got = 0;
      bool done = false;
      while (got == 0 && !done) {
        got = inflate_some(z_, **buffer, &done);
        text_ += got;
        check_size(text_);
        check_ratio(text_, z_);
      }
      if (got > 0 ? !ready_.push({*buffer, got}) : !free_.push(*buffer)) return false;
      if (done) ready_.close();
      return !done;
    } catch (...) {  // Error, or bad_alloc building its message
      ready_.fail(std::current_exception());
      return false;
    }
  }

  void check_size(size_t text) const {
    if (text > kMaxTraceBytes)
      throw Error(path_ + ": inflates past " + format_bytes(static_cast<double>(kMaxTraceBytes)) +
                  ", the most a trace may hold");
  }

  void check_ratio(size_t text, const Inflater& s) const {
    const size_t read = s.fed - s.z.avail_in;  // gzip bytes inflated so far
    if (text > kRatioAfter && text / kMaxInflateRatio > read)
      throw Error(path_ + ": inflates more than " + std::to_string(kMaxInflateRatio) +
                  " times its size (" + format_bytes(static_cast<double>(text)) +
                  " from the first " + format_bytes(static_cast<double>(read)) +
                  " of gzip): refused as a decompression bomb; real traces inflate 10-20 times");
  }

  // Inflates into `out` from where `s` stands: the bytes written (0 is possible), `*done` set at
  // the end of the last member.
  size_t inflate_some(Inflater& s, std::vector<char>& out, bool* done) {
    if (s.z.avail_in == 0 && s.fed < in_.size()) {  // avail_in is 32-bit: fed in slices
      const size_t n = std::min<size_t>(in_.size() - s.fed, size_t{1} << 30);
      s.z.next_in = reinterpret_cast<Bytef*>(in_.data() + s.fed);
      s.z.avail_in = static_cast<uInt>(n);
      s.fed += n;
    }
    s.z.next_out = reinterpret_cast<Bytef*>(out.data());
    s.z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&s.z, Z_NO_FLUSH);
    const size_t got = out.size() - s.z.avail_out;
    const bool input_left = s.z.avail_in > 0 || s.fed < in_.size();
    if (rc == Z_STREAM_END) {
      if (!input_left) {
        *done = true;
      } else if (static_cast<unsigned char>(*s.z.next_in) != 0x1f) {
        throw Error(path_ + ": corrupt gzip data: bytes after the end of the gzip stream");
      } else {
        inflateReset(&s.z);  // another member follows
      }
      return got;
    }
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR || rc == Z_STREAM_ERROR)
      throw Error(path_ + ": corrupt gzip data: " +
                  (s.z.msg ? s.z.msg : "zlib error " + std::to_string(rc)));
    // Z_BUF_ERROR: no progress without more input. Z_OK with the input used up and room left
    // in the output: zlib wants more input. Either way the stream stops early.
    if (rc == Z_BUF_ERROR || (!input_left && s.z.avail_out > 0))
      throw Error(path_ + ": truncated gzip stream");
    return got;
  }

  std::string path_;
  std::string in_;  // the file's bytes
  bool gzip_ = false;
  bool done_ = false;          // plain text: handed out
  bool inline_ = false;        // no inflater thread: next() inflates
  bool inflated_all_ = false;  // inline_: the stream has ended (or failed)
  Inflater z_;
  size_t text_ = 0;  // text inflated so far
  std::vector<std::vector<char>> buffers_;  // kChunks of kChunkBytes, handed back and forth:
  BoundedQueue<std::vector<char>*> free_{kChunks};  // to inflate into
  BoundedQueue<Chunk> ready_{kChunks};              // inflated, in order
  std::vector<char>* held_ = nullptr;               // the reader's chunk, until its next call
  std::thread inflater_;
};

// ---- the strict reader ---------------------------------------------------------------------------

// The strict reader's parse: the trace's JSON in one pass (nlohmann's SAX interface). Each event
// is built alone and handed over with its depth as soon as it closes, then dropped; only the rest
// of the top level is kept as a document.
template <typename OnEvent>
class EventStream {
 public:
  explicit EventStream(OnEvent on_event) : on_event_(std::move(on_event)) {}

  json top;                // the top level, its events left out ("traceEvents": [])
  bool bare_array = false; // the top level is the events array itself
  size_t events = 0;
  bool failed = false;  // a parse error: its id, message and byte
  int error_id = 0;
  std::string error_what;
  size_t error_byte = 0;

  bool null() { return scalar(nullptr); }
  bool boolean(bool v) { return scalar(v); }
  bool number_integer(json::number_integer_t v) { return scalar(v); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return scalar(v); }
  bool string(json::string_t& v) { return scalar(std::move(v)); }
  bool binary(json::binary_t& v) { return scalar(std::move(v)); }
  bool key(json::string_t& k) {
    if (event_) return event_->key(k);
    if (depth_ == 1) next_is_events_ = k == "traceEvents";
    return top_->key(k);
  }
  bool start_object(std::size_t n) { return open(n, /*array=*/false); }
  bool start_array(std::size_t n) { return open(n, /*array=*/true); }
  bool end_object() { return close(/*array=*/false); }
  bool end_array() { return close(/*array=*/true); }
  bool parse_error(std::size_t byte, const std::string&, const json::exception& e) {
    failed = true;
    error_id = e.id;
    error_what = e.what();
    error_byte = byte;
    return false;
  }

 private:
  using DomParser = nlohmann::detail::json_sax_dom_parser<json>;

  bool open(std::size_t n, bool array) {
    if (!event_ && in_events_ && depth_ == events_depth_) event_.emplace(event_doc_);  // an event begins
    ++depth_;
    if (event_) deepest_ = std::max(deepest_, static_cast<size_t>(depth_ - events_depth_));
    if (event_) return array ? event_->start_array(n) : event_->start_object(n);
    if (depth_ == 1 && array) {  // a bare array: every element is an event
      bare_array = in_events_ = true;
      events_depth_ = 1;
      return true;
    }
    const bool events_begin = depth_ == 2 && array && next_is_events_;
    next_is_events_ = false;
    if (events_begin) in_events_ = true, events_depth_ = 2;
    return array ? top_->start_array(n) : top_->start_object(n);
  }

  bool close(bool array) {
    --depth_;
    if (event_) {
      if (!(array ? event_->end_array() : event_->end_object())) return false;
      if (depth_ == events_depth_) deliver();
      return true;
    }
    if (in_events_ && depth_ == events_depth_ - 1) in_events_ = false;  // the events array ends
    if (bare_array && depth_ == 0) return true;
    return array ? top_->end_array() : top_->end_object();
  }

  template <typename V>
  bool scalar(V&& v) {
    if (event_) return to(*event_, std::forward<V>(v));
    if (in_events_ && depth_ == events_depth_) {  // an event that is not an object
      event_doc_ = json(std::forward<V>(v));
      deliver();
      return true;
    }
    next_is_events_ = false;
    return to(*top_, std::forward<V>(v));
  }

  // One SAX value into a document builder (the event's or the top level's).
  template <typename V>
  static bool to(DomParser& p, V&& v) {
    using T = std::decay_t<V>;
    if constexpr (std::is_same_v<T, std::nullptr_t>) return p.null();
    else if constexpr (std::is_same_v<T, bool>) return p.boolean(v);
    else if constexpr (std::is_same_v<T, json::number_integer_t>) return p.number_integer(v);
    else if constexpr (std::is_same_v<T, json::number_unsigned_t>) return p.number_unsigned(v);
    else if constexpr (std::is_same_v<T, json::number_float_t>) return p.number_float(v, "");
    else if constexpr (std::is_same_v<T, json::string_t>) return p.string(v);
    else return p.binary(v);
  }

  void deliver() {
    ++events;
    on_event_(event_doc_, deepest_);
    event_.reset();
    event_doc_ = json();
    deepest_ = 0;
  }

  OnEvent on_event_;
  std::unique_ptr<DomParser> top_ = std::make_unique<DomParser>(top);
  json event_doc_;
  std::optional<DomParser> event_;  // building the current event, while one is open
  int depth_ = 0;                   // containers open
  int events_depth_ = -1;           // the depth inside the events array
  bool in_events_ = false;
  bool next_is_events_ = false;     // the top-level key just read is "traceEvents"
  size_t deepest_ = 0;              // how deep the current event nests (a scalar: 0)
};

// Every event through nlohmann's parser, then back to text for simdjson (the caller reads one
// kind of element whichever reader ran). Throws Error naming the file when it is not JSON or
// not a trace.
json read_strict(const std::string& path, const OnTraceEvent& on_event, size_t* events) {
  TextSource text(path, read_file(path, kMaxTraceBytes));
  EventBudget budget(path);
  const std::string unit = "events";
  simdjson::dom::parser parser;
  std::string event_text;
  auto deliver = [&](const json& e, size_t depth) {
    budget.count(unit);
    if (depth > kMaxEventDepth) return on_event(nullptr);
    event_text = e.dump();  // bounded recursion: depth <= kMaxEventDepth
    simdjson::dom::element element;
    if (parser.parse(event_text).get(element) != simdjson::SUCCESS) return on_event(nullptr);
    on_event(&element);
  };
  EventStream<decltype(deliver)> sax(std::move(deliver));
  try {
    json::sax_parse(TextSource::Iterator(&text), TextSource::Iterator(), &sax);
  } catch (const json::exception& e) {  // out_of_range.406: a number past double's range
    throw Error(path + ": not a JSON trace we can read: " + e.what());
  }
  if (sax.failed) {
    if (sax.error_id == 406) throw Error(path + ": not a JSON trace we can read: " + sax.error_what);
    throw Error(path + ": not JSON (at byte " + std::to_string(sax.error_byte) + "): " + sax.error_what);
  }
  *events = sax.events;
  if (sax.bare_array) return json{{"traceEvents", json::array()}};
  if (!sax.top.is_object() || !sax.top.contains("traceEvents") || !sax.top["traceEvents"].is_array())
    throw Error(path + ": not a Chrome/kineto trace (no traceEvents array)");
  return std::move(sax.top);
}

// ---- the fast reader -----------------------------------------------------------------------------

// A batch of the events array's text: "[" and whole events, the "]" not yet added.
struct EventBatch {
  std::string text;
  bool at_comma = false;  // cut at one of the array's commas (more events follow)
};

struct Cancelled {};  // the splitter's way out when the reader has gone

// Cuts the text into the top level (everything but the events array's contents, kept whole) and
// the events, parsed by simdjson a batch at a time. Valid JSON only is split where JSON splits
// it; for anything else some batch or the top level fails to parse, and that is NotFast: the
// pieces put back together are the file's text, so if each parses, the whole did.
class FastSplitter {
 public:
  explicit FastSplitter(std::function<void(EventBatch&&)> emit) : emit_(std::move(emit)) {
    start_batch();
  }

  void feed(const char* p, const char* end) {
    while (p < end) p = in_events_ ? events(p, end) : top(p, end);
  }

  // The top level without its events; NotFast unless the text was one JSON trace.
  json finish() {
    if (in_events_ || in_string_ || depth_ != 0 || !seen_events_) throw NotFast("the text ends early");
    json top = json::parse(top_, nullptr, /*allow_exceptions=*/false);
    if (top.is_discarded()) throw NotFast("the top level is not JSON");
    if (bare_) return json{{"traceEvents", json::array()}};
    const json* events = top.is_object() && top.contains("traceEvents") ? &top["traceEvents"] : nullptr;
    if (!events || !events->is_array() || !events->empty()) throw NotFast("no events array where it was read");
    return top;
  }

  static constexpr size_t kBatchBytes = size_t{1} << 20;

 private:
  static constexpr size_t kMaxEventBytes = size_t{64} << 20;  // past it, the strict reader reads
  static bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

  // Outside the events: every byte kept; at depth 1 of an object, the keys read to find
  // "traceEvents" and its array.
  const char* top(const char* p, const char* end) {
    for (; p < end; ++p) {
      const char c = *p;
      top_.push_back(c);
      if (in_string_) {
        if (escaped_) {
          escaped_ = false;
          key_escaped_ = true;
        } else if (c == '\\') {
          escaped_ = true;
        } else if (c == '"') {
          in_string_ = false;
          if (depth_ == 1 && expect_key_) key_is_events_ = !key_escaped_ && key_ == "traceEvents";
        } else if (depth_ == 1 && expect_key_) {
          key_.push_back(c);
        }
        continue;
      }
      if (space(c)) continue;
      const bool events_value = events_value_next_;
      events_value_next_ = false;
      switch (c) {
        case '"':
          in_string_ = true;
          key_.clear();
          key_escaped_ = false;
          break;
        case '{':
        case '[':
          if (depth_ == 0 && started_) throw NotFast("more than one value at the top level");
          started_ = true;
          ++depth_;
          if (depth_ == 1) expect_key_ = c == '{';
          if ((depth_ == 1 && c == '[') || (depth_ == 2 && c == '[' && events_value)) {
            if (seen_events_) throw NotFast("a second traceEvents array");
            bare_ = depth_ == 1;
            seen_events_ = in_events_ = true;
            events_depth_ = depth_;
            return p + 1;
          }
          break;
        case '}':
        case ']':
          --depth_;
          break;
        case ',':
          if (depth_ == 1) expect_key_ = true;
          break;
        case ':':
          if (depth_ == 1) {
            events_value_next_ = expect_key_ && key_is_events_;
            expect_key_ = key_is_events_ = false;
          }
          break;
        default:
          break;
      }
    }
    return p;
  }

  // Inside the events array: bytes copied to the batch a run at a time, cut at the array's own
  // commas once the batch holds kBatchBytes, and at its closing bracket.
  const char* events(const char* p, const char* end) {
    const char* run = p;  // the bytes from here to p are not in the batch yet
    while (p < end) {
      if (escaped_) {  // a chunk began inside an escape
        escaped_ = false;
        ++p;
        continue;
      }
      if (in_string_) {
        const char* q = p;
        while (q < end && *q != '"' && *q != '\\') ++q;
        if (q == end) break;
        if (*q == '\\') {
          if (q + 1 == end) {  // the escaped byte is in the next chunk
            escaped_ = true;
            p = end;
            break;
          }
          p = q + 2;
          continue;
        }
        in_string_ = false;
        p = q + 1;
        continue;
      }
      const char c = *p;
      if (space(c) && depth_ == events_depth_) {  // between events: not kept (a whitespace bomb
        batch_.append(run, p);                    // grew the batch by gigabytes)
        while (p < end && space(*p)) ++p;
        run = p;
        continue;
      }
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if (c == '}' || c == ']') {
        if (depth_ == events_depth_) {
          if (c == '}') throw NotFast("a '}' closes the events array");
          batch_.append(run, p);
          flush(/*at_comma=*/false);
          in_events_ = false;
          top_.push_back(']');
          --depth_;
          return p + 1;
        }
        --depth_;
      } else if (c == ',' && depth_ == events_depth_ && batch_.size() + (p - run) >= kBatchBytes) {
        batch_.append(run, p);
        flush(/*at_comma=*/true);
        run = p + 1;
      }
      ++p;
    }
    // An escape split across chunks leaves p past end; the run is what this chunk held.
    batch_.append(run, end);
    if (batch_.size() > kMaxEventBytes) throw NotFast("an event of more than 64 MiB");
    return end;
  }

  // Hands the batch on to be parsed, and starts the next.
  void flush(bool at_comma) {
    emit_(EventBatch{std::move(batch_), at_comma});
    start_batch();
  }
  void start_batch() {
    batch_.clear();
    batch_.reserve(kBatchBytes + 4096);
    batch_.push_back('[');
  }

  std::function<void(EventBatch&&)> emit_;
  std::string top_;       // the text outside the events array's contents
  std::string batch_;     // "[" and the events read since the last flush
  int depth_ = 0;         // containers open
  int events_depth_ = 0;  // the depth inside the events array
  bool in_string_ = false, escaped_ = false;
  bool started_ = false;  // the top-level value has begun
  bool bare_ = false;     // the top level is the events array itself
  bool seen_events_ = false, in_events_ = false;
  bool expect_key_ = false;  // at depth 1 of an object, the next string is a key
  std::string key_;          // the key being read at depth 1
  bool key_escaped_ = false, key_is_events_ = false;
  bool events_value_next_ = false;  // after "traceEvents": the next value is the events
};

// Parses batches of events, "[" + events + "]", with simdjson, and hands each event over.
class BatchReader {
 public:
  BatchReader(const std::string& path, const OnTraceEvent& on_event)
      : budget_(path), on_event_(on_event) {
    // The batch's array is a level: its events nest as deep as the strict reader takes them.
    if (parser_.allocate(FastSplitter::kBatchBytes + simdjson::SIMDJSON_PADDING,
                         kMaxEventDepth + 1) != simdjson::SUCCESS)
      throw Error(path + ": cannot allocate the JSON parser");
  }

  // A batch after a cut comma holds an event: "[a, b, ]" cut after b would otherwise read as two
  // good arrays.
  void read(EventBatch& b) {
    const size_t size = b.text.size() + 1;
    b.text.push_back(']');
    b.text.append(simdjson::SIMDJSON_PADDING, ' ');
    simdjson::dom::element doc;
    if (parser_.parse(b.text.data(), size, /*realloc_if_needed=*/false).get(doc) !=
        simdjson::SUCCESS)
      throw NotFast("a batch of events simdjson does not take");
    simdjson::dom::array array;
    if (doc.get_array().get(array) != simdjson::SUCCESS) throw NotFast("a batch is not an array");
    if (after_cut_ && array.size() == 0) throw NotFast("a comma before the events array's end");
    after_cut_ = b.at_comma;
    for (simdjson::dom::element e : array) {
      ++count_;
      budget_.count(unit_);
      on_event_(&e);
    }
  }
  size_t events() const { return count_; }

 private:
  EventBudget budget_;
  const std::string unit_ = "events";
  const OnTraceEvent& on_event_;
  simdjson::dom::parser parser_;
  size_t count_ = 0;
  bool after_cut_ = false;  // the last batch ended at a comma
};

// The fast reader runs as a pipeline over three threads, each stage in order: the text source's
// inflater, a splitter thread cutting the text into batches, and the caller's thread parsing
// them and building the events (on_event). On the 10M-event benchmark trace those take about
// 1, 1.5 and 4 s of work, so the import takes about the time of the last. At most kBatches
// batches wait between the splitter and the parser. Whatever either thread throws reaches the
// caller in the order one thread would have met it; the caller leaving early stops the others.
// Where no thread can be started, the caller splits for itself.
json read_fast(const std::string& path, const OnTraceEvent& on_event, size_t* events) {
  constexpr size_t kBatches = 4;
  TextSource text(path, read_file(path, kMaxTraceBytes));
  BatchReader reader(path, on_event);
  json top;
  const auto split = [&](const std::function<void(EventBatch &&)>& emit) {
    FastSplitter splitter(emit);
    for (auto [p, end] = text.next(); p != end; std::tie(p, end) = text.next())
      splitter.feed(p, end);
    top = splitter.finish();
  };
  BoundedQueue<EventBatch> batches(kBatches);
  std::thread splitting;
  try {
    splitting = std::thread([&] {
      try {
        split([&](EventBatch&& b) {
          if (!batches.push(std::move(b))) throw Cancelled();
        });
        batches.close();
      } catch (const Cancelled&) {
      } catch (...) {
        batches.fail(std::current_exception());
      }
    });
  } catch (const std::system_error&) {
    split([&](EventBatch&& b) { reader.read(b); });
    *events = reader.events();
    return top;
  }
  try {
    while (std::optional<EventBatch> b = batches.pop()) reader.read(*b);
  } catch (...) {
    batches.cancel();
    splitting.join();
    throw;
  }
  splitting.join();
  *events = reader.events();
  return top;
}

}  // namespace

json read_trace_events(const std::string& path, JsonReader reader, const OnTraceEvent& on_event,
                       size_t* events) {
  return reader == JsonReader::Fast ? read_fast(path, on_event, events)
                                    : read_strict(path, on_event, events);
}

}  // namespace fusebox::profiler
