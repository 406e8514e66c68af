// The kineto import's pipeline (profiler/kineto_json.cpp: an inflater thread, a splitter thread
// and the caller's thread parsing) run from the workbench tests, so that the ThreadSanitizer
// build of them (tools/test.sh) watches its hand-offs: a real trace of several inflate chunks and
// batches, read whole by two imports at once (the window loads one trace while another is open)
// and read to an early stop.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "profiler/kineto_json.h"
#include "profiler/trace_import.h"

using namespace fusebox::profiler;

namespace {

const std::string kTrace = std::string(FUSEBOX_SOURCE_DIR) +
                           "/tests/data/traces/mi300x_vllm_prefilldecode_piecewise.json.gz";

size_t count_events(JsonReader reader) {
  size_t events = 0;
  read_trace_events(
      kTrace, reader, [](const simdjson::dom::element*) {}, &events);
  return events;
}

}  // namespace

TEST(TraceImportThreads, TwoImportsAtOnceReadWhatOneReaderReadsAndAnEarlyStopEndsThePipeline) {
  const size_t strict = count_events(JsonReader::Strict);
  ASSERT_GT(strict, 10000u) << "several 1 MiB chunks and batches";
  size_t a = 0, b = 0;
  std::thread other([&] { a = count_events(JsonReader::Fast); });
  b = count_events(JsonReader::Fast);
  other.join();
  EXPECT_EQ(a, strict);
  EXPECT_EQ(b, strict);

  struct Enough {};
  size_t seen = 0, events = 0;
  EXPECT_THROW(read_trace_events(
                   kTrace, JsonReader::Fast,
                   [&](const simdjson::dom::element*) {
                     if (++seen == 100) throw Enough{};
                   },
                   &events),
               Enough);
  ImportReport report;
  const Recording r = import_trace(kTrace, &report);
  EXPECT_EQ(report.events, strict);
  EXPECT_FALSE(r.device.empty());
}
