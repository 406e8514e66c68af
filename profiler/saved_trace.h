#pragma once
// saved_trace: an imported trace written in our own compact form and read back in a fraction
// of the import's time (`fusebox trace FILE --save X`; import_trace and the window open X like
// any trace, by its first bytes).
//
// The file: the magic "FBXTRACE", a little-endian uint32 version (kSavedTraceVersion), then one
// zstd frame (its content size in the header, its checksum on) holding
//   - the recording's small fields and the import report as JSON (Recording::to_json, its
//     per-event arrays left empty);
//   - a string table: every span, activity and collective name once;
//   - the per-event arrays column by column (spans, counter samples, device activity,
//     collectives), names as indices into the table.
// Reading checks everything before it is spent: the version, the frame's size against the memory
// budget, each array's count against the bytes left, every name index, every kind, and then
// check_recording. Errors name the file and what is wrong (fusebox::Error). Written whole or not
// at all (write_file_atomically).
#include <cstdint>
#include <string>

#include "profiler/recording.h"
#include "profiler/trace_import.h"

namespace fusebox::profiler {

constexpr char kSavedTraceMagic[] = "FBXTRACE";  // 8 bytes, no NUL in the file
constexpr uint32_t kSavedTraceVersion = 2;       // 2: counter tracks have names

// Writes `r` (and the report of the import that made it) to `path`.
void save_trace(const Recording& r, const ImportReport& report, const std::string& path);

// Reads a file save_trace wrote; the report is the original import's, its format "saved <format>".
Recording load_saved_trace(const std::string& path, ImportReport* report = nullptr);

// Whether `head` (a file's first bytes) starts like a saved trace.
bool is_saved_trace(const std::string& head);

}  // namespace fusebox::profiler
