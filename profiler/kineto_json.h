#pragma once
// kineto_json: a Chrome/kineto trace's text read as a stream of events, for import_kineto.
//
//   nlohmann::json top = read_trace_events(path, JsonReader::Fast, on_event, &events);
//
// Each element of "traceEvents" (or of a bare top-level array, Chrome's JSON Array Format) is
// handed to `on_event` in file order, as a simdjson DOM element that lives for the call; the
// top level comes back as a document without its events ("traceEvents": []). The file may be
// gzip'd (by content: the magic 1f 8b; every member, as gunzip reads them). So a trace costs its
// file's bytes, one batch of events and what the caller keeps, never a document of every event.
//
// Two readers, one contract:
//   Fast    A byte scanner (strings and nesting tracked) finds the events array and cuts it at
//           its top-level commas into batches of about 1 MiB, each parsed by simdjson at
//           gigabytes a second. It takes only what it reads exactly as the strict reader does:
//           anything else (text that is not JSON, an integer past 64 bits, a number past
//           double's range, a "traceEvents" key written with escapes or given twice, an event
//           nested past kMaxEventDepth) throws NotFast, and the importer starts again with
//   Strict  nlohmann's SAX parser (the importer's only reader before): each event is built
//           alone, written back as text and parsed by simdjson for the caller. Its messages are
//           what a user sees for a file that is not JSON; an event nested deeper than
//           kMaxEventDepth levels is handed over as null, for the caller to skip.
// Both count every event with EventBudget before it is handed over, so a trace past the memory
// budget is refused at the event that passes it, by either reader.
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <simdjson.h>
#include <stdexcept>
#include <string>

namespace fusebox::profiler {

enum class JsonReader { Fast, Strict };

// The fast reader met text it does not take; read the file again with JsonReader::Strict.
struct NotFast : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The deepest an event may nest (its own object the first level) and still be handed over, by
// either reader.
constexpr size_t kMaxEventDepth = 1000;

// An event, or null for one nested past kMaxEventDepth (strict reader only).
using OnTraceEvent = std::function<void(const simdjson::dom::element* event)>;

// Throws fusebox::Error naming the file for a file that cannot be read, corrupt or truncated
// gzip, text past kMaxTraceBytes, the event budget, or (strict) text that is not a JSON trace;
// NotFast (fast) for text the fast reader leaves to the strict one.
nlohmann::json read_trace_events(const std::string& path, JsonReader reader,
                                 const OnTraceEvent& on_event, size_t* events);

}  // namespace fusebox::profiler
