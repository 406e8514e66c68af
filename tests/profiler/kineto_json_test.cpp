// kineto_json: the fast reader hands over the same events and top level as the strict one, across
// its batch and gzip-chunk boundaries, and leaves to the strict one what it does not take.
#include "profiler/kineto_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "profiler/trace_import.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {

struct Read {
  nlohmann::json top;
  // Each as a document (the strict reader's pass through nlohmann orders the keys), null for a
  // skipped one.
  std::vector<nlohmann::json> events;
  size_t count = 0;
};

Read read(const std::string& path, JsonReader reader) {
  Read r;
  r.top = read_trace_events(
      path, reader,
      [&](const simdjson::dom::element* e) {
        r.events.push_back(e ? nlohmann::json::parse(simdjson::to_string(*e)) : nlohmann::json());
      },
      &r.count);
  return r;
}

// Both readers on `path`: the same top level, events and count.
void expect_same(const std::string& path) {
  const Read fast = read(path, JsonReader::Fast);
  const Read strict = read(path, JsonReader::Strict);
  EXPECT_EQ(fast.top, strict.top) << path;
  EXPECT_EQ(fast.count, strict.count) << path;
  ASSERT_EQ(fast.events.size(), strict.events.size()) << path;
  for (size_t i = 0; i < fast.events.size(); ++i) ASSERT_EQ(fast.events[i], strict.events[i]) << path << " event " << i;
}

std::string gzip(const std::string& path) {
  auto r = ptest::run_command("gzip -kfn " + path);
  EXPECT_EQ(r.status, 0) << r.output;
  return path + ".gz";
}

// An X event whose name holds escapes, numbers of every kind and nested args.
std::string event(size_t i, const std::string& name) {
  return R"({"ph":"X","cat":"kernel","name":")" + name + R"(","pid":1,"tid":)" + std::to_string(i % 7) +
         R"(,"ts":)" + std::to_string(1000 + i) + ".125" + R"(,"dur":3,"args":{"correlation":)" +
         std::to_string(i + 1) + R"(,"grid":[1,2,3],"big":18446744073709551615,"neg":-5,"f":1e-3,)" +
         R"("nested":{"a":[{"b":null},true,false]}}})";
}

}  // namespace

// Several batches (over 1 MiB each) and, gzip'd, several 1 MiB inflate chunks: strings with
// escapes, keys before and after the events, whitespace between them.
TEST(KinetoJson, FastAndStrictReadersAgreeAcrossBatchesAndChunks) {
  const std::string dir = ptest::temp_dir("kineto-json");
  std::string text = "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU \\\"0\\\"\"}],\n"
                     " \"traceEvents\" : [\n";
  for (size_t i = 0; i < 12000; ++i) {
    if (i) text += i % 3 ? "," : " ,\n ";
    text += event(i, "void gemm<float, \\\"quoted\\\", \\\\back\\\\, \\u00e9>(" + std::string(i % 50, 'x') + ")");
  }
  text += "\n ],\n \"traceName\": \"t\", \"displayTimeUnit\": \"ns\"}\n";
  ASSERT_GT(text.size(), size_t{3} << 20);
  const std::string path = dir + "/t.json";
  write_file_atomically(path, text);
  expect_same(path);
  expect_same(gzip(path));
  const Read fast = read(path, JsonReader::Fast);
  EXPECT_EQ(fast.count, 12000u);
  EXPECT_EQ(fast.top["traceName"], "t");
  EXPECT_TRUE(fast.top["traceEvents"].empty());
}

// A gzip chunk (1 MiB of inflated text) ending on a backslash, and on the quote after one: the
// fast reader's string scan carries the escape into the next chunk.
TEST(KinetoJson, AnEscapeSplitAcrossInflateChunksIsRead) {
  const std::string dir = ptest::temp_dir("kineto-json-escape");
  for (size_t shift : {0, 1, 2}) {
    std::string text = "{\"traceEvents\":[";
    const std::string head = R"({"ph":"X","cat":"kernel","pid":1,"tid":1,"ts":1,"dur":1,"name":")";
    // Fill so that the backslash of `\"` sits `shift` bytes before the chunk's end.
    const size_t chunk = size_t{1} << 20;
    const size_t fill = chunk - shift - 1 - text.size() - head.size();
    text += head + std::string(fill, 'a') + "\\\"after\"}";
    ASSERT_EQ(text[chunk - shift - 1], '\\');
    text += "," + event(1, "next") + "]}";
    const std::string path = dir + "/e" + std::to_string(shift) + ".json";
    write_file_atomically(path, text);
    expect_same(gzip(path));
    const Read fast = read(path + ".gz", JsonReader::Fast);
    ASSERT_EQ(fast.events.size(), 2u);
    EXPECT_NE(fast.events[0]["name"].get<std::string>().find("aaaa\"after"), std::string::npos);
  }
}

