// saved_trace: every shipped trace saved and read back is the recording it was, field for field,
// and a file we did not write (or that was damaged) is refused naming what is wrong.
#include "profiler/saved_trace.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "profiler/trace_import.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {

std::string load_error(const std::string& path) {
  return ptest::error_of([&] { import_trace(path); });
}

// A saved trace around `payload`, as save_trace frames one.
std::string framed(const std::string& payload, uint32_t version = kSavedTraceVersion) {
  std::string out(kSavedTraceMagic, 8);
  out.append(reinterpret_cast<const char*>(&version), sizeof version);
  std::string z(ZSTD_compressBound(payload.size()), '\0');
  const size_t n = ZSTD_compress(z.data(), z.size(), payload.data(), payload.size(), 1);
  EXPECT_FALSE(ZSTD_isError(n));
  z.resize(n);
  return out + z;
}

// A payload by hand: the header of an empty recording, then the arrays as given.
struct Payload {
  std::string bytes;
  template <typename T>
  Payload& put(T v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Payload& text(const std::string& s) {
    put(static_cast<uint64_t>(s.size()));
    bytes += s;
    return *this;
  }
  static Payload header() {
    Recording r;
    r.source = "kineto";
    nlohmann::json meta = {{"recording", r.to_json()},
                           {"report", {{"format", "kineto"}, {"events", 0}, {"skipped", 0}, {"warnings", nlohmann::json::array()}}}};
    Payload p;
    p.text(meta.dump());
    return p;
  }
};

}  // namespace

TEST(SavedTrace, EveryShippedTraceReadsBackFieldForField) {
  const std::string dir = ptest::temp_dir("saved-trace");
  std::vector<std::string> traces;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces"))
    if (e.is_regular_file() && looks_like_trace(e.path().string())) traces.push_back(e.path().string());
  ASSERT_GE(traces.size(), 15u);
  for (const std::string& path : traces) {
    ImportReport report;
    const Recording r = import_trace(path, &report);
    const std::string saved = dir + "/t.fbx";
    save_trace(r, report, saved);
    ImportReport again;
    const Recording back = import_trace(saved, &again);
    EXPECT_EQ(back.to_json(), r.to_json()) << path;
    EXPECT_EQ(again.format, "saved " + report.format) << path;
    EXPECT_EQ(again.events, report.events) << path;
    EXPECT_EQ(again.skipped, report.skipped) << path;
    EXPECT_EQ(again.warnings, report.warnings) << path;
  }
}

TEST(SavedTrace, ARecordedSessionWithWorkersAndNodesReadsBack) {
  const Recording r = ptest::record_workers(ptest::kGemmModel, 2, 2);
  ASSERT_FALSE(r.nodes.empty());
  const std::string path = ptest::temp_dir("saved-session") + "/s.fbx";
  save_trace(r, ImportReport{"fusebox", r.spans.size(), 0, {}}, path);
  EXPECT_EQ(import_trace(path).to_json(), r.to_json());
}

TEST(SavedTrace, DamagedOrForeignFilesAreRefusedNamingWhatIsWrong) {
  const std::string dir = ptest::temp_dir("saved-bad");
  ImportReport report;
  const Recording r = import_trace(std::string(FUSEBOX_SOURCE_DIR) + "/tests/data/traces/kineto_a100_alexnet.json.gz", &report);
  const std::string good = dir + "/good.fbx";
  save_trace(r, report, good);
  const std::string bytes = read_file(good);

  auto refused = [&](const std::string& name, const std::string& content, const std::string& expect) {
    const std::string path = dir + "/" + name;
    write_file_atomically(path, content);
    const std::string e = load_error(path);
    EXPECT_EQ(e.rfind(path + ": ", 0), 0u) << name << ": " << e;
    EXPECT_NE(e.find(expect), std::string::npos) << name << ": " << e;
  };
  std::string version = bytes;
  version[8] = static_cast<char>(kSavedTraceVersion + 1);
  refused("version.fbx", version,
          "a saved trace of version " + std::to_string(kSavedTraceVersion + 1) +
              "; this fusebox reads version " + std::to_string(kSavedTraceVersion));
  std::string old = bytes;
  old[8] = 1;  // counters without names
  refused("version1.fbx", old, "a saved trace of version 1; this fusebox reads version");
  refused("cut.fbx", bytes.substr(0, bytes.size() / 2), "corrupt saved trace");
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  refused("flipped.fbx", flipped, "corrupt saved trace");
  const uint32_t v = kSavedTraceVersion;
  refused("no_frame.fbx",
          std::string(kSavedTraceMagic, 8) + std::string(reinterpret_cast<const char*>(&v), 4) +
              "not zstd",
          "no zstd frame");
  refused("trailing.fbx", bytes + "garbage", "corrupt saved trace");

  // Payloads that decompress but lie.
  refused("names.fbx", framed(Payload::header().put(uint64_t{1} << 40).bytes), "claims 1099511627776 names");
  Payload name_out_of_range = Payload::header();
  name_out_of_range.put(uint64_t{1}).text("k").put(uint64_t{1});  // one name, one span
  name_out_of_range.put(uint8_t{2}).put(uint32_t{5}).put(int64_t{0}).put(int64_t{1}).put(int32_t{1});
  name_out_of_range.put(int64_t{-1}).put(int32_t{-1}).put(int32_t{0});
  refused("name_index.fbx", framed(name_out_of_range.bytes), "name 5 of 1");
  Payload bad_kind = Payload::header();
  bad_kind.put(uint64_t{1}).text("k").put(uint64_t{1});
  bad_kind.put(uint8_t{9}).put(uint32_t{0}).put(int64_t{0}).put(int64_t{1}).put(int32_t{1});
  bad_kind.put(int64_t{-1}).put(int32_t{-1}).put(int32_t{0});
  refused("kind.fbx", framed(bad_kind.bytes), "span kind 9 is not one we write");
  Payload backwards = Payload::header();  // a span that ends before it starts: check_recording
  backwards.put(uint64_t{1}).text("k").put(uint64_t{1});
  backwards.put(uint8_t{2}).put(uint32_t{0}).put(int64_t{10}).put(int64_t{1}).put(int32_t{1});
  backwards.put(int64_t{-1}).put(int32_t{-1}).put(int32_t{0});
  backwards.put(uint64_t{0}).put(uint64_t{0}).put(uint64_t{0});
  refused("backwards.fbx", framed(backwards.bytes), "not a saved trace we can read");
  Payload counter_track = Payload::header();        // a sample of a track the header does not name
  counter_track.put(uint64_t{0}).put(uint64_t{0});  // no names, no spans
  counter_track.put(uint64_t{1}).put(int64_t{5}).put(int32_t{1}).put(int32_t{3}).put(1.0);
  refused("counter_track.fbx", framed(counter_track.bytes), "counter track 3 of 0");
  refused("short.fbx", framed(Payload::header().put(uint64_t{0}).bytes), "cut short");
}
