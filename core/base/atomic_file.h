#pragma once
// Files we write are written whole or not at all: content goes to a temporary file beside the
// target, is flushed, then renamed over it. An existing file is replaced only on success.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace fusebox {

// Calls write(stream) on a temporary file next to `path`, then renames it to `path`.
// Throws fusebox::Error naming the path when the directory is not writable or writing fails;
// the temporary file is removed and any existing `path` is left untouched.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);
void write_file_atomically(const std::string& path, const std::string& content);

// Reads a whole regular file of at most `max_bytes`; throws fusebox::Error naming the path when
// it cannot, when it is not a regular file (a FIFO would block, a device such as /dev/zero never
// ends) or when it is larger than `max_bytes`.
std::string read_file(const std::string& path, size_t max_bytes = SIZE_MAX);

}  // namespace fusebox