TEST(KinetoJson, ABareArrayIsTheEvents) {
  const std::string dir = ptest::temp_dir("kineto-json-bare");
  const std::string path = dir + "/bare.json";
  write_file_atomically(path, "[" + event(0, "a") + ", 42, " + event(1, "b") + "]");
  expect_same(path);
  EXPECT_EQ(read(path, JsonReader::Fast).count, 3u);
}

// What the fast reader leaves to the strict one, and what import_kineto then makes of it: the
// strict reader's answer, whichever it is.
TEST(KinetoJson, TextTheFastReaderDoesNotTakeIsLeftToTheStrictOne) {
  const std::string dir = ptest::temp_dir("kineto-json-notfast");
  const std::string ok = event(0, "k");
  std::string big_batch;  // over one batch, so a cut falls before the end
  for (size_t i = 0; i < 6000; ++i) big_batch += (i ? "," : "") + event(i, "k");
  struct Case {
    std::string name, text;
    bool strict_reads;  // the strict reader takes it (else it throws Error)
  };
  const std::vector<Case> cases = {
      {"bigint", R"({"traceEvents":[)" + ok + R"(,{"ph":"X","ts":123456789012345678901234,"dur":1}]})", true},
      {"huge_float", R"({"traceEvents":[{"ph":"X","ts":1e400}]})", false},
      {"escaped_key", R"({"trace\u0045vents":[)" + ok + "]}", true},
      {"two_arrays", R"({"traceEvents":[)" + ok + R"(],"traceEvents":[)" + ok + "]}", true},
      {"trailing_comma_after_cut", R"({"traceEvents":[)" + big_batch + ", ]}", false},
      {"trailing_comma", R"({"traceEvents":[)" + ok + ",]}", false},
      {"no_events", R"({"schemaVersion":1})", false},
      {"not_json", R"({"traceEvents":[)" + ok + "]", false},
      {"garbage_after", R"({"traceEvents":[)" + ok + "]} x", false},
      {"control_char", "{\"traceEvents\":[{\"name\":\"a\tb\"}]}", false},
  };
  for (const Case& c : cases) {
    const std::string path = dir + "/" + c.name + ".json";
    write_file_atomically(path, c.text);
    EXPECT_THROW(read(path, JsonReader::Fast), NotFast) << c.name;
    if (c.strict_reads) {
      EXPECT_NO_THROW(read(path, JsonReader::Strict)) << c.name;
      EXPECT_NO_THROW(import_kineto(path)) << c.name;
    } else {
      EXPECT_THROW(read(path, JsonReader::Strict), Error) << c.name;
      EXPECT_THROW(import_kineto(path), Error) << c.name;
    }
  }
  // Two arrays: the strict reader hands over both, as it always did.
  EXPECT_EQ(read(dir + "/two_arrays.json", JsonReader::Strict).count, 2u);
}

// An event nested kMaxEventDepth levels deep (its own object the first) is read by both readers;
// one level more is left by the fast reader to the strict one, which hands it over as null, and
// the importer skips it with a counted warning.
TEST(KinetoJson, AnEventNestedPastTheLimitIsSkippedAndCounted) {
  const std::string dir = ptest::temp_dir("kineto-json-deep");
  auto nested = [](size_t levels) {  // {"args": [[...]]}: the object, then levels - 1 arrays
    return "{\"args\":" + std::string(levels - 1, '[') + std::string(levels - 1, ']') + "}";
  };
  const std::string at_limit = dir + "/at_limit.json", past = dir + "/past.json";
  write_file_atomically(at_limit, R"({"traceEvents":[)" + event(0, "k") + "," + nested(kMaxEventDepth) + "]}");
  write_file_atomically(past, R"({"traceEvents":[)" + event(0, "k") + "," + nested(kMaxEventDepth + 1) + "]}");
  expect_same(at_limit);
  EXPECT_FALSE(read(at_limit, JsonReader::Fast).events[1].is_null());
  EXPECT_THROW(read(past, JsonReader::Fast), NotFast);
  const Read strict = read(past, JsonReader::Strict);
  ASSERT_EQ(strict.events.size(), 2u);
  EXPECT_TRUE(strict.events[1].is_null());
  ImportReport report;
  import_kineto(past, &report);
  EXPECT_EQ(report.skipped, 1u);
  bool counted = false;
  for (const std::string& w : report.warnings) counted |= w.find("nested deeper than") != std::string::npos;
  EXPECT_TRUE(counted);
}

// The inflate-ratio rule (kineto_json.cpp's TextSource): past 64 MiB of text, a stream that
// inflates more than 100 times the gzip it read is refused as a bomb; a trace of real shape (events
// with their own ids and times, about 20 times) passes it. The rule is in the text source both
// readers pull from; the fast one reads here (the strict one would take seconds over 64 MiB).
TEST(KinetoJson, AGzipStreamPast64MiBIsRefusedOnlyWhenItInflatesOver100Times) {
  const std::string dir = ptest::temp_dir("kineto-ratio");
  std::string text = "{\"traceEvents\": [\n";
  size_t events = 0;
  while (text.size() < (size_t{66} << 20)) {
    text += (events ? ",\n" : "") + event(events, "kernel_" + std::to_string(events % 997));
    ++events;
  }
  text += "\n]}\n";
  const std::string real = dir + "/real.json";
  write_file_atomically(real, text);
  const std::string real_gz = gzip(real);
  const double ratio = static_cast<double>(text.size()) /
                       static_cast<double>(read_file(real_gz, size_t{1} << 30).size());
  EXPECT_LT(ratio, 50) << "the real-shaped trace should inflate like a real one";
  size_t count = 0;  // events counted, not kept (both readers share the rule)
  read_trace_events(
      real_gz, JsonReader::Fast, [](const simdjson::dom::element*) {}, &count);
  EXPECT_EQ(count, events) << "ratio " << ratio;

  // The same first event, then 66 MiB of spaces (a run zlib packs 1000 to 1).
  const std::string bomb = dir + "/bomb.json";
  write_file_atomically(
      bomb, "{\"traceEvents\": [\n" + event(0, "k") + std::string(size_t{66} << 20, ' ') + "]}\n");
  const std::string bomb_gz = gzip(bomb);
  try {
    read(bomb_gz, JsonReader::Fast);
    ADD_FAILURE() << "the bomb was read";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bomb.json.gz: inflates more than 100 times its size"), std::string::npos)
        << m;
    EXPECT_NE(m.find("refused as a decompression bomb"), std::string::npos) << m;
  }
}

// The fast reader is a pipeline (an inflater thread, a splitter thread, the caller's thread
// parsing). What stops it early reaches the caller as one thread would have met it: the caller's
// own exception from on_event, unchanged and without waiting for the rest of the file; a corrupt
// gzip stream as its error, after the events inflated before the damage.
TEST(KinetoJson, APipelineStoppedEarlyHandsOverWhatCameBeforeAndTheError) {
  const std::string dir = ptest::temp_dir("kineto-json-stop");
  std::string text = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < 40000; ++i)
    text += (i ? ",\n" : "") + event(i, "kernel_" + std::to_string(i % 97));
  text += "\n]}\n";
  ASSERT_GT(text.size(), size_t{8} << 20) << "more batches and inflate chunks than the queues hold";
  const std::string path = dir + "/t.json";
  write_file_atomically(path, text);
  const std::string gz = gzip(path);

  struct Enough {};
  for (const std::string& file : {path, gz}) {
    size_t seen = 0, count = 0;
    EXPECT_THROW(read_trace_events(
                     file, JsonReader::Fast,
                     [&](const simdjson::dom::element*) {
                       if (++seen == 10) throw Enough{};
                     },
                     &count),
                 Enough)
        << file;
    EXPECT_EQ(seen, 10u) << file;
  }

  // Cut the gzip stream at two thirds: the events before the cut, then the error naming the file.
  const std::string bytes = read_file(gz, size_t{1} << 30);
  const std::string cut = dir + "/cut.json.gz";
  write_file_atomically(cut, bytes.substr(0, bytes.size() * 2 / 3));
  size_t before = 0, count = 0;
  try {
    read_trace_events(
        cut, JsonReader::Fast, [&](const simdjson::dom::element*) { ++before; }, &count);
    ADD_FAILURE() << "a truncated stream was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cut.json.gz: truncated gzip stream"), std::string::npos)
        << e.what();
  }
  EXPECT_GT(before, 10000u) << "the events before the cut (less the batch it cut) come first";
  EXPECT_LT(before, 40000u);
}
